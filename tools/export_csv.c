/*
** export_csv.c -- '--format=csv': the flat profile, one row per function
** with a header row, RFC 4180 quoting, times in nanoseconds. The columns
** are one table, so new columns (e.g. per-run statistics) are one line each.
*/
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "export.h"

struct column {
  const char *header;
  double (*value)(const struct prof_func *f);   /* NULL: a text column */
};

#define TIME_GETTER(field) \
  static double get_##field(const struct prof_func *f) { return f->t.field; }
TIME_GETTER(excl)
TIME_GETTER(incl)
TIME_GETTER(min)
TIME_GETTER(max)
TIME_GETTER(excl_raw)
TIME_GETTER(incl_raw)
TIME_GETTER(min_raw)
TIME_GETTER(max_raw)
static double get_calls(const struct prof_func *f) { return (double)f->calls; }
static double get_avg(const struct prof_func *f)
{
  return f->calls ? f->t.incl / (double)f->calls : 0;
}

static const struct column numeric[] = {
  { "calls", get_calls },
  { "self_ns", get_excl }, { "total_ns", get_incl }, { "avg_ns", get_avg },
  { "min_ns", get_min }, { "max_ns", get_max },
  { "self_ns_raw", get_excl_raw }, { "total_ns_raw", get_incl_raw },
  { "min_ns_raw", get_min_raw }, { "max_ns_raw", get_max_raw },
};

static void csv_field(FILE *f, const char *s)
{
  if (!s) s = "";
  if (!strpbrk(s, ",\"\r\n")) { fputs(s, f); return; }
  putc('"', f);
  for (; *s; s++) {
    if (*s == '"') putc('"', f);
    putc(*s, f);
  }
  putc('"', f);
}

static int write_csv(FILE *f, const struct profile *p)
{
  fputs("function,module,file,line", f);
  for (size_t c = 0; c < sizeof numeric / sizeof numeric[0]; c++) fprintf(f, ",%s", numeric[c].header);
  fputs("\r\n", f);
  for (uint32_t i = 0; i < p->nfuncs; i++) {
    const struct prof_func *fn = &p->funcs[i];
    if (fn->synthetic && fn->calls == 0) continue;
    csv_field(f, fn->name);
    putc(',', f);
    csv_field(f, fn->module);
    putc(',', f);
    csv_field(f, fn->file);
    fprintf(f, ",%u", fn->line);
    for (size_t c = 0; c < sizeof numeric / sizeof numeric[0]; c++)
      fprintf(f, ",%.0f", numeric[c].value(fn));
    fputs("\r\n", f);
  }
  return 0;
}

const struct exporter export_csv = {
  "csv", "flat profile for spreadsheets, with a header row", write_csv
};
