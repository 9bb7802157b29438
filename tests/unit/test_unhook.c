/*
** test_unhook.c -- where unhooking (src/patch/patch_x86_64.c) writes its jump, on
** hand-made x86-64 code in a buffer of this program: a call of the hook
** within a 16-byte block, one at a block's last byte jumped over from the
** load of the function's address before it (`lea fn(%rip), %rdi`, `mov
** $fn, %edi`), the loads that must stay (into %r15), and code patched
** already; the counting stubs an unhooked entry calls instead (their size,
** their calls taken as patched already, what one counts and where, per
** call path, and that it touches no register but r11).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <cpuid.h>
#include <linux/filter.h>
#include <linux/membarrier.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "posix/posix.h"

extern const unsigned char cp_count_stubs[], cp_count_stubs_end[];
#define STUB_SIZE 128u                 /* asm/fentry_x86_64.S, src/patch/patch_x86_64.c */

void __cyg_profile_func_enter(void *fn, void *site);
void __cyg_profile_func_exit(void *fn, void *site);

/* Code is never run: only read. 64-byte aligned, so offsets are block offsets. */
static unsigned char code[256] __attribute__((aligned(64)));

static uintptr_t at_(size_t off) { return (uintptr_t)&code[off]; }

/* `call hook` (e8 rel32) at off; returns its end. */
static uintptr_t put_call(size_t off, void (*hook)(void *, void *))
{
  int32_t rel = (int32_t)((intptr_t)hook - (intptr_t)at_(off + 5));
  code[off] = 0xE8;
  memcpy(&code[off + 1], &rel, 4);
  return at_(off + 5);
}

/* `call *slot(%rip)` (ff 15 disp32, as under -fno-plt) at off; returns its end. */
static uintptr_t slot;
static uintptr_t put_got_call(size_t off, void (*hook)(void *, void *))
{
  slot = (uintptr_t)hook;
  int32_t d = (int32_t)((intptr_t)&slot - (intptr_t)at_(off + 6));
  code[off] = 0xFF;
  code[off + 1] = 0x15;
  memcpy(&code[off + 2], &d, 4);
  return at_(off + 6);
}

/* `rex 8d 3d disp32`: lea fn(%rip) into %rdi (rex 48) or %r15 (4c) at off. */
static void put_lea(size_t off, unsigned char rex, uintptr_t fn)
{
  int32_t d = (int32_t)((intptr_t)fn - (intptr_t)at_(off + 7));
  code[off] = rex;
  code[off + 1] = 0x8D;
  code[off + 2] = 0x3D;
  memcpy(&code[off + 3], &d, 4);
}

static void test_call_within_block(void **state)
{
  (void)state;
  memset(code, 0x90, sizeof code);
  uintptr_t end = put_call(4, __cyg_profile_func_enter), at;
  uint16_t jmp;
  assert_int_equal(unhook_patch_for(end, 0, CP_PROBE_CYG, at_(0), &at, &jmp), 1);
  assert_true(at == at_(4));
  assert_int_equal(jmp, 0x03EB);                   /* eb 03: over the call */
  memcpy(&code[4], &jmp, 2);
  assert_int_equal(unhook_patch_for(end, 0, CP_PROBE_CYG, at_(0), &at, &jmp), 0);
  /* the exit hook's call is not the entry hook's */
  memset(code, 0x90, sizeof code);
  end = put_call(4, __cyg_profile_func_exit);
  assert_int_equal(unhook_patch_for(end, 0, CP_PROBE_CYG, at_(0), &at, &jmp), -1);
  assert_int_equal(unhook_patch_for(end, 1, CP_PROBE_CYG, at_(0), &at, &jmp), 1);
}

