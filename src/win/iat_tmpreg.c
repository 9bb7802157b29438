/*
** iat_tmpreg.c -- TEMPORARY stand-in for the portable registry of
** intercepted functions (src/intercept.c, branch run); removed at the merge.
*/
#include <string.h>
#include <stdio.h>
#include "win.h"

static char names[4096][96];
static uint32_t count;
static char spec[256];

uint32_t intercept_register(const char *lib, const char *sym)
{
  char k[96];
  snprintf(k, sizeof k, "%s!%s", lib, sym);
  for (uint32_t i = 0; i < count; i++)
    if (!strcmp(names[i], k)) return i;
  if (count >= 4096) return UINT32_MAX;
  strcpy(names[count], k);
  return count++;
}

void intercept_skip(uint32_t reason, const char *lib, const char *sym)
{
  (void)reason; (void)lib; (void)sym;
}

int intercept_selects(const char *lib)
{
  static const char *d[] = { "kernel32.dll", "user32.dll", "gdi32.dll", "advapi32.dll", "msvcrt.dll", "ucrtbase.dll" };
  if (!strcmp(spec, "all")) return 1;
  for (int i = 0; i < 6; i++) if (!_stricmp(d[i], lib)) return 1;
  return 0;
}

uint32_t intercept_unsafe(const char *s)
{
  return !strcmp(s, "setjmp") || !strcmp(s, "_setjmp") ? CPD_SKIP_RETURNS_TWICE : 0;
}

void intercept_patched(uint64_t m, uint64_t s) { (void)m; (void)s; }
void intercept_calibrate(void (*through)(void), void (*plain)(void)) { (void)through; (void)plain; }

void intercept_start(void)
{
  const char *v = os_getenv("CAPPROF_API");
  if (!v || !*v) return;
  snprintf(spec, sizeof spec, "%s", v);
  os_intercept_start();
}
