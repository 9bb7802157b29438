/*
** iat.c (Win32 x64) -- API interception for `capprof run` on Windows, WAP's
** job: the import address tables of the program's own modules (not those of
** system DLLs) are pointed at small stubs that time each call into the
** selected DLLs through asm/intercept_x64.asm. In every module LoadLibrary*
** and FreeLibrary are watched, so that modules loaded later are patched
** too, and CreateProcess* wrapped, so that child processes get the runtime.
** docs/windows.md explains it.
*/
#include <string.h>

#include "../win/win.h"
#include "../win/inject.h"
#include "../hooks/hotpath.h"
#include "intercept.h"
#include "../core/settings.h"

#ifndef PSAPI_VERSION
#  define PSAPI_VERSION 2      /* K32EnumProcessModules, in kernel32 */
#endif
#include <psapi.h>

/* One stub per (API, target address), in executable memory that is written
** once and then sealed read+execute. The code jumps to iat_trampoline with
** r11 = the stub; the trampoline reads target at STUB_TARGET (24). */
struct iat_stub {
  unsigned char code[24];  /* lea r11,[rip-7]; jmp [rip+0]; dq iat_trampoline */
  void *target;            /* the API's address as the slot held it, or a wrapper */
  uint32_t id;             /* API id (intercept registry); IAT_NO_ID: watched only */
  uint32_t copy;           /* bytes of home space and stack arguments to copy */
  uint32_t flags;          /* IAT_F_* */
  uint32_t pad_[5];
};
typedef char iat_stub_size_is_64[sizeof(struct iat_stub) == 64 ? 1 : -1];

#define IAT_NO_ID       0xFFFFFFFFu
#define IAT_F_RESCAN    1u      /* LoadLibrary*: patch new modules after it */
#define IAT_F_FORGET    2u      /* FreeLibrary*: forget unloaded modules after it */

#define COPY_DEFAULT    0x100u  /* home space + 28 stack arguments */
#define COPY_VARIADIC   0x800u  /* printf & co: up to 252 stack arguments */

#define POOL_BYTES      (4u << 20)    /* reserved; a pass that makes stubs takes whole pages */
#define INDEX_SLOTS     (1u << 15)    /* (target, id) -> stub, open addressing */
#define MAX_MODULES     1024

void iat_trampoline(void);

/* ---- state --------------------------------------------------------------- */

struct index_entry { void *target; struct iat_stub *stub; uint32_t id; };

static struct {
  int active;                       /* os_intercept_start succeeded */
  int gdi;                          /* GDI32 selected: batch limit 1 per thread */
  HMODULE self;                     /* the module holding the runtime */
  wchar_t windir[MAX_PATH];         /* modules under it are the system's */
  size_t windir_len;
  unsigned char *pool;              /* reserved stub memory */
  size_t pool_used;                 /* bytes handed out */
  size_t pass_start;                /* first byte of the pass not sealed yet */
  struct index_entry index[INDEX_SLOTS];
  uint32_t nstubs;
  HMODULE seen[MAX_MODULES];        /* modules at the last scan */
  DWORD nseen;
  uint64_t patched_slots;           /* slots pointed at stubs so far */
} iat;

static SRWLOCK pass_lock = SRWLOCK_INIT;

typedef LONG (NTAPI *loader_lock_fn)(ULONG, ULONG *, ULONG_PTR *);
typedef LONG (NTAPI *loader_unlock_fn)(ULONG, ULONG_PTR);
typedef DWORD (WINAPI *batch_limit_fn)(DWORD);
static loader_lock_fn lock_loader;
static loader_unlock_fn unlock_loader;
static batch_limit_fn set_batch_limit;

/* ---- names ----------------------------------------------------------------- */

static char lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c; }

static void lower_copy(char *dst, const char *src, size_t n)
{
  size_t i = 0;
  for (; src[i] && i + 1 < n; i++) dst[i] = lower(src[i]);
  dst[i] = '\0';
}

