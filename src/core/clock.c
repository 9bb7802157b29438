/*
** clock.c -- choosing and calibrating the clock: whether rdtsc can be
** trusted, the cost of reading the timer (WAP's 2000 back-to-back reads),
** the overhead an instrumented call adds, and the ticks-to-ns ratio.
*/
#include <string.h>

#include "../core/core.h"
#include "../throttle/throttle.h"

#if CAPPROF_ARCH_X86 && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
static int cpuid(unsigned leaf, unsigned regs[4])
{
  return __get_cpuid(leaf, &regs[0], &regs[1], &regs[2], &regs[3]);
}
#elif CAPPROF_ARCH_X86
static int cpuid(unsigned leaf, unsigned regs[4])
{
  int r[4];
  __cpuid(r, (int)(leaf & 0x80000000u));
  if ((unsigned)r[0] < leaf) return 0;
  __cpuid(r, (int)leaf);
  for (int i = 0; i < 4; i++) regs[i] = (unsigned)r[i];
  return 1;
}
#endif

#if CAPPROF_ARCH_X86
/* The TSC is usable when it is invariant: constant rate in every P- and
** C-state (CPUID 0x80000007, EDX bit 8). */
int clock_tsc_usable(void)
{
  unsigned r[4] = {0, 0, 0, 0};
  if (!cpuid(0x80000007u, r)) return 0;
  return (r[3] >> 8) & 1u;
}
#else
int clock_tsc_usable(void) { return 0; }
#endif

#if CAPPROF_ARCH_X86
static int rdtscp_usable(void)
{
  unsigned r[4] = {0, 0, 0, 0};
  if (!cpuid(0x80000001u, r)) return 0;
  return (r[3] >> 27) & 1u;
}
#else
static int rdtscp_usable(void) { return 0; }
#endif

int clock_select(const char *name)
{
  if ((name && strcmp(name, "os") == 0) || !clock_tsc_usable()) return CP_CLOCK_OS;
  if ((name && strcmp(name, "tsc-fast") == 0) || !rdtscp_usable()) return CP_CLOCK_TSC_FAST;
  if (name && strcmp(name, "tsc-mixed") == 0) return CP_CLOCK_TSC;
  return CP_CLOCK_TSC_ORDERED;                /* "tsc", "tsc-ordered", default */
}

#define TIMER_READS 2000
#define TIMER_ROUNDS 5

/* The cost of one timer read: the average over 2000 back-to-back reads, the
** best of a few rounds. (The smallest difference between two reads, WAP's
** figure, is 0 ticks on AMD CPUs, where rdtsc advances in steps.) */
void clock_calibrate_timer(void)
{
  uint64_t best = UINT64_MAX;
  for (int r = 0; r < TIMER_ROUNDS; r++) {
    uint64_t first = cp_now(), last = first;
    for (int i = 0; i < TIMER_READS; i++) last = cp_now();
    uint64_t per = (last - first + TIMER_READS / 2) / TIMER_READS;
    if (per < best) best = per;
  }
  cp_g.timer_overhead = best;
}

/* The probe: a + b, plain and through each kind of hook, registered by
** the hooks (src/hooks/calib_probe.c; on x86-64 Linux the same with GCC's
** after-inlining hooks, asm/fentry_x86_64.S). Called through volatile
** pointers so nothing is inlined. */
typedef long (*calib_fn)(long, long);

static const struct cp_calib *calib_probe(void)
{
  for (const struct cp_feature *const *p = cp_features; *p; p++)
    if ((*p)->calib) return (*p)->calib;
  return NULL;
}

#define PROBE_WARMUP 10
#define PROBE_ROUNDS 100
#define PROBE_CALLS  50

/* One round of calls. With sampled set, every call is made a throttled
** call's timed sample (the thread's countdown cleared before it); the plain
** rounds do the same store, so that both loops run the same code. */
static volatile long calib_sink;

