/*
** getopt.h (tools/platform/win) -- getopt_long for the MSVC build of the tool, whose
** C runtime has none (MinGW and glibc have it). Used only when CMake builds
** the tool with MSVC; the subset the subcommands use, with GNU behaviour.
*/
#ifndef CAPPROF_WIN_GETOPT_H
#define CAPPROF_WIN_GETOPT_H

#ifdef __cplusplus
extern "C" {
#endif

extern char *optarg;   /* argument of the option just returned */
extern int optind;     /* next argv element to scan; first operand at the end */
extern int opterr;     /* ignored: errors are never printed here */
extern int optopt;     /* the offending short option, 0 for a long one */

#define no_argument       0
#define required_argument 1
#define optional_argument 2

struct option {
  const char *name;
  int has_arg;         /* no_argument, required_argument, optional_argument */
  int *flag;           /* NULL: return val; else *flag = val, return 0 */
  int val;
};

/* GNU getopt_long: options and operands may be mixed (operands are moved
** behind the options, in order), "--" ends options, long options may be
** abbreviated to a unique prefix and take "--name=value" or "--name value".
** Returns the option, '?' for an unknown one, ':' (optstring starting with
** ':') or '?' for a missing value, -1 at the end. Not thread-safe. */
int getopt_long(int argc, char *const argv[], const char *optstring,
                const struct option *longopts, int *longindex);

#ifdef __cplusplus
}
#endif

#endif
