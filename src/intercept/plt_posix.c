/*
** plt.c (POSIX, ELF) -- API interception's back end on Linux: at start and
** after every dlopen, points the GOT slots (JUMP_SLOT and GLOB_DAT
** relocations) through which a module calls functions of a selected library
** at stubs (tramp_x86_64.c), so that only calls crossing into the library
** are seen; keeps the unwinder from ever meeting a return trampoline. The
** bookkeeping is the portable src/intercept/intercept.c; its contract is in internal.h.
**
** A slot is read as the dynamic linker left it: bound (immediate binding, or
** lazy and already called) it holds the function; unbound (lazy, not called
** yet) it points back into its own module's PLT, and the function is found
** as the loader would find it, by name and version. RELRO pages are made
** writable for the patch and read-only again. Stubs live in pages that are
** written once and then made executable; they are never changed after.
*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../posix/posix.h"
#include "intercept.h"

#if defined(__x86_64__)
#  define R_JUMP_SLOT R_X86_64_JUMP_SLOT
#  define R_GLOB_DAT  R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#  define R_JUMP_SLOT R_AARCH64_JUMP_SLOT
#  define R_GLOB_DAT  R_AARCH64_GLOB_DAT
#else
#  define R_JUMP_SLOT (-1)
#  define R_GLOB_DAT  (-1)
#endif

#if UINTPTR_MAX > 0xFFFFFFFFu
#  define R_TYPE(i)  ELF64_R_TYPE(i)
#  define R_SYM(i)   ELF64_R_SYM(i)
#  define ST_TYPE(i) ELF64_ST_TYPE(i)
#else
#  define R_TYPE(i)  ELF32_R_TYPE(i)
#  define R_SYM(i)   ELF32_R_SYM(i)
#  define ST_TYPE(i) ELF32_ST_TYPE(i)
#endif

#define MODS_MAX     1024u              /* modules looked at per pass */
#define PENDING_MAX  8192u              /* slots patched per flush */
#define CHUNKS_MAX   512u               /* executable stub chunks */
#define CHUNK_BYTES  ((size_t)64 << 10)
#define STUBS_MAX    65536u
#define STUB_HASH    (2u * STUBS_MAX)

struct mod {
  uintptr_t base;
  const char *name;                    /* "" for the main program */
  const ElfW(Phdr) *phdr;
  int phnum;
};

struct stub_rec {
  struct icpt_stub d;                  /* what the stub hands to intercept_enter */
  uintptr_t target;
  unsigned char *code;
};

struct pending {
  uintptr_t *slot;
  unsigned char *code;
  const char *lib, *name;              /* for the skip record if it fails */
};

/* All under plt_lock, except the chunk ranges, read by is_stub. */
static pthread_mutex_t plt_lock = PTHREAD_MUTEX_INITIALIZER;
static int active;                      /* patching is on */
static uintptr_t self_base;             /* libcapprof.so's bias; 0 if in the program */
static struct mod mods[MODS_MAX];
static unsigned nmods;
static struct { uintptr_t base; const char *name; } done[MODS_MAX];
static unsigned ndone;
static unsigned long long last_subs;    /* dlpi_subs at the last pass */
static struct stub_rec *recs;
static uint32_t nrecs, *stub_hash;
static unsigned char *chunk;            /* writable chunk being filled, or NULL */
static size_t chunk_used;
static struct { uintptr_t lo, hi; } chunks[CHUNKS_MAX];
static volatile unsigned nchunks;
static struct pending pend[PENDING_MAX];
static unsigned npend;

/* ---- stubs ------------------------------------------------------------------ */

static int is_stub(uintptr_t a)
{
  for (unsigned i = 0; i < nchunks; i++)
    if (a >= chunks[i].lo && a < chunks[i].hi) return 1;
  return 0;
}

/* Make the chunk being filled executable; stubs in it may be used from now. */
static void seal_chunk(void)
{
  if (!chunk) return;
  syscall(SYS_mprotect, chunk, CHUNK_BYTES, PROT_READ | PROT_EXEC);   /* not the interposer */
  chunk = NULL;
}

static int tables_ready(void)
{
  if (recs) return 1;
  size_t rb = (size_t)STUBS_MAX * sizeof *recs, hb = (size_t)STUB_HASH * 4;
  struct stub_rec *r = os_reserve(rb);
  uint32_t *h = os_reserve(hb);
  if (!r || !h || os_commit(r, rb) || os_commit(h, hb)) {
    os_release(r, rb);
    os_release(h, hb);
    return 0;
  }
  recs = r;
  stub_hash = h;
  return 1;
}

