/*
** unhook.c (POSIX, x86-64) -- unhooking: the hooks of a throttled function
** patched out of its machine code, in GCC's after-inlining mode (fentry.c).
**
** Throttling (throttle.c) stops timing a frequent, short function (a leaf;
** while sampling, callers too), but its two hooks still run on every call.
** On Lua built with GCC's recommended flags, hook code was three quarters
** of the run, and what the hooks do to the code
** around them (cache and out-of-order work) moved the program's own profile
** 0.16 from the plain build's (docs/performance.md): more than what can be
** measured inside it. Unhooking removes them, once process-wide sampling
** (CAPPROF_SAMPLE) gives the function's time by program counter, or always
** with CAPPROF_UNHOOK=on.
**
** What is patched: the `call __fentry__` at the function's start (5 bytes, 6
** with the addr32 prefix the linker leaves under PIE, or `call *GOT(%rip)`)
** becomes a call of a counting stub (asm/fentry_x86_64.S, or the same code
** written near the program's code when the runtime is a shared library:
** the k-th function unhooked calls the k-th stub, which counts the call in
** the thread's tree, per call path: patch_stub_slot), or, when no stub is free or in reach, a 2-byte short
** jump to the end of that call; each `call __return__` it was seen to
** return through becomes such a jump.
**
** Which return sites: __return__ has no key, so a function's own cannot be
** told from the code alone. After the throttling decision (made in one of
** the function's returns, whose site is the first one known), the node's
** calls timed as samples (one in P, CP_FRAME_SAMPLED) come here from the exit
** hook with their return site; after LEARN_SAMPLES of them the entry and the
** sites seen are patched. A return site never seen (a rare path) stays a call
** to __return__, which finds no frame of its own and returns at once.
**
** How: each patch is one 16-bit store within one 16-byte block (so within
** a cache line, which makes it atomic, and within one instruction-fetch
** block), done while the page is writable (mprotect, then back to the protection it
** had: code_prot; code the host made writable itself is written as it is,
** execute-only code is never patched) under a process-wide lock that is only ever tried, never waited
** for. A thread running the code meanwhile executes either the old call,
** which the hooks handle as before (a throttled node), or the jump:
** the way LLVM's XRay patches its sleds in a running process. The
** processor manuals ask more of code that one core changes while others may
** run it: each of those cores must execute a serializing instruction before
** it runs the new bytes. So after each store every thread of the process is
** made to serialize (Linux's membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_
** SYNC_CORE, since 4.16: code_sync): no core runs stale bytes after it, and
** a multi-step write is never seen mixed; a core may still run the site
** between a store and that call, as with XRay (the kernel closes that window
** for its own code with int3, which a process cannot). Without membarrier
** the single aligned stores are all there is, and the dump says so per
** function; under a seccomp filter nothing is patched (seccomp_free). A 5-byte call
** is patched at its `e8` whether or not an addr32 prefix precedes it: that
** prefix on a short jump changes nothing. Each byte pattern is checked first,
** the call's target too (directly, or through the PLT's jump or a GOT slot).
**
** What it costs the profile: an unhooked function's calls are no longer
** timed; its stub, when it has one, counts them in the child of the node on
** top of the shadow stack (the path of the nearest hooked caller), a node
** marked not timed (CP_KEY_THROTTLED) made for it if there was none; its
** nodes keep what they had, and the dump lists it with the time it was
** unhooked and the calls its stub counted in threads with no tree
** (section UNHOOKED). Its time goes
** to its caller's self, and samples in its code are charged back to it by
** program counter when it is a callee of the node on top
** (tools/model/profile.c). It stays unhooked in a fork child and after
** capprof_reset. If mprotect fails (a policy against writable code),
** nothing is patched from then on.
*/
#define _GNU_SOURCE                       /* dladdr */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../posix/posix.h"
#include "../throttle/throttle.h"
#include "patch.h"

void __fentry__(void);
void __return__(void);
void __cyg_profile_func_enter(void *fn, void *site);
void __cyg_profile_func_exit(void *fn, void *site);
extern const unsigned char cp_count_stubs[] CP_HIDDEN, cp_count_stubs_end[] CP_HIDDEN;
void cp_stub_check(void) CP_HIDDEN;            /* asm: a stub's 64th call reads the ring */
void cp_stub_slot(void) CP_HIDDEN;             /* asm: a stub's slow path (patch_stub_slot) */
#define COUNT_STUB_SIZE 128u           /* asm/fentry_x86_64.S */

/* The entry and exit hooks of each kind (CP_PROBE_*): GCC's -pg -mfentry
** pair, or -finstrument-functions' (whose key is the function, so that its
** entry hook call is learnt like the exit's). */
static uintptr_t entry_hook(uint32_t kind)
{
  return kind == CP_PROBE_FENTRY ? (uintptr_t)__fentry__ : (uintptr_t)__cyg_profile_func_enter;
}

static uintptr_t exit_hook(uint32_t kind)
{
  return kind == CP_PROBE_FENTRY ? (uintptr_t)__return__ : (uintptr_t)__cyg_profile_func_exit;
}

#define LEARN_SAMPLES 48u      /* sampled returns before the patch (~1,500 calls) */

static volatile uint32_t patch_lock;
static volatile int refused;   /* mprotect failed once: never again */
/* Try to take patch_lock for a patch: never waits. Fails while another
** patch or a fork holds the lock, or while the host changes a protection or
** installs a seccomp filter (the OS layer's guard, src/posix/os_guard.c:
** those host calls wait for the patch to end, and a patch may not overlap
** them: a page made read-only under the store, a filter that kills the
** membarrier after the check). */
static int patch_try_lock(void)
{
  if (__atomic_exchange_n(&patch_lock, 1, __ATOMIC_SEQ_CST)) return 0;
  if (!posix_guard_try()) {
    __atomic_store_n(&patch_lock, 0, __ATOMIC_RELEASE);
    return 0;
  }
  return 1;
}

static void patch_unlock(void)
{
  posix_guard_release();
  __atomic_store_n(&patch_lock, 0, __ATOMIC_RELEASE);
}

/* The runtime's own protection changes: the system call itself. */
static int protect(void *addr, size_t len, int prot)
{
  return (int)syscall(SYS_mprotect, addr, len, prot);
}

void (*unhook_test_opened)(uintptr_t first, size_t len) CP_HIDDEN;

/* Whether the n bytes at a lie in a loaded module's segments (which are
** mapped): a call's target or GOT slot is read only then. A site that is
** not what it seems (an exit hook reached by a tail jump leaves the caller's
** return address) can point anywhere. */
static int readable(uintptr_t a, size_t n)
{
  Dl_info i1, i2;
  return a && dladdr((void *)a, &i1) && dladdr((void *)(a + n - 1), &i2) &&
         i1.dli_fbase == i2.dli_fbase;
}

