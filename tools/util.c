/*
** util.c -- small helpers of the tool: error lines, loading a dump with a
** one-line error, and formatting durations and counts for people.
*/
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

int tool_error(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fputs("capprof: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return 1;
}

void tool_warn(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fputs("capprof: warning: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

struct cpd_dump *tool_load(const char *path)
{
  struct cpd_dump *d;
  char err[256];
  if (cpd_load(path, &d, err, sizeof err) != 0) {
    tool_error("%s: %s", path, err);
    return NULL;
  }
  return d;
}

const char *fmt_ns(double ns, char *buf, size_t n)
{
  static const struct { double div; const char *unit; } u[] = {
    { 1e9, "s" }, { 1e6, "ms" }, { 1e3, "us" },
  };
  for (size_t i = 0; i < sizeof u / sizeof u[0]; i++) {
    if (ns >= u[i].div) {
      double v = ns / u[i].div;
      snprintf(buf, n, v >= 100 ? "%.0f %s" : v >= 10 ? "%.1f %s" : "%.2f %s", v, u[i].unit);
      return buf;
    }
  }
  snprintf(buf, n, "%.0f ns", ns);
  return buf;
}

const char *fmt_count(uint64_t v, char *buf, size_t n)
{
  char tmp[32];
  int len = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v), o = 0;
  for (int i = 0; i < len && (size_t)o + 2 < n; i++) {
    if (i && (len - i) % 3 == 0) buf[o++] = ',';
    buf[o++] = tmp[i];
  }
  buf[o] = '\0';
  return buf;
}

int tool_bad_option(const char *cmd, char **argv, int c)
{
  extern int optind, optopt;
  if (c == ':')
    return 1 + tool_error("%s: option '%s' needs a value (see 'capprof %s --help')", cmd,
                      argv[optind - 1], cmd);
  if (optopt && optopt != '?')
    return 1 + tool_error("%s: unknown option '-%c' (see 'capprof %s --help')", cmd, optopt, cmd);
  return 1 + tool_error("%s: unknown option '%s' (see 'capprof %s --help')", cmd,
                        argv[optind - 1], cmd);
}

int tool_parse_num(const char *cmd, const char *opt, const char *s, double max, double *out)
{
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (!*s || *end || errno || v < 0 || v > max || v != v)
    return tool_error("%s: %s wants a number from 0 to %g, not '%s'", cmd, opt, max, s);
  *out = v;
  return 0;
}

FILE *tool_open_out(const char *path)
{
  if (!path || !strcmp(path, "-")) return stdout;
  FILE *f = fopen(path, "w");
  if (!f) tool_error("%s: cannot create: %s", path, strerror(errno));
  return f;
}

int tool_close_out(FILE *f, const char *path)
{
  int bad = ferror(f);
  if (f != stdout) bad |= fclose(f) != 0;
  else bad |= fflush(f) != 0;
  if (bad) return tool_error("%s: write error", path && strcmp(path, "-") ? path : "stdout");
  return 0;
}

const char *fmt_pct(double part, double whole, char *buf, size_t n)
{
  snprintf(buf, n, "%.1f%%", whole > 0 ? 100.0 * part / whole : 0.0);
  return buf;
}
