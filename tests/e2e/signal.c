/* signal.c -- an instrumented signal handler firing at random points, also
** inside the hooks: counts of the interrupted work stay exact. */
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <capprof/capprof.h>
#include "e2e.h"

static volatile sig_atomic_t ticks;
NOINLINE void on_tick_work(void) { SINK(1); }
NOINLINE void on_tick(int sig) { (void)sig; ticks++; on_tick_work(); }
NOINLINE void work(int x) { SINK(x); }
NOINLINE void loop(int n) { for (int i = 0; i < n; i++) work(i); }

int main(void)
{
  MAP(main); MAP(on_tick_work); MAP(on_tick); MAP(work); MAP(loop); MAP_DONE();
  capprof_set_thread_name("main");
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_tick;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval it = { { 0, 200 }, { 0, 200 } };
  setitimer(ITIMER_REAL, &it, NULL);
  for (int r = 0; r < 20; r++) loop(100000);
  struct itimerval off = { { 0, 0 }, { 0, 0 } };
  setitimer(ITIMER_REAL, &off, NULL);
  return ticks > 0 ? 0 : 1;
}
