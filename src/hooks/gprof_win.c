/*
** gprof_win.c (MinGW) -- MinGW GCC's -pg, which places the _penter hooks
** (capprof cflags), also makes main call _monstartup, gprof's start-up:
** capprof does not use gprof, so it is empty here. Alone in its object: a
** static link takes it only when the program has no _monstartup of its own
** (nor MinGW's libgmon); a DLL's export yields to the program's definition.
** (Not weak: a weak definition cannot be exported from a PE DLL.)
*/
#include "../core/core.h"

void _monstartup(void);
void _monstartup(void) {}
