/*
** cmd_run.c -- 'capprof run [OPTIONS] [--] PROGRAM [ARGS...]': profiles a
** program without recompiling it (WAP's job). The settings travel to the
** runtime in environment variables, so every process of the tree started
** (fork, exec, scripts) carries them and writes its own dump; the platform
** file (launch/launch_posix.c, launch_win.c) loads the runtime and starts the program.
*/
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "launch/launch.h"
#include "model/tool.h"

#define DEFAULT_API "default"

static void usage(FILE *f)
{
  fprintf(f,
    "usage: capprof run [OPTIONS] [--] PROGRAM [ARGS...]\n"
    "Runs PROGRAM with the capprof runtime loaded and its calls into system\n"
    "libraries counted and timed (no recompiling); programs built with hooks are\n"
    "profiled as usual too. Every process started writes its own dump. Exits with\n"
    "PROGRAM's status (killed by a signal: 128 + signal).\n\n"
    "  --api=SPEC        libraries to intercept: a comma list of names\n"
    "                    (libc.so.6,libm.so.6,libssl.so.3 or libc,libm), 'all', or\n"
    "                    'default': the C and C++ runtimes and libm (Windows:\n"
    "                    KERNEL32, USER32, GDI32, ADVAPI32 and the C runtime DLL)\n"
    "  --no-api          no interception: the runtime only (programs built with hooks)\n"
    "  --sample[=SOURCE[:INTERVAL]]  also sample every thread (CAPPROF_SAMPLE):\n"
    "                    time:1ms by default; SOURCE time, task-clock, cpu-clock,\n"
    "                    cpu-timer, or a counter where the processor has them\n"
    "                    (cycles, instructions, branch-misses, cache-misses...)\n"
    "  -o, --output=PATTERN  dump path pattern, as CAPPROF_OUTPUT (%%n program name,\n"
    "                    %%p pid, %%t start time); default %%n.%%p.capprof\n"
    "  -q, --quiet       do not print the line naming the dumps written\n"
    "  -h, --help        this text\n\n"
    "Then: capprof report --api DUMP... lists the library calls per library;\n"
    "with --sample, capprof report --samples and capprof annotate FUNC DUMP\n"
    "show where the CPU time went.\n");
}

static int add_setting(struct run_opts *o, const char *name, const char *value)
{
  for (int i = 0; i < o->nenv; i++) {
    if (strcmp(o->env[i].name, name)) continue;
    o->env[i].value = value;
    return 0;
  }
  if (o->nenv == RUN_SETTINGS_MAX) return tool_error("run: too many settings");
  o->env[o->nenv].name = name;
  o->env[o->nenv].value = value;
  o->nenv++;
  return 0;
}

/* Print the dumps the log names, relative to the current directory when
** inside it, in one line. */
static void report_dumps(const char *log)
{
  FILE *f = fopen(log, "r");
  char cwd[4096], line[4200];
  size_t cwdlen = 0;
  const char *pwd = getenv("PWD");
  if (pwd && strlen(pwd) < sizeof cwd) {
    strcpy(cwd, pwd);
    cwdlen = strlen(cwd);
  }
  int n = 0;
  size_t cap = 1024, len = 0;
  char *all = malloc(cap);
  if (f && all) {
    all[0] = '\0';
    while (fgets(line, sizeof line, f)) {
      line[strcspn(line, "\n")] = '\0';
      if (!line[0]) continue;
      const char *shown = line;
      if (cwdlen && !strncmp(line, cwd, cwdlen) && line[cwdlen] == '/')
        shown = line + cwdlen + 1;
      size_t k = strlen(shown);
      if (len + k + 3 > cap) {
        char *bigger = realloc(all, (cap + k) * 2);
        if (!bigger) break;
        all = bigger;
        cap = (cap + k) * 2;
      }
      if (n) {
        memcpy(all + len, ", ", 2);
        len += 2;
      }
      memcpy(all + len, shown, k + 1);
      len += k;
      n++;
    }
  }
  if (n == 0)
    fprintf(stderr, "capprof: no dump was written (see docs/run.md: killed processes and "
                    "programs without the runtime write none)\n");
  else
    fprintf(stderr, "capprof: wrote %d dump%s: %s\n", n, n == 1 ? "" : "s", all);
  free(all);
  if (f) fclose(f);
}

int cmd_run(int argc, char **argv)
{
  static const struct option longopts[] = {
    { "api", required_argument, NULL, 'a' },
    { "no-api", no_argument, NULL, 'N' },
    { "sample", optional_argument, NULL, 'S' },
    { "output", required_argument, NULL, 'o' },
    { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 }
  };
  struct run_opts o;
  memset(&o, 0, sizeof o);
  const char *api = DEFAULT_API;
  int c;
  opterr = 0;
  /* '+': options end at PROGRAM, whose own options are its business. */
  while ((c = getopt_long(argc, argv, "+:o:qh", longopts, NULL)) != -1) {
    switch (c) {
    case 'a':
      if (!optarg[0]) return tool_error("run: --api needs a library list, 'all' or 'default'");
      api = optarg;
      break;
    case 'N': o.no_api = 1; break;
    case 'S':
      /* The runtime checks the source and interval and says what is wrong. */
      if (add_setting(&o, RUN_VAR(SAMPLE), optarg && optarg[0] ? optarg : "time:1ms")) return 1;
      break;
    case 'o':
      if (!optarg[0]) return tool_error("run: --output needs a pattern");
      if (add_setting(&o, RUN_VAR(OUTPUT), optarg)) return 1;
      break;
    case 'q': o.quiet = 1; break;
    case 'h': usage(stdout); return 0;
    default: return tool_bad_option("run", argv, c);
    }
  }
  if (optind >= argc) {
    usage(stderr);
    return 2;
  }
  o.argv = argv + optind;
  if (add_setting(&o, RUN_VAR(API), o.no_api ? NULL : api)) return 1;
  static char log[4096];
  if (run_log_create(log, sizeof log) != 0) return 1;
  if (add_setting(&o, RUN_VAR(RUN_LOG), log)) return 1;
  int status = run_program(&o);
  if (!o.quiet) report_dumps(log);
  remove(log);
  fflush(stdout);
  return status;
}
