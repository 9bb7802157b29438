/* unhook_tail_main.c -- the driver of unhook_tail.c, built without hooks. */
#include <stdio.h>

void v(unsigned *p);
void call_via(void (*fn)(unsigned *), unsigned *p);

int main(void)
{
  unsigned n = 0;
  for (int i = 0; i < 300000; i++) call_via(v, &n);
  printf("ok %u\n", n);
  return n == 300000 ? 0 : 1;
}