/* DLL name matches want: equal, or want ends in '*' and is a prefix.
** Case-insensitive. */
static int name_matches(const char *want, const char *dll)
{
  char d[64];
  lower_copy(d, dll, sizeof d);
  size_t w = strlen(want);
  if (w && want[w - 1] == '*') return strncmp(d, want, w - 1) == 0;
  return strcmp(d, want) == 0;
}

static int has_prefix(const char *s, const char *p)
{
  return strncmp(s, p, strlen(p)) == 0;
}

/* Functions never redirected, and why (the skip reasons of the dump):
**  - setjmp and its variants save the caller's context and return twice: a
**    frame of the trampoline in between would be gone at the second return;
**  - RtlCaptureContext returns its caller's context, which would be the
**    trampoline's, dead by the time the caller resumes it (libgcc's and the
**    C++ runtime's unwinders do exactly that);
**  - language-specific exception handlers are called by the dispatcher,
**    not by the program. */
static int excluded(const char *sym, uint32_t *reason)
{
  static const char *const twice[] = {
    "setjmp", "_setjmp", "_setjmp3", "_setjmpex", "__intrinsic_setjmp",
    "__intrinsic_setjmpex", "__mingw_setjmp", "RtlCaptureContext",
    "RtlCaptureContext2", "getcontext",
  };
  for (size_t i = 0; i < sizeof twice / sizeof twice[0]; i++)
    if (strcmp(sym, twice[i]) == 0) { *reason = CPD_SKIP_RETURNS_TWICE; return 1; }
  if (strcmp(sym, "__C_specific_handler") == 0 || has_prefix(sym, "__CxxFrameHandler") ||
      has_prefix(sym, "_except_handler") || has_prefix(sym, "__GSHandlerCheck") ||
      has_prefix(sym, "_GCC_specific_handler")) {
    *reason = CPD_SKIP_LIBRARY;
    return 1;
  }
  return 0;
}

/* Variadic functions may take many stack arguments: copy more for them. */
static uint32_t copy_bytes(const char *sym)
{
  if (strstr(sym, "printf") || strstr(sym, "scanf") || has_prefix(sym, "_execl") ||
      has_prefix(sym, "_spawnl") || has_prefix(sym, "execl") || has_prefix(sym, "spawnl") ||
      has_prefix(sym, "_wexecl") || has_prefix(sym, "_wspawnl"))
    return COPY_VARIADIC;
  return COPY_DEFAULT;
}

/* LoadLibrary* and FreeLibrary* from kernel32, kernelbase or the loader API
** set: after one returns, new modules are patched (IAT_F_RESCAN) or unloaded
** ones forgotten (IAT_F_FORGET). Watched even when not selected. */
static uint32_t loads_modules(const char *dll, const char *sym)
{
  uint32_t f = has_prefix(sym, "LoadLibrary") ? IAT_F_RESCAN :
               has_prefix(sym, "FreeLibrary") ? IAT_F_FORGET : 0;
  if (f && (name_matches("kernel32.dll", dll) || name_matches("kernelbase.dll", dll) ||
            name_matches("api-ms-win-core-libraryloader-*", dll)))
    return f;
  return 0;
}

/* ---- stubs ------------------------------------------------------------------- */

static uint32_t index_hash(const void *target, uint32_t id)
{
  uint64_t h = (uint64_t)(uintptr_t)target * UINT64_C(0x9E3779B97F4A7C15) ^ id;
  return (uint32_t)(h >> 40) & (INDEX_SLOTS - 1);
}

static struct index_entry *index_find(void *target, uint32_t id)
{
  uint32_t i = index_hash(target, id);
  for (uint32_t n = 0; n < INDEX_SLOTS; n++, i = (i + 1) & (INDEX_SLOTS - 1)) {
    struct index_entry *e = &iat.index[i];
    if (!e->stub || (e->target == target && e->id == id)) return e;
  }
  return NULL;
}

static int in_pool(const void *p)
{
  const unsigned char *c = p;
  return iat.pool && c >= iat.pool && c < iat.pool + POOL_BYTES;
}