/* The stub for (id, target), made if new; NULL when the tables are full. */
static unsigned char *stub_get(uint32_t id, uintptr_t target)
{
  if (!tables_ready()) return NULL;
  uint64_t k = (uint64_t)target * UINT64_C(0x9E3779B97F4A7C15) ^ id;
  uint32_t s = (uint32_t)(k >> 40) & (STUB_HASH - 1), v;
  while ((v = stub_hash[s]) != 0) {
    struct stub_rec *r = &recs[v - 1];
    if (r->target == target && r->d.id == id) return r->code;
    s = (s + 1) & (STUB_HASH - 1);
  }
  size_t size = tramp_stub_size();
  if (nrecs >= STUBS_MAX) return NULL;
  if (!chunk || chunk_used + size > CHUNK_BYTES) {
    seal_chunk();
    if (nchunks >= CHUNKS_MAX) return NULL;
    /* Near the trampolines, so that stubs can jump there directly. */
    uintptr_t near = (tramp_return_address() & ~(uintptr_t)0xFFFF) - ((uintptr_t)256 << 20);
    void *p = mmap((void *)near, CHUNK_BYTES, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    chunk = p;
    chunk_used = 0;
    chunks[nchunks].lo = (uintptr_t)p;
    chunks[nchunks].hi = (uintptr_t)p + CHUNK_BYTES;
    CP_BARRIER();
    nchunks++;
  }
  struct stub_rec *r = &recs[nrecs];
  r->d.real = (void *)target;
  r->d.id = id;
  r->target = target;
  r->code = chunk + chunk_used;
  chunk_used += size;
  tramp_write_stub(r->code, &r->d);
  stub_hash[s] = ++nrecs;
  return r->code;
}

/* ---- modules ------------------------------------------------------------------- */

static int collect_cb(struct dl_phdr_info *info, size_t size, void *data)
{
  (void)size;
  unsigned long long *subs = data;
  *subs = info->dlpi_subs;
  if (nmods < MODS_MAX) {
    struct mod *m = &mods[nmods++];
    m->base = info->dlpi_addr;
    m->name = info->dlpi_name ? info->dlpi_name : "";
    m->phdr = info->dlpi_phdr;
    m->phnum = info->dlpi_phnum;
  }
  return 0;
}

static const char *base_name(const char *path)
{
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

static int prefix(const char *s, const char *p) { return !strncmp(s, p, strlen(p)); }

/* The loader, the unwinder, the vDSO and capprof: never patched, and calls
** into them are never intercepted. */
static int runtime_library(const char *base)
{
  return prefix(base, "ld-linux") || prefix(base, "ld64.so") || prefix(base, "ld.so") ||
         prefix(base, "libgcc_s.so") || prefix(base, "linux-vdso") ||
         prefix(base, "linux-gate") || prefix(base, "libcapprof.so");
}

static uintptr_t dyn_ptr(uintptr_t base, ElfW(Addr) p)
{
  return p < base ? base + p : p;     /* glibc relocates most entries in place */
}

struct dyninfo {
  const ElfW(Sym) *symtab;
  const char *strtab;
  const ElfW(Rela) *jmprel, *rela;
  size_t jmprel_size, rela_size;
  const ElfW(Half) *versym;
  const ElfW(Verneed) *verneed;
  size_t verneednum;
  int pltrel_rela;
};

static int read_dynamic(const struct mod *m, const ElfW(Dyn) *dyn, struct dyninfo *di)
{
  memset(di, 0, sizeof *di);
  di->pltrel_rela = 1;
  for (; dyn->d_tag != DT_NULL; dyn++) {
    uintptr_t p = dyn_ptr(m->base, dyn->d_un.d_ptr);
    switch (dyn->d_tag) {
    case DT_SYMTAB: di->symtab = (const ElfW(Sym) *)p; break;
    case DT_STRTAB: di->strtab = (const char *)p; break;
    case DT_JMPREL: di->jmprel = (const ElfW(Rela) *)p; break;
    case DT_PLTRELSZ: di->jmprel_size = dyn->d_un.d_val; break;
    case DT_PLTREL: di->pltrel_rela = dyn->d_un.d_val == DT_RELA; break;
    case DT_RELA: di->rela = (const ElfW(Rela) *)p; break;
    case DT_RELASZ: di->rela_size = dyn->d_un.d_val; break;
    case DT_VERSYM: di->versym = (const ElfW(Half) *)p; break;
    case DT_VERNEED: di->verneed = (const ElfW(Verneed) *)p; break;
    case DT_VERNEEDNUM: di->verneednum = dyn->d_un.d_val; break;
    default: break;
    }
  }
  return di->symtab && di->strtab && di->pltrel_rela ? 0 : -1;
}

/* The version name an import of symbol index idx asks for, or NULL. */
static const char *import_version(const struct dyninfo *di, size_t idx)
{
  if (!di->versym || !di->verneed) return NULL;
  ElfW(Half) want = di->versym[idx] & 0x7FFF;
  if (want < 2) return NULL;
  const ElfW(Verneed) *vn = di->verneed;
  for (size_t i = 0; i < di->verneednum; i++) {
    const ElfW(Vernaux) *va = (const ElfW(Vernaux) *)((const char *)vn + vn->vn_aux);
    for (unsigned k = 0; k < vn->vn_cnt; k++) {
      if (va->vna_other == want) return di->strtab + va->vna_name;
      va = (const ElfW(Vernaux) *)((const char *)va + va->vna_next);
    }
    if (!vn->vn_next) break;
    vn = (const ElfW(Verneed) *)((const char *)vn + vn->vn_next);
  }
  return NULL;
}

typedef void *(*dlopen_fn)(const char *, int);

/* libc's dlopen, behind the interposer below. */
static CP_NOINSTR dlopen_fn real_dlopen(void)
{
  static dlopen_fn next;
  if (!next) next = (dlopen_fn)dlsym(RTLD_NEXT, "dlopen");
  return next;
}

/* Where an unbound import would go: the global scope first, then the
** module's own dependencies (a library opened with RTLD_LOCAL). */
static uintptr_t resolve(const struct mod *m, const char *name, const char *ver)
{
  void *p = dlsym(RTLD_DEFAULT, name);
  void *v = ver ? dlvsym(RTLD_DEFAULT, name, ver) : NULL;
  Dl_info a, b;
  /* The versioned definition, unless an earlier object (an interposer
  ** without versions, such as capprof's own) defines the name. */
  if (v && (!p || (dladdr(p, &a) && dladdr(v, &b) && a.dli_fbase == b.dli_fbase))) p = v;
  dlopen_fn open = real_dlopen();
  if (!p && m->name[0] && open) {
    void *h = open(m->name, RTLD_LAZY | RTLD_NOLOAD);
    if (h) {
      p = ver ? dlvsym(h, name, ver) : NULL;
      if (!p) p = dlsym(h, name);
      dlclose(h);
    }
  }
  return (uintptr_t)p;
}

struct range { uintptr_t lo, hi; };

/* Write the pending slots: stubs sealed first, RELRO opened around them.
** A slot whose page cannot be made writable is left alone and counted. */
static void flush(const struct range *relro, uint64_t *patched)
{
  if (!npend) return;
  seal_chunk();
  int opened = 0, failed = 0;
  for (unsigned i = 0; i < npend; i++) {
    uintptr_t a = (uintptr_t)pend[i].slot;
    int in_relro = a >= relro->lo && a < relro->hi;
    if (in_relro && !opened && !failed) {
      if (syscall(SYS_mprotect, relro->lo, relro->hi - relro->lo, PROT_READ | PROT_WRITE) == 0)
        opened = 1;
      else
        failed = 1;
    }
    if (in_relro && failed) {
      intercept_skip(CPD_SKIP_PROTECT, pend[i].lib, pend[i].name);
      continue;
    }
    __atomic_store_n(pend[i].slot, (uintptr_t)pend[i].code, __ATOMIC_RELEASE);
    (*patched)++;
  }
  if (opened) syscall(SYS_mprotect, relro->lo, relro->hi - relro->lo, PROT_READ);
  npend = 0;
}

/* Patch one module's import slots; returns the number of slots patched. */
static uint64_t patch_module(const struct mod *m)
{
  const ElfW(Dyn) *dyn = NULL;
  struct range relro = { 0, 0 }, span = { UINTPTR_MAX, 0 };
  size_t page = os_page_size();
  for (int i = 0; i < m->phnum; i++) {
    const ElfW(Phdr) *ph = &m->phdr[i];
    uintptr_t lo = m->base + ph->p_vaddr, hi = lo + ph->p_memsz;
    if (ph->p_type == PT_DYNAMIC) dyn = (const ElfW(Dyn) *)lo;
    if (ph->p_type == PT_GNU_RELRO) {       /* as the loader protected it */
      relro.lo = lo & ~(page - 1);
      relro.hi = hi & ~(page - 1);
    }
    if (ph->p_type == PT_LOAD) {
      if (lo < span.lo) span.lo = lo;
      if (hi > span.hi) span.hi = hi;
    }
  }
  struct dyninfo di;
  if (!dyn || read_dynamic(m, dyn, &di) != 0) return 0;

  uint64_t patched = 0;
  for (int pass = 0; pass < 2; pass++) {
    const ElfW(Rela) *r = pass ? di.rela : di.jmprel;
    size_t n = (pass ? di.rela_size : di.jmprel_size) / sizeof(ElfW(Rela));
    for (size_t i = 0; r && i < n; i++) {
      long type = (long)R_TYPE(r[i].r_info);
      size_t idx = R_SYM(r[i].r_info);
      if ((type != R_JUMP_SLOT && type != R_GLOB_DAT) || idx == 0) continue;
      const ElfW(Sym) *sym = &di.symtab[idx];
      int stype = ST_TYPE(sym->st_info);
      if (sym->st_shndx != SHN_UNDEF) continue;          /* its own function */
      if (stype != STT_FUNC && stype != STT_GNU_IFUNC &&
          !(stype == STT_NOTYPE && type == R_JUMP_SLOT))
        continue;                                        /* data */
      const char *name = di.strtab + sym->st_name;
      uintptr_t *slot = (uintptr_t *)(m->base + r[i].r_offset);
      uintptr_t v = *slot, target = v;
      if (!v || is_stub(v)) continue;                    /* unresolved weak, or done */
      if (v >= span.lo && v < span.hi) {                 /* lazy, not bound yet */
        if (type != R_JUMP_SLOT) continue;
        target = resolve(m, name, import_version(&di, idx));
        if (!target) continue;
      }
      Dl_info info;
      const ElfW(Sym) *def = NULL;
      if (!dladdr1((void *)target, &info, (void **)&def, RTLD_DL_SYMENT) || !info.dli_fname)
        continue;
      if ((uintptr_t)info.dli_fbase == span.lo || (uintptr_t)info.dli_fbase == m->base)
        continue;                                        /* bound to itself */
      const char *lib = base_name(info.dli_fname);
      if (!intercept_selects(lib)) continue;
      if (def && ST_TYPE(def->st_info) == STT_OBJECT) continue;
      uint32_t why = runtime_library(lib) ? CPD_SKIP_LIBRARY : intercept_unsafe(name);
      uint32_t id = why ? UINT32_MAX : intercept_register(lib, name);
      unsigned char *code = NULL;
      if (!why && (id == UINT32_MAX || !(code = stub_get(id, target)))) why = CPD_SKIP_FULL;
      if (why) {
        intercept_skip(why, lib, name);
        continue;
      }
      pend[npend].slot = slot;
      pend[npend].code = code;
      pend[npend].lib = lib;
      pend[npend].name = name;
      if (++npend == PENDING_MAX) flush(&relro, &patched);
    }
  }
  flush(&relro, &patched);
  return patched;
}

/* Patch every module not patched yet. Called with plt_lock held. */
static void patch_all(void)
{
  unsigned long long subs = 0;
  nmods = 0;
  dl_iterate_phdr(collect_cb, &subs);
  if (subs != last_subs) ndone = 0;   /* something was unloaded: look at all again */
  last_subs = subs;
  uint64_t modules = 0, slots = 0;
  for (unsigned i = 0; i < nmods; i++) {
    const struct mod *m = &mods[i];
    const char *base = base_name(m->name);
    if ((self_base && m->base == self_base) || (m->name[0] && runtime_library(base)))
      continue;
    int seen = 0;
    for (unsigned k = 0; k < ndone && !seen; k++)
      seen = done[k].base == m->base && !strcmp(done[k].name, m->name);
    if (seen) continue;
    uint64_t n = patch_module(m);
    if (ndone < MODS_MAX) {
      done[ndone].base = m->base;
      done[ndone].name = m->name;
      ndone++;
    }
    modules += n != 0;
    slots += n;
  }
  intercept_patched(modules, slots);
}

/* ---- start ------------------------------------------------------------------------ */

static CP_NOINLINE CP_NOINSTR void cal_plain(void)
{
  CP_BARRIER();
}

static int main_is_static(void)
{
  nmods = 0;
  unsigned long long subs;
  dl_iterate_phdr(collect_cb, &subs);
  for (unsigned i = 0; i < nmods; i++) {
    if (mods[i].name[0]) continue;
    for (int k = 0; k < mods[i].phnum; k++)
      if (mods[i].phdr[k].p_type == PT_INTERP) return 0;
    return 1;
  }
  return 0;
}

static void plt_fork_lock(void) { pthread_mutex_lock(&plt_lock); }
static void plt_fork_unlock(void) { pthread_mutex_unlock(&plt_lock); }

int os_intercept_start(void)
{
  if (main_is_static()) {
    char msg[1300] = "capprof: ";
    strncat(msg, cp_g.proc.progname, 256);
    strcat(msg, " is statically linked: API interception cannot apply (it has no import"
                " slots); only its compiler hooks are recorded");
    os_report(msg);
    return CPD_IS_STATIC;
  }
  if (!tramp_supported()) {
    os_report("capprof: API interception is not implemented for this architecture");
    return CPD_IS_UNSUPPORTED;
  }
  Dl_info info;
  if (dladdr((void *)os_intercept_start, &info) && info.dli_fname && info.dli_fname[0] &&
      strcmp(base_name(info.dli_fname), cp_g.proc.progname) != 0)
    self_base = (uintptr_t)info.dli_fbase;
  intercept_set_return_trampoline(tramp_return_address());
  /* A fork while another thread patches (dlopen) must not leave the child
  ** with plt_lock held. Taken before os_lock, as everywhere. */
  pthread_atfork(plt_fork_lock, plt_fork_unlock, plt_fork_unlock);
  pthread_mutex_lock(&plt_lock);
  unsigned char *cal = stub_get(0xFFFFFFu, (uintptr_t)cal_plain);   /* its own id */
  if (cal) {
    seal_chunk();
    active = 1;
    patch_all();
  }
  pthread_mutex_unlock(&plt_lock);
  if (!cal) return CPD_IS_FAILED;
  intercept_calibrate((void (*)(void))(void *)cal, cal_plain);
  return CPD_IS_ACTIVE;
}

/* ---- dlopen and the unwinder --------------------------------------------------------- */

/* Interposed: the new module (and its dependencies) are patched before the
** caller gets the handle. Their constructors ran before: not intercepted. */
__attribute__((weak, visibility("default"))) CP_NOINSTR void *dlopen(const char *file, int mode)
{
  dlopen_fn next = real_dlopen();
  if (!next) return NULL;
  void *h = next(file, mode);
  if (h && active) {
    uint32_t q = intercept_quiet_begin();
    os_errsave e = os_save_errors();
    pthread_mutex_lock(&plt_lock);
    patch_all();
    pthread_mutex_unlock(&plt_lock);
    os_restore_errors(e);
    intercept_quiet_end(q);
  }
  return h;
}

/* An unwinder walking through a hooked call would find the return
** trampoline, which has no unwind information, and stop: C++ would call
** terminate. Every hooked return address of the thread is put back first;
** the catch (__cxa_begin_catch, unwind.c) hooks the calls that stay live
** again. Interposed on libgcc_s's entry points that start an unwind; weak,
** so that a program linked with a static unwinder keeps its own. */
typedef int (*raise_fn)(void *);

static CP_NOINSTR void *next_unwind(const char *name)
{
  return dlsym(RTLD_NEXT, name);
}

__attribute__((weak, visibility("default"))) CP_NOINSTR int _Unwind_RaiseException(void *exc)
{
  static raise_fn next;
  if (!next) next = (raise_fn)next_unwind("_Unwind_RaiseException");
  intercept_restore_returns((uintptr_t)__builtin_frame_address(0));
  return next ? next(exc) : 5;                    /* _URC_END_OF_STACK */
}

__attribute__((weak, visibility("default"))) CP_NOINSTR int _Unwind_Resume_or_Rethrow(void *exc)
{
  static raise_fn next;
  if (!next) next = (raise_fn)next_unwind("_Unwind_Resume_or_Rethrow");
  intercept_restore_returns((uintptr_t)__builtin_frame_address(0));
  return next ? next(exc) : 5;
}

typedef int (*forced_fn)(void *, void *, void *);

__attribute__((weak, visibility("default"))) CP_NOINSTR int _Unwind_ForcedUnwind(void *exc, void *stop,
                                                                           void *arg)
{
  static forced_fn next;
  if (!next) next = (forced_fn)next_unwind("_Unwind_ForcedUnwind");
  intercept_restore_returns((uintptr_t)__builtin_frame_address(0));
  return next ? next(exc, stop, arg) : 5;
}

int os_on_alt_stack(uintptr_t sp)
{
  stack_t ss;
  if (sigaltstack(NULL, &ss) != 0 || !(ss.ss_flags & SS_ONSTACK)) return 0;
  return sp >= (uintptr_t)ss.ss_sp && sp < (uintptr_t)ss.ss_sp + ss.ss_size;
}
