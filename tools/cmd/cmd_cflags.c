/*
** cmd_cflags.c -- 'capprof cflags [COMPILER]' and 'capprof ldflags': the
** instrumentation flags capprof recommends for a compiler, found by asking
** the compiler what it is (its predefined macros), and the flags that link
** the runtime. cmake/capprofInstrument.cmake makes the same choice.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "model/tool.h"

/* Where libcapprof is installed relative to the tool (CMake sets it). */
#ifndef CAPPROF_REL_LIBDIR
#  define CAPPROF_REL_LIBDIR "../lib"
#endif

#if defined(__x86_64__) || defined(_M_X64)
#  define CAPPROF_TOOL_X86_64 1
#else
#  define CAPPROF_TOOL_X86_64 0
#endif

#if defined(_WIN32)
#  include <windows.h>
#  define popen _popen
#  define pclose _pclose
#  define NULL_DEVICE "NUL"
#  define CAPPROF_TOOL_WINDOWS 1
static int self_path(char *buf, size_t n)
{
  DWORD k = GetModuleFileNameA(NULL, buf, (DWORD)n);
  return k > 0 && k < n ? 0 : -1;
}
#else
#  include <unistd.h>
#  define NULL_DEVICE "/dev/null"
#  define CAPPROF_TOOL_WINDOWS 0
static int self_path(char *buf, size_t n)
{
  ssize_t k = readlink("/proc/self/exe", buf, n - 1);
  if (k <= 0) return -1;
  buf[k] = '\0';
  return 0;
}
#endif

/* The directory holding libcapprof: the install's library directory beside
** this tool, or the tool's own directory (a build tree). 0 or -1. */
static int tool_lib_dir(char *dir, size_t n)
{
  char self[4096];
  if (self_path(self, sizeof self) != 0) return -1;
  char *slash = strrchr(self, '/');
  if (!slash) slash = strrchr(self, '\\');
  if (!slash) return -1;
  *slash = '\0';
  const char *try[2] = { CAPPROF_REL_LIBDIR, "." };
  for (int i = 0; i < 2; i++) {
    char probe[8800];
    if (snprintf(dir, n, "%s/%s", self, try[i]) >= (int)n) return -1;
    if (snprintf(probe, sizeof probe, "%s/libcapprof.a", dir) >= (int)sizeof probe) return -1;
    FILE *f = fopen(probe, "rb");
    if (f) {
      fclose(f);
      if (i == 1) snprintf(dir, n, "%s", self);
      return 0;
    }
  }
  return -1;
}

/* What a compiler is, from its predefined macros. */
struct compiler {
  int known;               /* the compiler ran, or its name told */
  int clang, gcc_major;    /* __clang__; __GNUC__ of GCC (0 for Clang) */
  int x86_64, elf, windows, msvc;
};

static const char *base_name(const char *path)
{
  const char *s = strrchr(path, '/'), *b = strrchr(path, '\\');
  if (b && (!s || b > s)) s = b;
  return s ? s + 1 : path;
}

/* Run "CC -dM -E -x c NULL" and read the macros; 0 when it ran. Only
** characters that are safe unquoted in a shell command are accepted. */
static int ask(const char *cc, struct compiler *c)
{
  for (const char *p = cc; *p; p++)
    if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+./", *p))
      return -1;
  char cmd[1200];
  if (strlen(cc) > 1000) return -1;
  snprintf(cmd, sizeof cmd, "%.1000s -dM -E -x c " NULL_DEVICE " 2>" NULL_DEVICE, cc);
  FILE *f = popen(cmd, "r");
  if (!f) return -1;
  char line[512];
  int any = 0, gnuc = 0;
  while (fgets(line, sizeof line, f)) {
    any = 1;
    int v;
    if (!strncmp(line, "#define __clang__ ", 18)) c->clang = 1;
    else if (sscanf(line, "#define __GNUC__ %d", &v) == 1) gnuc = v;
    else if (!strncmp(line, "#define __x86_64__ ", 19)) c->x86_64 = 1;
    else if (!strncmp(line, "#define __ELF__ ", 16)) c->elf = 1;
    else if (!strncmp(line, "#define _WIN32 ", 15)) c->windows = 1;
  }
  int status = pclose(f);
  if (!any || status != 0) return -1;
  c->gcc_major = c->clang ? 0 : gnuc;
  c->known = 1;
  return 0;
}

/* Without a compiler to ask: the name, for this tool's own platform. */
static void guess(const char *cc, struct compiler *c)
{
  const char *b = base_name(cc);
  c->x86_64 = CAPPROF_TOOL_X86_64;
  c->elf = !CAPPROF_TOOL_WINDOWS;
  c->windows = CAPPROF_TOOL_WINDOWS;
  if (!strcmp(b, "cl") || !strcmp(b, "cl.exe")) {
    c->msvc = c->known = 1;
  } else if (strstr(b, "clang")) {
    c->clang = c->known = 1;
  } else if (strstr(b, "gcc") || strstr(b, "g++") || !strcmp(b, "cc") || !strcmp(b, "c++")) {
    c->gcc_major = 12;     /* assume a recent GCC */
    c->known = 1;
  }
}

