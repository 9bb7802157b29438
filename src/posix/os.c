/*
** os.c (POSIX) -- the OS layer on Linux: memory reservations, the thread
** state pointer and thread-exit callback, clocks, ids and names, the module
** map from dl_iterate_phdr, files, and process start-up, exit and fork.
*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "posix.h"

extern char **environ;

__thread struct cp_thread *posix_tls __attribute__((tls_model("initial-exec")));

/* 'capprof run' looks for this section in a program to know it carries the
** runtime already (linked with libcapprof.a); strip keeps it. */
__attribute__((used, section(".capprof"))) static const char runtime_marker[] =
    "capprof runtime";

static pthread_mutex_t runtime_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t exit_key;

/* ---- memory ---------------------------------------------------------------- */

void *os_reserve(size_t size)
{
  void *p = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

int os_commit(void *addr, size_t size)
{
  /* the system call itself: the runtime's mprotect interposer
  ** (src/patch/patch_x86_64.c) is for the host's calls */
  return syscall(SYS_mprotect, addr, size, PROT_READ | PROT_WRITE) == 0 ? 0 : CAPPROF_ENOMEM;
}

void os_release(void *addr, size_t size)
{
  if (addr) munmap(addr, size);
}

void os_decommit(void *addr, size_t size)
{
  mmap(addr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
}

size_t os_page_size(void)
{
  static size_t page;
  if (!page) page = (size_t)sysconf(_SC_PAGESIZE);
  return page;
}

/* ---- threads ----------------------------------------------------------------- */

struct cp_thread *os_get_thread(void) { return posix_tls; }
void os_set_thread(struct cp_thread *t) { posix_tls = t; }

/* pthread key destructors run in rounds (up to PTHREAD_DESTRUCTOR_ITERATIONS)
** while any key has a value: this one re-arms itself until the last round,
** so that the destructors of other keys, which may call instrumented code,
** are recorded; then the thread's state is retired (no hook of the thread
** runs after that, or it is ignored). C++ thread_local destructors run
** before any key destructor. */
/* The core's callbacks (os_process_init), before any thread registers. */
static const struct os_callbacks *callbacks;
/* The core's view of the process (os_process_init): a blank one before. */
static struct os_process no_process;
static struct os_process *proc = &no_process;

static void thread_exit_cb(void *p)
{
  struct cp_thread *t = p;
  if (t->exit_rounds + 1 < PTHREAD_DESTRUCTOR_ITERATIONS &&
      pthread_setspecific(exit_key, t) == 0) {
    t->exit_rounds++;
    return;
  }
  callbacks->thread_exit(t);
  callbacks->thread_retire(t);
}

int os_thread_register(struct cp_thread *t)
{
  return pthread_setspecific(exit_key, t) == 0 ? 0 : CAPPROF_ENOMEM;
}

uint64_t os_thread_id(void) { return (uint64_t)syscall(SYS_gettid); }
uint64_t os_process_id(void) { return (uint64_t)getpid(); }
uint64_t os_parent_process_id(void) { return (uint64_t)getppid(); }

int os_thread_name(uint64_t tid, char *buf, size_t n)
{
  char path[64];
  if (tid == (uint64_t)syscall(SYS_gettid) && n >= 16) {   /* one system call */
    if (prctl(PR_GET_NAME, buf, 0, 0, 0) != 0) return CAPPROF_EIO;
    buf[15] = '\0';
    return 0;
  }
  snprintf(path, sizeof path, "/proc/self/task/%llu/comm", (unsigned long long)tid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return CAPPROF_ENOENT;
  ssize_t k = read(fd, buf, n - 1);
  close(fd);
  if (k <= 0) return CAPPROF_EIO;
  while (k > 0 && (buf[k - 1] == '\n' || buf[k - 1] == '\0')) k--;
  buf[k] = '\0';
  return 0;
}

/* The lock holder's signal mask from before os_lock, and who holds it.
** Written only by the holder, under the lock. */
static sigset_t lock_saved_mask;
static pthread_t lock_owner;
static volatile int lock_held;

static void block_all(sigset_t *old)
{
  sigset_t all;
  sigfillset(&all);            /* glibc keeps its internal signals open */
  pthread_sigmask(SIG_BLOCK, &all, old);
}

static void lock_taken(const sigset_t *old)
{
  lock_saved_mask = *old;
  lock_owner = pthread_self();
  lock_held = 1;
}

void os_lock(void)
{
  sigset_t old;
  block_all(&old);
  pthread_mutex_lock(&runtime_lock);
  lock_taken(&old);
}

void os_unlock(void)
{
  sigset_t old = lock_saved_mask;
  lock_held = 0;
  pthread_mutex_unlock(&runtime_lock);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Signals are blocked under the lock, so only a synchronous signal (a fault
** inside the runtime) can bring the holder here; another holder is a thread
** still dumping, given a few seconds. */
int os_lock_at_exit(void)
{
  if (lock_held && pthread_equal(lock_owner, pthread_self())) return CAPPROF_EBUSY;
  sigset_t old;
  block_all(&old);
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 5;
  int rc;
  while ((rc = pthread_mutex_timedlock(&runtime_lock, &until)) == EINTR) {}
  if (rc != 0) {
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return CAPPROF_EBUSY;
  }
  lock_taken(&old);
  return 0;
}

/* ---- clocks ------------------------------------------------------------------ */

static uint64_t read_clock(clockid_t id)
{
  struct timespec ts;
  clock_gettime(id, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t os_ticks(void) { return read_clock(CLOCK_MONOTONIC); }
uint32_t os_ticks_source(void) { return CPD_CLOCK_MONOTONIC; }
uint64_t os_monotonic_ns(void) { return read_clock(CLOCK_MONOTONIC); }
uint64_t os_realtime_ns(void) { return read_clock(CLOCK_REALTIME); }

void os_format_time(uint64_t realtime_ns, char *buf, size_t n)
{
  time_t s = (time_t)(realtime_ns / 1000000000u);
  struct tm tm;
  localtime_r(&s, &tm);
  if (!strftime(buf, n, "%Y%m%d-%H%M%S", &tm) && n) buf[0] = '\0';
}

/* ---- errors, environment ----------------------------------------------------- */

os_errsave os_save_errors(void)
{
  os_errsave s = { errno, 0 };
  return s;
}

void os_restore_errors(os_errsave s) { errno = s.err; }

int os_cancel_off(void)
{
  int old = PTHREAD_CANCEL_ENABLE;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
  return old;
}

void os_cancel_restore(int old) { pthread_setcancelstate(old, NULL); }

/* secure_getenv: NULL in a setuid/setgid process, whose environment comes
** from a less privileged caller. */
const char *os_getenv(const char *name) { return secure_getenv(name); }

volatile int posix_filter_seen CP_HIDDEN;
int os_cwd(char *buf, size_t n) { return getcwd(buf, n) ? 0 : -1; }

int posix_seccomp_none(void)
{
  if (__atomic_load_n(&posix_filter_seen, __ATOMIC_SEQ_CST)) return 0;
  /* System calls, not libc's open/read/close: no cancellation points (it
  ** runs in hooks and patches). */
  int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/thread-self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) {                                                       /* before Linux 3.17 */
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%ld/status", (long)syscall(SYS_gettid));
    fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
  }
  if (fd < 0) return 0;
  /* Match "\nSeccomp:", blanks, then the mode's digit. */
  static const char key[] = "\nSeccomp:";
  char buf[128];
  size_t matched = 0;
  int mode = -1, after = 0;               /* after: the key seen, blanks next */
  ssize_t n;
  while (mode < 0 && (n = syscall(SYS_read, fd, buf, sizeof buf)) > 0)
    for (ssize_t i = 0; i < n && mode < 0; i++) {
      char c = buf[i];
      if (after) {
        if (c != ' ' && c != '\t') mode = c;
      } else if (c == key[matched]) {
        if (++matched == sizeof key - 1) after = 1;
      } else {
        matched = c == '\n';
      }
    }
  syscall(SYS_close, fd);
  return mode == '0';                     /* a filter, or not said: not safe to assume none */
}

int os_is_privileged(void) { return getauxval(AT_SECURE) != 0; }

/* Descriptor 2 as the program began (os_process_init): a daemon may close
** it and open a file of its own that takes the number; a line is written
** only to the descriptor it began with. */
static dev_t stderr_dev;
static ino_t stderr_ino;
static int stderr_known;

static void note_stderr(void)
{
  struct stat st;
  if (fstat(2, &st) != 0) return;
  stderr_dev = st.st_dev;
  stderr_ino = st.st_ino;
  stderr_known = 1;
}

void os_report(const char *msg)
{
  struct stat st;
  if (!stderr_known || fstat(2, &st) != 0 || st.st_dev != stderr_dev || st.st_ino != stderr_ino)
    return;                               /* not the program's stderr any more */
  size_t n = strlen(msg);
  ssize_t rc = write(2, msg, n);
  rc = write(2, "\n", 1);
  (void)rc;
}

/* Variables whose name starts with prefix (settings.c warns about unknown
** CAPPROF_* names). */
void os_env_names(const char *prefix, void (*fn)(const char *name, size_t len, void *arg),
                  void *arg)
{
  size_t k = strlen(prefix);
  for (char **e = environ; e && *e; e++) {
    if (strncmp(*e, prefix, k) != 0) continue;
    const char *eq = strchr(*e, '=');
    fn(*e, eq ? (size_t)(eq - *e) : strlen(*e), arg);
  }
}

/* Append the dump's absolute path to the file log names (CAPPROF_RUN_LOG,
** set by 'capprof run', which lists the dumps of the process tree at the
** end). One write with O_APPEND: lines of concurrent processes do not mix. */
void os_run_log_to(const char *log, const char *path)
{
  if (!log || !*log) return;
  char line[4200];
  size_t n = 0;
  if (path[0] != '/' && getcwd(line, 2048)) {
    n = strlen(line);
    line[n++] = '/';
  }
  size_t k = strlen(path);
  if (n + k + 2 > sizeof line) return;
  memcpy(line + n, path, k);
  n += k;
  line[n++] = '\n';
  int fd = open(log, O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t w = write(fd, line, n);
  (void)w;
  close(fd);
}

/* ---- process --------------------------------------------------------------- */

static void read_cmdline(void)
{
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  size_t cap = 64 * 1024;
  char *buf = os_reserve(cap);
  if (buf && os_commit(buf, cap) == 0) {
    size_t len = 0;
    ssize_t k;
    while (len < cap && (k = read(fd, buf + len, cap - len)) > 0) len += (size_t)k;
    while (len && buf[len - 1] == '\0') len--;        /* keep inner NULs only */
    proc->cmdline = buf;
    proc->cmdline_len = len;
  }
  close(fd);
}

void posix_thread_aside(void)
{
  const struct os_callbacks *cb = __atomic_load_n(&callbacks, __ATOMIC_ACQUIRE);
  if (cb && cb->thread_aside) cb->thread_aside();
}

/* quick_exit() runs neither atexit handlers nor destructors: the dump is
** written by an at_quick_exit handler, registered first so that it runs
** after the program's own. */
static CP_NOINSTR void quick_exit_cb(void)
{
  const struct os_callbacks *cb = __atomic_load_n(&callbacks, __ATOMIC_ACQUIRE);
  if (cb) cb->process_exit();
}

void os_process_init(const struct os_callbacks *cb, struct os_process *process)
{
  callbacks = cb;
  proc = process;
  note_stderr();
  ssize_t n = readlink("/proc/self/exe", proc->exe, sizeof proc->exe - 1);
  proc->exe[n > 0 ? n : 0] = '\0';
  const char *base = strrchr(proc->exe, '/');
  base = base ? base + 1 : proc->exe;
  size_t len = strlen(base);
  if (len >= sizeof proc->progname) len = sizeof proc->progname - 1;
  memcpy(proc->progname, base, len);
  proc->progname[len] = '\0';
  read_cmdline();
  pthread_key_create(&exit_key, thread_exit_cb);
  pthread_atfork(cb->fork_prepare, cb->fork_parent, cb->fork_child);
  at_quick_exit(quick_exit_cb);           /* the dump, after the program's handlers */
}

/* ---- modules ----------------------------------------------------------------- */

struct phdr_ctx { os_module_fn fn; void *ctx; };

static void find_build_id(struct dl_phdr_info *info, struct cp_module *m)
{
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_NOTE) continue;
    const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
    const unsigned char *end = p + ph->p_memsz;
    while (p + 12 <= end) {
      uint32_t namesz, descsz, type;
      memcpy(&namesz, p, 4);
      memcpy(&descsz, p + 4, 4);
      memcpy(&type, p + 8, 4);
      const unsigned char *name = p + 12;
      const unsigned char *desc = name + ((namesz + 3) & ~3u);
      const unsigned char *next = desc + ((descsz + 3) & ~3u);
      if (next > end || next < p) break;
      if (type == NT_GNU_BUILD_ID && namesz == 4 && memcmp(name, "GNU", 4) == 0) {
        m->id_kind = CPD_MODID_GNU_BUILD_ID;
        m->id_len = descsz;
        m->id = desc;
        return;
      }
      p = next;
    }
  }
}

/* Describe a loaded object; 0, or -1 if it maps nothing. */
static int describe(struct dl_phdr_info *info, struct cp_module *m)
{
  uint64_t lo = UINT64_MAX, hi = 0;
  memset(m, 0, sizeof *m);
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD) continue;
    if (ph->p_vaddr < lo) lo = ph->p_vaddr;
    if (ph->p_vaddr + ph->p_memsz > hi) hi = ph->p_vaddr + ph->p_memsz;
  }
  if (lo == UINT64_MAX) return -1;
  /* base is the load bias: an address minus base is the ELF virtual address.
  ** size covers the mapped segments from the bias. */
  m->base = info->dlpi_addr;
  m->size = hi;
  m->path = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : proc->exe;
  find_build_id(info, m);
  return 0;
}

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
  (void)size;
  struct phdr_ctx *c = data;
  struct cp_module m;
  return describe(info, &m) == 0 ? c->fn(&m, c->ctx) : 0;
}

/* Modules that dlclose unloaded before the dump, recorded by the interposer
** below so that the calls into them can still be symbolized. os_lock. */
#define RETIRED_MAX 256
struct retired {
  uint64_t base, size;
  uint32_t id_len;
  unsigned char id[64];
  char path[1024];
};
static struct retired *retired;     /* RETIRED_MAX entries, reserved on first use */
static unsigned nretired;

static int same_object(struct dl_phdr_info *info, uint64_t base, const char *path)
{
  const char *name = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : proc->exe;
  return info->dlpi_addr == base && strcmp(name, path) == 0;
}

static int retire_cb(struct dl_phdr_info *info, size_t size, void *data)
{
  (void)size;
  const struct link_map *lm = data;
  struct cp_module m;
  if (!same_object(info, lm->l_addr, lm->l_name) || describe(info, &m) != 0) return 0;
  for (unsigned i = 0; i < nretired; i++)
    if (retired[i].base == m.base && strcmp(retired[i].path, m.path) == 0) return 1;
  if (nretired == RETIRED_MAX || strlen(m.path) >= sizeof retired->path ||
      m.id_len > sizeof retired->id)
    return 1;
  struct retired *r = &retired[nretired++];
  r->base = m.base;
  r->size = m.size;
  r->id_len = m.id_kind == CPD_MODID_GNU_BUILD_ID ? m.id_len : 0;
  memcpy(r->id, m.id, r->id_len);
  strcpy(r->path, m.path);
  return 1;
}

/* The interposer: weak, so that a program with its own dlclose keeps it.
** Signals stay blocked until the real dlclose returns: a handler that ran
** exit() in between would have the exit-time dump walk a library that is
** half unmapped (dl_iterate_phdr still lists it in this thread). */
__attribute__((weak, visibility("default"))) CP_NOINSTR int dlclose(void *handle)
{
  static int (*next)(void *);
  if (!next) next = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
  if (!next) return -1;
  struct link_map *lm = NULL;
  void *volatile h = handle;       /* declared nonnull, but callers err */
  if (proc->disabled) return next(handle);
  sigset_t old;
  block_all(&old);
  if (h && dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm) {
    os_errsave e = os_save_errors();
    os_lock();
    size_t bytes = RETIRED_MAX * sizeof *retired;
    if (!retired && (retired = os_reserve(bytes)) && os_commit(retired, bytes) != 0) {
      os_release(retired, bytes);
      retired = NULL;
    }
    if (retired) dl_iterate_phdr(retire_cb, lm);
    os_unlock();
    os_restore_errors(e);
  }
  int rc = next(handle);
  os_errsave e = os_save_errors();
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  os_restore_errors(e);
  return rc;
}

/* _exit and _Exit skip the destructor that writes the dump: a shell, or a
** forked child, ends that way. The interposers write it first. Weak, as the
** others; exit() reaches the kernel by libc's internal path, not by these. */
typedef void (*exit_fn)(int) __attribute__((noreturn));

static CP_NOINSTR __attribute__((noreturn)) void exit_now(const char *name, int status)
{
  exit_fn next = (exit_fn)dlsym(RTLD_NEXT, name);
  const struct os_callbacks *cb = __atomic_load_n(&callbacks, __ATOMIC_ACQUIRE);
  if (cb) cb->process_exit();          /* none before the runtime started */
  if (next) next(status);
  syscall(SYS_exit_group, status);
  for (;;) {}
}

__attribute__((weak, noreturn, visibility("default"))) CP_NOINSTR void _exit(int status)
{
  exit_now("_exit", status);
}

__attribute__((weak, noreturn, visibility("default"))) CP_NOINSTR void _Exit(int status)
{
  exit_now("_Exit", status);
}

/* A vfork child shares the parent's memory, so its hooks and intercepted
** calls would write into the parent's trees and return stacks. vfork only
** promises that the child may exec or _exit, which fork gives as well. */
__attribute__((weak, visibility("default"))) CP_NOINSTR pid_t vfork(void)
{
  return fork();
}

static int live_cb(struct dl_phdr_info *info, size_t size, void *data)
{
  (void)size;
  const struct retired *r = data;
  return same_object(info, r->base, r->path);
}

int os_modules(os_module_fn fn, void *ctx)
{
  struct phdr_ctx c = { fn, ctx };
  int rc = dl_iterate_phdr(phdr_cb, &c);
  for (unsigned i = 0; rc == 0 && i < nretired; i++) {
    const struct retired *r = &retired[i];
    if (dl_iterate_phdr(live_cb, (void *)r)) continue;    /* loaded again */
    struct cp_module m = { .path = r->path, .base = r->base, .size = r->size,
                           .id_kind = r->id_len ? CPD_MODID_GNU_BUILD_ID : CPD_MODID_NONE,
                           .id_len = r->id_len, .id = r->id };
    rc = fn(&m, ctx);
  }
  return rc;
}

/* ---- files -------------------------------------------------------------------- */

static int map_errno(int e)
{
  switch (e) {
  case EEXIST: return CAPPROF_EEXIST;
  case ENOENT: case ENOTDIR: return CAPPROF_ENOENT;
  case ENOMEM: return CAPPROF_ENOMEM;
  case EINVAL: case ENAMETOOLONG: return CAPPROF_EINVAL;
  case EACCES: case EPERM: case EROFS: return CAPPROF_EACCES;
  case ENOSPC: case EDQUOT: return CAPPROF_ENOSPC;
  case EFBIG: return CAPPROF_ELIMIT;
  case EMFILE: case ENFILE: return CAPPROF_EMFILE;
  default: return CAPPROF_EIO;
  }
}

int os_file_create(const char *path, os_file *f)
{
  /* A privileged process's dump holds data its caller may not read. */
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, proc->secure ? 0600 : 0644);
  if (fd < 0) return map_errno(errno);
  *f = fd;
  return 0;
}

