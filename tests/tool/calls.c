/* calls.c -- the tool tests' program: fixed call counts on two threads,
** recursion, and calls through a function pointer. Built with
** -finstrument-functions by tests/tool/e2e.sh. */
#include <pthread.h>
#include <stdio.h>

static volatile int sink;

void leaf(void)
{
  for (int i = 0; i < 100; i++) sink += i;
}

void middle(int k)
{
  for (int i = 0; i < k; i++) leaf();
}

static int fib(int n)
{
  return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static void apply(void (*fn)(int), int k)
{
  fn(k);
}

static void *worker(void *arg)
{
  (void)arg;
  middle(5);
  apply(middle, 2);
  return NULL;
}

int main(void)
{
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  pthread_join(t, NULL);
  middle(3);
  printf("%d\n", fib(10));
  return 0;
}
