// views.cpp -- a program for the views test (views.sh): a few seconds' worth
// of CPU split unevenly between C++ functions at different depths, with a
// frequent short function (unhooked by default) and a long name, so that
// every view of one sampled run has shares to compare.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace geo {
template <typename T> struct Shape {
  T r;
  // Frequent and short: unhooked after its first calls in the default run.
  __attribute__((noinline)) T area() const { return r * r * T(3.14159); }
};
}  // namespace geo

static volatile double sink;

__attribute__((noinline)) static double spin(unsigned long n)
{
  double x = sink;
  for (unsigned long i = 0; i < n; i++) {
    x = x * 1.0000001 + 1e-9;
    __asm__ __volatile__("" : "+x"(x));
  }
  return x;
}

__attribute__((noinline)) static double heavy(int k) { return spin(3000000ul * (unsigned long)k); }
__attribute__((noinline)) static double light(int k) { return spin(1000000ul * (unsigned long)k); }

__attribute__((noinline)) static double shapes(int n)
{
  double s = 0;
  std::vector<geo::Shape<double>> v(64);
  for (int i = 0; i < n; i++)
    for (auto &sh : v) { sh.r = i; s += sh.area(); }
  return s;
}

__attribute__((noinline)) static double a_function_with_a_rather_long_name_for_the_terminal_width(int n)
{
  std::map<std::string, std::vector<int>> m;
  double s = 0;
  for (int i = 0; i < n; i++) {
    m[std::to_string(i % 97)].push_back(i);
    s += light(1);
  }
  return s + (double)m.size();
}

__attribute__((noinline)) static double middle(int n)
{
  double s = 0;
  for (int i = 0; i < n; i++) s += heavy(1) + light(1);
  return s;
}

int main()
{
  double s = 0;
  for (int round = 0; round < 4; round++) {
    s += middle(20);
    s += shapes(20000);
    s += a_function_with_a_rather_long_name_for_the_terminal_width(10);
  }
  sink = s;
  std::printf("%d\n", s > 0);
  return 0;
}
