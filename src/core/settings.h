/*
** settings.h -- the runtime's settings: every CAPPROF_* environment variable
** (src/core/settings.def), read once by settings_load at start-up, before any
** hook depends on one; features ask for values by id. Also the two OS layer
** primitives the settings use or pass values down to.
*/
#ifndef CAPPROF_SETTINGS_H
#define CAPPROF_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

#include "../platform.h"

enum cp_setting {
#define SETTING(id, type, dflt, lo, hi, help) SET_##id,
#include "settings.def"
#undef SETTING
  SET_COUNT
};

enum cp_setting_type { SET_TYPE_BOOL, SET_TYPE_U32, SET_TYPE_STR, SET_TYPE_TOOL };

/* A variable's reader: os_getenv in the runtime, a fake one in tests. */
typedef const char *cp_getenv_fn(const char *name);

/* Read every setting through get (NULL values when secure: a privileged
** process takes none from its caller). Replaces what an earlier load read;
** not thread-safe (runtime_init, under os_lock). */
void settings_load(cp_getenv_fn *get, int secure) CP_HIDDEN;

/* Values as loaded (before settings_load: the defaults). A STR setting's
** text stays valid until the next settings_load; NULL when unset. Values
** longer than 4095 bytes are cut there (every use refuses or cuts them
** sooner: CAPPROF_OUTPUT at 1023). */
int settings_bool(enum cp_setting id) CP_HIDDEN;
uint32_t settings_u32(enum cp_setting id) CP_HIDDEN;
const char *settings_str(enum cp_setting id) CP_HIDDEN;

/* The variable's full name, "CAPPROF_..." */
const char *settings_name(enum cp_setting id) CP_HIDDEN;

/* "capprof: CAPPROF_<id>" followed by text, in buf (cut to n); returns buf. */
const char *settings_message(char *buf, size_t n, enum cp_setting id, const char *text) CP_HIDDEN;

/* Whether a CAPPROF_* name (len bytes at name, not NUL-terminated) is in
** the table. */
int settings_known(const char *name, size_t len) CP_HIDDEN;

/* Line k (0...) of the CAPPROF_HELP table into buf; 0, or -1 past the last. */
int settings_help_line(int k, char *buf, size_t n) CP_HIDDEN;

/* At start-up, outside the lock and outside any hook's fast path: one line
** on stderr for each unknown CAPPROF_* name in the environment, and the
** table when CAPPROF_HELP is set. Nothing in a privileged process. */
void settings_report(int secure) CP_HIDDEN;

#endif /* CAPPROF_SETTINGS_H */