/* The stub for (target, id), made on first use during a pass (writable
** until the pass seals it); NULL when the pool or the index is full. */
static struct iat_stub *stub_for(void *target, uint32_t id, const char *sym, uint32_t flags)
{
  struct index_entry *e = index_find(target, id);
  if (!e) return NULL;
  if (e->stub) return e->stub;
  if (iat.nstubs >= INDEX_SLOTS / 2 || iat.pool_used + sizeof(struct iat_stub) > POOL_BYTES)
    return NULL;
  size_t page = os_page_size();
  size_t end = iat.pool_used + sizeof(struct iat_stub);
  size_t have = (iat.pool_used + page - 1) / page * page;
  if (end > have && os_commit(iat.pool + have, page) != 0) return NULL;
  struct iat_stub *s = (struct iat_stub *)(iat.pool + iat.pool_used);
  static const unsigned char code[24] = {
    0x4C, 0x8D, 0x1D, 0xF9, 0xFF, 0xFF, 0xFF,       /* lea r11, [rip-7] */
    0xFF, 0x25, 0x00, 0x00, 0x00, 0x00,             /* jmp [rip+0] */
    0, 0, 0, 0, 0, 0, 0, 0,                         /* iat_trampoline */
    0xCC, 0xCC, 0xCC,
  };
  memcpy(s->code, code, sizeof code);
  void (*tramp)(void) = iat_trampoline;
  memcpy(s->code + 13, &tramp, sizeof tramp);
  s->target = target;
  s->id = id;
  s->copy = copy_bytes(sym);
  s->flags = flags;
  iat.pool_used = end;
  e->target = target;
  e->id = id;
  e->stub = s;
  iat.nstubs++;
  return s;
}

/* Make the stubs of this pass executable, read-only; the next pass starts
** on a fresh page. */
static void seal_pass(void)
{
  size_t page = os_page_size();
  size_t from = iat.pass_start, to = (iat.pool_used + page - 1) / page * page;
  if (to > from) {
    DWORD old;
    VirtualProtect(iat.pool + from, to - from, PAGE_EXECUTE_READ, &old);
    FlushInstructionCache(GetCurrentProcess(), iat.pool + from, to - from);
  }
  iat.pool_used = iat.pass_start = to;
}

/* ---- modules ------------------------------------------------------------------ */

/* Whether p is code: imported data (msvcrt's _fmode, _iob, ...) has a slot
** like a function's, which the program reads as the variable's address.
** The last region asked about is remembered: slots of one DLL mostly point
** into the same .text. */
static int is_code(const void *p)
{
  static const unsigned char *lo, *hi;
  static int exec;
  const unsigned char *c = p;
  if (c < lo || c >= hi) {
    MEMORY_BASIC_INFORMATION mbi;
    if (!VirtualQuery(p, &mbi, sizeof mbi)) return 0;
    lo = mbi.BaseAddress;
    hi = lo + mbi.RegionSize;
    exec = mbi.State == MEM_COMMIT &&
           (mbi.Protect & (PAGE_EXECUTE | PAGE_EXECUTE_READ | PAGE_EXECUTE_READWRITE |
                           PAGE_EXECUTE_WRITECOPY)) != 0;
  }
  return exec;
}

/* A DLL of the system (under the Windows directory) is left alone: as with
** WAP, calls between system DLLs are theirs, not the program's. The
** program itself is the program's wherever it lives (notepad.exe). */
static int system_module(HMODULE m)
{
  if (m == GetModuleHandleW(NULL)) return 0;
  wchar_t path[MAX_PATH];
  DWORD n = GetModuleFileNameW(m, path, MAX_PATH);
  if (!n || n >= MAX_PATH) return 1;
  if (n <= iat.windir_len) return 0;
  return _wcsnicmp(path, iat.windir, iat.windir_len) == 0 && path[iat.windir_len] == L'\\';
}

