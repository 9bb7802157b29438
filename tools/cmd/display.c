/*
** display.c -- the look of the tool's terminal output (display.h): display
** options, colour, pager, short C++ names and lines fitted to the terminal.
** The terminal itself is behind platform/term.h, one file per platform.
*/
#include <stdlib.h>
#include <string.h>

#include "cmd/display.h"
#include "model/tool.h"
#include "platform/term.h"

static struct {
  int color;            /* -1 auto, 0 never, 1 always */
  int pager;            /* 0 after --no-pager */
  int full_names;
  int width;            /* --width, -1 unset */
  int on;               /* colour decided on */
  size_t cols;          /* width decided on, 0: no limit */
  size_t pipe_cols;     /* width when not a terminal, 0: no limit */
} disp = { -1, 1, 0, -1, 0, 0, 0 };

const char display_help[] =
  "\nDisplay options (every command):\n"
  "      --color[=WHEN]  colour: auto (default: on a terminal, unless NO_COLOR\n"
  "                      is set), always or never; --no-color is never\n"
  "      --no-pager      do not page long output (pager: $CAPPROF_PAGER,\n"
  "                      $PAGER or less, on a terminal only)\n"
  "      --full-names    C++ names in full, not with <...> for long templates\n"
  "      --width N       fit lines in N columns (0: no limit; default: the\n"
  "                      terminal's width; when not a terminal, 80 for\n"
  "                      report, else no limit)\n";

static int color_when(const char *v)
{
  if (!strcmp(v, "auto")) return -1;
  if (!strcmp(v, "always")) return 1;
  if (!strcmp(v, "never")) return 0;
  return -2;
}

int display_options(int *argc, char **argv)
{
  int o = 1;
  for (int i = 1; i < *argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--")) {                        /* the rest is not ours */
      while (i < *argc) argv[o++] = argv[i++];
      break;
    }
    if (!strcmp(a, "--color") || !strcmp(a, "--colour")) disp.color = 1;
    else if (!strcmp(a, "--no-color") || !strcmp(a, "--no-colour")) disp.color = 0;
    else if (!strncmp(a, "--color=", 8) || !strncmp(a, "--colour=", 9)) {
      int w = color_when(strchr(a, '=') + 1);
      if (w == -2)
        return 1 + tool_error("--color wants auto, always or never, not '%s'", strchr(a, '=') + 1);
      disp.color = w;
    } else if (!strcmp(a, "--no-pager")) disp.pager = 0;
    else if (!strcmp(a, "--full-names")) disp.full_names = 1;
    else if (!strncmp(a, "--width=", 8) || !strcmp(a, "--width")) {
      /* --width N as well as --width=N, as every other option takes it */
      const char *v = a[7] ? a + 8 : i + 1 < *argc ? argv[++i] : NULL;
      if (!v) return 1 + tool_error("option '--width' needs a value (see 'capprof --help')");
      double w;
      if (tool_parse_num("capprof", "--width", v, 100000, &w)) return 2;
      disp.width = (int)w;
    } else argv[o++] = argv[i];
  }
  argv[o] = NULL;
  *argc = o;
  return 0;
}

void display_start(int paged)
{
  int tty = term_is_tty(stdout);
  const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");
  disp.on = disp.color == 1 ||
            (disp.color < 0 && tty && !(nc && *nc) && !(term && !strcmp(term, "dumb")));
  disp.cols = 0;
  if (disp.width >= 0) disp.cols = (size_t)disp.width;
  else if (tty) {
    const char *c = getenv("COLUMNS");
    int w = term_width();
    if (w <= 0 && c) w = atoi(c);
    disp.cols = w > 0 ? (size_t)w : 0;
  } else disp.cols = disp.pipe_cols;
  if (!paged || !disp.pager || !tty) return;
  const char *cmd = getenv("CAPPROF_PAGER");
  if (!cmd) cmd = getenv("PAGER");
  if (!cmd) cmd = "less";
  if (!*cmd || !strcmp(cmd, "cat")) return;
  term_pager_start(cmd);
}

void display_default_width(size_t cols) { disp.pipe_cols = cols; }

