/* fork.c -- the child of fork() starts clean and writes its own dump. */
#include <sys/wait.h>
#include <unistd.h>
#include <capprof/capprof.h>
#include "e2e.h"

NOINLINE void before(void) { SINK(0); }
NOINLINE void in_child(void) { SINK(1); }
NOINLINE void in_parent(void) { SINK(2); }
NOINLINE int spawn(void)
{
  pid_t pid = fork();
  if (pid == 0) {
    for (int i = 0; i < 3; i++) in_child();
    return 0;
  }
  int st;
  waitpid(pid, &st, 0);
  return 1;
}

int main(void)
{
  MAP(main); MAP(before); MAP(in_child); MAP(in_parent); MAP(spawn); MAP_DONE();
  capprof_set_thread_name("main");
  before();
  before();
  if (spawn()) in_parent();
  return 0;
}
