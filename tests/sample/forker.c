/* forker.c -- no hooks: the parent spins in parent_work, the child it forks
** in child_work; each process's dump must hold its own samples only. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

volatile unsigned long sink;

__attribute__((noinline)) void parent_work(void)
{
  for (unsigned long i = 0; i < 200000000ul; i++) sink += i ^ (i >> 3);
}

__attribute__((noinline)) void child_work(void)
{
  for (unsigned long i = 0; i < 200000000ul; i++) sink += i ^ (i >> 3);
}

int main(void)
{
  pid_t pid = fork();
  if (pid == 0) {
    child_work();
    return 0;
  }
  parent_work();
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
