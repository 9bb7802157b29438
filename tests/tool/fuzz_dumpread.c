/*
** fuzz_dumpread.c -- libFuzzer target for the dump reader: any bytes given
** to cpd_parse must give a dump or an error, never a crash, a leak, a hang
** or an allocation out of proportion to the input. A parsed dump is also fed
** to the profile model, as the tool would. Built with clang
** -fsanitize=fuzzer,address,undefined (CAPPROF_FUZZ in tests/tool/tool.cmake).
*/
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/cpd_reader.h"
#include "model/profile.h"
#include "model/tool.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct cpd_dump *d;
  char err[256];
  tool_quiet = 1;
  if (cpd_parse(data, size, &d, err, sizeof err) != 0) return 0;
  struct profile *p = prof_new();
  if (p && prof_add_dump(p, d) == 0) prof_flat(p);
  else if (!p) cpd_free(d);
  prof_free(p);
  return 0;
}