static const IMAGE_IMPORT_DESCRIPTOR *imports_of(const unsigned char *base)
{
  const IMAGE_DOS_HEADER *dos = (const IMAGE_DOS_HEADER *)base;
  if (dos->e_magic != IMAGE_DOS_SIGNATURE) return NULL;
  const IMAGE_NT_HEADERS *nt = (const IMAGE_NT_HEADERS *)(base + dos->e_lfanew);
  if (nt->Signature != IMAGE_NT_SIGNATURE ||
      nt->OptionalHeader.Magic != IMAGE_NT_OPTIONAL_HDR64_MAGIC ||
      nt->OptionalHeader.NumberOfRvaAndSizes <= IMAGE_DIRECTORY_ENTRY_IMPORT)
    return NULL;
  const IMAGE_DATA_DIRECTORY *d = &nt->OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_IMPORT];
  if (!d->VirtualAddress || !d->Size) return NULL;
  return (const IMAGE_IMPORT_DESCRIPTOR *)(base + d->VirtualAddress);
}

/* ntdll, kernel32 and kernelbase call each other through their import
** tables on the way to the system: never touched. */
static int core_module(HMODULE m)
{
  return m == GetModuleHandleW(L"ntdll.dll") || m == GetModuleHandleW(L"kernel32.dll") ||
         m == GetModuleHandleW(L"kernelbase.dll");
}

/* ---- following the processes the program starts ----------------------------- */

/* CreateProcessA/W are redirected in every module (system DLLs too: msvcrt's
** _spawn* and system(), shell32's ShellExecute) to a wrapper that starts the
** child suspended, loads capprof.dll into it as `capprof run` does, and
** resumes it unless the caller asked for it suspended. The child inherits
** the settings through the environment; one started with an environment
** block of its own would not have them, and is left alone, as are 32-bit
** children and programs with the runtime already. */
typedef BOOL (WINAPI *create_w_fn)(LPCWSTR, LPWSTR, LPSECURITY_ATTRIBUTES,
                                   LPSECURITY_ATTRIBUTES, BOOL, DWORD, LPVOID, LPCWSTR,
                                   LPSTARTUPINFOW, LPPROCESS_INFORMATION);
typedef BOOL (WINAPI *create_a_fn)(LPCSTR, LPSTR, LPSECURITY_ATTRIBUTES,
                                   LPSECURITY_ATTRIBUTES, BOOL, DWORD, LPVOID, LPCSTR,
                                   LPSTARTUPINFOA, LPPROCESS_INFORMATION);
static create_w_fn real_create_w;
static create_a_fn real_create_a;
static wchar_t self_path[MAX_PATH * 2];     /* capprof.dll, for the children */

static void follow(const PROCESS_INFORMATION *pi, DWORD flags, const void *env)
{
  DWORD e = GetLastError();
  BOOL wow = FALSE;
  if (!env && self_path[0] && !(IsWow64Process(pi->hProcess, &wow) && wow) &&
      !inject_has_runtime(pi->hProcess))
    inject_queue_load(pi->hProcess, pi->hThread, self_path);
  if (!(flags & CREATE_SUSPENDED)) ResumeThread(pi->hThread);
  SetLastError(e);
}

static BOOL WINAPI follow_create_w(LPCWSTR app, LPWSTR cmd, LPSECURITY_ATTRIBUTES pa,
                                   LPSECURITY_ATTRIBUTES ta, BOOL inherit, DWORD flags,
                                   LPVOID env, LPCWSTR dir, LPSTARTUPINFOW si,
                                   LPPROCESS_INFORMATION pi)
{
  BOOL ok = real_create_w(app, cmd, pa, ta, inherit, flags | CREATE_SUSPENDED, env, dir, si, pi);
  if (ok) follow(pi, flags, env);
  return ok;
}

static BOOL WINAPI follow_create_a(LPCSTR app, LPSTR cmd, LPSECURITY_ATTRIBUTES pa,
                                   LPSECURITY_ATTRIBUTES ta, BOOL inherit, DWORD flags,
                                   LPVOID env, LPCSTR dir, LPSTARTUPINFOA si,
                                   LPPROCESS_INFORMATION pi)
{
  BOOL ok = real_create_a(app, cmd, pa, ta, inherit, flags | CREATE_SUSPENDED, env, dir, si, pi);
  if (ok) follow(pi, flags, env);
  return ok;
}

