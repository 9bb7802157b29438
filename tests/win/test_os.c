/*
** test_os.c -- unit tests of the Win32 OS layer (src/win/os.c) and of the
** control API's output handling on Windows: memory, the TEB-read thread
** pointer, files (exclusive create, positioned writes, publish without
** replace), the module map's CodeView records, environment, clocks, errors.
*/
#include <errno.h>
#include <string.h>
#include <time.h>

#include "../../src/win/win.h"
#include "wintest.h"

static void test_memory(void)
{
  size_t page = os_page_size();
  WT_CHECK(page >= 4096 && (page & (page - 1)) == 0);
  unsigned char *p = os_reserve(1 << 20);
  WT_CHECK(p != NULL);
  if (!p) return;
  WT_CHECK_EQ_U64(os_commit(p + 65536, 65536), 0);
  int zero = 1;
  for (size_t i = 0; i < 65536; i++) zero &= p[65536 + i] == 0;
  WT_CHECK(zero);
  p[65536] = 1;
  p[131071] = 2;
  os_release(p, 1 << 20);
}

static struct cp_thread *seen_in_thread;

static DWORD WINAPI other_thread(void *arg)
{
  seen_in_thread = os_get_thread();
  os_set_thread(arg);
  return os_get_thread() == arg ? 0 : 1;
}

static void test_thread_pointer(void)
{
  struct cp_thread *mine = os_get_thread();   /* set by the first hook, or NULL */
  struct cp_thread fake;
  HANDLE h = CreateThread(NULL, 0, other_thread, &fake, 0, NULL);
  WT_CHECK(h != NULL);
  WaitForSingleObject(h, INFINITE);
  DWORD code = 1;
  GetExitCodeThread(h, &code);
  CloseHandle(h);
  WT_CHECK_EQ_U64(code, 0);
  WT_CHECK(seen_in_thread == NULL);        /* a new thread starts without state */
  WT_CHECK(os_get_thread() == mine);        /* and never sees another's */
  WT_CHECK(win_tls_index != WIN_TLS_NONE);
  WT_CHECK(win_tls_get() == TlsGetValue(win_tls_index));
}

static void test_files(void)
{
  char path[64], tmp[64];
  snprintf(path, sizeof path, "test_os.%lu.bin", GetCurrentProcessId());
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  DeleteFileA(path);
  DeleteFileA(tmp);
  os_file f;
  WT_CHECK_EQ_U64(os_file_create(tmp, &f), 0);
  os_file g;
  WT_CHECK_EQ_U64(os_file_create(tmp, &g), CAPPROF_EEXIST);
  WT_CHECK_EQ_U64(os_file_write(f, "AAAABBBB", 8), 0);
  WT_CHECK_EQ_U64(os_file_write_at(f, "xy", 2, 2), 0);   /* like pwrite */
  WT_CHECK_EQ_U64(os_file_write(f, "CC", 2), 0);          /* continues at 8 */
  WT_CHECK_EQ_U64(os_file_close(f), 0);
  WT_CHECK_EQ_U64(os_file_publish(tmp, path), 0);
  WT_CHECK(GetFileAttributesA(tmp) == INVALID_FILE_ATTRIBUTES);
  char buf[16] = { 0 };
  FILE *r = fopen(path, "rb");
  WT_CHECK(r != NULL);
  if (r) {
    WT_CHECK_EQ_U64(fread(buf, 1, sizeof buf, r), 10);
    fclose(r);
  }
  WT_CHECK(memcmp(buf, "AAxyBBBBCC", 10) == 0);
  /* Publishing never replaces. */
  WT_CHECK_EQ_U64(os_file_create(tmp, &f), 0);
  os_file_close(f);
  WT_CHECK_EQ_U64(os_file_publish(tmp, path), CAPPROF_EEXIST);
  WT_CHECK(GetFileAttributesA(tmp) != INVALID_FILE_ATTRIBUTES);
  os_file_remove(tmp);
  os_file_remove(path);
  WT_CHECK(GetFileAttributesA(path) == INVALID_FILE_ATTRIBUTES);
  WT_CHECK(os_is_directory("."));
  WT_CHECK(!os_is_directory("no-such-dir-here"));
  WT_CHECK_EQ_U64(os_file_create("no-such-dir-here\\x", &f), CAPPROF_ENOENT);
}

struct mod_seen { int count, exe_ok, k32; };

