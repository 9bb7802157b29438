/* hello.c -- a program linked with libcapprof.so, for the settings test
** (tests/settings/run.sh): it says that main ran and whether the runtime is
** active, so that the test sees CAPPROF_HELP=1 let the program go on. */
#include <stdio.h>

#include <capprof/capprof.h>

int main(void)
{
  printf("main ran, runtime active %d\n", capprof_is_active());
  return 0;
}
