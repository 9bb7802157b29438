/*
** wintest.h -- the tiny harness of the Windows tests: checks that count
** failures and go on, one line per test, and an exit status CTest reads.
** (CMocka is not packaged for MinGW in Debian; see docs/windows.md.)
*/
#ifndef CAPPROF_WINTEST_H
#define CAPPROF_WINTEST_H

#include <stdio.h>

static int wt_failures, wt_checks;

#define WT_CHECK(cond)                                                      \
  do {                                                                      \
    wt_checks++;                                                            \
    if (!(cond)) {                                                          \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      wt_failures++;                                                        \
    }                                                                       \
  } while (0)

#define WT_CHECK_EQ_U64(a, b)                                               \
  do {                                                                      \
    unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b); \
    wt_checks++;                                                            \
    if (a_ != b_) {                                                         \
      fprintf(stderr, "%s:%d: check failed: %s == %s (%llu != %llu)\n",     \
              __FILE__, __LINE__, #a, #b, a_, b_);                          \
      wt_failures++;                                                        \
    }                                                                       \
  } while (0)

#define WT_RUN(fn)                                                          \
  do {                                                                      \
    int before_ = wt_failures;                                              \
    fn();                                                                   \
    printf("[%s] %s\n", wt_failures == before_ ? "  OK  " : " FAIL ", #fn); \
    fflush(stdout);                                                         \
  } while (0)

static int wt_finish(const char *suite)
{
  printf("%s: %d checks, %d failed\n", suite, wt_checks, wt_failures);
  return wt_failures ? 1 : 0;
}

#endif
