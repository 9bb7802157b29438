/*
** getopt.c (tools/platform/win) -- getopt_long for the MSVC build of the tool (see
** getopt.h). Operands met among the options are rotated to the end of argv
** as they are met, so at the end argv[optind..] holds them in order.
*/
#include <string.h>

#include "getopt.h"

char *optarg;
int optind = 1, opterr = 1, optopt;

static int cluster;        /* offset in argv[optind] of the next short option */
static int operands;       /* operands moved to the end so far */

/* Move argv[from..to-1] to the end of argv[from..argc-1], keeping order. */
static void rotate(char **argv, int from, int mid, int argc)
{
  while (from < mid && mid < argc) {
    char *x = argv[from];
    memmove(&argv[from], &argv[from + 1], (size_t)(argc - from - 1) * sizeof *argv);
    argv[argc - 1] = x;
    mid--;
  }
}

static int missing(const char *optstring)
{
  return optstring[0] == ':' ? ':' : '?';
}

static int long_option(int argc, char **argv, const char *optstring,
                       const struct option *longopts, int *longindex)
{
  const char *name = argv[optind] + 2;
  const char *eq = strchr(name, '=');
  size_t len = eq ? (size_t)(eq - name) : strlen(name);
  int found = -1, matches = 0;
  for (int i = 0; longopts && longopts[i].name; i++) {
    if (strncmp(longopts[i].name, name, len) != 0) continue;
    if (strlen(longopts[i].name) == len) { found = i; matches = 1; break; }
    found = i;
    matches++;
  }
  optind++;
  optopt = 0;
  if (matches != 1) return '?';                      /* unknown or ambiguous */
  const struct option *o = &longopts[found];
  if (longindex) *longindex = found;
  optarg = NULL;
  if (o->has_arg == no_argument && eq) { optopt = o->val; return '?'; }
  if (o->has_arg != no_argument && eq) optarg = (char *)eq + 1;
  if (o->has_arg == required_argument && !eq) {
    if (optind >= argc - operands) { optopt = o->val; return missing(optstring); }
    optarg = argv[optind++];
  }
  if (o->flag) { *o->flag = o->val; return 0; }
  return o->val;
}

int getopt_long(int argc, char *const argv_[], const char *optstring,
                const struct option *longopts, int *longindex)
{
  char **argv = (char **)argv_;
  const char *spec = optstring[0] == ':' ? optstring + 1 : optstring;
  optarg = NULL;
  if (optind == 0) { optind = 1; cluster = 0; operands = 0; }
  if (!cluster) {
    for (;;) {
      int end = argc - operands;
      if (optind >= end) { optind = end; return -1; }
      const char *a = argv[optind];
      if (a[0] == '-' && a[1]) break;
      rotate(argv, optind, optind + 1, argc);        /* an operand: to the end */
      operands++;
    }
    if (!strcmp(argv[optind], "--")) {
      /* "--" stays; the operands moved so far go right after it, before
      ** those that follow it, and optind points at them. */
      rotate(argv, optind + 1, argc - operands, argc);
      optind++;
      return -1;
    }
    if (argv[optind][1] == '-') return long_option(argc, argv, optstring, longopts, longindex);
    cluster = 1;
  }
  char c = argv[optind][cluster++];
  const char *p = c != ':' ? strchr(spec, c) : NULL;
  int last = argv[optind][cluster] == '\0';
  if (!p) {
    optopt = c;
    if (last) { optind++; cluster = 0; }
    return '?';
  }
  if (p[1] == ':') {
    if (!last) optarg = &argv[optind][cluster];
    else if (optind + 1 < argc - operands) optarg = argv[++optind];
    else { optopt = c; optind++; cluster = 0; return missing(optstring); }
    optind++;
    cluster = 0;
    return c;
  }
  if (last) { optind++; cluster = 0; }
  return c;
}
