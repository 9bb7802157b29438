/*
** os.c (Win32) -- the OS layer on Windows: VirtualAlloc reservations, the
** thread state pointer (a TLS slot read straight from the TEB) and the FLS
** thread-exit callback, QueryPerformanceCounter, ids and names, the module
** map with each image's CodeView (PDB 7.0) record, UTF-8 file names, and
** process start-up and exit. Only kernel32 is used, never LoadLibrary:
** hooks and the final dump may run under the loader lock.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "win.h"

#ifndef PSAPI_VERSION
#  define PSAPI_VERSION 2      /* K32EnumProcessModules, in kernel32 */
#endif
#include <psapi.h>

volatile DWORD win_tls_index = WIN_TLS_NONE;

static DWORD fls_index = FLS_OUT_OF_INDEXES;
static SRWLOCK runtime_lock = SRWLOCK_INIT;
static int lock_abandoned;          /* os_lock gave up waiting during exit */

typedef BOOLEAN (NTAPI *shutdown_fn)(void);
typedef HRESULT (WINAPI *thread_desc_fn)(HANDLE, PWSTR *);
typedef LONG (NTAPI *query_process_fn)(HANDLE, int, void *, ULONG, ULONG *);
static shutdown_fn dll_shutdown_in_progress;   /* ntdll, may be NULL */
static thread_desc_fn get_thread_description;  /* kernel32, Windows 10+ */
static query_process_fn query_process;         /* ntdll */

/* ---- memory ------------------------------------------------------------ */

void *os_reserve(size_t size)
{
  return VirtualAlloc(NULL, size, MEM_RESERVE, PAGE_NOACCESS);
}

int os_commit(void *addr, size_t size)
{
  return VirtualAlloc(addr, size, MEM_COMMIT, PAGE_READWRITE) ? 0 : CAPPROF_ENOMEM;
}

/* Every caller releases a whole reservation. */
void os_release(void *addr, size_t size)
{
  (void)size;
  if (addr) VirtualFree(addr, 0, MEM_RELEASE);
}

void os_decommit(void *addr, size_t size)
{
  VirtualFree(addr, size, MEM_DECOMMIT);
}

size_t os_page_size(void)
{
  static size_t page;
  if (!page) {
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    page = si.dwPageSize;
  }
  return page;
}

/* ---- threads ----------------------------------------------------------- */

/* Allocate the TLS index once, without waiting: a thread that loses the
** race frees its own index. */
static DWORD tls_index(void)
{
  DWORD i = win_tls_index;
  if (i != WIN_TLS_NONE) return i;
  DWORD mine = TlsAlloc();
  if (mine == TLS_OUT_OF_INDEXES) return WIN_TLS_NONE;
  LONG prev = InterlockedCompareExchange((volatile LONG *)&win_tls_index,
                                         (LONG)mine, (LONG)WIN_TLS_NONE);
  if ((DWORD)prev != WIN_TLS_NONE) {
    TlsFree(mine);
    return (DWORD)prev;
  }
  return mine;
}

struct cp_thread *os_get_thread(void) { return win_tls_get(); }

void os_set_thread(struct cp_thread *t)
{
  DWORD i = tls_index();
  if (i != WIN_TLS_NONE) TlsSetValue(i, t);
}

/* FLS callbacks run at thread exit (and for fibers at fiber deletion) before
** DLL_THREAD_DETACH, so a late hook in a DllMain still finds the state. */
static const struct os_callbacks *callbacks;   /* the core's (os_process_init) */
/* The core's view of the process (os_process_init): a blank one before. */
static struct os_process no_process;
static struct os_process *proc = &no_process;

static void WINAPI fls_exit_cb(void *p)
{
  if (p) callbacks->thread_exit(p);
}

int os_thread_register(struct cp_thread *t)
{
  if (fls_index == FLS_OUT_OF_INDEXES) return CAPPROF_ENOMEM;
  return FlsSetValue(fls_index, t) ? 0 : CAPPROF_ENOMEM;
}

uint64_t os_thread_id(void) { return GetCurrentThreadId(); }
uint64_t os_process_id(void) { return GetCurrentProcessId(); }

/* PROCESS_BASIC_INFORMATION, whose last-but-one field is the parent's id. */
struct basic_info { void *r0; void *peb; ULONG_PTR r2[2]; ULONG_PTR pid; ULONG_PTR ppid; };

