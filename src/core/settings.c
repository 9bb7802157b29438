/*
** settings.c -- the one reader of the CAPPROF_* variables (src/core/settings.def):
** settings_load copies them once at start-up, features ask by id; also
** CAPPROF_HELP's table and the warning about a CAPPROF_* name not in it.
*/
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "settings.h"

#define MAX_TEXT 4096                   /* a value's bytes kept, with its NUL */

static const struct {
  const char *name;
  unsigned char type;                   /* enum cp_setting_type */
  const char *dflt;
  uint32_t lo, hi;                      /* U32 only */
  const char *help;
} table[SET_COUNT] = {
#define SETTING(id, type, dflt, lo, hi, help) \
  { "CAPPROF_" #id, SET_TYPE_##type, dflt, lo, hi, help },
#include "settings.def"
#undef SETTING
};

static int loaded;
static unsigned char present[SET_COUNT];      /* set (not NULL) at the load */
static char text[SET_COUNT][MAX_TEXT];        /* STR, BOOL and U32 as given */

static const char *raw(enum cp_setting id)
{
  return loaded && present[id] ? text[id] : NULL;
}

void settings_load(cp_getenv_fn *get, int secure)
{
  for (int i = 0; i < SET_COUNT; i++) {
    const char *v = secure || table[i].type == SET_TYPE_TOOL ? NULL : get(table[i].name);
    present[i] = v != NULL;
    if (!v) continue;
    size_t n = strlen(v);
    if (n >= MAX_TEXT) n = MAX_TEXT - 1;
    memcpy(text[i], v, n);
    text[i][n] = '\0';
  }
  loaded = 1;
}

int settings_bool(enum cp_setting id)
{
  const char *s = raw(id);
  if (!s) s = table[id].dflt;
  return *s && strcmp(s, "0") != 0;
}

static int parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
  if (!s || !*s) return -1;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (*end || v < lo || v > hi) return -1;
  *out = (uint32_t)v;
  return 0;
}

uint32_t settings_u32(enum cp_setting id)
{
  uint32_t v = 0;
  if (parse_u32(raw(id), table[id].lo, table[id].hi, &v) == 0) return v;
  parse_u32(table[id].dflt, 0, UINT32_MAX, &v);
  return v;
}

const char *settings_str(enum cp_setting id) { return raw(id); }

const char *settings_name(enum cp_setting id) { return table[id].name; }

static size_t put(char *buf, size_t at, size_t n, const char *s)
{
  while (*s && at + 1 < n) buf[at++] = *s++;
  if (n) buf[at < n ? at : n - 1] = '\0';
  return at;
}

const char *settings_message(char *buf, size_t n, enum cp_setting id, const char *text_)
{
  size_t at = put(buf, 0, n, "capprof: ");
  at = put(buf, at, n, table[id].name);
  put(buf, at, n, text_);
  return buf;
}

int settings_known(const char *name, size_t len)
{
  for (int i = 0; i < SET_COUNT; i++)
    if (strlen(table[i].name) == len && memcmp(table[i].name, name, len) == 0) return 1;
  return 0;
}

static size_t pad(char *buf, size_t at, size_t n, size_t col)
{
  do at = put(buf, at, n, " "); while (at < col && at + 1 < n);
  return at;
}

static size_t put_u32(char *buf, size_t at, size_t n, uint32_t v)
{
  char d[12];
  int k = (int)sizeof d - 1;
  d[k] = '\0';
  do d[--k] = (char)('0' + v % 10); while ((v /= 10) && k > 0);
  return put(buf, at, n, d + k);
}

int settings_help_line(int k, char *buf, size_t n)
{
  static const char *const types[] = { "bool", "u32", "text", "tool" };
  if (k == 0) {
    size_t at = put(buf, 0, n, "capprof: settings (");
    at = put(buf, at, n, table[SET_HELP].name);
    put(buf, at, n, "=1): variable, type, default, meaning");
    return 0;
  }
  if (k < 0 || k > SET_COUNT) return -1;
  int i = k - 1;
  size_t at = put(buf, 0, n, "  ");
  at = put(buf, at, n, table[i].name);
  at = pad(buf, at, n, 26);
  at = put(buf, at, n, types[table[i].type]);
  at = pad(buf, at, n, 32);
  at = put(buf, at, n, table[i].dflt[0] ? table[i].dflt : "-");
  at = pad(buf, at, n, 48);
  at = put(buf, at, n, table[i].help);
  if (table[i].type == SET_TYPE_U32) {
    at = put(buf, at, n, " (");
    at = put_u32(buf, at, n, table[i].lo);
    at = put(buf, at, n, "..");
    at = put_u32(buf, at, n, table[i].hi);
    put(buf, at, n, ")");
  }
  return 0;
}

static void warn_unknown(const char *name, size_t len, void *arg)
{
  (void)arg;
  if (settings_known(name, len)) return;
  char msg[300];
  size_t at = put(msg, 0, sizeof msg, "capprof: unknown variable ");
  if (len > 200) len = 200;
  if (at + len < sizeof msg) {
    memcpy(msg + at, name, len);
    at += len;
    msg[at] = '\0';
  }
  at = put(msg, at, sizeof msg, " ignored (");
  at = put(msg, at, sizeof msg, table[SET_HELP].name);
  put(msg, at, sizeof msg, "=1 lists the known ones)");
  os_report(msg);
}

void settings_report(int secure)
{
  if (secure) return;
  os_env_names("CAPPROF_", warn_unknown, NULL);
  if (!settings_bool(SET_HELP)) return;
  char line[300];
  for (int k = 0; settings_help_line(k, line, sizeof line) == 0; k++) os_report(line);
}
