/* sig.c -- signal handlers that make intercepted calls while the main
** thread is inside intercepted calls: a timer's handler calls getpid twice
** per signal, the main loop calls getppid; the second half runs the handler
** on a signal stack (sigaltstack). Prints "getppid N getpid M" as counted by
** the program itself. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static volatile long handled;

static void on_alarm(int sig)
{
  (void)sig;
  getpid();
  getpid();
  handled++;
}

static long run(int onstack)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sa.sa_flags = SA_RESTART | (onstack ? SA_ONSTACK : 0);
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval it = { { 0, 200 }, { 0, 200 } };
  setitimer(ITIMER_REAL, &it, NULL);
  long n = 0, target = handled + 100;
  while (handled < target) {
    getppid();
    n++;
  }
  struct itimerval off = { { 0, 0 }, { 0, 0 } };
  setitimer(ITIMER_REAL, &off, NULL);
  return n;
}

int main(void)
{
  static char altstack[1 << 16];
  stack_t ss = { .ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0 };
  sigaltstack(&ss, NULL);
  long n = run(0);
  n += run(1);
  signal(SIGALRM, SIG_IGN);
  printf("getppid %ld getpid %ld\n", n, 2 * handled);
  return 0;
}
