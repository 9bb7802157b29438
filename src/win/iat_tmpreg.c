/*
** iat_tmpreg.c -- TEMPORARY stand-in for the portable registry of
** intercepted functions (src/intercept.c, branch run); removed at the merge.
*/
#include <string.h>
#include <stdio.h>
#include "win.h"

static char names[4096][96];
static uint32_t count;

int intercept_register(const char *lib, const char *sym, uint32_t *id)
{
  char k[96];
  snprintf(k, sizeof k, "%s!%s", lib, sym);
  for (uint32_t i = 0; i < count; i++)
    if (!strcmp(names[i], k)) { *id = i; return 0; }
  if (count >= 4096) return CAPPROF_ELIMIT;
  strcpy(names[count], k);
  *id = count++;
  return 0;
}

void intercept_skip(uint32_t reason, const char *lib, const char *sym)
{
  (void)reason; (void)lib; (void)sym;
}

const char *iat_tmp_name(uint32_t id) { return id < count ? names[id] : "?"; }
