// app.cpp -- a C++ user's program: known call counts through std::sort.
#include <algorithm>
#include <cstdio>
#include <vector>
#include <capprof/capprof.h>

__attribute__((noinline)) int square(int x) { return x * x; }
__attribute__((noinline)) int sum_squares(int n)
{
  std::vector<int> v;
  for (int i = 0; i < n; i++) v.push_back(square(i));
  std::sort(v.begin(), v.end());
  int s = 0;
  for (int x : v) s += x;
  return s;
}

int main()
{
  capprof_set_thread_name("app-main");
  std::printf("%d\n", sum_squares(100));
  return capprof_is_active() ? 0 : 1;
}
