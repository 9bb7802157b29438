/* jump.c -- longjmp out of a qsort comparator, twice, then a qsort that
** completes and 5 getpid calls: the abandoned qsort calls are counted once
** each and nothing nests under them afterwards. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static jmp_buf env;
static int calls, limit;

static int cmp(const void *a, const void *b)
{
  if (++calls == limit) longjmp(env, 1);
  return *(const int *)a - *(const int *)b;
}

int main(void)
{
  int a[100];
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < 100; i++) a[i] = (i * 37) % 101;
    calls = 0;
    limit = round < 2 ? 10 : -1;
    if (setjmp(env) == 0) qsort(a, 100, sizeof a[0], cmp);
  }
  for (int i = 0; i < 5; i++) getpid();
  printf("sorted %d\n", a[0] <= a[1]);
  return 0;
}
