/*
** inject.h (Win32) -- loading capprof.dll into a process created suspended:
** shared by the launcher (tools/launch/launch_win.c) and by the runtime when it
** follows the processes a profiled program starts (src/intercept/iat_win.c). Static
** functions, so that each side gets its own copy and no link dependency.
*/
#ifndef CAPPROF_WIN_INJECT_H
#define CAPPROF_WIN_INJECT_H

#ifndef WIN32_LEAN_AND_MEAN
#  define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#include <stddef.h>
#include <string.h>
#include <wchar.h>

/* Whether the suspended process' program carries the runtime already: its
** import table names capprof.dll, or it has the ".capprof" section the
** static library brings (src/win/win.h). Then no second runtime is loaded.
** The image base comes from its PEB (ProcessBasicInformation, then
** PEB.ImageBaseAddress at +0x10); headers are read from the process. */
static int inject_has_runtime(HANDLE proc)
{
  typedef LONG (NTAPI *query_fn)(HANDLE, int, void *, ULONG, ULONG *);
  struct { void *r0; unsigned char *peb; ULONG_PTR r2[4]; } bi;
  query_fn q = (query_fn)(void (*)(void))GetProcAddress(GetModuleHandleW(L"ntdll.dll"),
                                                        "NtQueryInformationProcess");
  unsigned char *base = NULL;
  SIZE_T got;
  if (!q || q(proc, 0, &bi, sizeof bi, NULL) != 0) return 0;
  if (!ReadProcessMemory(proc, bi.peb + 0x10, &base, sizeof base, &got)) return 0;
  IMAGE_DOS_HEADER dos;
  IMAGE_NT_HEADERS64 nt;
  if (!ReadProcessMemory(proc, base, &dos, sizeof dos, &got) ||
      !ReadProcessMemory(proc, base + dos.e_lfanew, &nt, sizeof nt, &got) ||
      nt.OptionalHeader.Magic != IMAGE_NT_OPTIONAL_HDR64_MAGIC)
    return 0;
  unsigned char *sec = base + dos.e_lfanew + offsetof(IMAGE_NT_HEADERS64, OptionalHeader) +
                       nt.FileHeader.SizeOfOptionalHeader;
  for (WORD i = 0; i < nt.FileHeader.NumberOfSections && i < 96; i++) {
    IMAGE_SECTION_HEADER sh;
    if (!ReadProcessMemory(proc, sec + i * sizeof sh, &sh, sizeof sh, &got)) break;
    if (memcmp(sh.Name, ".capprof", 8) == 0) return 1;
  }
  IMAGE_DATA_DIRECTORY d = nt.OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_IMPORT];
  for (DWORD off = 0; d.VirtualAddress && off + sizeof(IMAGE_IMPORT_DESCRIPTOR) <= d.Size;
       off += sizeof(IMAGE_IMPORT_DESCRIPTOR)) {
    IMAGE_IMPORT_DESCRIPTOR imp;
    char name[16];
    if (!ReadProcessMemory(proc, base + d.VirtualAddress + off, &imp, sizeof imp, &got) ||
        !imp.Name)
      break;
    if (ReadProcessMemory(proc, base + imp.Name, name, sizeof name, &got) &&
        _strnicmp(name, "capprof.dll", 12) == 0)
      return 1;
  }
  return 0;
}

/* Have the suspended main thread load dll first thing when it resumes: an
** APC queued now runs once the loader has initialised the process (its
** static imports loaded and initialised), before the entry point.
** LoadLibraryW's address is the same in the child: kernel32 is mapped at
** one address in every process of a session. Returns 0 or a Win32 error. */
static DWORD inject_queue_load(HANDLE proc, HANDLE thread, const wchar_t *dll)
{
  SIZE_T bytes = (wcslen(dll) + 1) * sizeof(wchar_t);
  FARPROC load = GetProcAddress(GetModuleHandleW(L"kernel32.dll"), "LoadLibraryW");
  void *remote = VirtualAllocEx(proc, NULL, bytes, MEM_COMMIT | MEM_RESERVE, PAGE_READWRITE);
  if (!remote || !load || !WriteProcessMemory(proc, remote, dll, bytes, NULL) ||
      !QueueUserAPC((PAPCFUNC)(void (*)(void))load, thread, (ULONG_PTR)remote)) {
    DWORD e = GetLastError();
    return e ? e : ERROR_GEN_FAILURE;
  }
  return 0;
}

#endif /* CAPPROF_WIN_INJECT_H */
