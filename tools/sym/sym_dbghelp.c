/*
** sym_dbghelp.c -- the DbgHelp back end of the symbolizer, for the Windows
** build of the tool. The dump comes from another process, possibly long
** gone: DbgHelp gets a fake process handle of its own (SymInitialize with no
** invasion) and each module is loaded from its file at the base and size the
** dump recorded, after checking that the file's CodeView record (PDB GUID
** and age) is the one the dump saw. Names are undecorated (SYMOPT_UNDNAME;
** GCC's Itanium names through sym_demangle); lines come from the PDB, or from
** DWARF where the DbgHelp in use reads it (Wine's does, for MinGW binaries).
** DbgHelp falls back to the export table by itself; anything else becomes
** module+0xoffset in symbols.c. DbgHelp is single-threaded, like the tool.
*/
#ifndef WIN32_LEAN_AND_MEAN
#  define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#include <dbghelp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym/symbols.h"

struct dbg_module {
  int state;               /* 0 not loaded yet, 1 usable, -1 unusable */
  DWORD64 loaded_base;     /* what SymLoadModuleExW returned */
  char *file;              /* the image the symbols come from (malloc'd) */
};

struct sym_backend {
  const struct cpd_dump *d;
  HANDLE h;                /* fake process handle, unique to this back end */
  struct dbg_module *mods; /* one per module of the dump */
};

/* ---- UTF-8 <-> UTF-16 -------------------------------------------------------- */

static wchar_t *wide(const char *s)
{
  int n = MultiByteToWideChar(CP_UTF8, 0, s, -1, NULL, 0);
  wchar_t *w = n > 0 ? malloc((size_t)n * sizeof *w) : NULL;
  if (w) MultiByteToWideChar(CP_UTF8, 0, s, -1, w, n);
  return w;
}

static char *utf8(const wchar_t *w)
{
  int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, NULL, 0, NULL, NULL);
  char *s = n > 0 ? malloc((size_t)n) : NULL;
  if (s) WideCharToMultiByte(CP_UTF8, 0, w, -1, s, n, NULL, NULL);
  return s;
}

/* ---- the file's CodeView record ---------------------------------------------- */

/* Read the RSDS record (GUID then age, 20 bytes) of the PE file at path into
** id. Returns 0, 1 if the file has none, -1 if it cannot be read. */
static int file_pdb70(const wchar_t *path, unsigned char id[20])
{
  HANDLE f = CreateFileW(path, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_DELETE, NULL,
                         OPEN_EXISTING, 0, NULL);
  if (f == INVALID_HANDLE_VALUE) return -1;
  HANDLE map = CreateFileMappingW(f, NULL, PAGE_READONLY, 0, 0, NULL);
  const unsigned char *base = map ? MapViewOfFile(map, FILE_MAP_READ, 0, 0, 0) : NULL;
  int rc = -1;
  if (base) {
    LARGE_INTEGER size;
    GetFileSizeEx(f, &size);
    ULONG dsize = 0;
    const IMAGE_DEBUG_DIRECTORY *dd = ImageDirectoryEntryToDataEx(
        (PVOID)base, FALSE, IMAGE_DIRECTORY_ENTRY_DEBUG, &dsize, NULL);
    rc = 1;
    for (ULONG i = 0; dd && i < dsize / sizeof *dd; i++) {
      if (dd[i].Type != IMAGE_DEBUG_TYPE_CODEVIEW || dd[i].SizeOfData < 24) continue;
      if ((LONGLONG)dd[i].PointerToRawData + 24 > size.QuadPart) continue;
      const unsigned char *cv = base + dd[i].PointerToRawData;
      if (memcmp(cv, "RSDS", 4) != 0) continue;
      memcpy(id, cv + 4, 20);
      rc = 0;
      break;
    }
    UnmapViewOfFile(base);
  }
  if (map) CloseHandle(map);
  CloseHandle(f);
  return rc;
}

/* ---- back end ------------------------------------------------------------------ */

