/* forker.c -- the parent calls getpid 2 times, forks; the child calls it 3
** times and exits with 5 (written in its dump); the parent waits and exits
** with the child's status. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
  getpid();
  getpid();
  pid_t pid = fork();
  if (pid == 0) {
    for (int i = 0; i < 3; i++) getpid();
    exit(5);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
