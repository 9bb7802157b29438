// templates.cpp -- a C++ program whose function names carry long template
// argument lists, for tests/tool/ui.sh (names shortened for the terminal,
// in full with --full-names and in every export).
#include <map>
#include <string>
#include <utility>
#include <vector>

template <class K, class V> struct Table {
  std::map<K, V> m;
  void put(const K &k, const V &v) { m[k] = v; }
  unsigned long size() const { return m.size(); }
};

int main()
{
  Table<std::string, std::vector<std::pair<int, std::string>>> t;
  for (int i = 0; i < 10; i++) t.put(std::to_string(i), {});
  return t.size() != 10;
}
