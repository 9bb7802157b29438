/*
** pg_modules.c -- calls between modules: an instrumented exe calling into the
** instrumented dll_hooks.dll, both recording through one capprof.dll, hooks
** placed as MSVC /Gh /GH place them. run-wine.sh checks the symbolized report.
*/
__declspec(dllimport) int dll_work(int n);

__attribute__((noinline)) int caller(void)
{
  return dll_work(5);
}

int main(void)
{
  return caller() == 10 ? 0 : 1;
}