/* The wrapper for an import of dll!sym, or NULL. */
static void *follow_wrapper(const char *dll, const char *sym)
{
  if (!name_matches("kernel32.dll", dll) && !name_matches("kernelbase.dll", dll) &&
      !name_matches("api-ms-win-core-processthreads-*", dll))
    return NULL;
  if (strcmp(sym, "CreateProcessW") == 0) return (void *)follow_create_w;
  if (strcmp(sym, "CreateProcessA") == 0) return (void *)follow_create_a;
  return NULL;
}

/* Remember the real function behind wrapper (the first slot's target); 0
** when this slot holds another address (a shim): that slot is not followed. */
static int follow_real(void *wrapper, void *cur)
{
  void **real = wrapper == (void *)follow_create_w ? (void **)&real_create_w
                                                   : (void **)&real_create_a;
  if (!*real) *real = cur;
  return *real == cur;
}

/* Slots waiting for their stubs to be sealed, then written (flush). */
struct pending {
  void **slot;
  void *target;          /* a stub, or a follow_* wrapper */
  const char *sym;       /* in the module's image (the loader lock is held) */
  char dll[64];          /* lower case */
};
#define PENDING_MAX 1024
static struct pending pend[PENDING_MAX];
static unsigned npend;

/* Seal the stubs made so far, then point the pending slots at them, each
** slot's page made writable for the store and protected again. */
static void flush(void)
{
  seal_pass();
  unsigned char *page = NULL;
  DWORD old = 0;
  uintptr_t mask = ~(uintptr_t)(os_page_size() - 1);
  for (unsigned i = 0; i < npend; i++) {
    unsigned char *p = (unsigned char *)((uintptr_t)pend[i].slot & mask);
    if (p != page) {
      if (page) VirtualProtect(page, os_page_size(), old, &old);
      page = VirtualProtect(p, os_page_size(), PAGE_READWRITE, &old) ? p : NULL;
    }
    if (!page) {
      intercept_skip(CPD_SKIP_PROTECT, pend[i].dll, pend[i].sym);
      continue;
    }
    InterlockedExchangePointer(pend[i].slot, pend[i].target);
    iat.patched_slots++;
  }
  if (page) VirtualProtect(page, os_page_size(), old, &old);
  npend = 0;
}

/* Why sym, imported from a selected DLL, is left alone (a CPD_SKIP_*), or
** 0. The portable list (intercept_unsafe) is made for a moved return
** address; this trampoline keeps a real frame that unwinders walk, so
** functions that unwind (longjmp, RaiseException, RtlUnwindEx, C++ throw)
** are timed here. Those that return twice or hand out their caller's
** context are not, nor the dispatcher's handlers (excluded). */
static uint32_t left_alone(const char *sym)
{
  uint32_t why = intercept_unsafe(sym);
  if (why == CPD_SKIP_UNWINDS) why = 0;
  if (!why) excluded(sym, &why);
  return why;
}

/* The ordinal import #n's name, "#n", in buf. */
static const char *ordinal_name(unsigned ord, char buf[16])
{
  char digits[8];
  unsigned k = 0;
  do digits[k++] = (char)('0' + ord % 10); while ((ord /= 10) && k < 7);
  buf[0] = '#';
  for (unsigned j = 0; j < k; j++) buf[1 + j] = digits[k - 1 - j];
  buf[1 + k] = '\0';
  return buf;
}

