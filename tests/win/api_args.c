/*
** api_args.c -- built with no capprof flag: calls the functions of
** api_args_dll.dll with known arguments in every argument register (integer
** and XMM) and on the stack, and compares their results (RAX, XMM0) with the
** same computation done here. Under `capprof run --api=api_args_dll.dll`
** the calls go through the trampoline: any argument or return value it
** disturbed shows as a mismatch. Exit 0 when all 300 calls agree.
*/
#include <stdint.h>
#include <stdio.h>

__declspec(dllimport) double api_mixed(int64_t, double, int64_t, double, int64_t, double,
                                       int64_t, int64_t, double, int64_t);
__declspec(dllimport) int64_t api_twelve(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                                         int64_t, int64_t, int64_t, int64_t, int64_t, int64_t);
__declspec(dllimport) int64_t api_vsum(int, ...);

static double mixed(int64_t a, double b, int64_t c, double d, int64_t e, double f, int64_t g,
                    int64_t h, double i, int64_t j)
{
  return (double)a * 1 + b * 2 + (double)c * 3 + d * 4 + (double)e * 5 + f * 6 +
         (double)g * 7 + (double)h * 8 + i * 9 + (double)j * 10;
}

int main(void)
{
  int bad = 0;
  for (int64_t r = 1; r <= 100; r++) {
    double want = mixed(r, r + 0.5, r * 3, r * 0.25, -r, r / 8.0, r + 7, r * r, 1.0 / r, 42 - r);
    double got = api_mixed(r, r + 0.5, r * 3, r * 0.25, -r, r / 8.0, r + 7, r * r, 1.0 / r, 42 - r);
    bad += got != want;
    int64_t t = r << 20;
    int64_t w = t ^ (t + 1) << 1 ^ (t + 2) << 2 ^ (t + 3) << 3 ^ (t + 4) << 4 ^ (t + 5) << 5 ^
                (t + 6) << 6 ^ (t + 7) << 7 ^ (t + 8) << 8 ^ (t + 9) << 9 ^ (t + 10) << 10 ^
                (t + 11) << 11;
    bad += api_twelve(t, t + 1, t + 2, t + 3, t + 4, t + 5, t + 6, t + 7, t + 8, t + 9, t + 10,
                      t + 11) != w;
    int64_t s = 0;
    for (int k = 0; k < 24; k++) s = s * 3 + (r + k);
    bad += api_vsum(24, r, r + 1, r + 2, r + 3, r + 4, r + 5, r + 6, r + 7, r + 8, r + 9,
                    r + 10, r + 11, r + 12, r + 13, r + 14, r + 15, r + 16, r + 17, r + 18,
                    r + 19, r + 20, r + 21, r + 22, r + 23) != s;
  }
  printf("api_args: %d of 300 calls disagree\n", bad);
  return bad != 0;
}
