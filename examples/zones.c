/*
** zones.c -- an example profiled with zones only: no compiler hooks, just
** CAPPROF_ZONE_BEGIN/END, scoped CAPPROF_ZONE and CAPPROF_FUNCTION. It serves
** a batch of fake requests; each request's type names a zone (a dynamic
** string). One handler has an early return that skips its END: capprof
** counts that zone as left open and the tool warns about it.
**
** Build: cc -DCAPPROF_ENABLED zones.c -lcapprof -lpthread (CMake target
** 'zones'). Without -DCAPPROF_ENABLED every zone macro compiles to nothing.
** Profile five runs into one directory, then look at them together:
**   for i in 1 2 3 4 5; do CAPPROF_OUTPUT_DIR=runs ./zones; done
**   capprof report runs/*.capprof
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <capprof/capprof.h>

static volatile unsigned long sink;

/* Busy work proportional to n: what a real handler would spend. */
static void burn(unsigned long n)
{
  for (unsigned long i = 0; i < n; i++) sink += i ^ (sink >> 3);
}

static void parse(unsigned long size)
{
  CAPPROF_FUNCTION();                    /* a zone named "parse" until return */
  burn(size * 40);
}

static void lookup(unsigned long key)
{
  CAPPROF_FUNCTION();
  burn(2000 + key % 5000);
}

/* Handle one request. The request type is a dynamic zone name. */
static int handle(const char *type, unsigned long id)
{
  char zone[32];
  snprintf(zone, sizeof zone, "handle %s", type);
  CAPPROF_ZONE_BEGIN(zone);
  parse(100 + id % 50);
  if (strcmp(type, "delete") == 0 && id % 3 == 0) {
    return -1;                           /* bug: leaves the zone open */
  }
  lookup(id * 7919);
  if (strcmp(type, "report") == 0) {
    CAPPROF_ZONE("render");
    burn(60000);
  }
  CAPPROF_ZONE_END();
  return 0;
}

int main(int argc, char **argv)
{
  static const char *const types[] = { "get", "put", "delete", "report" };
  unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 400;
  int failed = 0;
  {
    CAPPROF_ZONE("startup");
    burn(200000);
  }
  for (unsigned long i = 0; i < n; i++) {
    CAPPROF_ZONE("request");             /* closes whatever handle() left open */
    failed += handle(types[i % 4], i) != 0;
  }
  printf("%lu requests, %d failed\n", n, failed);
  return 0;
}
