/*
** dump_write.c -- serialises the process's call trees into a dump file (the
** layout is in dumpfmt.h and docs/dump-format.md). The file is written under
** a temporary name and then published without replacing any existing file.
** Called under os_lock; threads may still be running, and each is read as a
** snapshot field by field. Calls still open are charged up to the dump time.
*/
#include <string.h>

#include "../core/core.h"
#include "../throttle/throttle.h"        /* CP_KEY_THROTTLED, a node's mark */
#include "dump.h"

#define MAX_SECTIONS 24

struct writer {
  os_file f;
  uint64_t off;                /* bytes written (or buffered) so far */
  int err;                     /* first error, sticky */
  size_t n;                    /* bytes in buf */
  int nsec;
  unsigned char sec[MAX_SECTIONS][CPD_SECTION_SIZE];
  unsigned char buf[1 << 16];
};

static struct writer W;        /* os_lock serialises dumps */

static void w_flush(struct writer *w)
{
  if (w->n && !w->err) w->err = os_file_write(w->f, w->buf, w->n);
  w->n = 0;
}

static void w_bytes(struct writer *w, const void *p, size_t len)
{
  const unsigned char *s = p;
  w->off += len;
  while (len) {
    size_t k = sizeof w->buf - w->n;
    if (k > len) k = len;
    memcpy(w->buf + w->n, s, k);
    w->n += k;
    s += k;
    len -= k;
    if (w->n == sizeof w->buf) w_flush(w);
  }
}

static void w_u32(struct writer *w, uint32_t v)
{
  unsigned char b[4];
  cpd_put32(b, v);
  w_bytes(w, b, 4);
}

static void w_u64(struct writer *w, uint64_t v)
{
  unsigned char b[8];
  cpd_put64(b, v);
  w_bytes(w, b, 8);
}

static void w_str(struct writer *w, const char *s, size_t len)
{
  w_u32(w, (uint32_t)len);
  w_bytes(w, s, len);
}

static void w_cstr(struct writer *w, const char *s)
{
  w_str(w, s ? s : "", s ? strlen(s) : 0);
}

static uint64_t sec_begin(struct writer *w) { return w->off; }

static void sec_end(struct writer *w, uint32_t type, uint64_t start);

static void w_patch_u32(struct writer *w, uint64_t off, uint32_t v)
{
  unsigned char b[4];
  w_flush(w);
  cpd_put32(b, v);
  if (!w->err) w->err = os_file_write_at(w->f, b, 4, off);
}

/* The writer for the features' sections (dump.h). */
struct dump_writer { struct writer w; };
void dumpw_bytes(struct dump_writer *w, const void *p, size_t n) { w_bytes(&w->w, p, n); }
void dumpw_u32(struct dump_writer *w, uint32_t v) { w_u32(&w->w, v); }
void dumpw_u64(struct dump_writer *w, uint64_t v) { w_u64(&w->w, v); }
void dumpw_str(struct dump_writer *w, const char *s) { w_cstr(&w->w, s); }
void dumpw_strn(struct dump_writer *w, const char *s, size_t len) { w_str(&w->w, s, len); }
uint64_t dumpw_begin(struct dump_writer *w) { return sec_begin(&w->w); }
void dumpw_end(struct dump_writer *w, uint32_t type, uint64_t start) { sec_end(&w->w, type, start); }
void dumpw_patch_u32(struct dump_writer *w, uint64_t off, uint32_t v) { w_patch_u32(&w->w, off, v); }

static void sec_end(struct writer *w, uint32_t type, uint64_t start)
{
  if (w->nsec == MAX_SECTIONS) { w->err = CAPPROF_ELIMIT; return; }
  unsigned char *e = w->sec[w->nsec++];
  cpd_put32(e, type);
  cpd_put32(e + 4, 0);
  cpd_put64(e + 8, start);
  cpd_put64(e + 16, w->off - start);
}

/* ---- sections ------------------------------------------------------------ */