/* Wine 8's dbghelp can crash in SymCleanup while freeing the PDB data of
** its own DLLs (pdb_module_remove). Under Wine the session is left to the
** process exit instead; the handles stay unique because they are never
** reused (see next_handle). */
static int under_wine(void)
{
  HMODULE nt = GetModuleHandleW(L"ntdll.dll");
  return nt && GetProcAddress(nt, "wine_get_version") != NULL;
}

/* Any value works as the handle of a process DbgHelp does not invade, as
** long as no two sessions share one: a counter, never a freed address. */
static HANDLE next_handle(void)
{
  static uintptr_t n;
  return (HANDLE)(UINT_PTR)(0x7CA90000u + 4 * ++n);
}

struct sym_backend *symb_open(const struct cpd_dump *d)
{
  struct sym_backend *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  b->d = d;
  b->mods = calloc(d->nmodules ? d->nmodules : 1, sizeof *b->mods);
  if (!b->mods) { free(b); return NULL; }
  b->h = next_handle();
  SymSetOptions(SYMOPT_LOAD_LINES | SYMOPT_UNDNAME | SYMOPT_FAIL_CRITICAL_ERRORS |
                SYMOPT_NO_PROMPTS | SYMOPT_AUTO_PUBLICS);
  /* Search path: _NT_SYMBOL_PATH as set by the user, else DbgHelp's default
  ** (the current directory and the image's own directory). */
  if (!SymInitializeW(b->h, NULL, FALSE)) {
    free(b->mods);
    free(b);
    return NULL;
  }
  return b;
}

void symb_close(struct sym_backend *b)
{
  if (!b) return;
  if (!under_wine()) SymCleanup(b->h);
  for (uint32_t i = 0; i < b->d->nmodules; i++) free(b->mods[i].file);
  free(b->mods);
  free(b);
}

/* The dump's directory + the module's base name: where a module goes when
** dump and binaries are copied together to another machine. */
static char *beside_dump(const struct cpd_dump *d, const char *module_path)
{
  const char *dp = d->path ? d->path : "";
  const char *slash = NULL;
  for (const char *p = dp; *p; p++)
    if (*p == '/' || *p == '\\') slash = p;
  size_t dir = slash ? (size_t)(slash - dp + 1) : 0;
  const char *base = sym_base_name(module_path);
  char *s = malloc(dir + strlen(base) + 1);
  if (!s) return NULL;
  memcpy(s, dp, dir);
  strcpy(s + dir, base);
  return s;
}

/* Try one file for module i: 0 loaded, 1 GUID/age differ, -1 not usable. */
static int try_file(struct sym_backend *b, int i, const char *file)
{
  const struct cpd_module *m = &b->d->modules[i];
  wchar_t *w = wide(file);
  if (!w) return -1;
  unsigned char id[20];
  int id_rc = file_pdb70(w, id);
  if (id_rc < 0) { free(w); return -1; }
  if (m->id_kind == CPD_MODID_PDB70 && m->id_len == 20 &&
      (id_rc != 0 || memcmp(id, m->id, 20) != 0)) {
    free(w);
    return 1;
  }
  DWORD64 got = SymLoadModuleExW(b->h, NULL, w, NULL, m->base, (DWORD)m->size, NULL, 0);
  free(w);
  if (!got) return -1;
  b->mods[i].loaded_base = got;
  b->mods[i].file = strdup(file);
  return 0;
}

static void load_module(struct sym_backend *b, int i)
{
  const struct cpd_module *m = &b->d->modules[i];
  struct dbg_module *dm = &b->mods[i];
  dm->state = -1;
  if (!m->path[0]) return;
  int rc = try_file(b, i, m->path);
  if (rc != 0) {
    char *alt = beside_dump(b->d, m->path);
    if (alt && strcmp(alt, m->path) != 0 && try_file(b, i, alt) == 0) rc = 0;
    free(alt);
  }
  if (rc == 0) { dm->state = 1; return; }
  if (rc == 1)
    sym_module_problem(b->d, i, "PDB GUID/age differ from the dump's (the binary was rebuilt)");
  else
    sym_module_problem(b->d, i, "file not found or not loadable (moved or deleted)");
}

