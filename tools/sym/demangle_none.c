/*
** demangle_none.c -- sym_demangle for the MSVC build of the
** tool: MSVC's C++ runtime has no Itanium demangler, and DbgHelp undecorates
** MSVC's own names. GCC-mangled names (MinGW C++ code) stay mangled there.
*/
#include <stddef.h>

#include "sym/symbols.h"

char *sym_demangle(const char *name)
{
  (void)name;
  return NULL;
}