/* Queue the import slots of one module for patching; returns how many. A
** slot that already points into the pool (or at a wrapper) was patched
** before; imported data (not code) is left as it is. Library names are
** given in lower case, the way Windows compares them. In a system DLL
** (system != 0) only the watched functions are redirected: LoadLibrary*,
** FreeLibrary and CreateProcess*, never timed. */
static uint64_t patch_module(HMODULE mod, int system)
{
  const unsigned char *base = (const unsigned char *)mod;
  const IMAGE_IMPORT_DESCRIPTOR *imp = imports_of(base);
  uint64_t queued = 0;
  if (!imp) return 0;
  for (; imp->Name; imp++) {
    char dll[64];
    lower_copy(dll, (const char *)base + imp->Name, sizeof dll);
    /* Without the name table the names are gone (bound-only imports). */
    if (!imp->OriginalFirstThunk || !imp->FirstThunk) continue;
    int sel = !system && intercept_selects(dll);
    const IMAGE_THUNK_DATA64 *names = (const IMAGE_THUNK_DATA64 *)(base + imp->OriginalFirstThunk);
    void **slots = (void **)(base + imp->FirstThunk);
    for (size_t i = 0; names[i].u1.AddressOfData; i++) {
      char ordinal[16];
      const char *sym = IMAGE_SNAP_BY_ORDINAL64(names[i].u1.Ordinal)
          ? ordinal_name((unsigned)IMAGE_ORDINAL64(names[i].u1.Ordinal), ordinal)
          : (const char *)((const IMAGE_IMPORT_BY_NAME *)(base + names[i].u1.AddressOfData))->Name;
      uint32_t watch = loads_modules(dll, sym);
      void *wrapper = follow_wrapper(dll, sym);
      if (!sel && !watch && !wrapper) continue;
      void *cur = slots[i];
      if (!cur || in_pool(cur) || cur == wrapper || !is_code(cur)) continue;
      if (wrapper && !follow_real(wrapper, cur)) wrapper = NULL;   /* another target */
      if (!sel && !watch && !wrapper) continue;
      uint32_t id = IAT_NO_ID, why = sel ? left_alone(sym) : 0;
      if (sel && !why && (id = intercept_register(dll, sym)) == UINT32_MAX) why = CPD_SKIP_FULL;
      if (why) {
        intercept_skip(why, dll, sym);
        if (!watch && !wrapper) continue;
        id = IAT_NO_ID;                 /* still watched or followed, not timed */
      }
      void *target = wrapper;           /* followed, untimed: the wrapper itself */
      if (id != IAT_NO_ID || watch) {
        target = stub_for(wrapper ? wrapper : cur, id, sym, watch);
        if (!target) {
          if (sel) intercept_skip(CPD_SKIP_FULL, dll, sym);
          continue;
        }
      }
      pend[npend].slot = &slots[i];
      pend[npend].target = target;
      memcpy(pend[npend].dll, dll, sizeof dll);
      pend[npend].sym = sym;
      queued++;
      if (++npend == PENDING_MAX) flush();
    }
  }
  return queued;
}

/* A module already there at the previous scan has been patched. FreeLibrary
** is watched too (forget_unloaded), so that a module loaded later at the
** address of an unloaded one is not taken for it. */
static int seen_before(HMODULE m)
{
  for (DWORD i = 0; i < iat.nseen; i++)
    if (iat.seen[i] == m) return 1;
  return 0;
}

/* The two locks of a pass, always in this order: the loader lock (so that
** no module is unloaded under the pass; a LoadLibrary returning inside some
** DllMain comes here holding it already) and then pass_lock. The runtime's
** os_lock, which intercept_register takes, comes after both, as in the
** dump at DLL_PROCESS_DETACH. */
static ULONG_PTR pass_begin(void)
{
  ULONG_PTR cookie = 0;
  if (!lock_loader || lock_loader(0, NULL, &cookie) != 0) cookie = 0;
  AcquireSRWLockExclusive(&pass_lock);
  return cookie;
}

static void pass_end(ULONG_PTR cookie)
{
  ReleaseSRWLockExclusive(&pass_lock);
  if (cookie) unlock_loader(0, cookie);
}