/* Where a call instruction ending at end goes: its rel32 target, or 0 when
** the byte before the displacement is not e8. */
static uintptr_t rel32_target(uintptr_t end)
{
  const unsigned char *p = (const unsigned char *)end;
  if (p[-5] != 0xE8) return 0;
  int32_t rel;
  memcpy(&rel, p - 4, 4);
  return end + (uintptr_t)(intptr_t)rel;
}

/* Whether code at a (a call's target) is hook, directly or through a PLT
** entry (`jmp *GOT(%rip)`, or `endbr64; bnd jmp *GOT(%rip)` in .plt.sec). */
static int reaches(uintptr_t a, uintptr_t hook)
{
  if (a == hook) return 1;
  if (!readable(a, 11)) return 0;
  const unsigned char *p = (const unsigned char *)a;
  int32_t rel;
  uintptr_t slot = 0;
  if (p[0] == 0xFF && p[1] == 0x25) {                               /* jmp *GOT */
    memcpy(&rel, p + 2, 4);
    slot = a + 6 + (uintptr_t)(intptr_t)rel;
  } else if (p[0] == 0xF3 && p[1] == 0x0F && p[2] == 0x1E && p[3] == 0xFA) { /* endbr64 */
    if (p[4] == 0xFF && p[5] == 0x25) {                             /* jmp *GOT */
      memcpy(&rel, p + 6, 4);
      slot = a + 10 + (uintptr_t)(intptr_t)rel;
    } else if (p[4] == 0xF2 && p[5] == 0xFF && p[6] == 0x25) {      /* bnd jmp *GOT */
      memcpy(&rel, p + 7, 4);
      slot = a + 11 + (uintptr_t)(intptr_t)rel;
    }
  }
  return slot && readable(slot, sizeof(uintptr_t)) && *(const uintptr_t *)slot == hook;
}

/* Whether a jump can be stored at at: within one 16-byte block, so that
** the store is atomic (within a cache line) and no instruction fetch sees
** half of it. */
static int patchable(uintptr_t at) { return (at & 15) != 15; }

/* A hook call that starts at a 16-byte block's last byte cannot take the
** jump. When the instruction right before it loads the function's own
** address into the hook's first argument (-finstrument-functions: `lea
** fn(%rip), %rdi`, 7 bytes, or `mov $fn, %edi`, 5), the jump goes there and
** skips both: the load sets only %rdi, which the call clobbers anyway, and
** its operand, fn, shows that it is an instruction of its own (Clang's
** `push %rbx; mov %edi, %ebx; mov 8(%rsp), %rsi; lea fn(%rip), %rdi` puts
** the entry call of every such function there). 1: found, 0: jumped over
** already, -1: no such load. */
static int over_load(uintptr_t call, uintptr_t end, uintptr_t fn, uintptr_t *at, uint16_t *jmp)
{
  if (!fn || !readable(call - 7, 7)) return -1;
  const unsigned char *q = (const unsigned char *)call;
  int32_t d;
  memcpy(&d, q - 4, 4);
  if (q[-5] == 0x3D && call + (uintptr_t)(intptr_t)d == fn) {     /* lea fn(%rip), %rdi */
    uint8_t rel = (uint8_t)(end - (call - 7) - 2);
    if (q[-7] == 0xEB && q[-6] == rel) return 0;
    /* 48 8d 3d: into %rdi, not %r15 (4c 8d 3d), where Clang keeps fn */
    if (q[-7] != 0x48 || q[-6] != 0x8D || !patchable(call - 7)) return -1;
    *at = call - 7;
    *jmp = (uint16_t)(0xEB | rel << 8);
    return 1;
  }
  if (fn <= UINT32_MAX && memcmp(q - 3, (const unsigned char *)&fn + 1, 3) == 0) {   /* mov $fn, %edi */
    uint8_t rel = (uint8_t)(end - (call - 5) - 2);
    if (q[-5] == 0xEB && q[-4] == rel) return 0;
    /* not the tail of `41 bf`, mov $fn, %r15d, which must stay */
    if (q[-5] != 0xBF || (q[-6] & 0xF0) == 0x40 || q[-4] != (uint8_t)fn || !patchable(call - 5))
      return -1;
    *at = call - 5;
    *jmp = (uint16_t)(0xEB | rel << 8);
    return 1;
  }
  return -1;
}

/* The fn that hook_call takes for hooks of kind in the function of key:
** -finstrument-functions' keys are the function, fentry's are not needed. */
static uintptr_t load_fn(uint32_t kind, uint64_t key)
{
  return kind == CP_PROBE_CYG ? (uintptr_t)(key & ~CP_KEY_THROTTLED) : 0;
}

/* Regions of counting stubs written near the program's code (near_region). */
#define NEAR_REGIONS 8u
#define NEAR_BYTES ((size_t)CP_UNHOOK_COUNTED * COUNT_STUB_SIZE)
static uintptr_t near_base[NEAR_REGIONS];
static int near_failed;                /* mapping refused: not tried again */

/* Whether a is in a counting stub, the runtime's own or one near the code.
** Also from the sampling signal's handler: plain loads of words written
** once each. */
static int is_stub(uintptr_t a)
{
  if (a >= (uintptr_t)cp_count_stubs && a < (uintptr_t)cp_count_stubs_end) return 1;
  for (uint32_t r = 0; r < NEAR_REGIONS; r++) {
    uintptr_t b = __atomic_load_n(&near_base[r], __ATOMIC_RELAXED);
    if (b && a >= b && a < b + NEAR_BYTES) return 1;
  }
  return 0;
}

int unhook_in_stub(uintptr_t pc) { return is_stub(pc); }

uintptr_t unhook_stub_home(uintptr_t pc)
{
  for (uint32_t r = 0; r < NEAR_REGIONS; r++) {
    uintptr_t b = __atomic_load_n(&near_base[r], __ATOMIC_RELAXED);
    if (b && pc >= b && pc < b + NEAR_BYTES) return (uintptr_t)cp_count_stubs + (pc - b);
  }
  return pc;
}

/* Calls counted by the stubs in threads with no state of their own
** (asm/fentry_x86_64.S, a locked add). */
uint64_t unhook_nostate[CP_UNHOOK_COUNTED] CP_HIDDEN;
/* The key of the function stub k counts, stored before its call is
** written (the record is logged after: a call meanwhile still counts). */
static uint64_t stub_key[CP_UNHOOK_COUNTED];