static void test_lea_then_call_at_block_end(void **state)
{
  (void)state;
  memset(code, 0x90, sizeof code);
  uintptr_t fn = at_(0), at;
  uint16_t jmp;
  put_lea(8, 0x48, fn);                            /* 8..14 */
  uintptr_t end = put_call(15, __cyg_profile_func_enter);   /* 15..19 */
  assert_int_equal(unhook_patch_for(end, 0, CP_PROBE_CYG, fn, &at, &jmp), 1);
  assert_true(at == at_(8));
  assert_int_equal(jmp, 0x0AEB);                   /* eb 0a: to 20, over both */
  memcpy(&code[8], &jmp, 2);
  assert_int_equal(unhook_patch_for(end, 0, CP_PROBE_CYG, fn, &at, &jmp), 0);
  /* the 6-byte call through a GOT slot: eb 0b, to 21 */
  memset(code, 0x90, sizeof code);
  put_lea(8, 0x48, fn);
  end = put_got_call(15, __cyg_profile_func_enter);
  assert_int_equal(unhook_patch_for(end, 0, CP_PROBE_CYG, fn, &at, &jmp), 1);
  assert_true(at == at_(8));
  assert_int_equal(jmp, 0x0BEB);
  /* another function's address: no proof that the lea is an instruction */
  memset(code, 0x90, sizeof code);
  put_lea(8, 0x48, at_(64));
  end = put_call(15, __cyg_profile_func_enter);
  assert_int_equal(unhook_patch_for(end, 0, CP_PROBE_CYG, fn, &at, &jmp), 1);
  assert_true(at == at_(15));                      /* not patchable: stays */
  /* into %r15, which Clang keeps fn in for the exit: must stay */
  memset(code, 0x90, sizeof code);
  put_lea(8, 0x4C, fn);
  end = put_call(15, __cyg_profile_func_enter);
  assert_int_equal(unhook_patch_for(end, 0, CP_PROBE_CYG, fn, &at, &jmp), 1);
  assert_true(at == at_(15));
  /* GCC's after-inlining hooks pass no fn */
  memset(code, 0x90, sizeof code);
  put_lea(8, 0x48, fn);
  end = put_call(15, __cyg_profile_func_exit);
  assert_int_equal(unhook_patch_for(end, 1, CP_PROBE_CYG, 0, &at, &jmp), 1);
  assert_true(at == at_(15));
}

static void test_mov_then_call_at_block_end(void **state)
{
  (void)state;
  uintptr_t fn = 0x00412345u, at;                  /* a non-PIE address */
  uint16_t jmp;
  memset(code, 0x90, sizeof code);
  code[10] = 0xBF;                                 /* mov $fn, %edi: 10..14 */
  memcpy(&code[11], &fn, 4);
  uintptr_t end = put_call(15, __cyg_profile_func_exit);
  assert_int_equal(unhook_patch_for(end, 1, CP_PROBE_CYG, fn, &at, &jmp), 1);
  assert_true(at == at_(10));
  assert_int_equal(jmp, 0x08EB);                   /* eb 08: to 20 */
  memcpy(&code[10], &jmp, 2);
  assert_int_equal(unhook_patch_for(end, 1, CP_PROBE_CYG, fn, &at, &jmp), 0);
  /* 41 bf: mov $fn, %r15d */
  memset(code, 0x90, sizeof code);
  code[9] = 0x41;
  code[10] = 0xBF;
  memcpy(&code[11], &fn, 4);
  end = put_call(15, __cyg_profile_func_exit);
  assert_int_equal(unhook_patch_for(end, 1, CP_PROBE_CYG, fn, &at, &jmp), 1);
  assert_true(at == at_(15));
}

static void test_count_stubs_layout(void **state)
{
  (void)state;
  assert_int_equal((size_t)(cp_count_stubs_end - cp_count_stubs), STUB_SIZE * CP_UNHOOK_COUNTED);
  for (uint32_t k = 1; k < CP_UNHOOK_COUNTED; k += 97) {    /* each starts alike */
    const unsigned char *p = cp_count_stubs + STUB_SIZE * k;
    assert_memory_equal(p, cp_count_stubs, 15);             /* to the jz (its offset */
    assert_memory_equal(p + 16, cp_count_stubs + 16, 8);    /* varies), then the cmp */
    assert_int_equal(p[24], 0x41);                          /* cmp %eax, uslot[k] */
    assert_int_equal(p[25], 0x39);
    assert_int_equal(p[31], 0x75);                          /* jne: the slow path */
    assert_int_equal(p[33], 0x49);                          /* mov ucount[k], %rax */
    assert_memory_equal(p + 40, cp_count_stubs + 40, 7);    /* incq; testb $63; pop */
    assert_int_equal(p[47], 0x0F);                          /* jz cp_stub_check */
    assert_int_equal(p[53], 0xC3);                          /* ret */
    assert_int_equal(p[54], 0x58);                          /* pop %rax: the slow path */
  }
}

