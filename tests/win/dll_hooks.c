/*
** dll_hooks.c -- an instrumented DLL (built like pg_example.c, hooks placed
** as /Gh /GH place them) whose DllMain calls instrumented code: hooks under
** the loader lock, including a thread's very first hook, which creates its
** state there. test_dllmain.c loads it, starts a thread and unloads it.
*/
#include <windows.h>

__declspec(noinline) void dll_helper(DWORD reason)
{
  __asm__ __volatile__("" ::: "memory");
  (void)reason;
}

__declspec(dllexport) __declspec(noinline) int dll_work(int n)
{
  int s = 0;
  for (int i = 0; i < n; i++) {
    dll_helper(100);
    s += i;
  }
  return s;
}

/* The address of dll_helper, for the test to find its key (start + 5). */
__declspec(dllexport) void *dll_helper_address(void) { return (void *)dll_helper; }
__declspec(dllexport) void *dll_main_address(void);

BOOL WINAPI DllMain(HINSTANCE h, DWORD reason, LPVOID reserved)
{
  (void)h;
  (void)reserved;
  dll_helper(reason);
  return TRUE;
}

void *dll_main_address(void) { return (void *)DllMain; }
