/* dumpfiles_prog.c -- a small instrumented program for the dump-file tests.
** "plant FINAL": before exiting, create the temporary names the runtime
** used to choose for FINAL (FINAL.tmp<pid*1000+k>), as another user could. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) int work(int x) { __asm__ __volatile__("" : : "r"(x)); return x + 1; }

int main(int argc, char **argv)
{
  int s = 0;
  for (int i = 0; i < 100; i++) s += work(i);
  if (argc > 2 && !strcmp(argv[1], "plant")) {
    for (unsigned k = 0; k < 1000; k++) {
      char name[2048];
      snprintf(name, sizeof name, "%s.tmp%llu", argv[2],
               (unsigned long long)getpid() * 1000u + k);
      int fd = open(name, O_CREAT | O_EXCL | O_WRONLY, 0644);
      if (fd >= 0) close(fd);
    }
  }
  printf("ok %d\n", s);
  return 0;
}
