// stl.cpp -- the STL-heavy workload of bench/gcc_modes.sh: an inventory kept
// in std::map and std::unordered_map, sorted with std::sort, strings built
// and compared. What GCC's -finstrument-functions makes ~35x slower (it hooks
// every inlined STL function) and its after-inlining mode should not.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

struct Item {
  std::string name;
  int qty;
  double price;
};

static unsigned rng_state = 12345;
static unsigned rnd() { rng_state = rng_state * 1103515245u + 12345u; return rng_state >> 8; }

__attribute__((noinline)) static Item make_item(int i)
{
  return Item{ "item-" + std::to_string(rnd() % 50000) + "-" + std::to_string(i % 7), (int)(rnd() % 100),
               (double)(rnd() % 10000) / 100.0 };
}

__attribute__((noinline)) static double restock(std::map<std::string, Item> &stock,
                                                std::unordered_map<std::string, int> &sold, int n)
{
  double value = 0;
  for (int i = 0; i < n; i++) {
    Item it = make_item(i);
    auto [pos, fresh] = stock.emplace(it.name, it);
    if (!fresh) pos->second.qty += it.qty;
    sold[it.name] += it.qty % 3;
    value += it.price * it.qty;
  }
  return value;
}

__attribute__((noinline)) static long rank(const std::map<std::string, Item> &stock,
                                           const std::unordered_map<std::string, int> &sold)
{
  std::vector<std::pair<int, std::string>> v;
  v.reserve(stock.size());
  for (const auto &kv : stock) {
    auto s = sold.find(kv.first);
    v.emplace_back(kv.second.qty - (s == sold.end() ? 0 : s->second), kv.first);
  }
  std::sort(v.begin(), v.end());
  std::vector<int> q;
  for (const auto &p : v) q.push_back(p.first);
  std::sort(q.begin(), q.end(), [](int a, int b) { return a > b; });
  long s = 0;
  for (size_t i = 0; i < q.size(); i += 97) s += q[i];
  return s + (long)v.size();
}

int main(int argc, char **argv)
{
  int rounds = argc > 1 ? std::atoi(argv[1]) : 20;
  double value = 0;
  long r = 0;
  for (int k = 0; k < rounds; k++) {
    std::map<std::string, Item> stock;
    std::unordered_map<std::string, int> sold;
    value += restock(stock, sold, 20000);
    r += rank(stock, sold);
  }
  std::printf("%.2f %ld\n", value, r);
  return 0;
}