/* The patch for the hook call ending at end: where to write the 2-byte jump
** and its value. 0: patched already (a jump there to end, or a counting
** stub's call). -1: not a call of
** hook that we know. fn: the function's address for -finstrument-functions
** hooks (a call at a block's last byte may be jumped over from the load of
** fn before it), else 0. A call at a block's last byte, with no such load,
** is returned with *at not patchable. */
static int hook_call(uintptr_t end, uintptr_t hook, uintptr_t fn, uintptr_t *at, uint16_t *jmp)
{
  const unsigned char *p = (const unsigned char *)end;
  if (p[-5] == 0xEB && p[-4] == 0x03) return 0;
  if (p[-6] == 0xEB && p[-5] == 0x04) return 0;
  uintptr_t to = rel32_target(end);
  if (is_stub(to) || (p[-1] == 0x90 && is_stub(rel32_target(end - 1))))
    return 0;                                  /* a counting stub's call */
  if (p[-7] == 0xEB && p[-6] == 0x05 && readable(end - 12, 12) && is_stub(rel32_target(end - 7)))
    return 0;                                  /* the same in place of the load (poke_call) */
  if (to && reaches(to, hook)) {
    *at = end - 5;
    *jmp = 0x03EB;                             /* jmp .+5: eb 03 */
  } else if (p[-6] == 0xFF && p[-5] == 0x15) { /* call *disp32(%rip) */
    int32_t rel;
    memcpy(&rel, p - 4, 4);
    uintptr_t slot = end + (uintptr_t)(intptr_t)rel;
    if (!readable(slot, sizeof(uintptr_t)) || *(const uintptr_t *)slot != hook) return -1;
    *at = end - 6;
    *jmp = 0x04EB;                             /* jmp .+6: eb 04 */
  } else {
    return -1;
  }
  if (patchable(*at)) return 1;
  uintptr_t over;
  uint16_t oj;
  int r = over_load(*at, end, fn, &over, &oj);
  if (r == 0) return 0;
  if (r == 1) {
    *at = over;
    *jmp = oj;
  }
  return 1;
}

/* fentry: whether the entry of the function of key (its key: the entry hook
** call's end) is a call of __fentry__ that can be patched. */
static int fentry_entry_ok(uint64_t key)
{
  uintptr_t at;
  uint16_t jmp;
  return hook_call((uintptr_t)(key & ~CP_KEY_THROTTLED), entry_hook(CP_PROBE_FENTRY), 0, &at, &jmp) == 1 &&
         patchable(at);
}

int unhook_patch_for(uintptr_t end, int exit, uint32_t kind, uintptr_t fn, uintptr_t *at,
                     uint16_t *jmp)
{
  return hook_call(end, exit ? exit_hook(kind) : entry_hook(kind), fn, at, jmp);
}

/* Pages made writable by a patch in progress (under patch_lock), for a
** fork child that inherits them so, and the protection to give them back. */
static volatile uintptr_t open_first;
static volatile size_t open_len;
static volatile int open_prot;

/* One /proc/self/maps field: the hex number at *p, p moved past it. */
static uintptr_t maps_hex(const char **p, const char *end)
{
  uintptr_t v = 0;
  for (; *p < end; (*p)++) {
    char c = **p;
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) break;
    v = v << 4 | (uintptr_t)d;
  }
  return v;
}

/* The protection (PROT_*) of every page of [first, first + len), from
** /proc/self/maps: the host may have made its code writable (self-modifying
** code, hot patching) or execute-only, and a patch gives each page back what
** it had. -1 when the range is not one protection or not mapped, or the
** file cannot be read. Raw system calls (no cancellation point, no stdio);
** a static buffer: under patch_lock. */
static int code_prot(uintptr_t first, size_t len)
{
  static char buf[4096];
  static char line[512];
  int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  int prot = -1;
  size_t ll = 0;
  uintptr_t want = first, stop = first + len;
  long n;
  while (want < stop && (n = syscall(SYS_read, fd, buf, sizeof buf)) > 0)
    for (long i = 0; i < n && want < stop; i++) {
      if (buf[i] != '\n') {
        if (ll < sizeof line) line[ll++] = buf[i];
        continue;
      }
      const char *q = line, *end = line + ll;
      ll = 0;
      uintptr_t lo = maps_hex(&q, end);
      if (q == end || *q++ != '-') continue;
      uintptr_t hi = maps_hex(&q, end);
      if (end - q < 5 || *q++ != ' ' || want < lo || want >= hi) continue;
      int p = (q[0] == 'r' ? PROT_READ : 0) | (q[1] == 'w' ? PROT_WRITE : 0) |
              (q[2] == 'x' ? PROT_EXEC : 0);
      if (prot >= 0 && p != prot) {
        prot = -1;
        break;
      }
      prot = p;
      want = hi;
    }
  syscall(SYS_close, fd);
  return want >= stop ? prot : -1;
}

/* Make the pages of the n bytes at at writable (1), or give them back their
** protection (0); 0 on success. Only readable, executable code is patched
** (an execute-only page stays so); code the host made writable itself is
** written without a change of protection. */
static int open_code(uintptr_t at, size_t n, int writable)
{
  uintptr_t pg = (uintptr_t)os_page_size();
  uintptr_t first = at & ~(pg - 1), last = (at + n - 1) & ~(pg - 1);
  size_t len = (size_t)(last - first + pg);
  if (!writable) {
    if (open_len) protect((void *)first, len, open_prot);
    open_len = 0;
    return 0;
  }
  int prot = code_prot(first, len);
  if (prot < 0 || (prot & (PROT_READ | PROT_EXEC)) != (PROT_READ | PROT_EXEC)) return -1;
  if (prot & PROT_WRITE) return 0;               /* writable already: left as it is */
  open_prot = prot;
  open_first = first;
  open_len = len;
  if (protect((void *)first, len, prot | PROT_WRITE) != 0) {
    open_len = 0;
    refused = 1;
    return -1;
  }
  if (unhook_test_opened) unhook_test_opened(first, len);   /* the race, on purpose */
  return 0;
}

/* Whether the calling thread runs under no seccomp filter ("Seccomp:\t0"
** in its own status: filters are per thread unless installed for all, and
** /proc/self is the main thread's): a filter may kill the process for a
** system call it does not allow rather than fail it: membarrier, which the
** runtime would otherwise add to what the host makes, and the writable
** and executable mprotect of a patch (a W^X policy). Asked before each
** patch (a filter can come at any time, and never goes); once a filter is
** seen, nothing is patched again (refused) and no thread calls membarrier. */
static int filtered;
static int seccomp_free(void)
{
  if (filtered) return 0;
  if (!posix_seccomp_none()) filtered = refused = 1;
  return !filtered;
}