/* An entry whose call goes to a counting stub (5 bytes, or 6 with the nop
** after it that replaced `call *GOT`) is patched already. */
static void test_stub_call_is_patched(void **state)
{
  (void)state;
  uintptr_t at;
  uint16_t jmp;
  memset(code, 0x90, sizeof code);
  uintptr_t stub = (uintptr_t)cp_count_stubs + STUB_SIZE * 3;
  int32_t rel = (int32_t)((intptr_t)stub - (intptr_t)at_(9));
  code[4] = 0xE8;
  memcpy(&code[5], &rel, 4);
  assert_int_equal(unhook_patch_for(at_(9), 0, CP_PROBE_FENTRY, 0, &at, &jmp), 0);
  assert_int_equal(unhook_patch_for(at_(10), 0, CP_PROBE_FENTRY, 0, &at, &jmp), 0);
  /* a call elsewhere is not */
  rel = (int32_t)((intptr_t)at_(200) - (intptr_t)at_(9));
  memcpy(&code[5], &rel, 4);
  assert_int_equal(unhook_patch_for(at_(9), 0, CP_PROBE_FENTRY, 0, &at, &jmp), -1);
  /* the stub's call and a jump over the old call in place of `lea fn(%rip),
  ** %rdi` before a call at a block's last byte (e8 rel32 eb 05) */
  memset(code, 0x90, sizeof code);
  uintptr_t end = put_call(15, __cyg_profile_func_enter);
  rel = (int32_t)((intptr_t)stub - (intptr_t)at_(13));
  code[8] = 0xE8;
  memcpy(&code[9], &rel, 4);
  code[13] = 0xEB;
  code[14] = 0x05;
  assert_int_equal(unhook_patch_for(end, 0, CP_PROBE_CYG, at_(0), &at, &jmp), 0);
  code[14] = 0x06;                                 /* not over the call */
  assert_int_equal(unhook_patch_for(end, 0, CP_PROBE_CYG, at_(0), &at, &jmp), 1);
}

/* Stub k counts the call in the child node its slot points at while the
** node on top is the slot's, and changes no register but r11: every other
** general register keeps a marker across the call. No state counts in the
** process's count. */
static void call_at(uintptr_t to, uint64_t *regs);

static void call_stub(uint32_t k, uint64_t *regs)
{
  call_at((uintptr_t)cp_count_stubs + STUB_SIZE * k, regs);
}

/* A hand-made state: the sentinel frame's node is top, nodes[] has room. */
static struct cp_frame fake_frames[4];
static struct cp_node fake_nodes[16];
static void fake_state(struct cp_thread *t, uint32_t top_node)
{
  memset(t, 0, sizeof *t);
  cp_ring_none(t);
  t->frames = fake_frames;
  t->nodes = fake_nodes;
  t->top = &fake_frames[1];
  fake_frames[1].node = top_node;
  memset(fake_nodes, 0, sizeof fake_nodes);
}

static void call_at(uintptr_t to, uint64_t *regs)
{
  uint64_t a = 0xA1, c = 0xC1, d = 0xD1, si = 0x51, di = 0xD7;
  register uint64_t r8 __asm__("r8") = 8, r9 __asm__("r9") = 9, r10 __asm__("r10") = 10;
  __asm__ __volatile__("sub $128, %%rsp\n\tcall *%[to]\n\tadd $128, %%rsp"
                       : "+a"(a), "+c"(c), "+d"(d), "+S"(si), "+D"(di), "+r"(r8), "+r"(r9),
                         "+r"(r10)
                       : [to] "b"(to)
                       : "r11", "cc", "memory");
  uint64_t got[8] = { a, c, d, si, di, r8, r9, r10 };
  memcpy(regs, got, sizeof got);
}

