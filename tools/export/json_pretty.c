/*
** json_pretty.c -- 'export --format=json --pretty': re-indents the compact
** JSON export as it streams (two spaces per level, one member per line),
** for people reading it. Strings pass through untouched.
*/
#include "export/export.h"

int json_pretty(FILE *in, FILE *out)
{
  int c, depth = 0, in_str = 0, esc = 0, empty = 0;
  while ((c = getc(in)) != EOF) {
    if (in_str) {
      putc(c, out);
      if (esc) esc = 0;
      else if (c == '\\') esc = 1;
      else if (c == '"') in_str = 0;
      continue;
    }
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (empty && c != '}' && c != ']') {      /* the first member of { or [ */
      putc('\n', out);
      for (int i = 0; i < depth; i++) fputs("  ", out);
    }
    if (c == '}' || c == ']') {
      if (depth) depth--;
      if (!empty) {
        putc('\n', out);
        for (int i = 0; i < depth; i++) fputs("  ", out);
      }
      empty = 0;
      putc(c, out);
      continue;
    }
    empty = 0;
    putc(c, out);
    if (c == '"') in_str = 1;
    else if (c == '{' || c == '[') { depth++; empty = 1; }
    else if (c == ',') {
      putc('\n', out);
      for (int i = 0; i < depth; i++) fputs("  ", out);
    } else if (c == ':') putc(' ', out);
  }
  putc('\n', out);
  return ferror(in) ? -1 : 0;
}
