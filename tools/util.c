/*
** util.c -- small helpers of the tool: error lines, loading a dump with a
** one-line error, and formatting durations and counts for people.
*/
#include <stdarg.h>
#include <stdio.h>

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
