/*
** launch_win.c -- the Windows launcher of `capprof run`: starts the program
** suspended, has its main thread load capprof.dll before the program's own
** code runs, resumes it, waits, and returns its exit code. The runtime in
** capprof.dll reads its settings from the environment (CAPPROF_API, ...).
*/
#ifndef WIN32_LEAN_AND_MEAN
#  define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "../../src/win/inject.h"
#include "launch/launch.h"
#include "model/tool.h"

/* Append one argument to the command line being built, quoted by the rules
** CommandLineToArgvW and the C runtimes use to split it again. */
static int append_arg(wchar_t *cmd, size_t cap, size_t *len, const wchar_t *arg)
{
  size_t n = *len;
  int quote = !*arg || wcspbrk(arg, L" \t\n\v\"") != NULL;
  if (n && n < cap) cmd[n++] = L' ';
  if (quote && n < cap) cmd[n++] = L'"';
  for (const wchar_t *p = arg;; p++) {
    size_t bs = 0;
    while (*p == L'\\') { bs++; p++; }
    if (!*p) {
      if (quote) bs *= 2;                /* before the closing quote */
    } else if (*p == L'"') {
      bs = bs * 2 + 1;                   /* escape them and the quote */
    }
    for (size_t i = 0; i < bs && n < cap; i++) cmd[n++] = L'\\';
    if (!*p) break;
    if (n < cap) cmd[n++] = *p;
  }
  if (quote && n < cap) cmd[n++] = L'"';
  if (n >= cap) return -1;
  cmd[n] = 0;
  *len = n;
  return 0;
}

/* The tool's argv is in the ANSI code page (MinGW and MSVC's main). */
static wchar_t *widen(const char *s)
{
  int n = MultiByteToWideChar(CP_ACP, 0, s, -1, NULL, 0);
  wchar_t *w = n > 0 ? malloc((size_t)n * sizeof *w) : NULL;
  if (w) MultiByteToWideChar(CP_ACP, 0, s, -1, w, n);
  return w;
}

static const char *win_error(DWORD e, char *buf, size_t n)
{
  DWORD k = FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS,
                           NULL, e, 0, buf, (DWORD)n, NULL);
  while (k && (buf[k - 1] == '\n' || buf[k - 1] == '\r' || buf[k - 1] == '.')) buf[--k] = 0;
  if (!k) snprintf(buf, n, "error %lu", (unsigned long)e);
  return buf;
}

/* capprof.dll beside capprof.exe (CAPPROF_DLL overrides it). */
static int find_runtime(wchar_t *path, DWORD n)
{
  DWORD k = GetEnvironmentVariableW(L"CAPPROF_DLL", path, n);
  if (k && k < n) return GetFileAttributesW(path) != INVALID_FILE_ATTRIBUTES ? 0 : -1;
  k = GetModuleFileNameW(NULL, path, n);
  if (!k || k >= n) return -1;
  wchar_t *slash = wcsrchr(path, L'\\');
  wchar_t *fwd = wcsrchr(path, L'/');
  if (fwd > slash) slash = fwd;
  size_t dir = slash ? (size_t)(slash - path) + 1 : 0;
  if (dir + 12 >= n) return -1;
  wcscpy(path + dir, L"capprof.dll");
  return GetFileAttributesW(path) != INVALID_FILE_ATTRIBUTES ? 0 : -1;
}

int run_log_create(char *path, size_t n)
{
  char dir[MAX_PATH];
  DWORD k = GetTempPathA(MAX_PATH, dir);
  if (!k || k >= MAX_PATH || n < MAX_PATH)
    return tool_error("run: no temporary directory (TEMP)");
  if (!GetTempFileNameA(dir, "cpr", 0, path)) {         /* creates it, empty */
    char err[256];
    return tool_error("run: cannot create a file in %s: %s", dir,
                      win_error(GetLastError(), err, sizeof err));
  }
  return 0;
}

