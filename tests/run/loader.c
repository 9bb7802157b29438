/* loader.c -- dlopens loader_lib.so after start (lazy binding, local scope) and calls
** its function, which calls cos 3 times: calls from a module loaded later
** are intercepted too. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
  void *h = dlopen(argc > 1 ? argv[1] : "./libloader_lib.so", RTLD_LAZY | RTLD_LOCAL);
  if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
  double (*f)(double) = (double (*)(double))dlsym(h, "three_cosines");
  if (!f) return 1;
  printf("%.3f\n", f(0.5));
  return 0;
}
