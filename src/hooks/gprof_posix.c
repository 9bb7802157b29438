/*
** gprof.c (POSIX) -- keeps gprof's start-up out of programs linked with
** libcapprof. `-pg` given at link time (a Makefile passing CFLAGS to the
** linker) links gcrt1.o, whose start-up calls __monstartup (a SIGPROF
** histogram timer) and registers _mcleanup, which writes gmon.out. Here both
** do nothing: the program, built with -pg -mfentry for capprof, never calls
** gprof's mcount anyway, and a gmon.out would only be noise in its directory.
** The static library resolves gcrt1.o's references before libc does (it
** comes first on the link line); libcapprof.so precedes libc in lookup order.
*/
#include "../posix/posix.h"

#define GPROF_API __attribute__((visibility("default"))) CP_NOINSTR

GPROF_API void __monstartup(unsigned long lowpc, unsigned long highpc);
GPROF_API void _mcleanup(void);

void __monstartup(unsigned long lowpc, unsigned long highpc)
{
  (void)lowpc;
  (void)highpc;
}

void _mcleanup(void)
{
}