/* The recommendation, documented in docs/runtime.md ("Compiler flags"). */
static const char *flags_for(const struct compiler *c)
{
  if (c->msvc) return "/Gh /GH";
  if (c->clang) return "-finstrument-functions-after-inlining";
  /* MinGW-w64 GCC: the MSVC /Gh /GH placement, _penter first and
  ** __return__ (linked to _pexit by 'capprof ldflags') before each ret;
  ** without sibling calls, which would turn a tail call into a jump past
  ** its callee's exit hook (and tail recursion into a loop). */
  if (c->gcc_major && c->x86_64 && c->windows)
    return "-pg -mfentry -mfentry-name=_penter -minstrument-return=call -fno-optimize-sibling-calls";
  /* GCC: hooks after inlining where capprof has __fentry__/__return__. */
  if (c->gcc_major >= 9 && c->x86_64 && c->elf && !c->windows)
    return "-pg -mfentry -minstrument-return=call";
  /* Elsewhere every inlined function keeps its hooks: at least leave the
  ** C and C++ libraries' headers out. */
  return "-finstrument-functions -finstrument-functions-exclude-file-list=/usr/include/,/include/c++/";
}

int cmd_cflags(int argc, char **argv)
{
  if (argc > 2 || (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))) {
    FILE *f = argc > 2 ? stderr : stdout;
    fprintf(f, "usage: capprof cflags [COMPILER]\n"
               "Prints the instrumentation flags capprof recommends for COMPILER (default cc):\n"
               "gcc, g++, clang, clang++, cc or a path. It runs COMPILER -dM -E to learn what\n"
               "it is. Compile flags only; link with 'capprof ldflags'. In a Makefile:\n"
               "  CFLAGS += $(shell capprof cflags $(CC))\n");
    return argc > 2 ? 2 : 0;
  }
  const char *cc = argc == 2 ? argv[1] : "cc";
  struct compiler c;
  memset(&c, 0, sizeof c);
  if (ask(cc, &c) != 0) {
    memset(&c, 0, sizeof c);
    guess(cc, &c);
    if (!c.known) return tool_error("cflags: cannot run '%s' to learn what compiler it is", cc);
  }
  printf("%s\n", flags_for(&c));
  return 0;
}

/* The link flags for a MinGW-w64 GCC (x86-64): no -ldl, no pthread; the
** exit hook GCC calls (__return__) is _pexit, which -u keeps in a static
** link; -pg's call from main to _monstartup is the runtime's empty one. The
** libraries are the MinGW build's: found beside a capprof.exe, else on the
** linker's search path (-L). */
static void mingw_ldflags(int stat, const char *dir, int penter)
{
  /* 32-bit MinGW and Clang: the -finstrument-functions hooks, nothing to map. */
  const char *hooks = penter ? "-Wl,--defsym,__return__=_pexit -Wl,-u,_pexit" : "";
  if (dir && stat) printf("%s/libcapprof.a%s%s\n", dir, *hooks ? " " : "", hooks);
  else if (dir) printf("-L%s -lcapprof%s%s\n", dir, *hooks ? " " : "", hooks);
  else printf("%s%s%s\n", stat ? "-l:libcapprof.a" : "-lcapprof", *hooks ? " " : "", hooks);
}

int cmd_ldflags(int argc, char **argv)
{
  int stat = 0;
  const char *cc = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--static")) stat = 1;
    else if (!strcmp(argv[i], "--shared")) stat = 0;
    else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf("usage: capprof ldflags [--shared | --static] [COMPILER]\n"
             "Prints the flags that link the capprof runtime: the shared library (default)\n"
             "or the static one, from the directory this capprof was installed with. With\n"
             "COMPILER (as for cflags), the flags for that compiler's target: a MinGW-w64\n"
             "GCC gets the Windows runtime's (libcapprof from -L or beside capprof.exe).\n"
             "In a Makefile: LDLIBS += $(shell capprof ldflags $(CC))\n");
      return 0;
    } else if (argv[i][0] != '-' && !cc) {
      cc = argv[i];
    } else {
      tool_error("ldflags: unknown option '%s' (see 'capprof ldflags --help')", argv[i]);
      return 2;
    }
  }
  char dir[4096];
  int have_dir = tool_lib_dir(dir, sizeof dir) == 0;
  if (cc) {
    struct compiler c;
    memset(&c, 0, sizeof c);
    if (ask(cc, &c) != 0) {
      memset(&c, 0, sizeof c);
      guess(cc, &c);
      if (strstr(base_name(cc), "mingw")) c.windows = 1;
    }
    if (c.windows && !c.msvc) {
      /* This tool's own directory holds the MinGW build only on Windows. */
      mingw_ldflags(stat, have_dir && CAPPROF_TOOL_WINDOWS ? dir : NULL,
                    c.x86_64 && !c.clang && c.gcc_major);
      return 0;
    }
  }
  if (!have_dir) {
    /* Not found beside the tool: rely on the linker's search path. */
    printf(stat ? "-l:libcapprof.a -lpthread -ldl -Wl,--export-dynamic-symbol=__return__\n"
                : "-lcapprof -lpthread -ldl\n");
    return 0;
  }
  if (stat)
    printf("%s/libcapprof.a -lpthread -ldl -Wl,--export-dynamic-symbol=__return__\n", dir);
  else
    printf("-L%s -Wl,-rpath,%s -lcapprof -lpthread -ldl\n", dir, dir);
  return 0;
}
