/*
** dumpsig.c (POSIX) -- dumps on demand: CAPPROF_DUMP_SIGNAL (a dump each
** time a signal arrives, and the program goes on), CAPPROF_DUMP_ON_SIGNAL (a
** last dump when a terminating signal arrives, then its default action) and
** CAPPROF_DUMP_INTERVAL (a dump every N seconds).
**
** The work is done by one runtime thread, never in a signal handler: a
** handler only writes the signal's number to a pipe (write(2) is
** async-signal-safe) and returns. For a terminating signal the handler then
** waits, in read(2) on a second pipe, until the thread has written the last
** dump, restores the default action and raises the signal again: it is
** blocked while the handler runs, so it is delivered on return and the
** process ends with the status it would have had. The thread blocks every
** signal, takes the runtime lock through capprof_dump like any caller, and
** is started once, by runtime_init; a forked child has no such thread, and
** its handlers then do nothing but the default action.
*/
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../posix/posix.h"
#include "../core/settings.h"

#define TERM_FLAG 0x80           /* pipe byte: a terminating signal */
#define ACK_WAIT_MS 10000        /* a terminating signal waits this long */

static int req[2] = { -1, -1 };  /* handlers -> thread: signal numbers */
static int ack[2] = { -1, -1 };  /* thread -> terminating handlers */
static pid_t owner;              /* the process whose thread reads req */
static uint64_t interval_ns;     /* CAPPROF_DUMP_INTERVAL, 0: none */

static const struct { const char *name; int sig; } names[] = {
  { "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT }, { "USR1", SIGUSR1 },
  { "USR2", SIGUSR2 }, { "ALRM", SIGALRM }, { "TERM", SIGTERM }, { "CONT", SIGCONT },
  { "TSTP", SIGTSTP }, { "TTIN", SIGTTIN }, { "TTOU", SIGTTOU }, { "URG", SIGURG },
  { "XCPU", SIGXCPU }, { "XFSZ", SIGXFSZ }, { "VTALRM", SIGVTALRM }, { "PROF", SIGPROF },
  { "WINCH", SIGWINCH }, { "IO", SIGIO }, { "PWR", SIGPWR }, { "SYS", SIGSYS },
};

/* A signal by name (USR1, SIGUSR1, usr1, RTMIN+2) or number; 0 if none.
** Signals the runtime must never take over (KILL, STOP, faults, CHLD, PIPE,
** the ones glibc keeps for threads) are refused. */
static int parse_signal(const char *s, size_t n)
{
  char buf[16];
  if (n == 0 || n >= sizeof buf) return 0;
  for (size_t i = 0; i < n; i++) buf[i] = (char)(s[i] >= 'a' && s[i] <= 'z' ? s[i] - 32 : s[i]);
  buf[n] = '\0';
  const char *b = strncmp(buf, "SIG", 3) ? buf : buf + 3;
  char *end;
  long v = strtol(b, &end, 10);
  if (*b && !*end) {
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
      if (names[i].sig == v) return (int)v;
    return v >= SIGRTMIN && v <= SIGRTMAX ? (int)v : 0;
  }
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strcmp(b, names[i].name)) return names[i].sig;
  if (!strncmp(b, "RTMIN", 5)) {
    long k = b[5] == '+' ? strtol(b + 6, &end, 10) : 0;
    if ((b[5] && b[5] != '+') || (b[5] == '+' && *end)) return 0;
    return SIGRTMIN + k <= SIGRTMAX ? SIGRTMIN + (int)k : 0;
  }
  return 0;
}

/* The signal's default action, as if capprof had never handled it. */
static void default_action(int sig)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_DFL;
  sigaction(sig, &sa, NULL);
  raise(sig);                    /* pending until the handler returns */
}

static void on_dump_signal(int sig)
{
  int e = errno;
  unsigned char b = (unsigned char)sig;
  if (getpid() == owner) (void)!write(req[1], &b, 1);     /* full pipe: a dump is due anyway */
  else default_action(sig);      /* a forked child: no thread to dump */
  errno = e;
}

static void on_term_signal(int sig)
{
  int e = errno;
  unsigned char b = (unsigned char)(sig | TERM_FLAG);
  if (getpid() == owner && write(req[1], &b, 1) == 1) {
    /* Wait for the last dump, but not for ever: this thread may have been
    ** stopped holding a lock the dump needs (the loader's, in dlopen). */
    struct pollfd p = { ack[0], POLLIN, 0 };
    char c;
    if (poll(&p, 1, ACK_WAIT_MS) == 1) (void)!read(ack[0], &c, 1);
  }
  default_action(sig);
  errno = e;
}