static uint64_t one_round(calib_fn volatile fn, struct cp_thread *sampled)
{
  long acc = 0;
  uint64_t t0 = cp_now();
  if (sampled) {
    for (int i = 0; i < PROBE_CALLS; i++) {
      sampled->countdown = 0;
      CP_BARRIER();
      acc += fn(i, 1);
    }
  } else {
    for (int i = 0; i < PROBE_CALLS; i++) acc += fn(i, 1);
  }
  uint64_t t = cp_now() - t0;
  calib_sink = acc;
  return t;
}

/* Inclusive ticks recorded so far in a scratch tree, over all its nodes. */
static uint64_t scratch_ticks(const struct cp_thread *t)
{
  uint64_t sum = 0;
  for (uint32_t i = CP_FIRST_NODE; i < t->nnodes; i++) sum += t->nodes[i].incl;
  return sum;
}

static uint64_t scratch_calls(const struct cp_thread *t)
{
  uint64_t sum = 0;
  for (uint32_t i = CP_FIRST_NODE; i < t->nnodes; i++) sum += t->nodes[i].calls;
  return sum;
}

/* The median of n values (sorted in place; the upper one for even n): the
** calibrations' figure. */
uint64_t cp_median(uint64_t *v, int n)
{
  for (int i = 1; i < n; i++) {
    uint64_t x = v[i];
    int j = i;
    for (; j > 0 && v[j - 1] > x; j--) v[j] = v[j - 1];
    v[j] = x;
  }
  return v[n / 2];
}

/* The calls of one kind (CP_FRAME_*) into the scratch tree, per call, in
** milli-ticks, each against the round without hooks that follows it:
** outer, what a call costs its caller beyond the plain call (the round's
** time with hooks minus without), and inner, how much more than the plain
** call the call measures for itself (the ticks its node gained in the round
** minus the round without). These are what compensation takes from a
** call's own time (inner) and from its callers' (outer), and outer - inner,
** what the caller sees, is the round's time outside the calls' own. Both
** are the median of the rounds: a typical round, as a program's calls are.
** (The best round for outer and the lower quartile of the own times for
** inner, used before, put the split ~3 ns too far into the call on this
** machine: the ground-truth caller of 64 short callees kept up to +21 %,
** docs/tool.md.) 0 when something failed. */
static int measure_kind(struct cp_thread *scratch, calib_fn fn, calib_fn plain,
                        uint32_t kind, uint64_t *outer_mt, uint64_t *inner_mt)
{
  struct cp_thread *sampled = NULL;
  if (kind != CP_FRAME_TIMED) {               /* throttle the scratch nodes */
    for (uint32_t i = CP_FIRST_NODE; i < scratch->nnodes; i++)
      scratch->nodes[i].key |= CP_KEY_THROTTLED;
    if (kind == CP_FRAME_UNTIMED) scratch->countdown = UINT32_MAX;
    else sampled = scratch;
  }
  /* A sampled call's time counts throttle_period times in its node. */
  uint64_t per = kind == CP_FRAME_SAMPLED && cp_g.throttle_period ? cp_g.throttle_period : 1;
  uint64_t outs[PROBE_ROUNDS], ins[PROBE_ROUNDS];
  uint64_t calls0 = scratch_calls(scratch);
  /* The throttled kinds are a few ns apart from each other: fewer rounds. */
  int rounds = kind == CP_FRAME_TIMED ? PROBE_ROUNDS : PROBE_ROUNDS / 2;
  for (int r = 0; r < PROBE_WARMUP + rounds; r++) {
    uint64_t own = scratch_ticks(scratch);
    uint64_t a = one_round(fn, sampled);
    own = (scratch_ticks(scratch) - own) / per;
    uint64_t b = one_round(plain, sampled);
    if (r < PROBE_WARMUP) continue;
    outs[r - PROBE_WARMUP] = a > b ? a - b : 0;
    ins[r - PROBE_WARMUP] = own > b ? own - b : 0;
  }
  if (scratch_calls(scratch) - calls0 != (uint64_t)(PROBE_WARMUP + rounds) * PROBE_CALLS)
    return 0;
  uint64_t outer = cp_median(outs, rounds), inner = cp_median(ins, rounds);
  if (!outer || (!inner && kind != CP_FRAME_UNTIMED)) return 0;   /* untimed: no inner */
  *outer_mt = outer * 1000 / PROBE_CALLS;
  *inner_mt = inner * 1000 / PROBE_CALLS;
  return 1;
}