static int on_module(const struct cp_module *m, void *ctx)
{
  struct mod_seen *s = ctx;
  if (s->count++ == 0) {
    const unsigned char *base = (const unsigned char *)GetModuleHandleW(NULL);
    const IMAGE_NT_HEADERS *nt =
        (const IMAGE_NT_HEADERS *)(base + ((const IMAGE_DOS_HEADER *)base)->e_lfanew);
    s->exe_ok = m->base == (uint64_t)(uintptr_t)base &&
                m->size == nt->OptionalHeader.SizeOfImage &&
                m->id_kind == CPD_MODID_PDB70 && m->id_len == 20 &&
                strstr(m->path, "test_os") != NULL;
    if (!s->exe_ok)
      fprintf(stderr, "exe module: %s base %llx size %llx kind %u len %u\n", m->path,
              (unsigned long long)m->base, (unsigned long long)m->size, m->id_kind, m->id_len);
  }
  if (strstr(m->path, "kernel32") || strstr(m->path, "KERNEL32")) s->k32 = 1;
  return 0;
}

static void test_modules(void)
{
  struct mod_seen s = { 0, 0, 0 };
  WT_CHECK_EQ_U64(os_modules(on_module, &s), 0);
  WT_CHECK(s.count >= 3);
  WT_CHECK(s.exe_ok);        /* linked with --build-id: an RSDS record */
  WT_CHECK(s.k32);
}

static void test_env_errors(void)
{
  SetEnvironmentVariableW(L"CAPPROF_TEST_VAR", L"caf\u00e9");
  const char *v = os_getenv("CAPPROF_TEST_VAR");
  WT_CHECK(v && strcmp(v, "caf\xc3\xa9") == 0);
  WT_CHECK(os_getenv("CAPPROF_NO_SUCH_VAR") == NULL);
  errno = 17;
  SetLastError(99);
  os_errsave e = os_save_errors();
  errno = 0;
  SetLastError(0);
  os_restore_errors(e);
  int en = errno;
  DWORD le = GetLastError();
  WT_CHECK_EQ_U64(en, 17);
  WT_CHECK_EQ_U64(le, 99);
}

static void test_clocks(void)
{
  WT_CHECK_EQ_U64(os_ticks_source(), CPD_CLOCK_QPC);
  uint64_t a = os_monotonic_ns(), t0 = os_ticks();
  Sleep(20);
  uint64_t b = os_monotonic_ns(), t1 = os_ticks();
  WT_CHECK(b - a >= 15000000u && b - a < 2000000000u);
  WT_CHECK(t1 > t0);
  uint64_t now = os_realtime_ns(), unix_s = (uint64_t)time(NULL);
  WT_CHECK(now / 1000000000u + 2 >= unix_s && now / 1000000000u <= unix_s + 2);
  char buf[32];
  os_format_time(now, buf, sizeof buf);
  WT_CHECK_EQ_U64(strlen(buf), 15);
  WT_CHECK(buf[8] == '-');
  WT_CHECK(os_thread_id() == GetCurrentThreadId());
  WT_CHECK(os_process_id() == GetCurrentProcessId());
}

/* The output pattern and an explicit path, as on Linux. */
static void test_output(void)
{
  CreateDirectoryA("test_os_out", NULL);
  WT_CHECK_EQ_U64(capprof_set_output("test_os_out\\"), 0);
  char out[512] = "";
  WT_CHECK_EQ_U64(capprof_dump(NULL, out, sizeof out), 0);
  char want[64];
  snprintf(want, sizeof want, "test_os.%lu.capprof", GetCurrentProcessId());
  WT_CHECK(strstr(out, want) != NULL);
  WT_CHECK(strncmp(out, "test_os_out", 11) == 0);
  WT_CHECK(GetFileAttributesA(out) != INVALID_FILE_ATTRIBUTES);
  WT_CHECK_EQ_U64(capprof_dump(out, NULL, 0), CAPPROF_EEXIST);
  DeleteFileA(out);
  RemoveDirectoryA("test_os_out");
  WT_CHECK_EQ_U64(capprof_set_output(NULL), 0);
  WT_CHECK(strcmp(cp_g.proc.progname, "test_os") == 0);   /* no ".exe" in dump names */
  WT_CHECK(cp_g.proc.cmdline && cp_g.proc.cmdline_len > 0);
}

int main(void)
{
  WT_RUN(test_memory);
  WT_RUN(test_thread_pointer);
  WT_RUN(test_files);
  WT_RUN(test_modules);
  WT_RUN(test_env_errors);
  WT_RUN(test_clocks);
  WT_RUN(test_output);
  return wt_finish("test_os");
}