uint64_t os_parent_process_id(void)
{
  struct basic_info bi;
  if (!query_process) return 0;
  if (query_process(GetCurrentProcess(), 0, &bi, sizeof bi, NULL) != 0) return 0;
  return bi.ppid;
}

static int wide_path(const char *path, wchar_t *w, int n);

static size_t to_utf8(const wchar_t *w, int wlen, char *buf, size_t n)
{
  if (!n) return 0;
  int k = WideCharToMultiByte(CP_UTF8, 0, w, wlen, buf, (int)n - 1, NULL, NULL);
  if (k < 0) k = 0;
  buf[k] = '\0';
  return (size_t)k;
}

/* The description set with SetThreadDescription (Windows 10 1607+). */
int os_thread_name(uint64_t tid, char *buf, size_t n)
{
  if (!get_thread_description || !n) return CAPPROF_ENOENT;
  HANDLE h = OpenThread(THREAD_QUERY_LIMITED_INFORMATION, FALSE, (DWORD)tid);
  if (!h) return CAPPROF_ENOENT;
  PWSTR w = NULL;
  int rc = CAPPROF_ENOENT;
  if (SUCCEEDED(get_thread_description(h, &w)) && w) {
    if (w[0]) {
      to_utf8(w, (int)wcslen(w), buf, n);
      rc = 0;
    }
    LocalFree(w);
  }
  CloseHandle(h);
  return rc;
}

/* During ExitProcess every other thread is already gone; one that held the
** lock never releases it, so give it 200 ms and then go on without it. */
void os_lock(void)
{
  if (TryAcquireSRWLockExclusive(&runtime_lock)) return;
  if (!win_shutting_down()) {
    AcquireSRWLockExclusive(&runtime_lock);
    return;
  }
  for (int i = 0; i < 200; i++) {
    Sleep(1);
    if (TryAcquireSRWLockExclusive(&runtime_lock)) return;
  }
  lock_abandoned = 1;
}

void os_unlock(void)
{
  if (lock_abandoned) {
    lock_abandoned = 0;
    return;
  }
  ReleaseSRWLockExclusive(&runtime_lock);
}

/* Windows has no signals; os_lock already gives up during ExitProcess. */
int os_lock_at_exit(void)
{
  os_lock();
  return 0;
}

int win_shutting_down(void)
{
  return dll_shutdown_in_progress && dll_shutdown_in_progress();
}

/* ---- clocks ------------------------------------------------------------- */

static uint64_t qpc_freq(void)
{
  static uint64_t f;
  if (!f) {
    LARGE_INTEGER li;
    QueryPerformanceFrequency(&li);
    f = (uint64_t)li.QuadPart;
  }
  return f;
}

uint64_t os_ticks(void)
{
  LARGE_INTEGER li;
  QueryPerformanceCounter(&li);
  return (uint64_t)li.QuadPart;
}

uint32_t os_ticks_source(void) { return CPD_CLOCK_QPC; }

uint64_t os_monotonic_ns(void)
{
  uint64_t t = os_ticks(), f = qpc_freq();
  return t / f * 1000000000u + t % f * 1000000000u / f;
}

#define FILETIME_UNIX_EPOCH UINT64_C(116444736000000000)   /* 1970 in 100 ns */

uint64_t os_realtime_ns(void)
{
  FILETIME ft;
  GetSystemTimePreciseAsFileTime(&ft);
  uint64_t v = (uint64_t)ft.dwHighDateTime << 32 | ft.dwLowDateTime;
  return (v - FILETIME_UNIX_EPOCH) * 100u;
}

void os_format_time(uint64_t realtime_ns, char *buf, size_t n)
{
  uint64_t v = realtime_ns / 100u + FILETIME_UNIX_EPOCH;
  FILETIME ft = { (DWORD)v, (DWORD)(v >> 32) }, local;
  SYSTEMTIME st;
  if (!FileTimeToLocalFileTime(&ft, &local) || !FileTimeToSystemTime(&local, &st)) {
    if (n) buf[0] = '\0';
    return;
  }
  snprintf(buf, n, "%04u%02u%02u-%02u%02u%02u", st.wYear, st.wMonth, st.wDay,
           st.wHour, st.wMinute, st.wSecond);
}

/* ---- errors, environment ------------------------------------------------ */

int os_cancel_off(void) { return 0; }
void os_cancel_restore(int old) { (void)old; }

os_errsave os_save_errors(void)
{
  os_errsave s = { errno, GetLastError() };
  return s;
}