static void report_dump(int rc, const char *path, const char *why)
{
  char msg[1400];
  if (rc == 0 && !settings_bool(SET_VERBOSE)) return;
  strcpy(msg, rc ? "capprof: cannot write dump " : "capprof: wrote ");
  strncat(msg, path, 1100);
  if (rc) {
    strcat(msg, ": ");
    strcat(msg, capprof_strerror(rc));
  }
  strcat(msg, " (");
  strcat(msg, why);
  strcat(msg, ")");
  os_report(msg);
}

static void dump_now(const char *why)
{
  char path[1100] = "";
  if (cp_g.finished) return;
  int rc = capprof_dump(NULL, path, sizeof path);
  report_dump(rc, path, why);
}

static void *dump_thread(void *arg)
{
  (void)arg;
  uint64_t next = interval_ns ? os_monotonic_ns() + interval_ns : 0;
  for (;;) {
    int timeout = -1;
    if (interval_ns) {
      uint64_t now = os_monotonic_ns();
      uint64_t ms = now >= next ? 0 : (next - now + 999999) / 1000000;
      timeout = ms > 1000000000 ? 1000000000 : (int)ms;   /* long intervals: wake, sleep on */
    }
    struct pollfd p = { req[0], POLLIN, 0 };
    int r = poll(&p, 1, timeout);
    if (r < 0) continue;                  /* EINTR cannot happen: all blocked */
    if (r == 0) {
      if (os_monotonic_ns() < next) continue;
      dump_now(settings_name(SET_DUMP_INTERVAL));
      next += interval_ns;
      if (next < os_monotonic_ns()) next = os_monotonic_ns() + interval_ns;
      continue;
    }
    unsigned char buf[64];
    ssize_t n = read(req[0], buf, sizeof buf);
    int terms = 0, dumps = 0;
    for (ssize_t i = 0; i < n; i++) {
      if (buf[i] & TERM_FLAG) terms++;
      else dumps++;
    }
    if (terms) {
      runtime_atexit();                   /* the last dump; hooks stop for good */
      for (int i = 0; i < terms; i++) (void)!write(ack[1], "x", 1);
    } else if (dumps) {
      dump_now(settings_name(SET_DUMP_SIGNAL));
    }
  }
  return NULL;
}

/* Install handler for each signal of a comma-separated list; with only_default,
** leave alone a signal the program already handles or ignores. Returns how
** many were installed; an unknown name is reported once. */
static int install(const char *list, void (*handler)(int), int only_default, const char *var)
{
  int n = 0;
  for (const char *s = list; s && *s;) {
    size_t len = strcspn(s, ", ");
    int sig = parse_signal(s, len);
    if (!sig && len) {
      char msg[200] = "capprof: ";
      strcat(msg, var);
      strcat(msg, ": not a signal capprof can use: ");
      strncat(msg, s, len < 40 ? len : 40);
      os_report(msg);
    } else if (sig) {
      struct sigaction old, sa;
      memset(&sa, 0, sizeof sa);
      sa.sa_handler = handler;
      sa.sa_flags = SA_RESTART;
      sigfillset(&sa.sa_mask);
      if (sigaction(sig, NULL, &old) == 0 && (!only_default || old.sa_handler == SIG_DFL) &&
          sigaction(sig, &sa, NULL) == 0)
        n++;
    }
    s += len;
    while (*s == ',' || *s == ' ') s++;
  }
  return n;
}

static int make_pipe(int fd[2])
{
  if (pipe2(fd, O_CLOEXEC) != 0) return -1;
  fcntl(fd[1], F_SETFL, O_NONBLOCK);     /* a handler never blocks on write */
  return 0;
}

void os_dumpsig_start(void)
{
  const char *on = settings_str(SET_DUMP_SIGNAL);
  const char *last = settings_str(SET_DUMP_ON_SIGNAL);
  const char *every = settings_str(SET_DUMP_INTERVAL);
  if (every && *every) {
    char *end;
    double s = strtod(every, &end);
    char msg[100];
    if (*end || !(s > 0) || s > 1e7)
      os_report(settings_message(msg, sizeof msg, SET_DUMP_INTERVAL, ": not a number of seconds"));
    else interval_ns = (uint64_t)(s * 1e9);
  }
  if (!(on && *on) && !(last && *last) && !interval_ns) return;
  if (owner || make_pipe(req) != 0 || make_pipe(ack) != 0) return;
  owner = getpid();
  /* The thread starts with every signal blocked, so no handler (the
  ** program's or ours) ever runs on it. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  pthread_t th;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  int rc = pthread_create(&th, &attr, dump_thread, NULL);
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0) {
    os_report("capprof: cannot start the thread for dumps on demand");
    owner = 0;
    return;
  }
  pthread_setname_np(th, "capprof-dump");
  install(on, on_dump_signal, 0, settings_name(SET_DUMP_SIGNAL));
  install(last, on_term_signal, 1, settings_name(SET_DUMP_ON_SIGNAL));
}