static void write_process(struct writer *w)
{
  uint64_t s = sec_begin(w);
  w_u64(w, os_process_id());
  w_u64(w, os_parent_process_id());
  w_u64(w, cp_g.start_ns);
  w_u64(w, os_realtime_ns());
  w_u32(w, CAPPROF_OS_WIN ? CPD_OS_WINDOWS : CPD_OS_LINUX);
  w_u32(w, CAPPROF_ARCH_X86_64    ? CPD_ARCH_X86_64
         : CAPPROF_ARCH_I386    ? CPD_ARCH_I386
         : CAPPROF_ARCH_AARCH64 ? CPD_ARCH_AARCH64
                                : CPD_ARCH_OTHER);
  w_cstr(w, cp_g.proc.exe);
  w_str(w, cp_g.proc.cmdline ? cp_g.proc.cmdline : "", cp_g.proc.cmdline_len);
  sec_end(w, CPD_SEC_PROCESS, s);
}

static void write_clock(struct writer *w)
{
  uint64_t s = sec_begin(w), ticks, ns;
  clock_span(&ticks, &ns);
  w_u32(w, cp_g.clock_source);
  _Static_assert(CP_CLOCK_TSC == CPD_READS_MIXED && CP_CLOCK_TSC_FAST == CPD_READS_FAST &&
                 CP_CLOCK_TSC_ORDERED == CPD_READS_ORDERED && CP_CLOCK_OS == 0, "reads");
  w_u32(w, cp_g.use_tsc);          /* CP_CLOCK_* = CPD_READS_*, 0: the OS clock */
  w_u64(w, ticks);
  w_u64(w, ns);
  w_u64(w, cp_g.timer_overhead);
  const struct cp_probe_cost *pc = cp_probe_cost();
  w_u64(w, pc->inner_mt);
  w_u64(w, pc->outer_mt);
  /* minor 3: throttled calls' sampling period and probe costs */
  w_u64(w, cp_g.throttle_calls ? cp_g.throttle_period : 0);
  w_u64(w, pc->untimed_mt);
  w_u64(w, pc->sinner_mt);
  w_u64(w, pc->souter_mt);
  sec_end(w, CPD_SEC_CLOCK, s);
}

struct module_ctx { struct writer *w; uint32_t count; };

static int write_module(const struct cp_module *m, void *ctx)
{
  struct module_ctx *c = ctx;
  struct writer *w = c->w;
  w_u64(w, m->base);
  w_u64(w, m->size);
  w_u32(w, m->id_kind);
  w_str(w, (const char *)m->id, m->id_len);
  w_cstr(w, m->path);
  w_cstr(w, m->debug_path);
  c->count++;
  return 0;
}

static void write_modules(struct writer *w)
{
  uint64_t s = sec_begin(w);
  struct module_ctx c = { w, 0 };
  w_u32(w, 0);                              /* count, patched below */
  os_modules(write_module, &c);
  sec_end(w, CPD_SEC_MODULES, s);
  w_flush(w);
  unsigned char b[4];
  cpd_put32(b, c.count);
  if (!w->err) w->err = os_file_write_at(w->f, b, 4, s);
}

/* ---- threads and their nodes --------------------------------------------- */

/* An open call's charge, to be added to its node as the nodes stream by. */
struct open_call { uint32_t node, kind; uint64_t ticks; };

static void sort_open(struct open_call *a, size_t n)     /* heapsort by node */
{
  for (size_t end = n, start = n / 2; end > 1;) {
    size_t root;
    if (start > 0) root = --start;
    else {
      struct open_call tmp = a[0];
      a[0] = a[--end];
      a[end] = tmp;
      root = 0;
    }
    for (size_t child; (child = 2 * root + 1) < end; root = child) {
      if (child + 1 < end && a[child + 1].node > a[child].node) child++;
      if (a[root].node >= a[child].node) break;
      struct open_call tmp = a[root];
      a[root] = a[child];
      a[child] = tmp;
    }
  }
}

