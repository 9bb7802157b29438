/*
** pg_support.c -- linked into programs built with -pg for the _penter
** hooks: MinGW's -pg makes main call _monstartup (gprof's start-up), which
** capprof does not use. Built without -pg.
*/
void _monstartup(void);
void _monstartup(void) {}
