/*
** seccomp_allow.c -- linked into a test program: before main, every thread
** of the process gets a seccomp filter that allows every system call. The
** runtime cannot tell it from one that would kill the process for a call
** it does not allow, so it must not add membarrier calls of its own when it
** patches code (src/patch/patch_x86_64.c); tests/sample/run.sh, case unhook.
*/
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

__attribute__((constructor, no_instrument_function)) static void allow_all(void)
{
  struct sock_filter allow[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
  struct sock_fprog prog = { 1, allow };
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0) {
    perror("seccomp_allow");
    exit(2);
  }
}