/* Write one node record; the sink's time is written as 0 (its calls are
** nested in overflow calls, whose time holds theirs). Adds to *lost the
** calls past the node cap. */
static void write_node(struct writer *w, const struct cp_node *nd, uint32_t i,
                       uint32_t flags, uint64_t *lost)
{
  unsigned char r[CPD_NODE_SIZE];
  int sink = nd->key == CPD_KEY_SINK;
  if (nd->key == CPD_KEY_OVERFLOW || sink) *lost += nd->calls;
  uint64_t key = nd->key;
  if (!CPD_KEY_IS_SPECIAL(key) && (key & CP_KEY_THROTTLED)) {   /* throttle.c's mark */
    key &= ~CP_KEY_THROTTLED;
    flags |= CPD_NODE_THROTTLED;
  }
  cpd_put64(r, key);
  cpd_put32(r + 8, i == 0 ? CPD_NO_PARENT : nd->parent);
  cpd_put32(r + 12, flags);
  cpd_put64(r + 16, nd->calls);
  cpd_put64(r + 24, sink ? 0 : nd->incl);
  cpd_put64(r + 32, sink || nd->min == UINT64_MAX ? 0 : nd->min);
  cpd_put64(r + 40, sink ? 0 : nd->max);
  w_bytes(w, r, sizeof r);
}

/* A live thread's nodes, streamed: no copy of the node array, only of its
** open calls (charged up to its end, or now), sorted by node. */
static void write_live_nodes(struct writer *w, struct dump_row *row, int stale)
{
  struct cp_thread *t = row->t;
  uint32_t n = stale ? CP_FIRST_NODE : t->nnodes;
  struct open_call local[256], *open = local;
  size_t nopen = 0, cap = sizeof local / sizeof local[0], bytes = 0;
  if (!stale) {
    uint64_t end = t->end_ns ? t->end_ticks : cp_tnow(t);
    struct cp_frame *top = t->top;
    if (top < t->frames || top >= t->commit_end) top = t->frames;
    size_t depth = (size_t)(top - t->frames);
    if (depth > cap) {
      bytes = (depth * sizeof *open + os_page_size() - 1) / os_page_size() * os_page_size();
      open = os_reserve(bytes);
      if (!open || os_commit(open, bytes) != 0) {
        if (open) os_release(open, bytes);
        w->err = CAPPROF_ENOMEM;
        return;
      }
      cap = depth;
    }
    for (struct cp_frame *f = t->frames + 1; f <= top && nopen < cap; f++) {
      if (f->node >= n || f->tstart > end) continue;
      open[nopen].node = f->node;
      open[nopen].kind = f->kind;
      open[nopen].ticks = end - f->tstart;
      nopen++;
    }
    sort_open(open, nopen);
  }
  size_t k = 0;
  for (uint32_t i = 0; i < n; i++) {
    struct cp_node nd = t->nodes[i];
    uint32_t flags = 0;
    if (stale) {
      nd.calls = nd.incl = nd.max = 0;
      nd.min = UINT64_MAX;
    }
    for (; k < nopen && open[k].node == i; k++) {
      calltree_charge_kind(&nd, open[k].kind, open[k].ticks);
      flags = CPD_NODE_OPEN;
      row->open++;
    }
    write_node(w, &nd, i, flags, &row->lost);
  }
  if (bytes) os_release(open, bytes);
  row->count = n;
}

/* A retired thread's or group's nodes, flags in their hot fields. */
static void write_ended_nodes(struct writer *w, struct dump_row *row)
{
  struct cp_ended *e = row->e;
  const struct cp_node *nodes = e->group ? e->group->nodes : e->nodes;
  uint32_t n = e->group ? e->group->nnodes : e->nnodes;
  for (uint32_t i = 0; i < n; i++) write_node(w, &nodes[i], i, nodes[i].hot, &row->lost);
  row->count = n;
  row->open = e->nopen;
}

