/* eintr.c -- built with hooks, run with the CPU-time timer sampling it
** (CAPPROF_SAMPLE=timer): a thread alternates CPU work in a hooked function
** with the calls that SA_RESTART does not restart (poll, select,
** epoll_wait, nanosleep: each with a short timeout) and with reads of
** /dev/zero, which it does restart. Prints, per call, how many returned
** EINTR; exits 1 if a read did (the handler lacks SA_RESTART). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

volatile unsigned sink;

__attribute__((noinline)) unsigned work(unsigned n)
{
  unsigned x = sink;
  for (unsigned i = 0; i < n; i++) x = x * 2654435761u + i;
  return x;
}

static char buf[1 << 20];

int main(int argc, char **argv)
{
  int rounds = argc > 1 ? atoi(argv[1]) : 2000;
  int p[2], ep = epoll_create1(0), zero = open("/dev/zero", O_RDONLY);
  if (pipe(p) != 0 || ep < 0 || zero < 0) return 2;
  struct epoll_event ev = { .events = EPOLLIN };
  epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);
  enum { POLL, SELECT, EPOLL, SLEEP, READ, N };
  const char *name[N] = { "poll", "select", "epoll_wait", "nanosleep", "read" };
  long calls[N] = { 0 }, eintr[N] = { 0 }, shorts = 0;
  for (int r = 0; r < rounds; r++) {
    sink += work(100000);
    struct pollfd pf = { p[0], POLLIN, 0 };
    calls[POLL]++;
    if (poll(&pf, 1, 1) < 0 && errno == EINTR) eintr[POLL]++;
    sink += work(100000);
    fd_set set;
    FD_ZERO(&set);
    FD_SET(p[0], &set);
    struct timeval tv = { 0, 1000 };
    calls[SELECT]++;
    if (select(p[0] + 1, &set, NULL, NULL, &tv) < 0 && errno == EINTR) eintr[SELECT]++;
    sink += work(100000);
    struct epoll_event out;
    calls[EPOLL]++;
    if (epoll_wait(ep, &out, 1, 1) < 0 && errno == EINTR) eintr[EPOLL]++;
    sink += work(100000);
    struct timespec ts = { 0, 100000 };
    calls[SLEEP]++;
    if (nanosleep(&ts, NULL) < 0 && errno == EINTR) eintr[SLEEP]++;
    calls[READ]++;
    ssize_t k = read(zero, buf, sizeof buf);   /* ~50-100 us in the kernel */
    if (k < 0 && errno == EINTR) eintr[READ]++;
    else if (k >= 0 && (size_t)k < sizeof buf) shorts++;
  }
  for (int i = 0; i < N; i++)
    printf("%-10s %6ld calls %4ld EINTR (%.3f%%)\n", name[i], calls[i], eintr[i],
           100.0 * (double)eintr[i] / (double)calls[i]);
  printf("read       %6ld short reads of /dev/zero (a signal in the middle)\n", shorts);
  return eintr[READ] ? 1 : 0;
}
