/*
** stderr_file.c -- a daemon whose descriptor 2 becomes its own data file
** (tests/harden/host.sh, issue 33 case 15): it closes 2 and opens the file,
** which takes the number. The dump cannot be written (CAPPROF_OUTPUT names
** a missing directory), and capprof's line about it must not land in the
** file. With a second argument, descriptor 2 is left alone (the line must
** then be there).
*/
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile unsigned sink;

__attribute__((noinline)) static unsigned work(unsigned x) { return x * 3u + 1u; }

int main(int argc, char **argv)
{
  if (argc < 2) return 2;
  if (argc < 3) close(2);
  int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || (argc < 3 && fd != 2)) return 2;
  for (unsigned i = 0; i < 1000; i++) sink += work(i);
  static const char rec[] = "record 1\n";
  if (write(fd, rec, strlen(rec)) != (ssize_t)strlen(rec)) return 2;
  printf("ok %u\n", sink);
  return 0;
}
