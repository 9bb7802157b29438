/*
** launch_posix.c -- 'capprof run' on Linux: finds libcapprof.so next to the
** tool, preloads it (LD_PRELOAD, inherited by every process the program
** starts) unless the program carries the runtime already, forks and execs
** the program, and waits for it as a shell would.
*/
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch/launch.h"
#include "model/tool.h"

#ifndef CAPPROF_INSTALL_LIBDIR
#  define CAPPROF_INSTALL_LIBDIR "lib"
#endif

int run_log_create(char *path, size_t n)
{
  const char *dir = getenv("TMPDIR");
  if (!dir || !*dir) dir = "/tmp";
  if ((size_t)snprintf(path, n, "%s/capprof-run.XXXXXX", dir) >= n)
    return tool_error("run: TMPDIR is too long");
  int fd = mkstemp(path);
  if (fd < 0) return tool_error("run: cannot create %s: %s", path, strerror(errno));
  close(fd);
  return 0;
}

static int is_file(const char *p)
{
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* libcapprof.so: $CAPPROF_LIBRARY, else beside the tool (build tree), else
** in the install's library directory. */
static int find_runtime(char *out, size_t n)
{
  const char *env = getenv("CAPPROF_LIBRARY");
  if (env && *env) {
    if (!is_file(env)) return tool_error("run: CAPPROF_LIBRARY=%s: no such file", env);
    return realpath(env, out) ? 0 : tool_error("run: %s: %s", env, strerror(errno));
  }
  char self[PATH_MAX];
  ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
  if (k <= 0) return tool_error("run: cannot find the capprof executable: %s", strerror(errno));
  self[k] = '\0';
  char *slash = strrchr(self, '/');
  if (slash) *slash = '\0';
  static const char *const where[] = { "%s/libcapprof.so.0", "%s/libcapprof.so",
                                       "%s/../" CAPPROF_INSTALL_LIBDIR "/libcapprof.so.0",
                                       "%s/../lib/libcapprof.so.0" };
  for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
    char cand[PATH_MAX + 64];
    snprintf(cand, sizeof cand, where[i], self);
    if (is_file(cand) && realpath(cand, out)) return 0;
  }
  (void)n;
  return tool_error("run: libcapprof.so not found beside %s or in ../%s (set CAPPROF_LIBRARY)",
                    self, CAPPROF_INSTALL_LIBDIR);
}

/* The file execvp would run for name, or "" (a script's interpreter is not
** looked at: scripts are not ELF). */
static void which(const char *name, char *out, size_t n)
{
  out[0] = '\0';
  if (strchr(name, '/')) {
    snprintf(out, n, "%s", name);
    return;
  }
  const char *path = getenv("PATH");
  if (!path) path = "/usr/local/bin:/usr/bin:/bin";
  while (*path) {
    size_t len = strcspn(path, ":");
    char cand[PATH_MAX];
    snprintf(cand, sizeof cand, "%.*s/%s", (int)len, len ? path : ".", name);
    if (is_file(cand) && access(cand, X_OK) == 0) {
      snprintf(out, n, "%s", cand);
      return;
    }
    path += len + (path[len] == ':');
  }
}