size_t disp_width(void) { return disp.cols; }

void display_end(void)
{
  term_pager_end();
}

const char *disp_on(enum disp_kind k)
{
  if (!disp.on) return "";
  switch (k) {
  case DISP_HEADER: return "\033[1m";
  case DISP_HOT: return "\033[31m";
  case DISP_WARM: return "\033[32m";
  case DISP_MARK: return "\033[33m";
  }
  return "";
}

const char *disp_off(void)
{
  return disp.on ? "\033[m" : "";
}

int disp_pct_kind(double part, double whole)
{
  if (!(whole > 0)) return -1;
  double v = 100.0 * part / whole;
  return v >= 5 ? DISP_HOT : v >= 0.5 ? DISP_WARM : -1;
}

/* Whether the '<' or '>' at s[i] is part of an operator's name
** (operator<, operator<<=, operator->, operator>>...), not a template. */
static int in_operator(const char *s, size_t i)
{
  size_t k = i;
  while (k > 0 && strchr("<>=-", s[k - 1]) && i - k < 3) k--;
  return k >= 8 && !strncmp(s + k - 8, "operator", 8);
}

const char *disp_short_name(const char *name, char *buf, size_t n)
{
  if (disp.full_names || !strchr(name, '<')) return name;
  size_t o = 0;
  for (size_t i = 0; name[i] && o + 6 < n;) {
    if (name[i] != '<' || in_operator(name, i)) {
      buf[o++] = name[i++];
      continue;
    }
    /* find the matching '>' of this argument list */
    size_t j = i + 1;
    int depth = 1;
    for (; name[j] && depth; j++) {
      if (name[j] == '<' && !in_operator(name, j)) depth++;
      else if (name[j] == '>' && !in_operator(name, j)) depth--;
    }
    if (depth || j - i - 2 <= 20) {             /* unbalanced, or short: as is */
      size_t len = depth ? 1 : j - i;
      if (o + len + 6 >= n) break;
      memcpy(buf + o, name + i, len);
      o += len;
      i += len;
      continue;
    }
    memcpy(buf + o, "<...>", 5);
    o += 5;
    i = j;
  }
  buf[o] = '\0';
  return buf;
}

/* Columns a UTF-8 string takes (one per character). */
static size_t text_cols(const char *s)
{
  size_t c = 0;
  for (; *s; s++) c += ((unsigned char)*s & 0xC0) != 0x80;
  return c;
}

/* Write the first `cols` characters of s. */
static void put_cols(FILE *f, const char *s, size_t cols)
{
  const char *e = s;
  while (*e && cols) {
    e++;
    while (((unsigned char)*e & 0xC0) == 0x80) e++;
    cols--;
  }
  fwrite(s, 1, (size_t)(e - s), f);
}

void disp_name(FILE *f, const char *name, const char *suffix, size_t used)
{
  char buf[4096];
  const char *s = disp_short_name(name, buf, sizeof buf);
  if (!suffix) suffix = "";
  if (!disp.cols) {                          /* the common case: no width */
    fputs(s, f);
    fputs(suffix, f);
    return;
  }
  size_t ns = text_cols(s), nx = text_cols(suffix);
  size_t avail = disp.cols > used ? disp.cols - used : 0;
  if (disp.cols && avail < 16) avail = 16;   /* a narrow terminal still names it */
  if (!disp.cols || ns + nx <= avail) {
    fputs(s, f);
    fputs(suffix, f);
    return;
  }
  /* The name comes first: the suffix (a location, a mark) stays only when
  ** the name still gets 30 columns, or all it needs. */
  if (nx && avail < nx + (ns < 30 ? ns : 30)) nx = 0;
  if (ns + nx > avail) {
    put_cols(f, s, avail - nx - 3);
    fputs("...", f);
  } else {
    fputs(s, f);
  }
  if (nx) fputs(suffix, f);
}

void disp_line(FILE *f, const char *s)
{
  if (disp.cols && text_cols(s) > disp.cols && disp.cols > 3) {
    put_cols(f, s, disp.cols - 3);
    fputs("...", f);
  } else {
    fputs(s, f);
  }
  putc('\n', f);
}