/* THREAD_MERGES, when ended threads were merged or dropped. */
static void write_merges(struct writer *w, const struct dump_row *rows, uint32_t nrows)
{
  if (!cp_g.nended_merged && !cp_g.nended_dropped) return;
  uint64_t s = sec_begin(w);
  uint32_t groups = 0, index = 0;
  for (uint32_t i = 0; i < nrows; i++) groups += rows[i].count && rows[i].e && rows[i].e->group;
  w_u32(w, groups);
  w_u32(w, CPD_MERGE_RECORD_SIZE);
  w_u64(w, cp_g.nended_kept);
  w_u64(w, cp_g.nended_merged);
  w_u64(w, cp_g.nended_dropped);
  for (uint32_t i = 0; i < nrows; i++) {
    if (!rows[i].count) continue;
    const struct cp_ended *e = rows[i].e;
    if (e && e->group) {
      w_u32(w, index);
      w_u32(w, e->merge_kind);
      w_u64(w, e->merged);
      w_u64(w, e->start_key);
    }
    index++;
  }
  sec_end(w, CPD_SEC_THREAD_MERGES, s);
}

/* CALIBRATION: per written thread, the time its slow paths took (left out
** of every measured call by the thread clock, cp_tnow) and how many entries
** took them; docs/dump-format.md. */
static void write_calibration(struct writer *w, const struct dump_row *rows,
                              uint32_t nrows)
{
  uint64_t s = sec_begin(w);
  uint32_t written = 0, records = 0;
  for (uint32_t i = 0; i < nrows; i++) records += rows[i].count != 0;
  w_u32(w, records);
  w_u32(w, CPD_CAL_FIELDS);
  for (uint32_t i = 0; i < nrows; i++) {
    const struct dump_row *r = &rows[i];
    if (!r->count) continue;
    w_u32(w, written++);
    w_u32(w, 0);
    w_u64(w, r->e ? r->e->slow_ticks : r->t->debt - r->t->debt_at_reset);
    w_u64(w, r->e ? r->e->slow_calls : r->t->slow_calls);
  }
  sec_end(w, CPD_SEC_CALIBRATION, s);
}

/* THREAD_MERGES and CALIBRATION, between the zones' sections and
** throttling's (cp_dump_order). */
static void dump_sections(struct dump_writer *dw, const struct dump_rows *rows)
{
  struct writer *w = &dw->w;
  write_merges(w, rows->row, rows->n);
  write_calibration(w, rows->row, rows->n);
}

