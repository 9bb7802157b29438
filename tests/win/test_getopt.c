/*
** test_getopt.c -- runs argument vectors through getopt_long and prints
** what it returns, optarg, optopt and the operands left at argv[optind..].
** Built twice on Linux, with glibc's getopt_long and with
** tools/platform/win/getopt.c (the MSVC build's), and the two outputs must be
** identical.
*/
#include <stdio.h>
#include <string.h>

#ifdef OWN_GETOPT
#  include "../../tools/platform/win/getopt.c"
#else
#  include <getopt.h>
#endif

static const struct option longopts[] = {
  { "sort", required_argument, NULL, 's' },
  { "limit", required_argument, NULL, 'n' },
  { "raw", no_argument, NULL, 'r' },
  { "help", no_argument, NULL, 'h' },
  { "rawest", no_argument, NULL, 'R' },
  { NULL, 0, NULL, 0 }
};

static const char *cases[][8] = {
  { "a.dump", NULL },
  { "-r", "a.dump", NULL },
  { "a.dump", "-r", "b.dump", NULL },
  { "-rh", "x", NULL },
  { "-n5", "-s", "total", "d", NULL },
  { "--sort=calls", "--limit", "7", "d1", "d2", NULL },
  { "d1", "--sor", "self", "d2", NULL },
  { "--ra", "d", NULL },
  { "--raw=1", "d", NULL },
  { "-x", "d", NULL },
  { "--bogus", "d", NULL },
  { "d", "-n", NULL },
  { "--limit", NULL },
  { "d1", "--", "-r", "d2", NULL },
  { "-", "-r", NULL },
  { "-rx", "d", NULL },
  { NULL }
};

int main(void)
{
  for (int k = 0; cases[k][0]; k++) {
    char *argv[10];
    int argc = 0;
    argv[argc++] = (char *)"cmd";
    for (int i = 0; cases[k][i]; i++) argv[argc++] = (char *)cases[k][i];
    argv[argc] = NULL;
    optind = 0;
    opterr = 0;
    printf("case %d:", k);
    int c;
    while ((c = getopt_long(argc, argv, ":s:n:rh", longopts, NULL)) != -1) {
      printf(" [%c", c);
      if (c == '?' || c == ':') printf(" optopt=%d", optopt);
      else if (optarg) printf(" %s", optarg);
      printf("]");
    }
    printf(" | operands:");
    for (int i = optind; i < argc; i++) printf(" %s", argv[i]);
    printf("\n");
  }
  return 0;
}