static void test_stub_counts(void **state)
{
  (void)state;
  static struct cp_thread t;
  fake_state(&t, 4);
  t.uslot[5] = 4 + 1;                              /* node 4 on top: node 9 counts */
  t.ucount[5] = &fake_nodes[9].calls;
  t.uslot[0] = 4 + 1;
  t.ucount[0] = &fake_nodes[10].calls;
  t.uslot[CP_UNHOOK_COUNTED - 1] = 4 + 1;
  t.ucount[CP_UNHOOK_COUNTED - 1] = &fake_nodes[11].calls;
  t.uslot[6] = 3 + 1;                              /* another node's: slow path */
  t.ucount[6] = &fake_nodes[12].calls;
  uint64_t regs[8], want[8] = { 0xA1, 0xC1, 0xD1, 0x51, 0xD7, 8, 9, 10 };
  struct cp_thread *saved = os_get_thread();
  os_set_thread(NULL);
  uint64_t nostate = unhook_nostate[5];
  call_stub(5, regs);                              /* no state: the process's count */
  assert_int_equal(unhook_nostate[5] - nostate, 1);
  os_set_thread(&t);
  call_stub(5, regs);
  call_stub(5, regs);
  call_stub(0, regs);
  call_stub(CP_UNHOOK_COUNTED - 1, regs);
  assert_memory_equal(regs, want, sizeof want);
  /* The slow path: t is out of step with the gate (0 != a real gate's
  ** value is not guaranteed, so make it so): nothing counted, registers kept. */
  t.gate = cp_g.gate + 2;
  call_stub(6, regs);
  assert_memory_equal(regs, want, sizeof want);
  os_set_thread(saved);
  assert_int_equal(fake_nodes[9].calls, 2);
  assert_int_equal(fake_nodes[10].calls, 1);
  assert_int_equal(fake_nodes[11].calls, 1);
  assert_int_equal(fake_nodes[12].calls, 0);
  assert_int_equal(t.uslot[6], 3 + 1);
}

/* The slow path with a real tree and a record: the first call under a node
** makes its child (not timed: CP_KEY_THROTTLED) and points the slot at it;
** calls under another node make another child; back under the first, the
** first child counts again. Every register kept. */
static void test_stub_slot_per_path(void **state)
{
  (void)state;
  struct cp_thread *t = calltree_new(64);
  assert_non_null(t);
  cp_ring_none(t);
  t->gate = cp_g.gate;
  uint64_t key = 0x123450;
  uint32_t k = unhook_next();
  unhook_log(key, 1, 1, 1);
  assert_true(k < CP_UNHOOK_COUNTED);
  assert_int_equal(unhook_key(k), key);
  /* two nodes to call from: A under the root, B under A */
  uint32_t a = calltree_lookup(t, CP_NODE_ROOT, 0x1000);
  uint32_t b = calltree_lookup(t, a, 0x2000);
  uint64_t regs[8], want[8] = { 0xA1, 0xC1, 0xD1, 0x51, 0xD7, 8, 9, 10 };
  struct cp_frame *base = t->top;
  base[1].node = a;
  base[2].node = b;
  struct cp_thread *saved = os_get_thread();
  os_set_thread(t);
  t->top = base + 1;
  for (int i = 0; i < 5; i++) call_stub(k, regs);
  t->top = base + 2;
  for (int i = 0; i < 3; i++) call_stub(k, regs);
  t->top = base + 1;
  for (int i = 0; i < 2; i++) call_stub(k, regs);
  os_set_thread(saved);
  assert_memory_equal(regs, want, sizeof want);
  t->top = base;
  uint32_t ca = calltree_lookup(t, a, key), cb = calltree_lookup(t, b, key);
  assert_int_equal(t->nodes[ca].key, key | CP_KEY_THROTTLED);
  assert_int_equal(t->nodes[ca].calls, 7);
  assert_int_equal(t->nodes[cb].calls, 3);
  assert_int_equal(t->uslot[k], a + 1);
  /* the tree rebuilt: every slot takes its slow path again */
  patch_slots_clear(t);
  assert_int_equal(t->uslot[k], 0);
  calltree_free(t);
}

/* Every 64th call of a stub in a thread checks the thread's sampling ring
** (asm cp_stub_check): with samples waiting it calls the C drain, and every
** register but r11 is kept on that path too; without, it does not call it.
** Both for the runtime's stubs and the code written near a program's. */
extern uint32_t posix_stub_drains;