int run_program(const struct run_opts *o)
{
  char err[256];
  wchar_t dll[MAX_PATH * 2];
  if (find_runtime(dll, MAX_PATH * 2) != 0)
    return tool_error("run: capprof.dll not found beside capprof.exe (set CAPPROF_DLL)"), 127;

  for (int i = 0; i < o->nenv; i++) {
    wchar_t *name = widen(o->env[i].name);
    wchar_t *value = o->env[i].value ? widen(o->env[i].value) : NULL;
    SetEnvironmentVariableW(name, value);
    free(name);
    free(value);
  }

  size_t cap = 32767, len = 0;            /* CreateProcess's limit */
  wchar_t *cmd = calloc(cap + 1, sizeof *cmd);
  if (!cmd) return tool_error("run: out of memory"), 127;
  for (char **a = o->argv; *a; a++) {
    wchar_t *w = widen(*a);
    if (!w || append_arg(cmd, cap, &len, w) != 0) {
      free(w);
      free(cmd);
      return tool_error("run: command line too long"), 127;
    }
    free(w);
  }

  /* The event the runtime sets when it starts (iat_run_ready), so that a
  ** program capprof.dll could not be loaded into is reported. */
  SECURITY_ATTRIBUTES sa = { sizeof sa, NULL, TRUE };
  HANDLE ready = CreateEventW(&sa, TRUE, FALSE, NULL);
  if (ready) {
    wchar_t v[32];
    swprintf(v, 32, L"%llu", (unsigned long long)(uintptr_t)ready);
    SetEnvironmentVariableW(RUN_WVAR(RUN_EVENT), v);
  }

  /* Standard handles are passed on as they are. */
  STARTUPINFOW si;
  memset(&si, 0, sizeof si);
  si.cb = sizeof si;
  si.dwFlags = STARTF_USESTDHANDLES;
  si.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
  si.hStdOutput = GetStdHandle(STD_OUTPUT_HANDLE);
  si.hStdError = GetStdHandle(STD_ERROR_HANDLE);
  HANDLE std[3] = { si.hStdInput, si.hStdOutput, si.hStdError };
  for (int i = 0; i < 3; i++)
    if (std[i] && std[i] != INVALID_HANDLE_VALUE)
      SetHandleInformation(std[i], HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT);

  PROCESS_INFORMATION pi;
  fflush(stdout);
  fflush(stderr);
  if (!CreateProcessW(NULL, cmd, NULL, NULL, TRUE, CREATE_SUSPENDED, NULL, NULL, &si, &pi)) {
    DWORD e = GetLastError();
    free(cmd);
    if (ready) CloseHandle(ready);
    tool_error("cannot run %s: %s", o->argv[0], win_error(e, err, sizeof err));
    return e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND ? 127 : 126;
  }
  free(cmd);

  BOOL wow = FALSE;
  const char *why = NULL;
  if (IsWow64Process(pi.hProcess, &wow) && wow)
    why = "it is a 32-bit program; capprof run loads the x64 capprof.dll only";
  else if (!inject_has_runtime(pi.hProcess)) {
    DWORD e = inject_queue_load(pi.hProcess, pi.hThread, dll);
    if (e) why = win_error(e, err, sizeof err);
  }
  if (why) {
    TerminateProcess(pi.hProcess, 126);
    CloseHandle(pi.hThread);
    CloseHandle(pi.hProcess);
    if (ready) CloseHandle(ready);
    tool_error("run: cannot load capprof.dll into %s: %s", o->argv[0], why);
    return 126;
  }

  /* Ctrl-C reaches the program (same console); the launcher waits for it. */
  SetConsoleCtrlHandler(NULL, TRUE);
  ResumeThread(pi.hThread);
  WaitForSingleObject(pi.hProcess, INFINITE);
  DWORD code = 0;
  GetExitCodeProcess(pi.hProcess, &code);
  SetConsoleCtrlHandler(NULL, FALSE);
  CloseHandle(pi.hThread);
  CloseHandle(pi.hProcess);

  if (ready) {
    if (WaitForSingleObject(ready, 0) != WAIT_OBJECT_0)
      tool_warn("run: the capprof runtime did not start in %s", o->argv[0]);
    CloseHandle(ready);
  }
  return (int)code;
}
