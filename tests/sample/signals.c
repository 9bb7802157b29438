/* signals.c -- no hooks: a program busy with its own signals while it is
** sampled: a 2 kHz SIGALRM (setitimer, real time), sigqueue'd SIGRTMIN+1 with
** values, SIGUSR1 from another thread, and sleeps that signals interrupt.
** It checks that every signal it sent arrived with its value and that errno
** is what its own code set (the sampling handler may run between a failing
** call and the check), and spins in work() meanwhile. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t alarms, usr1, rt_count, rt_bad;
volatile unsigned long sink;

/* A handler that uses errno and restores it, as a correct one does. */
static void on_alarm(int sig)
{
  int saved = errno;
  (void)sig;
  alarms++;
  errno = 12345;
  errno = saved;
}
static void on_usr1(int sig) { (void)sig; usr1++; }
static void on_rt(int sig, siginfo_t *si, void *uc)
{
  (void)sig; (void)uc;
  if (si->si_value.sival_int != rt_count + 1000) rt_bad++;
  rt_count++;
}

__attribute__((noinline)) void work(unsigned long n)
{
  for (unsigned long i = 0; i < n; i++) sink += i ^ (i >> 3);
}

static void *poker(void *arg)
{
  pthread_t main_thread = *(pthread_t *)arg;
  for (int i = 0; i < 200; i++) {
    pthread_kill(main_thread, SIGUSR1);
    struct timespec ts = { 0, 500000 };
    nanosleep(&ts, NULL);
  }
  return NULL;
}

int main(void)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sigaction(SIGALRM, &sa, NULL);
  sa.sa_handler = on_usr1;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &sa, NULL);
  sa.sa_sigaction = on_rt;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGRTMIN + 1, &sa, NULL);
  struct itimerval it = { { 0, 500 }, { 0, 500 } };
  setitimer(ITIMER_REAL, &it, NULL);

  pthread_t self = pthread_self(), th;
  pthread_create(&th, NULL, poker, &self);
  int sent = 0, errno_bad = 0;
  for (int round = 0; round < 100; round++) {
    work(2000000);
    union sigval v = { .sival_int = sent + 1000 };
    if (sigqueue(getpid(), SIGRTMIN + 1, v) == 0) sent++;
    errno = 0;
    if (write(-1, "", 0) != -1 || errno != EBADF) errno_bad++;
    struct timespec ts = { 0, 100000 };
    nanosleep(&ts, NULL);
  }
  pthread_join(th, NULL);
  struct itimerval off = { { 0, 0 }, { 0, 0 } };
  setitimer(ITIMER_REAL, &off, NULL);
  struct timespec ts = { 0, 20000000 };
  while (nanosleep(&ts, &ts) != 0) {}
  printf("alarms %d usr1 %d rt %d/%d rt_bad %d errno_bad %d\n", (int)alarms, (int)usr1,
         (int)rt_count, sent, (int)rt_bad, errno_bad);
  /* SIGUSR1 and SIGALRM are standard signals: two sent before the first is
  ** delivered arrive as one, so only their arrival is checked. */
  return rt_count == sent && !rt_bad && !errno_bad && usr1 > 0 && alarms > 0 ? 0 : 1;
}