int os_file_write(os_file f, const void *buf, size_t n)
{
  const char *p = buf;
  while (n) {
    ssize_t k = write((int)f, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return map_errno(errno);
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

int os_file_write_at(os_file f, const void *buf, size_t n, uint64_t off)
{
  const char *p = buf;
  while (n) {
    ssize_t k = pwrite((int)f, p, n, (off_t)off);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return map_errno(errno);
    p += k;
    n -= (size_t)k;
    off += (uint64_t)k;
  }
  return 0;
}

int os_file_close(os_file f)
{
  return close((int)f) == 0 ? 0 : map_errno(errno);
}

/* link() refuses to replace an existing name, atomically. File systems
** without hard links fall back to a check and rename (a small window). */
int os_file_publish(const char *tmp, const char *path)
{
  if (link(tmp, path) == 0) {
    unlink(tmp);
    return 0;
  }
  int e = errno;
  if (e == EEXIST) return CAPPROF_EEXIST;
  if (e != EPERM && e != ENOTSUP && e != EXDEV) return map_errno(e);
  if (access(path, F_OK) == 0) return CAPPROF_EEXIST;
  return rename(tmp, path) == 0 ? 0 : map_errno(errno);
}

void os_file_remove(const char *path) { unlink(path); }

int os_random(void *buf, size_t n)
{
  ssize_t k = getrandom(buf, n, GRND_NONBLOCK);
  return k == (ssize_t)n ? 0 : CAPPROF_EIO;
}

int os_is_directory(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}
