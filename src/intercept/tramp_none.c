/*
** tramp_none.c (POSIX, architectures without trampolines yet) -- API
** interception needs machine code per architecture (tramp_x86_64.c); here
** it reports itself unsupported and plt.c patches nothing.
*/
#include "../posix/posix.h"
#include "intercept.h"

int tramp_supported(void) { return 0; }
uintptr_t tramp_return_address(void) { return 0; }
size_t tramp_stub_size(void) { return 0; }
void tramp_write_stub(unsigned char *code, const struct icpt_stub *data)
{
  (void)code;
  (void)data;
}