void os_restore_errors(os_errsave s)
{
  errno = s.err;
  SetLastError((DWORD)s.winerr);
}

/* Not from a cryptographic source (that needs bcrypt.dll): the high-
** resolution counter, ids and an address, mixed by dump_write. */
int os_random(void *buf, size_t n)
{
  LARGE_INTEGER c;
  QueryPerformanceCounter(&c);
  uint64_t v[3] = { (uint64_t)c.QuadPart,
                    (uint64_t)GetCurrentProcessId() << 32 | GetCurrentThreadId(),
                    (uint64_t)(uintptr_t)&c };
  memset(buf, 0, n);
  memcpy(buf, v, n < sizeof v ? n : sizeof v);
  return CAPPROF_EIO;            /* not random: the caller mixes its own */
}

/* No setuid on Windows: a process's environment is its own user's. */
int os_is_privileged(void) { return 0; }

/* Read with the API rather than getenv: the C runtime may not be initialised
** yet when the first hook fires. Values are UTF-8, in a ring of buffers: each
** stays valid for the next three calls, enough for runtime.c's use. */
int os_cwd(char *buf, size_t n)
{
  wchar_t w[1024];
  DWORD k = GetCurrentDirectoryW(1024, w);
  if (k == 0 || k >= 1024) return -1;
  return to_utf8(w, (int)k, buf, n) ? 0 : -1;   /* 0: it did not fit */
}

const char *os_getenv(const char *name)
{
  static char ring[4][1024];
  static LONG next;
  wchar_t wname[64], wval[1024];
  if (!MultiByteToWideChar(CP_UTF8, 0, name, -1, wname, 64)) return NULL;
  DWORD k = GetEnvironmentVariableW(wname, wval, 1024);
  if (k == 0 || k >= 1024) return NULL;
  char *buf = ring[(DWORD)InterlockedIncrement(&next) & 3u];
  to_utf8(wval, (int)k, buf, sizeof ring[0]);
  return buf;
}

void os_report(const char *msg)
{
  HANDLE h = GetStdHandle(STD_ERROR_HANDLE);
  DWORD w;
  if (!h || h == INVALID_HANDLE_VALUE) return;
  WriteFile(h, msg, (DWORD)strlen(msg), &w, NULL);
  WriteFile(h, "\r\n", 2, &w, NULL);
}

/* Variables whose name starts with prefix (settings.c warns about unknown
** CAPPROF_* names); names as UTF-8, cut at 255 bytes. */
void os_env_names(const char *prefix, void (*fn)(const char *name, size_t len, void *arg),
                  void *arg)
{
  wchar_t *env = GetEnvironmentStringsW();
  if (!env) return;
  size_t k = strlen(prefix);
  for (wchar_t *e = env; *e; e += wcslen(e) + 1) {
    const wchar_t *eq = e[0] ? wcschr(e + 1, L'=') : NULL;   /* "=C:=..." entries */
    int wn = eq ? (int)(eq - e) : (int)wcslen(e);
    char name[256];
    int n = WideCharToMultiByte(CP_UTF8, 0, e, wn, name, (int)sizeof name - 1, NULL, NULL);
    if (n <= 0 || (size_t)n < k || memcmp(name, prefix, k) != 0) continue;
    fn(name, (size_t)n, arg);
  }
  FreeEnvironmentStringsW(env);
}