static void write_threads(struct writer *w)
{
  uint32_t gen = cp_g.gate >> 1, nrows = 0;
  struct cp_thread *t;
  struct cp_ended *e;
  for (t = cp_g.threads; t; t = t->next) nrows++;
  for (e = cp_g.ended; e; e = e->next) nrows++;
  size_t rbytes = (nrows + 1) * sizeof(struct dump_row);
  rbytes = (rbytes + os_page_size() - 1) / os_page_size() * os_page_size();
  struct dump_row *rows = os_reserve(rbytes);
  if (!rows || os_commit(rows, rbytes) != 0) {
    if (rows) os_release(rows, rbytes);
    w->err = CAPPROF_ENOMEM;
    return;
  }
  uint32_t i = 0;
  for (t = cp_g.threads; t && i < nrows; t = t->next) rows[i++].t = t;
  for (e = cp_g.ended; e && i < nrows; e = e->next) rows[i++].e = e;
  nrows = i;

  /* NODES first: the thread records point into it. Threads that ended
  ** before a reset (stale, not retired) are left out. */
  uint64_t s = sec_begin(w), first = 0;
  for (i = 0; i < nrows; i++) {
    struct dump_row *r = &rows[i];
    r->first = first;
    if (r->e) write_ended_nodes(w, r);
    else if (!(r->t->generation != gen && r->t->end_ns))
      write_live_nodes(w, r, r->t->generation != gen);
    first += r->count;
  }
  sec_end(w, CPD_SEC_NODES, s);

  s = sec_begin(w);
  uint32_t written = 0;
  for (i = 0; i < nrows; i++) written += rows[i].count != 0;
  w_u32(w, written);
  for (i = 0; i < nrows; i++) {
    const struct dump_row *r = &rows[i];
    if (!r->count) continue;
    char name[64];
    uint64_t tid, start, end, lost_frames;
    if (r->e) {
      memcpy(name, r->e->name, sizeof name);
      tid = r->e->tid;
      start = r->e->start_ns;
      end = r->e->end_ns;
      lost_frames = r->e->lost_frames;
    } else {
      t = r->t;
      memcpy(name, t->name, sizeof name);
      name[sizeof name - 1] = '\0';
      if ((!name[0] || !t->name_fixed) && !t->end_ns) os_thread_name(t->tid, name, sizeof name);
      tid = t->tid;
      start = t->start_ns;
      end = t->end_ns;
      lost_frames = t->lost_frames;
    }
    name[sizeof name - 1] = '\0';
    w_u64(w, tid);
    w_u64(w, start);
    w_u64(w, end);
    w_u64(w, r->lost + lost_frames);
    w_u64(w, r->first);
    w_u32(w, r->count);
    w_u32(w, r->open);
    w_cstr(w, name);
  }
  sec_end(w, CPD_SEC_THREADS, s);

  /* The features' sections (zones', ours, throttling's, unhooking's,
  ** sampling's, interception's: cp_dump_order) refer to threads and their
  ** nodes by the rows written. */
  size_t cbytes = (nrows + 1) * (sizeof(uint32_t) + sizeof(void *));
  cbytes = (cbytes + os_page_size() - 1) / os_page_size() * os_page_size();
  char *mem = os_reserve(cbytes);
  if (mem && os_commit(mem, cbytes) == 0) {
    const void **who = (const void **)(void *)mem;
    uint32_t *counts = (uint32_t *)(void *)(mem + (nrows + 1) * sizeof(void *));
    for (i = 0; i < nrows; i++) {
      who[i] = rows[i].e ? (const void *)rows[i].e : (const void *)rows[i].t;
      counts[i] = rows[i].count;
    }
    struct dump_rows dr = { rows, nrows, who, counts };
    for (const struct cp_feature *const *p = cp_dump_order; *p; p++)
      if ((*p)->dump) (*p)->dump((struct dump_writer *)(void *)w, &dr);
  } else {
    w->err = CAPPROF_ENOMEM;
  }
  os_release(rows, rbytes);
}

static int write_all(os_file f)
{
  struct writer *w = &W;
  w->f = f;
  w->off = 0;
  w->err = 0;
  w->n = 0;
  w->nsec = 0;
  unsigned char h[CPD_HEADER_SIZE];
  memset(h, 0, sizeof h);
  w_bytes(w, h, sizeof h);                  /* placeholder */
  write_process(w);
  write_clock(w);
  write_modules(w);
  write_threads(w);
  uint64_t table = w->off;
  for (int i = 0; i < w->nsec; i++) w_bytes(w, w->sec[i], CPD_SECTION_SIZE);
  w_flush(w);
  if (w->err) return w->err;

  memcpy(h + CPD_H_MAGIC, CPD_MAGIC, CPD_MAGIC_LEN);
  cpd_put16(h + CPD_H_VERSION, CPD_VERSION);
  cpd_put16(h + CPD_H_VERSION + 2, CPD_VERSION_MINOR);
  cpd_put32(h + CPD_H_HEADER_SIZE, CPD_HEADER_SIZE);
  cpd_put32(h + CPD_H_NSECTIONS, (uint32_t)w->nsec);
  cpd_put32(h + CPD_H_FLAGS, CPD_F_COMPLETE);
  cpd_put64(h + CPD_H_TABLE_OFF, table);
  cpd_put64(h + CPD_H_FILE_SIZE, w->off);
  cpd_put32(h + CPD_H_PTR_SIZE, (uint32_t)sizeof(void *));
  return os_file_write_at(f, h, sizeof h, 0);
}