/* Patch every new module that is not the system's nor the runtime's. The
** caller is between pass_begin and pass_end. */
static void scan(void)
{
  HMODULE mods[MAX_MODULES];
  DWORD need = 0;
  if (K32EnumProcessModules(GetCurrentProcess(), mods, sizeof mods, &need)) {
    DWORD count = need / sizeof(HMODULE);
    if (count > MAX_MODULES) count = MAX_MODULES;
    int changed = count != iat.nseen || memcmp(mods, iat.seen, count * sizeof(HMODULE)) != 0;
    if (changed) {
      uint64_t modules = 0, before = iat.patched_slots;
      for (DWORD i = 0; i < count; i++) {
        if (mods[i] == iat.self || seen_before(mods[i]) || core_module(mods[i])) continue;
        int system = system_module(mods[i]);
        uint64_t n = patch_module(mods[i], system);
        modules += n && !system;
      }
      flush();
      intercept_patched(modules, iat.patched_slots - before);
      K32EnumProcessModules(GetCurrentProcess(), iat.seen, sizeof iat.seen, &need);
      iat.nseen = need / sizeof(HMODULE) > MAX_MODULES ? MAX_MODULES : need / sizeof(HMODULE);
    }
    if (iat.gdi && !set_batch_limit) {
      HMODULE gdi = GetModuleHandleW(L"gdi32.dll");
      if (gdi) {
        set_batch_limit = (batch_limit_fn)(void (*)(void))GetProcAddress(gdi, "GdiSetBatchLimit");
        if (set_batch_limit) set_batch_limit(1);
      }
    }
  }
}

/* After a FreeLibrary returned: drop what is gone from the seen list. */
static void forget_unloaded(void)
{
  HMODULE mods[MAX_MODULES];
  DWORD need = 0, k = 0;
  if (!K32EnumProcessModules(GetCurrentProcess(), mods, sizeof mods, &need)) return;
  DWORD count = need / sizeof(HMODULE) > MAX_MODULES ? MAX_MODULES : need / sizeof(HMODULE);
  for (DWORD i = 0; i < iat.nseen; i++)
    for (DWORD j = 0; j < count; j++)
      if (mods[j] == iat.seen[i]) {
        iat.seen[k++] = iat.seen[i];
        break;
      }
  iat.nseen = k;
}

/* After a LoadLibrary* or FreeLibrary returned: patch what it brought in,
** forget what it took away. */
static void rescan(uint32_t flags)
{
  os_errsave e = os_save_errors();
  ULONG_PTR cookie = pass_begin();
  if (flags & IAT_F_FORGET) forget_unloaded();
  else scan();
  pass_end(cookie);
  os_restore_errors(e);
}

/* ---- the trampoline's workers --------------------------------------------------- */

/* The frame's sp follows the hooks' convention (CP_FRAME_ADDRESS: the
** callee's CFA minus two slots; the CFA is slot + 8), so that a frame of a
** -finstrument-functions caller and its API calls compare as they should.
** An API frame with the same sp as this call is a sibling that never
** returned (an exception or longjmp went through it): popped here. */
size_t iat_enter(struct iat_stub *s, uintptr_t slot)
{
  uintptr_t stack_base = WIN_TEB_READ(8);   /* NT_TIB.StackBase */
  size_t n = s->copy;
  if (stack_base > slot + 8 && stack_base - (slot + 8) < n)
    n = (size_t)(stack_base - (slot + 8)) & ~(size_t)15;
  if (n < 32) n = 32;
  if (s->id == IAT_NO_ID) return n;
  struct cp_thread *t = win_tls_get();
  if (CP_UNLIKELY(!t)) t = runtime_thread_slow();
  if (CP_UNLIKELY(t->gate != cp_g.gate) && runtime_sync(t)) return n;
  uintptr_t sp = slot - 8;
  struct cp_frame *f = t->top;
  if (CP_UNLIKELY(f->sp <= sp)) {
    uint64_t now = cp_tnow(t);
    f = calltree_unwind(t, sp, now);
    while (f > t->frames && f->sp == sp && CPD_KEY_IS_API(t->nodes[f->node].key)) {
      calltree_charge_frame(t, f, now);
      t->top = --f;
    }
  }
  cp_hot_enter(t, CPD_KEY_API | s->id, sp, 0);
  return n;
}

void iat_exit(struct iat_stub *s, uintptr_t slot)
{
  if (s->id != IAT_NO_ID) {
    struct cp_thread *t = win_tls_get();
    if (t && !(CP_UNLIKELY(t->gate != cp_g.gate) && runtime_sync(t)))
      cp_hot_exit(t, CPD_KEY_API | s->id, slot - 8, 1);
  }
  if (CP_UNLIKELY(s->flags)) rescan(s->flags);
}