/* Append the dump's full path to the file log names (CAPPROF_RUN_LOG, set
** by `capprof run`, which names the dumps at the end). One WriteFile on a
** handle opened for appending only: lines of several processes do not mix. */
void os_run_log_to(const char *log_utf8, const char *path)
{
  wchar_t log[MAX_PATH * 2], wpath[MAX_PATH * 2], full[MAX_PATH * 2];
  if (!log_utf8 || !*log_utf8 || wide_path(log_utf8, log, MAX_PATH * 2) != 0) return;
  if (wide_path(path, wpath, MAX_PATH * 2) != 0) return;
  DWORD n = GetFullPathNameW(wpath, MAX_PATH * 2, full, NULL);
  if (!n || n >= MAX_PATH * 2) return;
  char line[MAX_PATH * 6 + 2];
  size_t len = to_utf8(full, (int)n, line, sizeof line - 2);
  line[len++] = '\n';
  HANDLE h = CreateFileW(log, FILE_APPEND_DATA, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL,
                         OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
  if (h == INVALID_HANDLE_VALUE) return;
  DWORD w;
  WriteFile(h, line, (DWORD)len, &w, NULL);
  CloseHandle(h);
}

/* Windows has no signal stacks: no stack pointer is ever on one. */
int os_on_alt_stack(uintptr_t sp)
{
  (void)sp;
  return 0;
}

/* ---- process ------------------------------------------------------------- */

/* Split the command line by the rules of CommandLineToArgvW (which lives in
** shell32, not loadable here) into NUL-separated UTF-8 arguments. */
static void read_cmdline(void)
{
  const wchar_t *s = GetCommandLineW();
  size_t cap = 64 * 1024;
  char *out = os_reserve(cap);
  if (!s || !out || os_commit(out, cap) != 0) return;
  size_t len = 0;
  wchar_t arg[4096];
  int first = 1;
  while (*s) {
    while (*s == L' ' || *s == L'\t') s++;
    if (!*s) break;
    size_t k = 0;
    int quoted = 0;
    while (*s && (quoted || (*s != L' ' && *s != L'\t'))) {
      if (first) {                      /* program name: quotes only */
        if (*s == L'"') quoted = !quoted;
        else if (k < 4095) arg[k++] = *s;
        s++;
        continue;
      }
      size_t bs = 0;
      while (*s == L'\\') { bs++; s++; }
      if (*s == L'"') {
        for (size_t i = 0; i < bs / 2 && k < 4095; i++) arg[k++] = L'\\';
        if (bs % 2) { if (k < 4095) arg[k++] = L'"'; s++; }
        else if (quoted && s[1] == L'"') { if (k < 4095) arg[k++] = L'"'; s += 2; }
        else { quoted = !quoted; s++; }
      } else {
        for (size_t i = 0; i < bs && k < 4095; i++) arg[k++] = L'\\';
        if (*s && (quoted || (*s != L' ' && *s != L'\t'))) {
          if (k < 4095) arg[k++] = *s;
          s++;
        }
      }
    }
    first = 0;
    if (len && len < cap) out[len++] = '\0';
    if (len + 4 * k + 1 >= cap) break;
    len += to_utf8(arg, (int)k, out + len, cap - len);
  }
  proc->cmdline = out;
  proc->cmdline_len = len;
}

/* Find the optional APIs, in modules that are always loaded. hooks.c calls
** this from the start-up initialiser before runtime_init takes os_lock, so
** that the loader's own locks are not wanted while os_lock is held (a thread
** in DllMain holds the loader lock and may wait for os_lock); only a hook
** that fires before that initialiser gets here under os_lock. */
void win_resolve_apis(void)
{
  static volatile LONG done;
  if (done) return;
  HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
  HMODULE k32 = GetModuleHandleW(L"kernel32.dll");
  HMODULE kbase = GetModuleHandleW(L"kernelbase.dll");
  if (ntdll) {
    dll_shutdown_in_progress = (shutdown_fn)(void (*)(void))
        GetProcAddress(ntdll, "RtlDllShutdownInProgress");
    query_process = (query_process_fn)(void (*)(void))
        GetProcAddress(ntdll, "NtQueryInformationProcess");
  }
  /* kernelbase has the implementation; kernel32's entry is a forwarder. */
  if (kbase) get_thread_description = (thread_desc_fn)(void (*)(void))
      GetProcAddress(kbase, "GetThreadDescription");
  if (!get_thread_description && k32) get_thread_description = (thread_desc_fn)
      (void (*)(void))GetProcAddress(k32, "GetThreadDescription");
  done = 1;
}

void os_process_init(const struct os_callbacks *cb, struct os_process *process)
{
  callbacks = cb;
  proc = process;
  wchar_t w[1024];
  DWORD n = K32GetModuleFileNameExW(GetCurrentProcess(), NULL, w, 1024);
  to_utf8(w, n < 1024 ? (int)n : 0, proc->exe, sizeof proc->exe);
  const char *base = proc->exe;
  for (const char *p = proc->exe; *p; p++)
    if (*p == '\\' || *p == '/') base = p + 1;
  size_t len = strlen(base);
  if (len > 4 && _stricmp(base + len - 4, ".exe") == 0) len -= 4;   /* app.<pid>.capprof */
  if (len >= sizeof proc->progname) len = sizeof proc->progname - 1;
  memcpy(proc->progname, base, len);
  proc->progname[len] = '\0';
  read_cmdline();
  win_resolve_apis();
  fls_index = FlsAlloc(fls_exit_cb);
  tls_index();
}

/* At exit, after the final dump: free the FLS index so that its callback,
** which lives in this module, is never called after a FreeLibrary. */
void win_process_exit(void)
{
  if (fls_index != FLS_OUT_OF_INDEXES) {
    DWORD i = fls_index;
    fls_index = FLS_OUT_OF_INDEXES;
    FlsFree(i);
  }
}

/* ---- modules -------------------------------------------------------------- */

/* Copy n bytes at addr of this process into buf; 0 or -1. Through
** ReadProcessMemory, so that a module unloaded meanwhile by another thread
** gives an error instead of a fault. */
static int peek(const unsigned char *addr, void *buf, size_t n)
{
  SIZE_T got = 0;
  return ReadProcessMemory(GetCurrentProcess(), addr, buf, n, &got) && got == n ? 0 : -1;
}

/* A copy of a module's CodeView record: "RSDS", GUID, age, PDB path. */
struct codeview { unsigned char bytes[24 + MAX_PATH * 3]; };

/* Fill m->size and, from the image's debug directory, m->id (GUID then age,
** as stored) and m->debug_path, both pointing into cv. */
static void find_codeview(const unsigned char *base, struct cp_module *m, struct codeview *cv)
{
  IMAGE_DOS_HEADER dos;
  IMAGE_NT_HEADERS nt;
  if (peek(base, &dos, sizeof dos) || dos.e_magic != IMAGE_DOS_SIGNATURE) return;
  if (peek(base + dos.e_lfanew, &nt, sizeof nt) || nt.Signature != IMAGE_NT_SIGNATURE) return;
  m->size = nt.OptionalHeader.SizeOfImage;
  if (nt.OptionalHeader.NumberOfRvaAndSizes <= IMAGE_DIRECTORY_ENTRY_DEBUG) return;
  IMAGE_DATA_DIRECTORY dd = nt.OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_DEBUG];
  if (!dd.VirtualAddress || dd.Size > m->size) return;
  for (size_t i = 0; i < dd.Size / sizeof(IMAGE_DEBUG_DIRECTORY) && i < 32; i++) {
    IMAGE_DEBUG_DIRECTORY d;
    if (peek(base + dd.VirtualAddress + i * sizeof d, &d, sizeof d)) return;
    if (d.Type != IMAGE_DEBUG_TYPE_CODEVIEW || !d.AddressOfRawData) continue;
    if (d.SizeOfData < 24 || d.AddressOfRawData + d.SizeOfData > m->size) continue;
    size_t n = d.SizeOfData < sizeof cv->bytes ? d.SizeOfData : sizeof cv->bytes - 1;
    if (peek(base + d.AddressOfRawData, cv->bytes, n)) continue;
    if (memcmp(cv->bytes, "RSDS", 4) != 0) continue;
    cv->bytes[n] = 0;
    m->id_kind = CPD_MODID_PDB70;
    m->id_len = 20;
    m->id = cv->bytes + 4;
    m->debug_path = n > 24 && cv->bytes[24] ? (const char *)cv->bytes + 24 : NULL;
    return;
  }
}