/* ---- file names ---------------------------------------------------------- */

static size_t append(char *buf, size_t at, size_t n, const char *s)
{
  while (*s && at + 1 < n) buf[at++] = *s++;
  if (*s) return n;                         /* did not fit */
  buf[at] = '\0';
  return at;
}

static void u64_text(uint64_t v, char *out)
{
  char tmp[24];
  int i = 0;
  do { tmp[i++] = (char)('0' + v % 10); v /= 10; } while (v);
  int j = 0;
  while (i) out[j++] = tmp[--i];
  out[j] = '\0';
}

static int expand(const char *pattern, char *buf, size_t n)
{
  size_t at = 0;
  char num[24], when[32];
  buf[0] = '\0';
  for (const char *p = pattern; *p && at < n; p++) {
    char one[2] = { *p, '\0' };
    const char *piece = one;
    if (*p == '%' && p[1]) {
      switch (*++p) {
      case 'p': u64_text(os_process_id(), num); piece = num; break;
      case 'n': piece = cp_g.proc.progname[0] ? cp_g.proc.progname : "program"; break;
      case 't': os_format_time(cp_g.start_ns, when, sizeof when); piece = when; break;
      case '%': piece = "%"; break;
      default: one[0] = '%'; p--; break;     /* unknown: keep the '%' */
      }
    }
    at = append(buf, at, n, piece);
  }
  return at < n ? 0 : CAPPROF_EINVAL;
}

int dump_expand_pattern(const char *pattern, char *buf, size_t n)
{
  if (expand(pattern, buf, n) != 0) return CAPPROF_EINVAL;
  size_t len = strlen(buf);
  if (len == 0) return CAPPROF_EINVAL;
  if (buf[len - 1] == '/' || buf[len - 1] == '\\' || os_is_directory(buf)) {
    char name[600];
    if (expand("%n.%p.capprof", name, sizeof name) != 0) return CAPPROF_EINVAL;
    if (buf[len - 1] != '/' && buf[len - 1] != '\\') len = append(buf, len, n, "/");
    if (len >= n || append(buf, len, n, name) >= n) return CAPPROF_EINVAL;
  }
  return 0;
}

/* "dir/a.capprof" with k=2 gives "dir/a.2.capprof"; without the suffix, "name.2". */
static int numbered(const char *path, unsigned k, char *out, size_t n)
{
  size_t len = strlen(path), stem = len;
  static const char sfx[] = ".capprof";
  if (len >= sizeof sfx - 1 && strcmp(path + len - (sizeof sfx - 1), sfx) == 0)
    stem = len - (sizeof sfx - 1);
  char num[24];
  u64_text(k, num);
  if (stem + 1 + strlen(num) + (len - stem) + 1 > n) return CAPPROF_EINVAL;
  memcpy(out, path, stem);
  out[stem] = '.';
  strcpy(out + stem + 1, num);
  strcat(out, path + stem);
  return 0;
}

static void copy_out(char *out, size_t outsize, const char *s)
{
  if (!out || !outsize) return;
  size_t n = strlen(s);
  if (n >= outsize) n = outsize - 1;
  memcpy(out, s, n);
  out[n] = '\0';
}

/* A relative pattern goes into the output directory, when one is set. */
static const char *in_output_dir(const char *pattern, char *buf, size_t n)
{
  const char *dir = cp_g.output_dir;
  int absolute = pattern[0] == '/' || pattern[0] == '\\' ||
                 (pattern[0] && pattern[1] == ':');     /* C:\... */
  if (!dir[0] || absolute) return pattern;
  size_t at = append(buf, 0, n, dir);
  if (at < n && dir[strlen(dir) - 1] != '/' && dir[strlen(dir) - 1] != '\\')
    at = append(buf, at, n, "/");
  if (at < n) at = append(buf, at, n, pattern);
  return at < n ? buf : pattern;
}