static void stub_ring_check(uintptr_t stub, uint32_t k)
{
  static struct cp_thread t;
  static uint64_t head;
  fake_state(&t, 2);
  t.uslot[k] = 2 + 1;
  t.ucount[k] = &fake_nodes[5].calls;
  uint64_t regs[8], want[8] = { 0xA1, 0xC1, 0xD1, 0x51, 0xD7, 8, 9, 10 };
  struct cp_thread *saved = os_get_thread();
  os_set_thread(&t);
  uint32_t before = posix_stub_drains;
  for (int i = 0; i < 128; i++) call_at(stub, regs);       /* nothing waits */
  assert_int_equal(posix_stub_drains, before);
  head = 1;                                                  /* a sample waits */
  t.ring_head = &head;
  for (int i = 0; i < 63; i++) call_at(stub, regs);
  assert_int_equal(posix_stub_drains, before);
  call_at(stub, regs);                                       /* the 64th */
  assert_int_equal(posix_stub_drains, before + 1);
  assert_memory_equal(regs, want, sizeof want);
  assert_int_equal(fake_nodes[5].calls, 128 + 64);
  os_set_thread(saved);
}

/* Stub k written near code, as unhook.c does for libcapprof.so: a page
** of its own, executable; munmap(page, 4096) after. */
static unsigned char *near_stub_page(uint32_t k)
{
  unsigned char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  assert_true(m != MAP_FAILED);
  uintptr_t tp;
  __asm__("mov %%fs:0, %0" : "=r"(tp));
  unhook_near_code(m, k, (int32_t)((intptr_t)&posix_tls - (intptr_t)tp));
  assert_int_equal(mprotect(m, 4096, PROT_READ | PROT_EXEC), 0);
  return m;
}

static void test_stub_ring_check(void **state)
{
  (void)state;
  stub_ring_check((uintptr_t)cp_count_stubs + STUB_SIZE * 9, 9);
  unsigned char *m = near_stub_page(11);
  stub_ring_check((uintptr_t)m, 11);
  munmap(m, 4096);
}

/* The same code written near a program's code (libcapprof.so's case). */
static void test_near_stub(void **state)
{
  (void)state;
  static struct cp_thread t;
  fake_state(&t, 3);
  t.uslot[7] = 3 + 1;
  t.ucount[7] = &fake_nodes[6].calls;
  t.uslot[8] = 2 + 1;                              /* another node's: slow path */
  uint64_t regs[8], want[8] = { 0xA1, 0xC1, 0xD1, 0x51, 0xD7, 8, 9, 10 };
  unsigned char *m = near_stub_page(7), *m8 = near_stub_page(8);
  struct cp_thread *saved = os_get_thread();
  os_set_thread(NULL);
  uint64_t nostate = unhook_nostate[7];
  call_at((uintptr_t)m, regs);
  assert_int_equal(unhook_nostate[7] - nostate, 1);
  os_set_thread(&t);
  call_at((uintptr_t)m, regs);
  call_at((uintptr_t)m, regs);
  t.gate = cp_g.gate + 2;                          /* slow path, records nothing */
  call_at((uintptr_t)m8, regs);
  os_set_thread(saved);
  assert_memory_equal(regs, want, sizeof want);
  assert_int_equal(fake_nodes[6].calls, 2);
  assert_int_equal(t.uslot[8], 2 + 1);
  munmap(m, 4096);
  munmap(m8, 4096);
}

/* Whether this process may serialize its threads' cores after changing
** code: the kernel offers membarrier SYNC_CORE and no seccomp filter is in
** place (what unhook.c asks before it calls membarrier). */
static int sync_core_here(void)
{
  long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE)) return 0;
  FILE *f = fopen("/proc/thread-self/status", "r");
  char line[256];
  int free_ = 0;
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "Seccomp:", 8)) free_ = strtol(line + 8, NULL, 10) == 0;
  if (f) fclose(f);
  return free_;
}