/* The psapi functions (in kernel32 as K32*) read the loader's lists the way
** a debugger would, without the loader lock: the dump holds os_lock, and a
** thread in DllMain (holding the loader lock) may be waiting for it. */
int os_modules(os_module_fn fn, void *ctx)
{
  HMODULE mods[1024];
  DWORD need = 0;
  HANDLE self = GetCurrentProcess();
  if (!K32EnumProcessModules(self, mods, sizeof mods, &need)) return CAPPROF_EIO;
  DWORD count = need / sizeof(HMODULE);
  if (count > 1024) count = 1024;
  for (DWORD i = 0; i < count; i++) {
    wchar_t w[1024];
    char path[3 * 1024];
    struct codeview cv;
    DWORD n = K32GetModuleFileNameExW(self, mods[i], w, 1024);
    if (!n) continue;                       /* unloaded meanwhile */
    to_utf8(w, n < 1024 ? (int)n : 0, path, sizeof path);
    struct cp_module m = { 0 };
    m.path = path;
    m.base = (uint64_t)(uintptr_t)mods[i];
    find_codeview((const unsigned char *)mods[i], &m, &cv);
    if (!m.size) continue;
    int rc = fn(&m, ctx);
    if (rc) return rc;
  }
  return 0;
}

/* ---- files ----------------------------------------------------------------- */

