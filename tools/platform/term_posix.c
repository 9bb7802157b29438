/*
** term_posix.c -- the terminal on POSIX systems (term.h): isatty, the
** window size from TIOCGWINSZ, and a pager run by /bin/sh on a pipe.
*/
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "platform/term.h"

static pid_t pager_pid;

double term_cpu_seconds(void)
{
  clock_t c = clock();
  return c == (clock_t)-1 ? 0 : (double)c / CLOCKS_PER_SEC;
}

int term_is_tty(FILE *f)
{
  return isatty(fileno(f));
}

int term_width(void)
{
  struct winsize ws;
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 0;
}

int term_pager_start(const char *cmd)
{
  int fd[2];
  fflush(stdout);
  if (pipe(fd) != 0) return -1;
  pid_t pid = fork();
  if (pid < 0) {
    close(fd[0]);
    close(fd[1]);
    return -1;
  }
  if (pid == 0) {
    dup2(fd[0], STDIN_FILENO);
    close(fd[0]);
    close(fd[1]);
    /* less: quit if one screen, keep colours, leave the screen as is. */
    setenv("LESS", getenv("LESS") ? getenv("LESS") : "FRX", 1);
    setenv("LV", getenv("LV") ? getenv("LV") : "-c", 1);
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(127);
  }
  close(fd[0]);
  dup2(fd[1], STDOUT_FILENO);
  close(fd[1]);
  /* The pager quitting early (q in less) must end the tool quietly, not
  ** kill it with SIGPIPE half-way through an error message. */
  signal(SIGPIPE, SIG_IGN);
  pager_pid = pid;
  return 0;
}

void term_pager_end(void)
{
  if (!pager_pid) return;
  fflush(stdout);
  close(STDOUT_FILENO);
  int st;
  while (waitpid(pager_pid, &st, 0) < 0 && errno == EINTR) {}
  pager_pid = 0;
}