static void keep_smaller(uint64_t *figure, uint64_t v)
{
  if (!*figure || v < *figure) *figure = v;
}

void cp_keep_pair(uint64_t *inner_mt, uint64_t *outer_mt, uint64_t inner, uint64_t outer)
{
  if (!*outer_mt || outer < *outer_mt) {
    *inner_mt = inner;
    *outer_mt = outer;
  }
}

/* Run a small instrumented function (a + b) through the real hooks, recording
** into a scratch tree, and measure (a) what a call adds to its caller's time:
** outer, and (b) what a call measures for itself: inner. Both are per call
** over a round, the median of the rounds (measure_kind), in milli-ticks:
** the two must be the same kind of figure, since outer - inner is the part
** of the probe a caller sees. (Inner as the single shortest call, once,
** was ~40% below the average and left that difference in every caller's
** time; docs/tool.md.) Rounds with and without the hooks are interleaved so
** that both see the same machine. Then the same for a throttled node's
** calls (throttle.c): untimed (outer only: they measure nothing) and timed
** as a sample. Called at start-up and again before each dump: each kind
** keeps the figures of the calibration with the smaller outer, inner and
** outer from the same one (their difference is what callers lose), since a
** busy machine (another hyperthread at work, preemption) only inflates
** them. Leaves the figures as they were if anything fails. Done for each
** kind of hook the runtime has (used_only:
** the kind the program used, before a dump): the dump keeps the figures of
** the kind the program used (cp_probe_cost). */
void clock_calibrate_probe(int used_only)
{
  const struct cp_calib *probe = calib_probe();
  if (!probe) return;
  uint32_t hooks_seen = cp_g.hooks_seen;     /* the program's, not ours */
  struct cp_thread *saved = os_get_thread();
  int used = cp_probe_cost() == &cp_g.probe[CP_PROBE_FENTRY] ? CP_PROBE_FENTRY : CP_PROBE_CYG;
  for (int k = 0; k < CP_PROBE_KINDS; k++) {
    calib_fn fn = probe->hooked[k];
    if (!fn || (used_only && k != used)) continue;
    struct cp_thread *scratch = calltree_new(64);
    if (!scratch) break;
    scratch->gate = cp_g.gate;
    scratch->calibrating = 1;                /* its calls pass any CAPPROF_THROTTLE=N */
    os_set_thread(scratch);
    uint64_t outer, inner, uouter, uinner, souter, sinner;
    int ok = measure_kind(scratch, fn, probe->plain, CP_FRAME_TIMED, &outer, &inner);
    int tok = ok && measure_kind(scratch, fn, probe->plain, CP_FRAME_UNTIMED, &uouter, &uinner) &&
              measure_kind(scratch, fn, probe->plain, CP_FRAME_SAMPLED, &souter, &sinner);
    os_set_thread(saved);
    struct cp_probe_cost *pc = &cp_g.probe[k];
    if (ok) cp_keep_pair(&pc->inner_mt, &pc->outer_mt, inner, outer);
    if (tok) {
      keep_smaller(&pc->untimed_mt, uouter);
      cp_keep_pair(&pc->sinner_mt, &pc->souter_mt, sinner, souter);
    }
    calltree_free(scratch);
  }
  cp_g.hooks_seen = hooks_seen;
  /* No figure for GCC's hooks (another architecture): theirs are the others'. */
  if (!cp_g.probe[CP_PROBE_FENTRY].outer_mt) cp_g.probe[CP_PROBE_FENTRY] = cp_g.probe[CP_PROBE_CYG];
}

/* Ticks and ns since start. With rdtsc, a very short run is stretched to
** 5 ms so that the ratio is good to a few parts per million. */
void clock_span(uint64_t *ticks, uint64_t *ns)
{
  uint64_t t = cp_now(), m = os_monotonic_ns();
  while (cp_g.use_tsc && m - cp_g.start_mono < 5000000u) {
    t = cp_now();
    m = os_monotonic_ns();
  }
  *ticks = t - cp_g.start_ticks;
  *ns = m - cp_g.start_mono;
}