static int map_error(DWORD e)
{
  switch (e) {
  case ERROR_FILE_EXISTS: case ERROR_ALREADY_EXISTS: return CAPPROF_EEXIST;
  case ERROR_FILE_NOT_FOUND: case ERROR_PATH_NOT_FOUND: return CAPPROF_ENOENT;
  case ERROR_NOT_ENOUGH_MEMORY: case ERROR_OUTOFMEMORY: return CAPPROF_ENOMEM;
  case ERROR_INVALID_NAME: case ERROR_FILENAME_EXCED_RANGE:
  case ERROR_INVALID_PARAMETER: return CAPPROF_EINVAL;
  case ERROR_ACCESS_DENIED: case ERROR_WRITE_PROTECT: case ERROR_SHARING_VIOLATION:
    return CAPPROF_EACCES;
  case ERROR_DISK_FULL: case ERROR_HANDLE_DISK_FULL: return CAPPROF_ENOSPC;
  case ERROR_TOO_MANY_OPEN_FILES: return CAPPROF_EMFILE;
  default: return CAPPROF_EIO;
  }
}

/* UTF-8 to a wide path; 0 or CAPPROF_EINVAL. */
static int wide_path(const char *path, wchar_t *w, int n)
{
  return MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, w, n)
             ? 0 : CAPPROF_EINVAL;
}

int os_file_create(const char *path, os_file *f)
{
  wchar_t w[MAX_PATH * 4];
  int rc = wide_path(path, w, MAX_PATH * 4);
  if (rc) return rc;
  HANDLE h = CreateFileW(w, GENERIC_WRITE, FILE_SHARE_READ, NULL, CREATE_NEW,
                         FILE_ATTRIBUTE_NORMAL, NULL);
  if (h == INVALID_HANDLE_VALUE) return map_error(GetLastError());
  *f = (os_file)h;
  return 0;
}

int os_file_write(os_file f, const void *buf, size_t n)
{
  const char *p = buf;
  while (n) {
    DWORD chunk = n > 0x40000000u ? 0x40000000u : (DWORD)n, w = 0;
    if (!WriteFile((HANDLE)f, p, chunk, &w, NULL) || w == 0) return map_error(GetLastError());
    p += w;
    n -= w;
  }
  return 0;
}

/* Like pwrite: the file position is left where it was (a positioned
** WriteFile on a synchronous handle moves it, so it is put back). */
int os_file_write_at(os_file f, const void *buf, size_t n, uint64_t off)
{
  LARGE_INTEGER zero = { 0 }, pos;
  if (!SetFilePointerEx((HANDLE)f, zero, &pos, FILE_CURRENT)) return map_error(GetLastError());
  const char *p = buf;
  int rc = 0;
  while (n && !rc) {
    OVERLAPPED ov;
    memset(&ov, 0, sizeof ov);
    ov.Offset = (DWORD)off;
    ov.OffsetHigh = (DWORD)(off >> 32);
    DWORD chunk = n > 0x40000000u ? 0x40000000u : (DWORD)n, w = 0;
    if (!WriteFile((HANDLE)f, p, chunk, &w, &ov) || w == 0) rc = map_error(GetLastError());
    p += w;
    n -= w;
    off += w;
  }
  if (!SetFilePointerEx((HANDLE)f, pos, NULL, FILE_BEGIN) && !rc) rc = map_error(GetLastError());
  return rc;
}

int os_file_close(os_file f)
{
  return CloseHandle((HANDLE)f) ? 0 : map_error(GetLastError());
}

/* MoveFileExW without MOVEFILE_REPLACE_EXISTING fails, atomically, when
** path exists; tmp is gone after a successful move. */
int os_file_publish(const char *tmp, const char *path)
{
  wchar_t wt[MAX_PATH * 4], wp[MAX_PATH * 4];
  int rc = wide_path(tmp, wt, MAX_PATH * 4);
  if (!rc) rc = wide_path(path, wp, MAX_PATH * 4);
  if (rc) return rc;
  if (MoveFileExW(wt, wp, 0)) return 0;
  return map_error(GetLastError());
}

void os_file_remove(const char *path)
{
  wchar_t w[MAX_PATH * 4];
  if (wide_path(path, w, MAX_PATH * 4) == 0) DeleteFileW(w);
}

int os_is_directory(const char *path)
{
  wchar_t w[MAX_PATH * 4];
  if (wide_path(path, w, MAX_PATH * 4) != 0) return 0;
  DWORD a = GetFileAttributesW(w);
  return a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_DIRECTORY);
}
