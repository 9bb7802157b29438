/* small.c -- 'small N [STATUS [SIGNAL]]': calls getpid N times, then exits
** with STATUS, or kills itself with SIGNAL. For the process-tree and
** exit-status tests of 'capprof run'. */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
  int n = argc > 1 ? atoi(argv[1]) : 0;
  for (int i = 0; i < n; i++) getpid();
  if (argc > 3) raise(atoi(argv[3]));
  return argc > 2 ? atoi(argv[2]) : 0;
}
