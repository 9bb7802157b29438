/*
** test_symbols.c -- CMocka suite for the symbolizer with the ELF back end:
** this test program is its own module (found with dl_iterate_phdr, as the
** runtime does), so its functions must come back by name with file:line; a
** wrong build-id must fall back to module+0xoffset with one warning; C++
** names are demangled; synthetic, zone and merged-dump keys get their names.
*/
#define _GNU_SOURCE
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "sym/symbols.h"

__attribute__((noinline)) int symbolized_function(int x)
{
  return x * 3 + 1;
}

struct self { uint64_t base, size; unsigned char id[64]; uint32_t id_len; };

static int find_self(struct dl_phdr_info *info, size_t size, void *ctx)
{
  (void)size;
  struct self *s = ctx;
  if (info->dlpi_name && info->dlpi_name[0]) return 0;   /* the executable */
  s->base = info->dlpi_addr;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type == PT_LOAD && ph->p_vaddr + ph->p_memsz > s->size)
      s->size = ph->p_vaddr + ph->p_memsz;
    if (ph->p_type != PT_NOTE) continue;
    const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
    const unsigned char *end = p + ph->p_memsz;
    while (p + 12 <= end) {
      uint32_t nsz, dsz, type;
      memcpy(&nsz, p, 4);
      memcpy(&dsz, p + 4, 4);
      memcpy(&type, p + 8, 4);
      const unsigned char *desc = p + 12 + ((nsz + 3) & ~3u);
      if (type == 3 && nsz == 4 && !memcmp(p + 12, "GNU", 4) && dsz <= sizeof s->id) {
        memcpy(s->id, desc, dsz);
        s->id_len = dsz;
      }
      p = desc + ((dsz + 3) & ~3u);
    }
  }
  return 1;
}

struct fixture { struct cpd_dump d; struct cpd_module m; char exe[4096]; struct self s; };

static void setup_self(struct fixture *f)
{
  memset(f, 0, sizeof *f);
  dl_iterate_phdr(find_self, &f->s);
  ssize_t n = readlink("/proc/self/exe", f->exe, sizeof f->exe - 1);
  assert_true(n > 0);
  f->exe[n] = '\0';
  f->m = (struct cpd_module){ f->s.base, f->s.size, CPD_MODID_GNU_BUILD_ID, f->s.id_len, f->s.id,
                              f->exe, "" };
  f->d.path = "";
  f->d.nmodules = 1;
  f->d.modules = &f->m;
}

static void own_function(void **state)
{
  (void)state;
  struct fixture f;
  setup_self(&f);
  assert_true(f.s.id_len > 0);
  struct symbolizer *s = sym_open(&f.d);
  struct sym_info si;
  sym_lookup(s, (uint64_t)(uintptr_t)&symbolized_function, &si);
  assert_string_equal(si.name, "symbolized_function");
  assert_non_null(si.file);
  assert_non_null(strstr(si.file, "test_symbols.c"));
  assert_true(si.line >= 20 && si.line <= 30);
  assert_string_equal(si.module, "test_tool_symbols");
  /* an address inside the function (MSVC /Gh keys) finds the same one */
  sym_lookup(s, (uint64_t)(uintptr_t)&symbolized_function + 1, &si);
  assert_string_equal(si.name, "symbolized_function");
  assert_int_equal(sym_had_problems(), 0);
  sym_close(s);
}

static void synthetic_keys(void **state)
{
  (void)state;
  struct fixture f;
  setup_self(&f);
  char *strings[] = { "my zone", "ns::f(int)\n/src/a.cpp\n42" };
  f.d.nstrings = 2;
  f.d.strings = strings;
  struct symbolizer *s = sym_open(&f.d);
  struct sym_info si;
  sym_lookup(s, CPD_KEY_ROOT, &si);
  assert_string_equal(si.name, "[root]");
  sym_lookup(s, CPD_KEY_ZONE | 0, &si);
  assert_string_equal(si.name, "my zone");
  sym_lookup(s, CPD_KEY_SYMBOL | UINT64_C(1) << 32 | 1, &si);
  assert_string_equal(si.name, "ns::f(int)");
  assert_string_equal(si.file, "/src/a.cpp");
  assert_int_equal(si.line, 42);
  assert_string_equal(si.module, "test_tool_symbols");
  sym_lookup(s, 0x10, &si);                       /* in no module */
  assert_string_equal(si.name, "0x10");
  sym_close(s);
}

static void demangling(void **state)
{
  (void)state;
  char *d = sym_demangle("_ZN2ns1A1fEi");
  assert_string_equal(d, "ns::A::f(int)");
  free(d);
  assert_null(sym_demangle("main"));
  assert_null(sym_demangle("_Zgarbage"));
}

/* Runs last: it makes sym_had_problems() true for the process. */
static void rebuilt_module(void **state)
{
  (void)state;
  struct fixture f;
  setup_self(&f);
  f.s.id[0] ^= 0xFF;                              /* as if rebuilt since */
  struct symbolizer *s = sym_open(&f.d);
  struct sym_info si;
  uint64_t key = (uint64_t)(uintptr_t)&symbolized_function;
  sym_lookup(s, key, &si);
  char want[64];
  snprintf(want, sizeof want, "test_tool_symbols+0x%llx", (unsigned long long)(key - f.s.base));
  assert_string_equal(si.name, want);
  assert_int_equal(sym_had_problems(), 1);
  sym_close(s);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(own_function),
    cmocka_unit_test(synthetic_keys),
    cmocka_unit_test(demangling),
    cmocka_unit_test(rebuilt_module),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