/* Core serialization after a store into code (above): 0 when every thread
** of the process has executed a serializing instruction since, -1 when the
** kernel cannot do it (before Linux 4.16) or may not be asked (a seccomp
** filter: seccomp_free, asked by patch()). Registered on first use; a fork
** child, which inherits the registration, registers again if its kernel
** wants it. */
static int sync_state;                 /* 0: not asked yet, 1: registered, -1: refused */
static int sync_allowed;               /* this patch may call membarrier (patch()) */
static uint32_t syncs;                 /* sync_after_store calls, for tests */
static int code_sync(void)
{
  if (!sync_allowed) return -1;
  int saved = errno;
  if (!sync_state) {
    long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    sync_state = cmds >= 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE) &&
                 syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0) == 0
                 ? 1 : -1;
  }
  int rc = -1;
  if (sync_state > 0) {
    rc = syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0) == 0 ? 0 : -1;
    if (rc && errno == EPERM &&
        syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0) == 0)
      rc = syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0) == 0 ? 0 : -1;
  }
  errno = saved;
  return rc;
}

/* A store of the current patch was not followed by code_sync (under
** patch_lock). */
static int unsynced;

static void sync_after_store(void)
{
  syncs++;
  if (code_sync() != 0) unsynced = 1;
}

uint32_t unhook_syncs(void) { return syncs; }

/* A patch begins: none of its stores unsynced yet; membarrier only where
** the kernel has it and this thread runs under no seccomp filter. */
static void patch_begin(void)
{
  unsynced = 0;
  sync_allowed = sync_state >= 0 && seccomp_free();
}

static void store16(uintptr_t at, uint16_t v)
{
  __asm__ __volatile__("movw %1, (%0)" : : "r"(at), "r"(v) : "memory");
}

/* Store v at at, one 16-bit write, the page made writable meanwhile. */
static int poke16(uintptr_t at, uint16_t v)
{
  if (!patchable(at) || open_code(at, 2, 1) != 0) return -1;
  store16(at, v);
  sync_after_store();
  open_code(at, 2, 0);
  return 0;
}