/* Each store of a patch into code is followed by a core serialization
** (unhook.c, code_sync): one after a jump's 2-byte store, one after the
** locked 16-byte store of a call within a block, three after the three
** steps of a call that straddles two blocks; the bytes come out as the
** patch wants them. */
static void test_patch_syncs(void **state)
{
  (void)state;
  unsigned char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  assert_true(m != MAP_FAILED);
  memset(m, 0x90, 4096);
  uintptr_t target = (uintptr_t)m + 2048;
  size_t offs[3] = { 3, 19, 45 };              /* 45: bytes 13-17 of a block */
  for (int k = 0; k < 3; k++) {
    int32_t rel = (int32_t)((intptr_t)target - (intptr_t)(m + offs[k] + 5));
    m[offs[k]] = 0xE8;
    memcpy(m + offs[k] + 1, &rel, 4);
  }
  /* code: read and execute (a patch leaves pages that are not so alone) */
  assert_int_equal(mprotect(m, 4096, PROT_READ | PROT_EXEC), 0);
  int want = sync_core_here(), synced = -1;
  uint32_t n0 = unhook_syncs();
  /* a jump over the call at 3 */
  assert_int_equal(unhook_test_poke((uintptr_t)m + 3, 2, 0, 0x03EB, &synced), 0);
  assert_int_equal(unhook_syncs() - n0, 1);
  assert_int_equal(synced, want);
  assert_true(m[3] == 0xEB && m[4] == 0x03);
  /* the calls at 19 (within a block) and 45 (across two) become calls of a stub */
  uintptr_t stub = (uintptr_t)m + 3000;
  /* within a block: one locked 16-byte store where the CPU has cmpxchg16b */
  unsigned a, b, c = 0, d;
  int cx16 = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_CMPXCHG16B);
  uint32_t steps[3] = { 0, cx16 ? 1u : 3u, 3 };
  for (int k = 1; k < 3; k++) {
    uint32_t before = unhook_syncs();
    assert_int_equal(unhook_test_poke((uintptr_t)m + offs[k], 5, stub, 0x03EB, &synced), 0);
    assert_int_equal(unhook_syncs() - before, steps[k]);
    assert_int_equal(synced, want);
    int32_t rel;
    memcpy(&rel, m + offs[k] + 1, 4);
    assert_true(m[offs[k]] == 0xE8);
    assert_true((uintptr_t)(m + offs[k] + 5) + (uintptr_t)(intptr_t)rel == stub);
  }
  munmap(m, 4096);
}

/* A thread under a seccomp filter (one that allows everything: the runtime
** cannot tell it from one that kills) makes no membarrier call in a patch
** and says it is not synced; the filter is the thread's own, the main
** thread has none (so /proc/self/status would say 0). Last: once a filter
** is seen, the runtime never calls membarrier again. */
static void *filtered_patch(void *arg)
{
  int *synced = arg;
  struct sock_filter allow[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
  struct sock_fprog prog = { 1, allow };
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
    return NULL;
  unsigned char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return NULL;
  memset(m, 0x90, 4096);
  m[3] = 0xE8;                                    /* call +0 */
  memset(m + 4, 0, 4);
  if (mprotect(m, 4096, PROT_READ | PROT_EXEC) != 0) return NULL;
  uint32_t n0 = unhook_syncs();
  if (unhook_test_poke((uintptr_t)m + 3, 2, 0, 0x03EB, synced) != 0 || unhook_syncs() - n0 != 1 ||
      m[3] != 0xEB || m[4] != 0x03)
    *synced = -2;
  munmap(m, 4096);
  return arg;
}

static void test_patch_under_seccomp(void **state)
{
  (void)state;
  int synced = -1;
  pthread_t th;
  void *done = NULL;
  assert_int_equal(pthread_create(&th, NULL, filtered_patch, &synced), 0);
  assert_int_equal(pthread_join(th, &done), 0);
  assert_true(done == &synced);
  assert_int_equal(synced, 0);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_call_within_block),
    cmocka_unit_test(test_lea_then_call_at_block_end),
    cmocka_unit_test(test_mov_then_call_at_block_end),
    cmocka_unit_test(test_count_stubs_layout),
    cmocka_unit_test(test_stub_call_is_patched),
    cmocka_unit_test(test_stub_counts),
    cmocka_unit_test(test_stub_slot_per_path),
    cmocka_unit_test(test_near_stub),
    cmocka_unit_test(test_stub_ring_check),
    cmocka_unit_test(test_patch_syncs),
    cmocka_unit_test(test_patch_under_seccomp),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