/* What the ELF file at path is: bit 1 statically linked (no PT_INTERP),
** bit 2 carries the runtime (a ".capprof" section, which libcapprof.a puts
** in every program linked with it; strip keeps it). 0 if not ELF64. */
#define ELF_STATIC  1
#define ELF_RUNTIME 2
static int elf_kind(const char *path)
{
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat st;
  int kind = 0;
  unsigned char *map = NULL;
  if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) goto out;
  size_t size = (size_t)st.st_size;
  map = malloc(size);
  if (!map) goto out;
  size_t got = 0;
  while (got < size) {
    ssize_t r = read(fd, map + got, size - got);
    if (r <= 0) goto out;
    got += (size_t)r;
  }
  Elf64_Ehdr eh;
  memcpy(&eh, map, sizeof eh);
  if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64) goto out;
  int interp = 0;
  for (unsigned i = 0; i < eh.e_phnum; i++) {
    uint64_t off = eh.e_phoff + (uint64_t)i * eh.e_phentsize;
    if (eh.e_phentsize < sizeof(Elf64_Phdr) || off + sizeof(Elf64_Phdr) > size) break;
    Elf64_Phdr ph;
    memcpy(&ph, map + off, sizeof ph);
    if (ph.p_type == PT_INTERP) interp = 1;
  }
  if (!interp) kind |= ELF_STATIC;
  if (eh.e_shentsize >= sizeof(Elf64_Shdr) && eh.e_shstrndx < eh.e_shnum &&
      eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize <= size) {
    Elf64_Shdr strs;
    memcpy(&strs, map + eh.e_shoff + (uint64_t)eh.e_shstrndx * eh.e_shentsize, sizeof strs);
    for (unsigned i = 0; i < eh.e_shnum && strs.sh_offset < size; i++) {
      Elf64_Shdr sh;
      memcpy(&sh, map + eh.e_shoff + (uint64_t)i * eh.e_shentsize, sizeof sh);
      if (sh.sh_name >= strs.sh_size || strs.sh_offset + sh.sh_name + 9 > size) continue;
      if (!memcmp(map + strs.sh_offset + sh.sh_name, ".capprof", 9)) kind |= ELF_RUNTIME;
    }
  }
out:
  free(map);
  close(fd);
  return kind;
}

static int apply_env(const struct run_opts *o, const char *runtime)
{
  for (int i = 0; i < o->nenv; i++) {
    int rc = o->env[i].value ? setenv(o->env[i].name, o->env[i].value, 1)
                             : unsetenv(o->env[i].name);
    if (rc != 0) return tool_error("run: cannot set %s: %s", o->env[i].name, strerror(errno));
  }
  if (!runtime) return 0;
  const char *old = getenv("LD_PRELOAD");
  size_t n = strlen(runtime) + (old ? strlen(old) : 0) + 2;
  char *pre = malloc(n);
  if (!pre) return tool_error("run: out of memory");
  snprintf(pre, n, "%s%s%s", runtime, old && *old ? ":" : "", old && *old ? old : "");
  int rc = setenv("LD_PRELOAD", pre, 1);
  free(pre);
  return rc ? tool_error("run: cannot set LD_PRELOAD: %s", strerror(errno)) : 0;
}

int run_program(const struct run_opts *o)
{
  char prog[PATH_MAX], runtime[PATH_MAX];
  which(o->argv[0], prog, sizeof prog);
  int kind = prog[0] ? elf_kind(prog) : 0;
  int preload = !(kind & ELF_RUNTIME);
  if ((kind & ELF_STATIC) && !(kind & ELF_RUNTIME))
    fprintf(stderr, "capprof: %s is statically linked: API interception cannot apply and no "
                    "runtime can be loaded into it; it writes no dump\n", o->argv[0]);
  if (preload && !(kind & ELF_STATIC) && find_runtime(runtime, sizeof runtime) != 0) return 127;
  if (apply_env(o, preload && !(kind & ELF_STATIC) ? runtime : NULL) != 0) return 127;

  /* As system() does: the terminal's ^C and ^\ go to the program, and the
  ** launcher lives to report. */
  struct sigaction ign, old_int, old_quit;
  memset(&ign, 0, sizeof ign);
  ign.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ign, &old_int);
  sigaction(SIGQUIT, &ign, &old_quit);
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return 126 + 0 * tool_error("run: fork: %s", strerror(errno));
  if (pid == 0) {
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    execvp(o->argv[0], o->argv);
    int e = errno;
    fprintf(stderr, "capprof: cannot run %s: %s\n", o->argv[0], strerror(e));
    _exit(e == ENOENT ? 127 : 126);
  }
  int status;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      tool_error("run: waitpid: %s", strerror(errno));
      return 126;
    }
  }
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGQUIT, &old_quit, NULL);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 126;
}
