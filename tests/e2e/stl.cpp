// stl.cpp -- an STL-heavy program (std::map, std::unordered_map, std::sort
// with functors of its own): the hooks of whatever remains after inlining
// fire, and the program's own functions are counted exactly. The program
// counts their calls itself and writes the expectations (stl.expect.gen).
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>
#include <capprof/capprof.h>
#include "e2e.h"

static unsigned long n_less, n_hash, n_visit, n_build;

struct Less {
  NOINLINE bool operator()(int a, int b) const { n_less++; SINK(a); return a < b; }
};
struct Hash {
  NOINLINE size_t operator()(int k) const { n_hash++; SINK(k); return (size_t)k * 2654435761u; }
};

NOINLINE void visit(const std::string &s) { n_visit++; SINK(s.size()); }

NOINLINE std::vector<int> build(int n)
{
  n_build++;
  std::vector<int> v;
  unsigned x = 12345;
  for (int i = 0; i < n; i++) { x = x * 1103515245u + 12345u; v.push_back((int)(x >> 8) % 5000); }
  return v;
}

static bool less_fn(int a, int b) { return Less()(a, b); }

int main()
{
  MAP(main); MAP(visit); MAP(build); MAP_DONE();
  capprof_set_thread_name("main");
  std::map<int, std::string, Less> m;
  std::unordered_map<int, int, Hash> h;
  long sum = 0;
  for (int round = 0; round < 3; round++) {
    std::vector<int> v = build(2000);
    for (int k : v) { m[k] = std::to_string(k); h[k] += k; }
    std::sort(v.begin(), v.end(), less_fn);
    for (auto &kv : m) visit(kv.second);
    for (int k : v) sum += h.count(k);
  }
  std::printf("%ld\n", sum);
  FILE *f = std::fopen("stl.expect.gen", "w");
  if (!f) return 1;
  std::fprintf(f, "thread main\ncalls visit %lu\ncalls build %lu\npath main;build %lu\n"
               "calls main 1\nconsistent\n", n_visit, n_build, n_build);
  std::fclose(f);
  return 0;
}