/* Whether the CPU has cmpxchg16b (CPUID.1:ECX bit 13), asked once. */
static int has_cx16(void)
{
  static int known;                    /* 0: not yet, 1: no, 2: yes */
  if (!known) {
    unsigned a = 1, b, c = 0, d;
    __asm__ __volatile__("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
    known = (c >> 13 & 1) ? 2 : 1;     /* CPUID.1:ECX.CMPXCHG16B */
  }
  return known == 2;
}

/* Write the n bytes v at offset off of the 16-byte aligned block a, in one
** locked store of the whole block (cmpxchg16b), its other bytes as they
** are at that moment (read again if they changed meanwhile). */
static void store_in_block(uintptr_t a, size_t off, const unsigned char *v, size_t n)
{
  uint64_t lo, hi;
  memcpy(&lo, (const void *)a, 8);
  memcpy(&hi, (const void *)(a + 8), 8);
  for (;;) {
    unsigned char b[16];
    uint64_t nlo, nhi;
    memcpy(b, &lo, 8);
    memcpy(b + 8, &hi, 8);
    memcpy(b + off, v, n);
    memcpy(&nlo, b, 8);
    memcpy(&nhi, b + 8, 8);
    unsigned char ok;
    __asm__ __volatile__("lock cmpxchg16b (%[p])\n\tsete %[ok]"
                         : [ok] "=q"(ok), "+a"(lo), "+d"(hi)
                         : [p] "r"(a), "b"(nlo), "c"(nhi)
                         : "memory", "cc");
    if (ok) return;                    /* else lo, hi: the block as it is now */
  }
}

/* Turn the entry hook call of len bytes at at (5: e8 rel32, 6: ff 15
** disp32; 12: the load of fn and the call, below) into a call of the
** counting stub to (a nop after it in 6 bytes).
** Within one 16-byte block, in one locked store of the block; else with
** jmp (the jump over the call) as the step between: first the jump, so that
** no thread runs the call's bytes while they change; then the new call's
** last bytes, which the jump skips; then, in one 16-bit store again, the
** call's opcode and first displacement byte (a call of the function by
** another thread that meets the jump is not counted). A thread that
** meanwhile runs the code runs the old call, the jump or the new call, each
** whole. 0: done; -1: not within a rel32's reach, or
** mprotect refused (the jump may then be in place). */
static int poke_call(uintptr_t at, size_t len, uintptr_t to, uint16_t jmp)
{
  int64_t rel = (int64_t)to - (int64_t)(at + 5);
  if (!patchable(at) || rel < INT32_MIN || rel > INT32_MAX) return -1;
  uint32_t r = (uint32_t)(int32_t)rel;
  if (len == 12) {
    /* `lea fn(%rip), %rdi` (7 bytes) then the call at a block's last byte
    ** (over_load): the load becomes the stub's call and a jump over the
    ** old call (e8 rel32, eb 05), in one locked store of the load's block.
    ** The load only set the hook's argument. */
    if ((at & 15) + 7 > 16 || !has_cx16() || open_code(at, 7, 1) != 0) return -1;
    unsigned char q[7] = { 0xE8, 0, 0, 0, 0, 0xEB, 0x05 };
    memcpy(q + 1, &r, 4);
    store_in_block(at & ~(uintptr_t)15, at & 15, q, 7);
    sync_after_store();
    open_code(at, 7, 0);
    return 0;
  }
  if (len != 5 && len != 6) return -1;
  if (open_code(at, len, 1) != 0) return -1;
  if ((at & 15) + len <= 16 && has_cx16()) {
    /* Within one 16-byte block: the whole call in one locked 16-byte store,
    ** so that no call of the function meets the jump between the steps
    ** below and goes uncounted (another thread may be calling it). */
    unsigned char q[6] = { 0xE8, 0, 0, 0, 0, 0x90 };
    memcpy(q + 1, &r, 4);
    store_in_block(at & ~(uintptr_t)15, at & 15, q, len);
    sync_after_store();
    open_code(at, len, 0);
    return 0;
  }
  /* The kernel's steps for its own code (text_poke_bp), with the jump
  ** where it has a breakpoint: after each, every core serializes, so none
  ** runs a mix of the old and new bytes. */
  store16(at, jmp);
  sync_after_store();
  volatile unsigned char *p = (volatile unsigned char *)at;
  p[2] = (unsigned char)(r >> 8);
  p[3] = (unsigned char)(r >> 16);
  p[4] = (unsigned char)(r >> 24);
  if (len == 6) p[5] = 0x90;
  sync_after_store();
  store16(at, (uint16_t)(0xE8 | (r & 0xFF) << 8));
  sync_after_store();
  open_code(at, len, 0);
  return 0;
}

/* For tests (test_unhook.c): one patch's stores, as patch() makes them: a
** jump stored over the call at at (len 2: jmp) or the call of len bytes
** there turned into a call of to; 0 when done. *synced: whether every
** store was followed by code_sync. */
int unhook_test_poke(uintptr_t at, size_t len, uintptr_t to, uint16_t jmp, int *synced)
{
  patch_begin();
  int rc = len == 2 ? poke16(at, jmp) : poke_call(at, len, to, jmp);
  *synced = !unsynced;
  return rc;
}

/* Whether a call at at can reach to (its rel32 counts from at + 5). */
static int in_reach(uintptr_t at, uintptr_t to)
{
  int64_t d = (int64_t)to - (int64_t)(at + 5);
  return d >= INT32_MIN && d <= INT32_MAX;
}

/* Counting stubs near the program's code. A runtime in a shared library
** (libcapprof.so) is mapped out of a call's reach from the executable: its
** own stubs (asm/fentry_x86_64.S) cannot be called from there. Then the
** same code, for all CP_UNHOOK_COUNTED stubs at once, is written into pages
** mapped within reach (read and write, then read and execute: never both,
** and never changed again, so no thread can run a stub while its page is
** not executable). Each (offsets in bytes):
**    0 mov %fs:OFF, %r11     (OFF: posix_tls's offset from the thread
**                             pointer, the same in every thread: initial-exec TLS)
**    9 test %r11, %r11; jz 60
**   14 push %rax; mov (%r11), %rax; mov (%rax), %eax; inc %eax
**   22 cmp %eax, USLOT+4k(%r11); jne 48
**   31 mov UCOUNT+8k(%r11), %rax; incq (%rax); testb $63, (%rax); pop %rax
**   45 jz 75; ret
**   48 pop %rax; push $k; jmp *88(%rip-relative): cp_stub_slot
**   60 movabs $unhook_nostate+8k, %r11; lock incq (%r11); ret
**   75 jmp *96: cp_stub_check, R11 kept
**   88 cp_stub_slot, 96 cp_stub_check (the runtime may be out of a rel32's
**      reach)
** Under patch_lock. */
void unhook_near_code(unsigned char *p, uint32_t k, int32_t off)
{
  uint32_t uslot = (uint32_t)(offsetof(struct cp_thread, uslot) + 4u * k);
  uint32_t ucount = (uint32_t)(offsetof(struct cp_thread, ucount) + 8u * k);
  uint64_t nostate = (uint64_t)(uintptr_t)&unhook_nostate[k];
  uint64_t check = (uint64_t)(uintptr_t)cp_stub_check;
  uint64_t slot = (uint64_t)(uintptr_t)cp_stub_slot;
  int32_t disp;
  static const unsigned char head[5] = { 0x64, 0x4C, 0x8B, 0x1C, 0x25 };   /* mov %fs:off, %r11 */
  static const unsigned char top[13] = { 0x4D, 0x85, 0xDB, 0x74, 0x2E,     /* test; jz 60 */
                                         0x50, 0x49, 0x8B, 0x03,           /* push; mov (%r11),%rax */
                                         0x8B, 0x00, 0xFF, 0xC0 };         /* mov (%rax),%eax; inc */
  static const unsigned char cnt[10] = { 0x48, 0xFF, 0x00,                 /* incq (%rax) */
                                         0xF6, 0x00, 0x3F, 0x58,           /* testb $63; pop %rax */
                                         0x74, 0x1C, 0xC3 };               /* jz 75; ret */
  static const unsigned char lock_inc[5] = { 0xF0, 0x49, 0xFF, 0x03, 0xC3 }; /* lock incq (%r11); ret */
  memset(p, 0xCC, COUNT_STUB_SIZE);                     /* int3 */
  memcpy(p, head, 5);
  memcpy(p + 5, &off, 4);
  memcpy(p + 9, top, 13);
  p[22] = 0x41;                                         /* cmp %eax, uslot(%r11) */
  p[23] = 0x39;
  p[24] = 0x83;
  memcpy(p + 25, &uslot, 4);
  p[29] = 0x75;                                         /* jne 48 */
  p[30] = 0x11;
  p[31] = 0x49;                                         /* mov ucount(%r11), %rax */
  p[32] = 0x8B;
  p[33] = 0x83;
  memcpy(p + 34, &ucount, 4);
  memcpy(p + 38, cnt, 10);
  p[48] = 0x58;                                         /* pop %rax */
  p[49] = 0x68;                                         /* push $k */
  memcpy(p + 50, &k, 4);
  p[54] = 0xFF;                                         /* jmp *88 */
  p[55] = 0x25;
  disp = 88 - 60;
  memcpy(p + 56, &disp, 4);
  p[60] = 0x49;                                         /* movabs $nostate, %r11 */
  p[61] = 0xBB;
  memcpy(p + 62, &nostate, 8);
  memcpy(p + 70, lock_inc, 5);
  p[75] = 0xFF;                                         /* jmp *96 */
  p[76] = 0x25;
  disp = 96 - 81;
  memcpy(p + 77, &disp, 4);
  memcpy(p + 88, &slot, 8);
  memcpy(p + 96, &check, 8);
}

static uintptr_t near_region(uintptr_t at)
{
  for (uint32_t r = 0; r < NEAR_REGIONS; r++)
    if (near_base[r] && in_reach(at, near_base[r]) && in_reach(at, near_base[r] + NEAR_BYTES))
      return near_base[r];
  uint32_t r = 0;
  while (r < NEAR_REGIONS && near_base[r]) r++;
  if (r == NEAR_REGIONS || near_failed) return 0;
  uintptr_t tp;
  __asm__("mov %%fs:0, %0" : "=r"(tp));
  int64_t off = (int64_t)((uintptr_t)&posix_tls - tp);
  if (off < INT32_MIN || off > INT32_MAX) {
    near_failed = 1;
    return 0;
  }
  /* Below the code first (where the executable's own mappings rarely are),
  ** then above, at 16 MB to 1 GB. */
  uintptr_t page = (uintptr_t)os_page_size();
  for (uintptr_t d = (uintptr_t)16 << 20; d <= (uintptr_t)1 << 30; d <<= 1)
    for (int side = 0; side < 2; side++) {
      if (side == 0 && at < d + NEAR_BYTES) continue;
      uintptr_t want = ((side ? at + d : at - d - NEAR_BYTES) & ~(page - 1));
      void *m = mmap((void *)want, NEAR_BYTES, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (m == MAP_FAILED) {
        near_failed = 1;
        return 0;
      }
      uintptr_t b = (uintptr_t)m;
      if (!in_reach(at, b) || !in_reach(at, b + NEAR_BYTES)) {
        munmap(m, NEAR_BYTES);
        continue;
      }
      for (uint32_t k = 0; k < CP_UNHOOK_COUNTED; k++)
        unhook_near_code((unsigned char *)m + (size_t)k * COUNT_STUB_SIZE, k, (int32_t)off);
      if (protect(m, NEAR_BYTES, PROT_READ | PROT_EXEC) != 0) {
        munmap(m, NEAR_BYTES);
        near_failed = 1;                                /* no executable mappings */
        return 0;
      }
      __atomic_store_n(&near_base[r], b, __ATOMIC_RELEASE);
      return b;
    }
  return 0;
}

/* The counting stub k for an entry hook call at at: the runtime's own, or
** one near the code; 0 when there is none in reach. */
static uintptr_t stub_for(uint32_t k, uintptr_t at)
{
  uintptr_t s = (uintptr_t)cp_count_stubs + COUNT_STUB_SIZE * k;
  if (in_reach(at, s)) return s;
  uintptr_t b = near_region(at);
  return b ? b + COUNT_STUB_SIZE * k : 0;
}

/* -finstrument-functions: whether the few instructions before the entry
** hook call at call load fn, as Clang and GCC do for its first argument:
** `lea fn(%rip), %reg` (REX.W 8d /r, RIP-relative; Clang keeps fn in a
** callee-saved register for the exit hook) or `mov $fn, %edi` (bf imm32).
** So the entry site learnt belongs to the function that is unhooked. */
static int passes_fn(uintptr_t call, uintptr_t fn)
{
  const unsigned char *p = (const unsigned char *)call;
  int most = (call & 4095) < 32 ? (int)(call & 4095) : 32;    /* within the page */
  for (int back = 5; back <= most; back++) {
    const unsigned char *q = p - back;
    int32_t d;
    if ((q[0] == 0x48 || q[0] == 0x4C) && q[1] == 0x8D && (q[2] & 0xC7) == 0x05 && back >= 7) {
      memcpy(&d, q + 3, 4);
      if ((uintptr_t)(q + 7) + (uintptr_t)(intptr_t)d == fn) return 1;
    }
    if (q[0] == 0xBF) {
      uint32_t imm;
      memcpy(&imm, q + 1, 4);
      if ((uintptr_t)imm == fn) return 1;
    }
  }
  return 0;
}

/* Patch the entry at key and the return sites; log the function when its
** entry changed now. 1 when the entry is patched (now or before). Under
** patch_lock. */
static int patch(const struct cp_unhook_learn *l)
{
  uintptr_t at, exit_at[CP_UNHOOK_SITES];
  uint16_t jmp, exit_jmp[CP_UNHOOK_SITES];
  uintptr_t fn = load_fn(l->kind, l->key);
  int e = hook_call(l->entry, entry_hook(l->kind), fn, &at, &jmp);
  if (e < 0 || (e == 1 && !patchable(at)) ||
      (l->kind == CP_PROBE_CYG && e == 1 && !passes_fn(l->entry - 5, l->key)))
    return 0;                                  /* exits untouched: the function stays hooked */
  /* -finstrument-functions: an exit hook left in place with no frame of its
  ** own takes the exit's slow mismatch path each time, so every exit seen
  ** must be patchable too (fentry's __return__ returns at once instead). */
  int ex[CP_UNHOOK_SITES];
  for (uint32_t k = 0; k < l->nsites; k++) {
    ex[k] = hook_call(l->sites[k], exit_hook(l->kind), fn, &exit_at[k], &exit_jmp[k]);
    if (l->kind == CP_PROBE_CYG && (ex[k] < 0 || (ex[k] == 1 && !patchable(exit_at[k]))))
      return 0;
  }
  /* The entry first, then the return sites. The other way round, every
  ** call another thread entered between the two (their stores are apart
  ** by the serializations) would keep its frame with no exit to pop it,
  ** charging its caller's time to it until the caller returns; this way
  ** only a call inside the function's body while its exit is patched
  ** does. A call entered after the entry's patch and returning through a
  ** site not patched yet finds no frame of its own: fentry's __return__
  ** returns at once, -finstrument-functions' exit takes the mismatch path. */
  patch_begin();
  int counted = 0;
  if (e == 1) {
    if (refused) return 0;
    /* A call of the next counting stub when it has one and the call is
    ** patched where it is, or in place of `lea fn(%rip), %rdi` before it,
    ** else the jump. */
    uint32_t k = unhook_next();
    size_t len = l->entry - at;
    uintptr_t stub = 0;
    if (k < CP_UNHOOK_COUNTED && (((len == 5 || len == 6) && jmp == (len == 5 ? 0x03EB : 0x04EB)) ||
                                  (len == 12 && jmp == 0x0AEB)))
      stub = stub_for(k, at);
    if (stub) __atomic_store_n(&stub_key[k], l->key, __ATOMIC_RELEASE);   /* before its call */
    counted = stub && poke_call(at, len, stub, jmp) == 0;
    if (!counted && (refused || poke16(at, jmp) != 0)) return 0;   /* exits untouched */
  }
  /* If the process refuses a store from here on (refused), the entry stays
  ** patched and is logged all the same: its stub counts the calls, which
  ** the dump must say; the exits left in place find no frame (fentry's
  ** return at once, -finstrument-functions' take the mismatch path). */
  for (uint32_t k = 0; k < l->nsites && !refused; k++)
    if (ex[k] == 1) poke16(exit_at[k], exit_jmp[k]);
  if (e == 0) {                                /* its exits seen since, on another path */
    if (unsynced) unhook_mark_unsynced(l->key);
    return 1;
  }
  unhook_log(l->key, cp_now(), counted, !unsynced);
  return 1;
}

struct unhook_find { uint64_t key; int found; };

static void find_rec(void *ctx, uint64_t key, uint64_t ticks)
{
  struct unhook_find *c = ctx;
  (void)ticks;
  if (key == c->key) c->found = 1;
}

static int is_unhooked(uint64_t key)
{
  struct unhook_find c = { key & ~CP_KEY_THROTTLED, 0 };
  unhook_records(find_rec, &c);
  return c.found;
}

/* Whether the function of node i may lose its hooks, as far as t saw it:
** every callee below any of its call paths is unhooked already, or is the
** function itself (a recursion, whose calls lose their hooks with it), so
** no call path of it that t ran deep is cut (node i itself was found
** frequent and short by throttling). */
static int function_ok(struct cp_thread *t, uint32_t i)
{
  uint64_t key = t->nodes[i].key | CP_KEY_THROTTLED;
  uint32_t nn = t->nnodes;
  for (uint32_t k = CP_FIRST_NODE; k < nn; k++) {
    const struct cp_node *x = &t->nodes[k];
    if (x->parent < CP_FIRST_NODE || x->parent >= nn) continue;
    if ((t->nodes[x->parent].key | CP_KEY_THROTTLED) != key) continue;
    if ((x->key | CP_KEY_THROTTLED) != key && !is_unhooked(x->key)) return 0;
  }
  return 1;
}

/* Whether node i of t is a call of its function from within itself (a
** recursion's inner call). Only the outermost may learn: patched from an
** inner call's return, the outer calls still on the shadow stack would
** return through patched exits, and their frames, never popped, would take
** every sample until the next hook. */
static int nested(const struct cp_thread *t, uint32_t i)
{
  uint64_t key = t->nodes[i].key | CP_KEY_THROTTLED;
  for (uint32_t p = t->nodes[i].parent; p >= CP_FIRST_NODE && p < t->nnodes; p = t->nodes[p].parent)
    if ((t->nodes[p].key | CP_KEY_THROTTLED) == key) return 1;
  return 0;
}

/* A learning place freed; waiting node w removed. */
static void drop(struct cp_unhook *u, struct cp_unhook_learn *l)
{
  l->node = 0;
  u->active--;
}

static void drop_waiting(struct cp_unhook *u, uint32_t w)
{
  u->waiting[w] = u->waiting[u->nwaiting - 1];
  u->waiting_kind[w] = u->waiting_kind[u->nwaiting - 1];
  u->nwaiting--;
  u->active--;
}

/* Free the places that will never finish: their function was unhooked
** meanwhile (by another of its nodes or another thread: their calls push no
** frames now), or their node has not been sampled enough in STALE events
** (a path no longer taken). Waiting nodes of unhooked functions go too. */
#define STALE (1024u * LEARN_SAMPLES)
static void sweep(struct cp_thread *t, struct cp_unhook *u)
{
  for (uint32_t k = 0; k < CP_UNHOOK_SLOTS; k++) {
    struct cp_unhook_learn *l = &u->e[k];
    if (l->node && (is_unhooked(l->key) || u->events - l->born > STALE)) drop(u, l);
  }
  for (uint32_t w = 0; w < u->nwaiting;) {
    uint32_t i = u->waiting[w];
    if (i < t->nnodes && !is_unhooked(t->nodes[i].key)) w++;
    else drop_waiting(u, w);
  }
}

/* The learning place of node, or of its function: the calls of a recursion
** within itself (nested) return through exits its outermost call may not
** take, the recursion's end in particular. */
static struct cp_unhook_learn *place_of(const struct cp_thread *t, struct cp_unhook *u, uint32_t node)
{
  for (uint32_t k = 0; k < CP_UNHOOK_SLOTS; k++)
    if (u->e[k].node == node) return &u->e[k];
  if (node < CP_FIRST_NODE || node >= t->nnodes) return NULL;
  uintptr_t key = (uintptr_t)(t->nodes[node].key & ~CP_KEY_THROTTLED);
  for (uint32_t k = 0; k < CP_UNHOOK_SLOTS; k++)
    if (u->e[k].node && u->e[k].key == key) return &u->e[k];
  return NULL;
}

/* A free learning place of u, or NULL. */
static struct cp_unhook_learn *free_place(struct cp_unhook *u)
{
  for (uint32_t k = 0; k < CP_UNHOOK_SLOTS; k++)
    if (!u->e[k].node) return &u->e[k];
  return NULL;
}

/* Begin learning node i's return sites (site: one, or 0); without a free
** place, after a sweep, the node waits and learns from a later sampled
** return once one is free (unhook_seen). */
static void learn(struct cp_thread *t, uint32_t i, uintptr_t site, uint32_t kind)
{
  struct cp_unhook *u = unhook_state(t);
  if (!u || place_of(t, u, i)) return;        /* this node or function learns already */
  struct cp_unhook_learn *l = free_place(u);
  if (!l) {
    sweep(t, u);
    l = free_place(u);
  }
  if (l) {
    l->node = i;
    l->key = (uintptr_t)(t->nodes[i].key & ~CP_KEY_THROTTLED);
    l->kind = kind;
    l->born = u->events;
    l->entry = kind == CP_PROBE_FENTRY ? l->key : 0;
    l->seen = 0;
    l->nsites = site != 0;
    l->sites[0] = site;
    u->active++;
    return;
  }
  for (uint32_t w = 0; w < u->nwaiting; w++)
    if (u->waiting[w] == i) return;
  if (u->nwaiting == CP_UNHOOK_WAITING) return;
  u->waiting_kind[u->nwaiting] = kind;
  u->waiting[u->nwaiting++] = i;
  u->active++;
}

/* Move waiting node i into a free place, learning from site. */
static void promote(struct cp_thread *t, uint32_t i, uintptr_t site)
{
  struct cp_unhook *u = t->unhook;
  uint32_t w = 0;
  while (w < u->nwaiting && u->waiting[w] != i) w++;
  if (w == u->nwaiting || !free_place(u)) return;
  uint32_t kind = u->waiting_kind[w];
  drop_waiting(u, w);
  learn(t, i, site, kind);
}

/* Node i of t just completed its throttling decision call, in a return
** through site. Throttled (a leaf, or while sampling any short node), or with
** only unhooked callees and short on average, it begins learning once every
** callee it made calls is unhooked (function_ok). */
CP_PROBE_CODE void unhook_consider(struct cp_thread *t, uint32_t i, uintptr_t site, uint32_t kind)
{
  if (refused || !unhook_wanted() || i < CP_FIRST_NODE || i >= t->nnodes) return;
  struct cp_node *n = &t->nodes[i];
  if (CPD_KEY_IS_SPECIAL(n->key)) return;
  /* The cheap test first: this runs at each later decision of a node that
  ** stays unthrottled too (every 2^17 calls), and the checks below look up
  ** the code's module and scan the tree. */
  if (!(n->key & CP_KEY_THROTTLED) && !throttle_short(n)) return;
  uint32_t saved = cp_enter_busy(t);          /* a signal's hooks do nothing */
  os_errsave e = os_save_errors();
  uintptr_t at;
  uint16_t jmp;
  /* The hooks are ours to patch: fentry's entry (its key, not across a
  ** 16-byte block), the exit's site (not GCC's -finstrument-functions tail
  ** jump to the exit hook, which leaves the caller's return address). */
  int ok = hook_call(site, exit_hook(kind), load_fn(kind, n->key), &at, &jmp) == 1 &&
           (kind != CP_PROBE_FENTRY || fentry_entry_ok(n->key));
  if (ok && !nested(t, i) && function_ok(t, i) &&
      ((n->key & CP_KEY_THROTTLED) || (throttle_short(n) && throttle_node(t, i) == 0)))
    learn(t, i, site, kind);
  os_restore_errors(e);
  cp_leave_busy(t, saved);
}

/* The function of key was unhooked: its callers in t whose callees are now
** all unhooked and that were throttled already (a leaf when throttling
** decided, with callees since, or a caller throttled while sampling) or
** pass throttling's test (frequent, and short on average, their longest
** call left out; they are throttled now) learn in turn. */
static void cascade(struct cp_thread *t, uint64_t key, uint32_t kind)
{
  key |= CP_KEY_THROTTLED;
  uint32_t nn = t->nnodes;
  for (uint32_t k = CP_FIRST_NODE; k < nn; k++) {
    const struct cp_node *x = &t->nodes[k];
    if ((x->key | CP_KEY_THROTTLED) != key) continue;
    uint32_t p = x->parent;
    if (p < CP_FIRST_NODE || p >= nn) continue;
    struct cp_node *parent = &t->nodes[p];
    if (CPD_KEY_IS_SPECIAL(parent->key) || parent->calls < cp_g.throttle_calls ||
        (parent->key | CP_KEY_THROTTLED) == key)
      continue;
    if (kind == CP_PROBE_FENTRY && !fentry_entry_ok(parent->key)) continue;
    int throttled = (parent->key & CP_KEY_THROTTLED) != 0;
    if ((!throttled && !throttle_short(parent)) || is_unhooked(parent->key) || nested(t, p) ||
        !function_ok(t, p))
      continue;
    if (throttled || throttle_node(t, p) == 0) learn(t, p, 0, kind);
  }
}

/* A sampled call of a node of t returned through site: note the site, and
** patch once the node has been seen enough. The caller popped the frame. */
CP_PROBE_CODE void unhook_seen(struct cp_thread *t, uint32_t node, uintptr_t site)
{
  struct cp_unhook *u = t->unhook;
  uint64_t since = cp_now();
  uint32_t saved = cp_enter_busy(t);          /* a signal's hooks do nothing */
  os_errsave e = os_save_errors();
  u->events++;
  struct cp_unhook_learn *l = place_of(t, u, node);
  if (!l) {
    if (u->nwaiting) promote(t, node, site);
    goto out;
  }
  uint32_t k = 0;
  while (k < l->nsites && l->sites[k] != site) k++;
  if (k == l->nsites) {
    /* A new exit site must be a call of the exit hook: a function whose
    ** exit hook is reached by a tail jump (GCC's -finstrument-functions)
    ** cannot lose its hooks. */
    uintptr_t at;
    uint16_t jmp;
    if (hook_call(site, exit_hook(l->kind), load_fn(l->kind, l->key), &at, &jmp) < 0) {
      drop(u, l);
      goto out;
    }
    if (k < CP_UNHOOK_SITES) l->sites[l->nsites++] = site;
  }
  if (++l->seen < LEARN_SAMPLES) goto out;
  if (l->node != node && nested(t, node)) goto out;   /* the outer calls return later */
  if (!l->entry) {                             /* no sampled entry seen yet */
    if (l->seen >= 8 * LEARN_SAMPLES) drop(u, l);
    goto out;
  }
  /* Every signal blocked meanwhile: a handler's mprotect (the interposer
  ** above) must not run between a page's opening and its store. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  if (!patch_try_lock()) {
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    goto out;                                  /* next time */
  }
  int done = !refused && seccomp_free() && patch(l);
  patch_unlock();
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  uint64_t key = l->key;
  uint32_t kind = l->kind;
  drop(u, l);
  if (done && !refused && unhook_wanted()) cascade(t, key, kind);
out:
  os_restore_errors(e);
  cp_leave_busy(t, saved);
  uint64_t now = cp_now();
  if (now > since) t->debt += now - since;     /* in no call's time */
}

/* A sampled call of node entered through the entry hook call returning to
** site (-finstrument-functions): the entry to patch, checked at the patch. */
CP_PROBE_CODE void unhook_entry_site(struct cp_thread *t, uint32_t node, uintptr_t site)
{
  struct cp_unhook_learn *l = place_of(t, t->unhook, node);
  if (l) l->entry = site;
}

/* Before fork: the patch lock, so that the child inherits no patch half
** made (a stub's call written but not logged, which the child's next patch
** would give to a second function). A patch takes microseconds and waits
** for nothing; the wait is bounded all the same. */
static int fork_held;

void unhook_fork_prepare(void)
{
  for (int i = 0; i < 100000; i++) {
    if (!__atomic_exchange_n(&patch_lock, 1, __ATOMIC_ACQUIRE)) {
      fork_held = 1;
      return;
    }
    sched_yield();
  }
}

void unhook_fork_parent(void)
{
  if (!fork_held) return;
  fork_held = 0;
  __atomic_store_n(&patch_lock, 0, __ATOMIC_RELEASE);
}

/* In a fork child: no patch is in progress (the thread that held the lock
** is not there); a page it had made writable gets its protection back. */
void unhook_fork_child(void)
{
  if (open_len) protect((void *)open_first, open_len, open_prot);
  open_len = 0;
  fork_held = 0;
  posix_guard_forked();
  patch_lock = 0;
}

/* ---- the counting stubs' counts (throttle.c keeps the records) --------- */

/* Stub k's slow path (asm cp_stub_slot): the node on top of the calling
** thread's shadow stack is not the one its slot counts under. Find or make
** that node's child for the function (not timed: CP_KEY_THROTTLED, as a
** throttled node's calls that are counted only), count the call there and
** point the slot at it. Every register the function may need was saved; a
** slow path of the thread's, its time is left out of every call's (debt).
** A thread out of step with cp_g.gate is brought in line as its hooks
** would (runtime_sync: its tree rebuilt after capprof_reset, which cleared
** every slot); paused, or busy in a slow path, it records nothing, as its
** hooks do not. */
CP_PROBE_CODE void patch_stub_slot(uint64_t k)
{
  struct cp_thread *t = posix_tls;
  if (!t || k >= CP_UNHOOK_COUNTED || !runtime_thread_real(t)) return;
  if (t->gate != cp_g.gate && runtime_sync(t)) return;
  uint64_t start = cp_now();
  uint64_t key = __atomic_load_n(&stub_key[k], __ATOMIC_ACQUIRE);
  if (!key) key = unhook_key((uint32_t)k);     /* logged without a patch (tests) */
  if (key) {
    uint32_t parent = t->top->node;
    uint32_t c = calltree_lookup(t, parent, key | CP_KEY_THROTTLED);
    t->nodes[c].calls++;
    t->ucount[k] = &t->nodes[c].calls;
    t->uslot[k] = parent + 1;
  }
  t->debt += cp_now() - start;
}

/* Calls the stubs counted in no tree: in threads with no state. */
uint64_t patch_live_calls(uint32_t k)
{
  return __atomic_load_n(&unhook_nostate[k], __ATOMIC_RELAXED);
}

/* t's stub slots point at nodes of a tree that is rebuilt or given back:
** every one must take its slow path again. */
void patch_slots_clear(struct cp_thread *t)
{
  memset(t->uslot, 0, sizeof t->uslot);
}

void patch_counts_fork(struct cp_thread *self)
{
  memset(unhook_nostate, 0, sizeof unhook_nostate);
  if (self) patch_slots_clear(self);
}