static char failure[1400];       /* os_lock */

const char *dump_failure(void) { return failure; }

static void set_failure(const char *step, const char *file)
{
  size_t at = append(failure, 0, sizeof failure, step);
  if (at < sizeof failure) at = append(failure, at, sizeof failure, " ");
  if (at < sizeof failure) append(failure, at, sizeof failure, file);
}

/* 64 unpredictable bits: the OS's random source, else clocks, ids and an
** address mixed (splitmix64). */
static uint64_t random64(void)
{
  uint64_t v = 0;
  if (os_random(&v, sizeof v) == 0) return v;
  v ^= os_realtime_ns() ^ (os_monotonic_ns() << 17) ^ cp_now() ^
       (os_thread_id() << 32) ^ (uint64_t)(uintptr_t)&v;
  v += UINT64_C(0x9E3779B97F4A7C15);
  v = (v ^ (v >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  v = (v ^ (v >> 27)) * UINT64_C(0x94D049BB133111EB);
  return v ^ (v >> 31);
}

/* final + ".tmp" + 12 hex digits. */
static int temp_name(const char *final, char *tmp, size_t n)
{
  static const char hex[] = "0123456789abcdef";
  char sfx[18] = ".tmp";
  uint64_t r = random64();
  for (int i = 0; i < 12; i++) sfx[4 + i] = hex[(r >> (4 * i)) & 15];
  sfx[16] = '\0';
  size_t at = append(tmp, 0, n, final);
  if (at < n) at = append(tmp, at, n, sfx);
  return at < n ? 0 : CAPPROF_EINVAL;
}

int dump_write(const char *path, int explicit_path, char *out, size_t outsize)
{
  char final[1100], tmp[1200], name[1200];
  int rc;
  failure[0] = '\0';
  if (explicit_path) {
    if (strlen(path) >= sizeof final) return CAPPROF_EINVAL;
    strcpy(final, path);
  } else if ((rc = dump_expand_pattern(in_output_dir(path, name, sizeof name), final,
                                         sizeof final)) != 0) {
    copy_out(out, outsize, path);
    set_failure("expanding the pattern", path);
    return rc;
  }
  copy_out(out, outsize, final);

  /* A temporary name nobody can guess: one planted in advance by another
  ** user cannot block the dump (100 tries: a clash is already unlikely). */
  os_file f;
  unsigned k = 0;
  do {
    if ((rc = temp_name(final, tmp, sizeof tmp)) != 0) break;
    rc = os_file_create(tmp, &f);
  } while (rc == CAPPROF_EEXIST && ++k < 100);
  if (rc) {
    set_failure("creating", tmp);
    return rc;
  }
  rc = write_all(f);
  int rc2 = os_file_close(f);
  if (!rc) rc = rc2;
  if (rc) {
    set_failure("writing", tmp);
    os_file_remove(tmp);
    return rc;
  }

  rc = os_file_publish(tmp, final);
  for (k = 1; rc == CAPPROF_EEXIST && !explicit_path && k < 1000; k++) {
    if (numbered(final, k, name, sizeof name) != 0) break;
    rc = os_file_publish(tmp, name);
    if (rc == 0) copy_out(out, outsize, name);
  }
  if (rc) {
    set_failure(rc == CAPPROF_EEXIST && !explicit_path
                    ? "naming it (it and the numbered names .1 to .999 exist)"
                    : "naming it", final);
    os_file_remove(tmp);
  }
  return rc;
}

static int write_dump(const char *path, int explicit_path, char *out, size_t outsize,
                      const char **why)
{
  int rc = dump_write(path, explicit_path, out, outsize);
  *why = failure;
  return rc;
}

/* The dump writer's part in the core's life cycle (src/features.c): dumps
** on demand start with the other features; the core writes dumps through
** write_dump. */
const struct cp_feature dump_feature = {
  .name = "dump",
  .start = os_dumpsig_start,
  .dump = dump_sections,
  .write_dump = write_dump,
};
