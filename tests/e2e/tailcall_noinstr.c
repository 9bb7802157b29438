/* tailcall_noinstr.c -- code without hooks that tailcall.c jumps into, and
** that calls back into instrumented code. */
int callback(int x);
int plain(int x) { return callback(x) + 1; }
