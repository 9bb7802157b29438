/*
** api_args_dll.c -- a DLL built with no capprof flag whose functions take
** arguments in every register and on the stack, and return in RAX or XMM0:
** api_args.exe calls them through its import table, under `capprof run
** --api=api_args_dll.dll`, and checks every value (run-wine.sh).
*/
#include <stdarg.h>
#include <stdint.h>

/* Integer and floating-point arguments interleaved: RCX, XMM1, R8, XMM3,
** then six on the stack (two of them doubles). */
__declspec(dllexport) double api_mixed(int64_t a, double b, int64_t c, double d, int64_t e,
                                       double f, int64_t g, int64_t h, double i, int64_t j)
{
  return (double)a * 1 + b * 2 + (double)c * 3 + d * 4 + (double)e * 5 + f * 6 +
         (double)g * 7 + (double)h * 8 + i * 9 + (double)j * 10;
}

/* Twelve integer arguments (eight on the stack, as CreateWindowExW takes). */
__declspec(dllexport) int64_t api_twelve(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e,
                                         int64_t f, int64_t g, int64_t h, int64_t i, int64_t j,
                                         int64_t k, int64_t l)
{
  return a ^ b << 1 ^ c << 2 ^ d << 3 ^ e << 4 ^ f << 5 ^ g << 6 ^ h << 7 ^ i << 8 ^
         j << 9 ^ k << 10 ^ l << 11;
}

/* Variadic: n values, 24 of them on the stack at most here. */
__declspec(dllexport) int64_t api_vsum(int n, ...)
{
  va_list ap;
  int64_t s = 0;
  va_start(ap, n);
  for (int k = 0; k < n; k++) s = s * 3 + va_arg(ap, int64_t);
  va_end(ap);
  return s;
}