int symb_lookup(struct sym_backend *b, int m, uint64_t addr, char **name, char **file,
                unsigned *line)
{
  struct dbg_module *dm = &b->mods[m];
  if (dm->state == 0) load_module(b, m);
  if (dm->state != 1) return -1;

  union {
    SYMBOL_INFOW info;
    unsigned char bytes[sizeof(SYMBOL_INFOW) + 512 * sizeof(wchar_t)];
  } u;
  memset(&u, 0, sizeof u);
  u.info.SizeOfStruct = sizeof(SYMBOL_INFOW);
  u.info.MaxNameLen = 512;
  DWORD64 disp = 0;
  if (!SymFromAddrW(b->h, addr, &disp, &u.info) || !u.info.Name[0]) return -1;
  char *nm = utf8(u.info.Name);
  if (!nm) return -1;
  char *dem = sym_demangle(nm);          /* GCC's Itanium names; MSVC's are undone */
  if (dem) {
    free(nm);
    nm = dem;
  }
  *name = nm;
  *file = NULL;
  *line = 0;
  /* The line of the function's first byte: where it is defined (a /Gh key
  ** is a return address inside the function, past its prologue). */
  IMAGEHLP_LINEW64 ln;
  memset(&ln, 0, sizeof ln);
  ln.SizeOfStruct = sizeof ln;
  DWORD ldisp = 0;
  if (SymGetLineFromAddrW64(b->h, u.info.Address, &ldisp, &ln) ||
      SymGetLineFromAddrW64(b->h, addr, &ldisp, &ln)) {
    if (ln.FileName) *file = utf8(ln.FileName);
    *line = ln.LineNumber;
  }
  return 0;
}

int symb_line(struct sym_backend *b, int m, uint64_t addr, char **file, unsigned *line)
{
  struct dbg_module *dm = &b->mods[m];
  if (dm->state == 0) load_module(b, m);
  if (dm->state != 1) return -1;
  IMAGEHLP_LINEW64 ln;
  memset(&ln, 0, sizeof ln);
  ln.SizeOfStruct = sizeof ln;
  DWORD disp = 0;
  if (!SymGetLineFromAddrW64(b->h, addr, &disp, &ln) || !ln.FileName) return -1;
  *file = utf8(ln.FileName);
  *line = ln.LineNumber;
  return *file ? 0 : -1;
}

static const char *sym_type_name(SYM_TYPE t)
{
  switch (t) {
  case SymPdb: return "PDB";
  case SymCoff: return "COFF symbols";
  case SymCv: return "CodeView";
  case SymExport: return "the export table";
  case SymDia: return "PDB (DIA)";
  case SymVirtual: return "virtual";
  case SymSym: return ".sym file";
  case SymDeferred: return "deferred";
  default: return "no symbols";
  }
}

int symb_module_info(struct sym_backend *b, int m, char *buf, size_t n)
{
  struct dbg_module *dm = &b->mods[m];
  if (dm->state == 0) load_module(b, m);
  if (dm->state != 1) {
    buf[0] = '\0';
    return -1;
  }
  IMAGEHLP_MODULEW64 info;
  memset(&info, 0, sizeof info);
  info.SizeOfStruct = sizeof info;
  if (!SymGetModuleInfoW64(b->h, dm->loaded_base, &info)) {
    snprintf(buf, n, "loaded from %s (DbgHelp gives no details)", dm->file);
    return 0;
  }
  char *pdb = info.LoadedPdbName[0] ? utf8(info.LoadedPdbName) : NULL;
  snprintf(buf, n, "DbgHelp: %s from %s%s%s%s", sym_type_name(info.SymType), dm->file,
           pdb ? " (" : "", pdb ? pdb : "", pdb ? ")" : "");
  if (info.LineNumbers) strncat(buf, ", with lines", n - strlen(buf) - 1);
  free(pdb);
  return 0;
}
