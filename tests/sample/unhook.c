/*
** unhook.c -- unhooking (src/patch/patch_x86_64.c), built with GCC's after-inlining
** hooks: leaf() (two return paths) and mid(), its only caller, are frequent
** and short, so leaf is unhooked and then mid; libuser() clears a buffer with
** the C library's memset, whose samples must still be charged to libuser
** once it has no hooks. many0() .. many23(), leaves called in turn, all reach
** throttling's decision together: more than the 16 that learn at once, so
** the others wait for a slot. rec() calls itself one time in eight: a
** recursion, whose own calls lose their hooks with it, does not keep it
** hooked. hub() calls slow(), ~2 us that keeps its hooks, one time in 512
** (the first among them): a frequent, short caller, which throttling times
** one call in P while sampling runs, and never otherwise (leaves only
** then). outer() runs the loop. Prints a checksum,
** which must not depend on the hooks.
**   unhook SECONDS
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned sink;
static size_t clear_bytes = 16384;

__attribute__((noinline)) static unsigned leaf(unsigned x)
{
  if (x & 1) return x * 3u + 1u;
  return x >> 1;
}

__attribute__((noinline)) static unsigned mid(unsigned x)
{
  return leaf(x) + leaf(x + 1u);
}

__attribute__((noinline)) static void libuser(unsigned char *buf, unsigned x)
{
  memset(buf, (int)(x & 0xFF), clear_bytes);
  sink += buf[x % clear_bytes];
}

__attribute__((noinline)) static unsigned rec(unsigned x)
{
  if (x && (x & 7) == 0) return rec(x >> 3) + 1u;
  return x ^ 5u;
}

__attribute__((noinline)) static unsigned slow(unsigned x)
{
  for (unsigned i = 0; i < 2000; i++) {
    x = x * 2654435761u + i;
    __asm__ __volatile__("" : "+r"(x));
  }
  return x;
}

__attribute__((noinline)) static unsigned hub(unsigned x)
{
  if ((x & 511) == 0) return slow(x);
  return x + 7u;
}

#define MANY(k) \
  __attribute__((noinline)) static unsigned many##k(unsigned x) { return x * (2u * k + 1u) + k; }
MANY(0) MANY(1) MANY(2) MANY(3) MANY(4) MANY(5) MANY(6) MANY(7) MANY(8) MANY(9) MANY(10)
MANY(11) MANY(12) MANY(13) MANY(14) MANY(15) MANY(16) MANY(17) MANY(18) MANY(19) MANY(20)
MANY(21) MANY(22) MANY(23)

static unsigned (*const many[24])(unsigned) = {
  many0, many1, many2, many3, many4, many5, many6, many7, many8, many9, many10, many11,
  many12, many13, many14, many15, many16, many17, many18, many19, many20, many21, many22, many23,
};

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

__attribute__((noinline)) static unsigned long outer(double seconds, unsigned long *rounds)
{
  static unsigned char buf[1 << 16];
  unsigned long acc = 0, acc2 = 0, n = 0;
  double end = now() + seconds;
  while (n < 1000 || now() < end) {
    for (unsigned i = 0; i < 1000; i++) acc += mid((unsigned)(n * 1000 + i));
    for (unsigned i = 0; i < 40; i++) libuser(buf, (unsigned)(n + i));
    for (unsigned i = 0; i < 240; i++) acc2 += many[i % 24]((unsigned)n + i);
    for (unsigned i = 0; i < 240; i++) acc2 += rec((unsigned)n * 240u + i);
    for (unsigned i = 0; i < 240; i++) acc2 += hub((unsigned)n * 240u + i);
    n++;
  }
  *rounds = n;
  sink += (unsigned)acc2;
  return acc;
}

int main(int argc, char **argv)
{
  double seconds = argc > 1 ? atof(argv[1]) : 2.0;
  if (argc > 2) clear_bytes = (size_t)atol(argv[2]);
  unsigned long rounds, acc = outer(seconds, &rounds);
  /* The same sums without calls: what the program must print. */
  unsigned long want = 0, recs = 0;
  for (unsigned long n = 0; n < rounds; n++) {
    for (unsigned i = 0; i < 1000; i++) {
      unsigned x = (unsigned)(n * 1000 + i), y = x + 1u;
      want += ((x & 1) ? x * 3u + 1u : x >> 1) + ((y & 1) ? y * 3u + 1u : y >> 1);
    }
    for (unsigned i = 0; i < 240; i++)      /* rec's calls, its recursion's included */
      for (unsigned x = (unsigned)n * 240u + i;; x >>= 3) {
        recs++;
        if (!(x && (x & 7) == 0)) break;
      }
  }
  printf("rounds %lu mid calls %lu libuser calls %lu hub calls %lu rec calls %lu checksum %s\n",
         rounds, rounds * 1000, rounds * 40, rounds * 240, recs, acc == want ? "ok" : "WRONG");
  return acc == want ? 0 : 1;
}
