/*
** cputime.c -- bench_cputime OUT CMD ARGS...: runs CMD, passes its output
** through, and writes "cpu_ns=N wall_ns=N" to the file OUT: user + system
** time of CMD and of every descendant it waited for (uftrace's recorder and
** writer threads included), and its wall time. Exits with CMD's status.
*/
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t tv_ns(struct timeval tv)
{
  return (uint64_t)tv.tv_sec * 1000000000u + (uint64_t)tv.tv_usec * 1000u;
}

int main(int argc, char **argv)
{
  if (argc < 3) {
    fprintf(stderr, "usage: bench_cputime OUT CMD [ARGS...]\n");
    return 2;
  }
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pid_t pid = fork();
  if (pid < 0) { perror("bench_cputime: fork"); return 2; }
  if (pid == 0) {
    execvp(argv[2], argv + 2);
    perror("bench_cputime: exec");
    _exit(127);
  }
  int status;
  struct rusage ru;
  if (wait4(pid, &status, 0, &ru) < 0) { perror("bench_cputime: wait4"); return 2; }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  FILE *f = fopen(argv[1], "w");
  if (!f) { perror("bench_cputime: OUT"); return 2; }
  fprintf(f, "cpu_ns=%llu wall_ns=%llu\n",
          (unsigned long long)(tv_ns(ru.ru_utime) + tv_ns(ru.ru_stime)),
          (unsigned long long)((t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec)));
  fclose(f);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
