/*
** protect.c -- a host that sets its own code's protection (tests/harden/
** protect.sh, issue 33 case 1): the page of rwx_leaf made writable and
** executable (self-modifying code, hot patching), the page of xo_leaf
** execute-only. Each leaf is called often enough to be unhooked; then the
** program writes into the writable page, as such a host does, and prints
** the protection /proc/self/maps gives each page.
*/
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static volatile unsigned sink;

__attribute__((noinline, aligned(4096))) unsigned rwx_leaf(unsigned x) { return x * 3u + 1u; }
__attribute__((noinline, aligned(4096))) unsigned xo_leaf(unsigned x) { return x * 5u + 2u; }
/* Keeps the next function off xo_leaf's page. */
__attribute__((noinline, aligned(4096))) unsigned after_pages(unsigned x) { return x ^ 7u; }

static uintptr_t page_of(void *f) { return (uintptr_t)f & ~(uintptr_t)4095; }

/* The permissions /proc/self/maps shows for the page at pg ("rwxp"...). */
static void perms(uintptr_t pg, char out[5])
{
  strcpy(out, "?");
  FILE *f = fopen("/proc/self/maps", "r");
  char line[512];
  while (f && fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    char p[5];
    if (sscanf(line, "%lx-%lx %4s", &lo, &hi, p) == 3 && pg >= lo && pg < hi) {
      memcpy(out, p, 5);
      break;
    }
  }
  if (f) fclose(f);
}

int main(void)
{
  uintptr_t rwx = page_of((void *)rwx_leaf), xo = page_of((void *)xo_leaf);
  if (mprotect((void *)rwx, 4096, PROT_READ | PROT_WRITE | PROT_EXEC) != 0 ||
      mprotect((void *)xo, 4096, PROT_EXEC) != 0) {
    perror("mprotect");
    return 2;
  }
  for (unsigned i = 0; i < 400000; i++) sink += rwx_leaf(i) + xo_leaf(i);
  sink += after_pages(sink);
  volatile unsigned char *last = (volatile unsigned char *)(rwx + 4095);
  *last = *last;                           /* the host writes into its writable code */
  char a[5], b[5];
  perms(rwx, a);
  perms(xo, b);
  printf("rwx_leaf page %s\nxo_leaf page %s\nok %u\n", a, b, sink);
  return 0;
}
