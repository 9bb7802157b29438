// throw.cpp -- C++ exceptions through an intercepted call: a qsort
// comparator throws and main catches (twice), then a comparator throws and
// catches inside itself while qsort goes on, then 4 getpid calls.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <unistd.h>

static int calls, limit, inner;

static int cmp(const void *a, const void *b)
{
  if (++calls == limit) throw std::runtime_error("out of the comparator");
  if (calls == inner) {
    try {
      throw 42;
    } catch (int) {
      getpid();                // inside qsort, inside the comparator
    }
  }
  return *(const int *)a - *(const int *)b;
}

int main()
{
  int a[100], caught = 0;
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < 100; i++) a[i] = (i * 37) % 101;
    calls = 0;
    limit = round < 2 ? 10 : -1;
    inner = round == 2 ? 20 : -1;
    try {
      qsort(a, 100, sizeof a[0], cmp);
    } catch (const std::exception &) {
      caught++;
    }
  }
  for (int i = 0; i < 4; i++) getpid();
  std::printf("caught %d sorted %d\n", caught, a[0] <= a[1]);
  return caught == 2 ? 0 : 1;
}
