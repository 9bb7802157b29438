/* app.c -- a user's program: two functions with known call counts. */
#include <stdio.h>
#include <capprof/capprof.h>

__attribute__((noinline)) int square(int x) { return x * x; }
__attribute__((noinline)) int sum_squares(int n)
{
  int s = 0;
  for (int i = 0; i < n; i++) s += square(i);
  return s;
}

int main(void)
{
  capprof_set_thread_name("app-main");
  printf("%d\n", sum_squares(100));
  return capprof_is_active() ? 0 : 1;
}