/* ---- set-up ------------------------------------------------------------------- */

/* Each thread gets a GDI batch limit of one when GDI32 is profiled (WAP did
** this): otherwise GDI queues calls and the one that flushes the batch is
** billed for all of them. The limit is per thread; the TLS callback calls
** this at DLL_THREAD_ATTACH. */
void iat_thread_attach(void)
{
  if (iat.active && set_batch_limit) set_batch_limit(1);
}

/* Tell the launcher (`capprof run`, tools/launch/launch_win.c) that the runtime runs
** in this process: it passed an inheritable event's handle value in
** CAPPROF_RUN_EVENT. The variable is removed, so that a program this one
** starts does not signal a handle value that means something else there. */
void iat_run_ready(void)
{
  const char *v = settings_str(SET_RUN_EVENT);
  if (!v || !*v) return;
  const char *name = settings_name(SET_RUN_EVENT);
  wchar_t wname[64];
  size_t i = 0;
  for (; name[i] && i + 1 < 64; i++) wname[i] = (wchar_t)name[i];   /* ASCII */
  wname[i] = L'\0';
  SetEnvironmentVariableW(wname, NULL);
  uint64_t h = 0;
  for (; *v >= '0' && *v <= '9'; v++) h = h * 10 + (uint64_t)(*v - '0');
  if (h && !*v) SetEvent((HANDLE)(uintptr_t)h);
}

static CP_NOINLINE CP_NOINSTR void cal_plain(void)
{
  CP_BARRIER();
}

/* Called once by intercept_start (runtime_init) when CAPPROF_API is set:
** in capprof.dll loaded by `capprof run`, that is under the loader lock of
** its DllMain, where patching is allowed (no thread is created, nothing is
** loaded). Returns CPD_IS_*. */
int os_intercept_start(void)
{
  HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
  if (ntdll && !lock_loader) {
    unlock_loader = (loader_unlock_fn)(void (*)(void))GetProcAddress(ntdll, "LdrUnlockLoaderLock");
    lock_loader = unlock_loader ? (loader_lock_fn)(void (*)(void))
        GetProcAddress(ntdll, "LdrLockLoaderLock") : NULL;
  }
  ULONG_PTR cookie = pass_begin();
  int rc = CPD_IS_ACTIVE;
  if (iat.active) goto out;
  iat.gdi = intercept_selects("gdi32.dll");
  GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS |
                     GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                     (LPCWSTR)(void *)os_intercept_start, &iat.self);
  DWORD k = GetModuleFileNameW(iat.self, self_path, MAX_PATH * 2);
  if (!k || k >= MAX_PATH * 2) self_path[0] = 0;
  /* The static library: the runtime's own calls to kernel32 go through the
  ** program's import table, which would then time the runtime itself (and
  ** recurse through QueryPerformanceCounter). Interception needs the
  ** runtime in capprof.dll. */
  if (iat.self == GetModuleHandleW(NULL)) {
    os_report("capprof: API interception needs capprof.dll; this program has the static "
              "runtime (libcapprof.a): only its compiler hooks are recorded");
    rc = CPD_IS_UNSUPPORTED;
    goto out;
  }
  UINT w = GetSystemWindowsDirectoryW(iat.windir, MAX_PATH);
  iat.windir_len = w < MAX_PATH ? w : 0;
  while (iat.windir_len && iat.windir[iat.windir_len - 1] == L'\\') iat.windir_len--;
  /* The calibration's stub first: an id of its own, never registered. */
  struct iat_stub *cal = NULL;
  iat.pool = os_reserve(POOL_BYTES);
  if (iat.pool) cal = stub_for((void *)cal_plain, 0xFFFFFFu, "", 0);
  if (!cal) {
    rc = CPD_IS_FAILED;
    goto out;
  }
  seal_pass();
  iat.active = 1;
  scan();
  pass_end(cookie);
  intercept_calibrate((void (*)(void))(void *)cal, cal_plain);
  return rc;
out:
  pass_end(cookie);
  return rc;
}
