/*
** tool.c -- small helpers of the tool: error lines, loading a dump with a
** one-line error, and formatting durations and counts for people.
*/
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/tool.h"

int tool_progress_on;
double tool_progress_delay = 1;
double (*tool_progress_clock)(void);
static size_t progress_len;        /* characters of the line shown, 0: none */
static double progress_next;       /* when the line may change next */

void tool_progress(const char *what, uint64_t done, uint64_t total)
{
  static unsigned calls;
  if (!tool_progress_on || !tool_progress_clock || (done && (++calls & 1023) != 1))
    return;                                        /* the clock now and then */
  double now = tool_progress_clock();
  if (now < tool_progress_delay || (progress_len && now < progress_next)) return;
  progress_next = now + 0.1;
  char line[160];
  int n = total ? snprintf(line, sizeof line, "capprof: %s: %.0f%%", what,
                           100.0 * (double)done / (double)total)
                : snprintf(line, sizeof line, "capprof: %s...", what);
  if (n < 0) return;
  size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
  fprintf(stderr, "\r%s%*s", line, progress_len > len ? (int)(progress_len - len) : 0, "");
  fflush(stderr);
  progress_len = len;
}

void tool_progress_done(void)
{
  if (!progress_len) return;
  fprintf(stderr, "\r%*s\r", (int)progress_len, "");
  fflush(stderr);
  progress_len = 0;
}

int tool_error(const char *fmt, ...)
{
  va_list ap;
  tool_progress_done();
  va_start(ap, fmt);
  fputs("capprof: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return 1;
}

int tool_quiet;

/* The warnings printed so far, for pages that show them (export_html.c). */
#define KEPT_WARNINGS 64
static char *kept[KEPT_WARNINGS];
static size_t nkept, ndropped;

void tool_warn(const char *fmt, ...)
{
  if (tool_quiet) return;
  tool_progress_done();
  va_list ap;
  va_start(ap, fmt);
  fputs("capprof: warning: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  if (nkept == KEPT_WARNINGS) { ndropped++; return; }
  char line[1024];
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if ((kept[nkept] = strdup(line)) != NULL) nkept++;
}

size_t tool_warnings(const char *const **lines, size_t *dropped)
{
  *lines = (const char *const *)kept;
  if (dropped) *dropped = ndropped;
  return nkept;
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

/* Decimal digits of v into buf (at least n bytes); returns the length.
** Report output formats millions of numbers: no printf on this path. */
size_t fmt_u64(uint64_t v, char *buf, size_t n)
{
  char tmp[24];
  size_t len = 0, o = 0;
  do { tmp[len++] = (char)('0' + v % 10); v /= 10; } while (v);
  while (len && o + 1 < n) buf[o++] = tmp[--len];
  buf[o] = '\0';
  return o;
}

const char *fmt_ns(double ns, char *buf, size_t n)
{
  static const struct { double div; const char *unit; } u[] = {
    { 1e9, "s" }, { 1e6, "ms" }, { 1e3, "us" }, { 1, "ns" },
  };
  if (!(ns >= 0) || ns > 1e15 || n < 32) {      /* NaN, absurd, or tiny buffer */
    snprintf(buf, n, "%.3g ns", ns);
    return buf;
  }
  size_t i = 0;
  while (i < 3 && ns < u[i].div) i++;
  double v = ns / u[i].div;
  unsigned dec = i == 3 || v >= 100 ? 0 : v >= 10 ? 1 : 2;
  uint64_t scale = dec == 2 ? 100 : dec == 1 ? 10 : 1;
  uint64_t x = (uint64_t)(v * (double)scale + 0.5);
  size_t o = fmt_u64(x / scale, buf, n);
  if (dec) {
    buf[o++] = '.';
    uint64_t frac = x % scale;
    if (dec == 2) buf[o++] = (char)('0' + frac / 10);
    buf[o++] = (char)('0' + frac % 10);
  }
  buf[o++] = ' ';
  strcpy(buf + o, u[i].unit);
  return buf;
}

const char *fmt_count(uint64_t v, char *buf, size_t n)
{
  char tmp[32];
  size_t len = fmt_u64(v, tmp, sizeof tmp), o = 0;
  for (size_t i = 0; i < len && o + 2 < n; i++) {
    if (i && (len - i) % 3 == 0) buf[o++] = ',';
    buf[o++] = tmp[i];
  }
  buf[o] = '\0';
  return buf;
}

const char *fmt_mean(double v, char *buf, size_t n)
{
  if (!(v >= 0) || v > 1e18 || n < 32) {
    snprintf(buf, n, "%.1f", v);
    return buf;
  }
  uint64_t tenths = (uint64_t)(v * 10 + 0.5);
  fmt_count(tenths / 10, buf, n);
  if (tenths % 10) {
    size_t o = strlen(buf);
    buf[o++] = '.';
    buf[o++] = (char)('0' + tenths % 10);
    buf[o] = '\0';
  }
  return buf;
}

int tool_bad_option(const char *cmd, char **argv, int c)
{
  extern int optind, optopt;
  const char *arg = optind > 0 ? argv[optind - 1] : "?";
  if (c == ':')
    return 1 + tool_error("%s: option '%s' needs a value (see 'capprof %s --help')", cmd, arg,
                          cmd);
  if (!strncmp(arg, "--", 2)) {
    /* getopt_long leaves optopt 0 for an unknown long option and sets it to
    ** the option's value for a known one given a value it does not take. */
    size_t len = strcspn(arg, "=");
    return 1 + tool_error("%s: %s option '%.*s' (see 'capprof %s --help')", cmd,
                          arg[len] && optopt ? "unexpected value for" : "unknown", (int)len,
                          arg, cmd);
  }
  if (optopt)
    return 1 + tool_error("%s: unknown option '-%c' (see 'capprof %s --help')", cmd, optopt, cmd);
  return 1 + tool_error("%s: unknown option '%s' (see 'capprof %s --help')", cmd, arg, cmd);
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
  double v = whole > 0 ? 100.0 * part / whole : 0.0;
  if (!(v >= 0) || v > 1e12 || n < 32) {
    snprintf(buf, n, "%.1f%%", v);
    return buf;
  }
  uint64_t x = (uint64_t)(v * 10 + 0.5);
  size_t o = fmt_u64(x / 10, buf, n);
  buf[o++] = '.';
  buf[o++] = (char)('0' + x % 10);
  buf[o++] = '%';
  buf[o] = '\0';
  return buf;
}
