/* noperf.c -- run a program where perf_event_open is refused, as Docker's
** default seccomp profile refuses it: a seccomp filter (raw BPF, inherited
** by the program and its threads) makes that one system call fail with the
** errno named, every other call allowed.
**   noperf EPERM|EACCES PROGRAM [ARGS...] */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
  if (argc < 3 || (strcmp(argv[1], "EPERM") && strcmp(argv[1], "EACCES"))) {
    fprintf(stderr, "usage: noperf EPERM|EACCES PROGRAM [ARGS...]\n");
    return 2;
  }
  unsigned e = !strcmp(argv[1], "EPERM") ? EPERM : EACCES;
  struct sock_filter f[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),          /* another ABI: not filtered */
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (e & SECCOMP_RET_DATA)),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = { (unsigned short)(sizeof f / sizeof f[0]), f };
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
    perror("noperf: seccomp");
    return 1;
  }
  execvp(argv[2], argv + 2);
  perror("noperf: exec");
  return 127;
}
