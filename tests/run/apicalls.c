/* apicalls.c -- known numbers of library calls on the main thread and on 4
** threads, for 'capprof run'. Built with no capprof flag (and again with
** hooks). Writes its own expectations (exact counts, its comparator's calls
** as it counted them) to $RUN_EXPECT for tests/e2e/check.c. Built with
** -fno-builtin so that every call below is a real call. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define SINK(x) __asm__ __volatile__("" : : "r"(x) : "memory")

static __thread long ncmp;
static long cmps[5];
static double total;

static int cmp(const void *a, const void *b)
{
  ncmp++;
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* k = 0 on the main thread, 1..4 on the others: different counts each. */
static NOINLINE void work(int k)
{
  for (int i = 0; i < 10 + k; i++) SINK(getpid());
  double s = 0;
  for (int i = 0; i < 20 + k; i++) s += sin(i * 0.5);
  for (int i = 0; i < 3 + k; i++) {
    FILE *f = fopen("/dev/null", "r");
    if (f) fclose(f);
  }
  int a[300];
  for (int i = 0; i < 300; i++) a[i] = (i * 7919 + k * 31) % 1009;
  qsort(a, 300, sizeof a[0], cmp);
  for (int i = 0; i < 5 + k; i++) {
    void *p = malloc(16 + (size_t)i);
    SINK(p);
    free(p);
  }
  cmps[k] = ncmp;
  total += s;
}

static NOINLINE void *worker(void *arg)
{
  int k = (int)(long)arg;
  char name[16];
  snprintf(name, sizeof name, "w%d", k);
  pthread_setname_np(pthread_self(), name);
  work(k);
  return NULL;
}

static void line(int fd, const char *fmt, long v1, long v2, const char *p)
{
  char buf[256];
  int n = snprintf(buf, sizeof buf, fmt, p, v1, v2);
  if (write(fd, buf, (size_t)n) != n) exit(2);
}

int main(void)
{
  pthread_t t[4];
  for (long k = 1; k <= 4; k++) pthread_create(&t[k - 1], NULL, worker, (void *)k);
  for (int k = 0; k < 4; k++) pthread_join(t[k], NULL);
  work(0);
  const char *out = getenv("RUN_EXPECT");
  const char *hooks = getenv("RUN_HOOKS");     /* the program has hooks */
  if (!out) return 0;
  int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return 2;
  for (int k = 0; k <= 4; k++) {
    char th[16], pre[64];
    if (k) snprintf(th, sizeof th, "w%d", k);
    else snprintf(th, sizeof th, "%s", getenv("RUN_MAIN") ? getenv("RUN_MAIN") : "prog");
    snprintf(pre, sizeof pre, "%s", !hooks ? "" : k ? "worker;work;" : "main;work;");
    line(fd, "thread %s\n", 0, 0, th);
    line(fd, "path %sgetpid %ld\n", 10 + k, 0, pre);
    line(fd, "path %ssin %ld\n", 20 + k, 0, pre);
    line(fd, "path %sfopen %ld\n", 3 + k, 0, pre);
    line(fd, "path %sfclose %ld\n", 3 + k, 0, pre);
    line(fd, "path %sqsort %ld\n", 1, 0, pre);
    line(fd, "path %smalloc %ld\n", 5 + k, 0, pre);
    line(fd, "path %sfree %ld\n", 5 + k, 0, pre);
    if (hooks) line(fd, "path %sqsort;cmp %ld\n", cmps[k], 0, pre);
  }
  const char *map = getenv("RUN_MAP");          /* names of its functions */
  int mfd = map ? open(map, O_WRONLY | O_CREAT | O_TRUNC, 0644) : -1;
  if (mfd >= 0) {
    char buf[256];
    int n = snprintf(buf, sizeof buf, "main %p\nwork %p\nworker %p\ncmp %p\n", (void *)main,
                     (void *)work, (void *)worker, (void *)cmp);
    if (write(mfd, buf, (size_t)n) != n) return 2;
    close(mfd);
  }
  line(fd, "%sthreads %ld\n", 5, 0, "");
  line(fd, "%sconsistent\n", 0, 0, "");
  close(fd);
  printf("total %.3f\n", total);
  return 0;
}
