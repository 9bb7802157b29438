/* quit.c -- exit(4) inside an intercepted call: the qsort comparator calls
** exit on its 5th call; an atexit handler calls getpid twice, inside exit. */
#include <stdlib.h>
#include <unistd.h>

static int calls;

static void handler(void)
{
  getpid();
  getpid();
}

static int cmp(const void *a, const void *b)
{
  if (++calls == 5) exit(4);
  return *(const int *)a - *(const int *)b;
}

int main(void)
{
  int a[50];
  for (int i = 0; i < 50; i++) a[i] = (i * 37) % 51;
  atexit(handler);
  qsort(a, 50, sizeof a[0], cmp);
  return 0;
}
