/*
** unhook_tail.c -- a function whose -finstrument-functions exit hook GCC
** makes a tail jump (v(): void, nothing after the hook), called through
** unhook_tail_caller.S, whose indirect call's return address has the byte
** e8 five bytes before it. The exit hook then sees the caller's return
** address, which unhooking must not take for a hook call (it once read the
** "call"'s wild target). Built with hooks: this file only.
*/
void v(unsigned *p) { *p += 1; }
