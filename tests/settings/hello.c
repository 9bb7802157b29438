/* hello.c -- a program linked with libcapprof.so, for the settings test
** (tests/settings/run.sh): it says that main ran and whether the runtime is
** active, so that the test sees CAPPROF_HELP=1 let the program go on. With
** an argument it changes into that directory before it ends, as make -C and
** ninja -C do. */
#include <stdio.h>
#include <unistd.h>

#include <capprof/capprof.h>

int main(int argc, char **argv)
{
  printf("main ran, runtime active %d\n", capprof_is_active());
  if (argc > 1 && chdir(argv[1]) != 0) perror(argv[1]);
  return 0;
}
