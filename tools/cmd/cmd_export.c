/*
** cmd_export.c -- 'capprof export --format=F [-o FILE] DUMP...': writes the
** profile in one of the formats of export.h, for other viewers and tools.
*/
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd/cmd.h"
#include "export/export.h"
#include "model/filter.h"
#include "model/tool.h"

static const struct exporter *const formats[] = {
  &export_json, &export_csv, &export_callgrind, &export_folded, &export_speedscope,
  &export_html, &export_pprof,
};
#define NFORMATS (sizeof formats / sizeof formats[0])

struct export_opts export_opts;

/* Whether the output out would be the input dump in (the same name, or the
** same file under another name where the platform has inode numbers). */
static int same_file(const char *out, const char *in)
{
  if (!strcmp(out, in)) return 1;
  struct stat a, b;
  return stat(out, &a) == 0 && stat(in, &b) == 0 && a.st_ino != 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino;
}

int export_merged_tree(const struct profile *p, struct prof_thread *out)
{
  uint32_t *all = malloc((p->nthreads + 1) * sizeof *all);
  if (!all) return tool_error("export: out of memory");
  for (uint32_t i = 0; i < p->nthreads; i++) all[i] = i;
  int rc = prof_merge_threads(p, all, p->nthreads, out);
  free(all);
  return rc ? tool_error("export: out of memory") : 0;
}

static void usage(void)
{
  printf("usage: capprof export --format=FORMAT [-o FILE] DUMP...\n\n"
         "Writes the profile of the DUMPs (summed, matched by function) for other\n"
         "tools. Times are in nanoseconds with the probe overhead subtracted; JSON\n"
         "also carries the raw times.\n\n"
         "  -f, --format=FORMAT  one of:\n");
  for (size_t i = 0; i < NFORMATS; i++)
    printf("      %-12s %s\n", formats[i]->name, formats[i]->summary);
  printf("  -o, --output=FILE    write to FILE instead of standard output\n"
         "      --per-thread     callgrind: also one file per thread, FILE-01,\n"
         "                       FILE-02... (KCachegrind loads them as parts)\n"
         "      --pretty         json: indented, one member per line (default: compact)\n"
         "      --max-nodes=N    html: at most N call-tree nodes in the page (default\n"
         "                       %u; 0: all); the smallest paths become \"[other]\"\n"
         "  -h, --help           this text\n", EXPORT_HTML_MAX_NODES);
}

int cmd_export(int argc, char **argv)
{
  static const struct option longopts[] = {
    { "format", required_argument, NULL, 'f' },
    { "output", required_argument, NULL, 'o' },
    { "per-thread", no_argument, NULL, 'P' },
    { "max-nodes", required_argument, NULL, 'N' },
    { "pretty", no_argument, NULL, 'p' },
    { "help", no_argument, NULL, 'h' },
    FILTER_LONGOPTS,
    { NULL, 0, NULL, 0 },
  };
  const struct exporter *ex = NULL;
  const char *out = NULL;
  int c, pretty = 0;
  struct filter flt = { 0 };
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":f:o:ht:", longopts, NULL)) != -1) {
    int fo = filter_option("export", c, optarg, &flt);
    if (fo < 0) return 2;
    if (fo) continue;
    switch (c) {
    case 'f':
      ex = NULL;
      for (size_t i = 0; i < NFORMATS; i++)
        if (!strcmp(formats[i]->name, optarg)) ex = formats[i];
      if (!ex) {
        char names[128] = "";
        for (size_t i = 0; i < NFORMATS; i++)
          snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                   formats[i]->name);
        return 1 + tool_error("export: unknown format '%s' (%s)", optarg, names);
      }
      break;
    case 'o': out = optarg; break;
    case 'P': export_opts.per_thread = 1; break;
    case 'p': pretty = 1; break;
    case 'N': {
      double v;
      if (tool_parse_num("export", "--max-nodes", optarg, 4e9, &v)) return 2;
      export_html_max_nodes = (uint32_t)v;
      break;
    }
    case 'h': usage(); fputs(filter_help, stdout); return 0;
    default: return tool_bad_option("export", argv, c);
    }
  }
  if (!ex) return 1 + tool_error("export: no --format given (see 'capprof export --help')");
  if (pretty && ex != &export_json)
    return 1 + tool_error("export: --pretty is for --format=json");
  if (export_opts.per_thread && (ex != &export_callgrind || !out || !strcmp(out, "-")))
    return 1 + tool_error("export: --per-thread wants --format=callgrind and -o FILE");
  export_opts.out = out;
  if (optind >= argc)
    return 1 + tool_error("export: no dump given (usage: capprof export --format=F DUMP...)");
  for (int i = optind; out && strcmp(out, "-") && i < argc; i++)
    if (same_file(out, argv[i]))
      return tool_error("export: %s: the output would overwrite an input", out);
  struct profile *p = prof_load_all(argc - optind, argv + optind);
  if (!p) return 1;
  if (filter_apply(p, &flt) != 0) { prof_free(p); return 1; }
  FILE *f = tool_open_out(out);
  char what[64];
  snprintf(what, sizeof what, "exporting %s", ex->name);
  tool_progress(what, 0, 0);
  int rc = 1;
  if (f && pretty) {            /* compact into a temporary file, then indented */
    FILE *tmp = tmpfile();
    rc = tmp ? ex->write(tmp, p) : tool_error("export: no temporary file for --pretty");
    if (!rc && (fflush(tmp) || ferror(tmp) || fseek(tmp, 0, SEEK_SET) || json_pretty(tmp, f)))
      rc = tool_error("export: --pretty: the temporary file failed");
    if (tmp) fclose(tmp);
  } else if (f) {
    rc = ex->write(f, p);
  }
  if (f && tool_close_out(f, out) != 0 && !rc) rc = 1;
  prof_free(p);
  return rc;
}
