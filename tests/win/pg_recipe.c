/*
** pg_recipe.c -- built with exactly what the Linux tool prints for MinGW
** ('capprof cflags x86_64-w64-mingw32-gcc-posix', 'capprof ldflags --static
** ...'; run-wine.sh): the recipe links (no -ldl; _pexit and _monstartup
** found in the runtime) and, at -O2, a tail-recursive function keeps each of
** its calls (-fno-optimize-sibling-calls; without it GCC makes a loop and
** the dump shows one call). Counts in pg_recipe.expect.
*/
__attribute__((noinline)) int down(int n, int acc)
{
  return n == 0 ? acc : down(n - 1, acc + n);
}

int main(void)
{
  volatile int n = 40;
  return down(n, 0) == 820 ? 0 : 1;
}
