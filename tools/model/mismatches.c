/*
** mismatches.c -- zone mismatch tallies and their wording, shared by 'capprof
** info' (a table per dump) and 'capprof report' (warnings over all runs).
*/
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/mismatches.h"
#include "model/tool.h"

/* What each kind means, worded after a count. */
static const char *const kind_text[CPD_ZI_KINDS] = {
  "END without a matching BEGIN",
  "END that closed it while an inner zone was still open",
  "never ended (closed when its function returned, by longjmp or by an outer END)",
  "still open at exit",
  "still open when the dump was taken",
};

static int by_name(const void *a, const void *b)
{
  return strcmp(((const struct zone_tally *)a)->name, ((const struct zone_tally *)b)->name);
}

int zone_tally(struct cpd_dump *const *d, uint32_t n, struct zone_tally **out)
{
  size_t cap = 0, len = 0;
  struct zone_tally *z = NULL;
  *out = NULL;
  for (uint32_t r = 0; r < n; r++) {
    size_t first_of_run = len;        /* entries added by this run start here */
    uint8_t *counted = NULL;          /* names of earlier runs seen in this run */
    if (len) {
      counted = calloc(len, 1);
      if (!counted) { free(z); return -1; }
    }
    for (uint32_t i = 0; i < d[r]->nzone_issues; i++) {
      const struct cpd_zone_issue *e = &d[r]->zone_issues[i];
      uint64_t any = 0;
      for (int k = 0; k < CPD_ZI_KINDS; k++) any |= e->n[k];
      if (!any) continue;
      const char *name = d[r]->strings[e->zone];
      size_t j = 0;
      while (j < len && strcmp(z[j].name, name)) j++;
      if (j == len) {
        if (len == cap) {
          cap = cap ? 2 * cap : 16;
          struct zone_tally *nz = realloc(z, cap * sizeof *z);
          if (!nz) { free(z); free(counted); return -1; }
          z = nz;
        }
        memset(&z[len], 0, sizeof z[len]);
        z[len].name = name;
        z[len].runs = 1;
        len++;
      } else if (j < first_of_run && !counted[j]) {
        counted[j] = 1;
        z[j].runs++;
      }
      for (int k = 0; k < CPD_ZI_KINDS; k++) z[j].n[k] += e->n[k];
    }
    free(counted);
  }
  if (len) qsort(z, len, sizeof *z, by_name);
  *out = z;
  return (int)len;
}

static const char *shown(const char *name)
{
  return name[0] ? name : "(an END() with no zone open)";
}

int zone_warn(struct cpd_dump *const *d, uint32_t n)
{
  struct zone_tally *z;
  int len = zone_tally(d, n, &z);
  if (len < 0) return 0;
  for (int i = 0; i < len; i++) {
    char line[1024];
    size_t at = 0;
    for (int k = 0; k < CPD_ZI_KINDS; k++) {
      if (!z[i].n[k] || at >= sizeof line) continue;
      at += (size_t)snprintf(line + at, sizeof line - at, "%s%" PRIu64 " %s", at ? "; " : "",
                             z[i].n[k], kind_text[k]);
    }
    if (n > 1)
      tool_warn("zone \"%s\": %s (in %u of %u runs)", shown(z[i].name), line, z[i].runs, n);
    else
      tool_warn("zone \"%s\": %s", shown(z[i].name), line);
  }
  free(z);
  return len;
}

void zone_print_info(FILE *f, const struct cpd_dump *d)
{
  uint32_t zones = 0;
  for (uint32_t i = 0; i < d->nthreads; i++)
    for (uint32_t k = 1; k < d->threads[i].node_count; k++)
      if (CPD_KEY_IS_ZONE(d->threads[i].nodes[k].key)) zones++;
  if (!d->nstrings && !d->nzone_issues) return;
  fprintf(f, "zones:       %u names, %u zone nodes\n", d->nstrings, zones);
  /* One line per thread, zone name and kind: records of a pair are added. */
  for (uint32_t i = 0; i < d->nzone_issues; i++) {
    const struct cpd_zone_issue *e = &d->zone_issues[i];
    const char *name = d->strings[e->zone];
    uint32_t j = 0;
    while (j < i && (d->zone_issues[j].thread != e->thread ||
                     strcmp(d->strings[d->zone_issues[j].zone], name)))
      j++;
    if (j < i) continue;                          /* printed with record j */
    uint64_t n[CPD_ZI_KINDS];
    for (int k = 0; k < CPD_ZI_KINDS; k++) n[k] = 0;
    for (j = i; j < d->nzone_issues; j++)
      if (d->zone_issues[j].thread == e->thread && !strcmp(d->strings[d->zone_issues[j].zone], name))
        for (int k = 0; k < CPD_ZI_KINDS; k++) n[k] += d->zone_issues[j].n[k];
    for (int k = 0; k < CPD_ZI_KINDS; k++)
      if (n[k])
        fprintf(f, "  warning: zone \"%s\" in tid %" PRIu64 ": %" PRIu64 " %s\n", shown(name),
                d->threads[e->thread].tid, n[k], kind_text[k]);
  }
}
