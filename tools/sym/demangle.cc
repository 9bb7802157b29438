// demangle.cc -- the tool's one C++ file: a C entry point to the C++
// runtime's Itanium ABI demangler (__cxa_demangle), used by the ELF back end.
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>

extern "C" char *sym_demangle(const char *name)
{
  if (!name || std::strncmp(name, "_Z", 2) != 0) return nullptr;
  int status = 0;
  char *out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0) {
    std::free(out);
    return nullptr;
  }
  return out;
}
