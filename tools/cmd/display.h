/*
** display.h -- how the tool's terminal output looks: the display options
** every command takes (--color, --no-pager, --full-names, --width), colour
** only on a terminal and never with NO_COLOR, a pager for long output as git
** has, C++ template arguments shortened and names fitted to the terminal's
** width. Exports never go through it: they keep every name whole.
*/
#ifndef CAPPROF_DISPLAY_H
#define CAPPROF_DISPLAY_H

#include <stddef.h>
#include <stdio.h>

/* What a coloured field is. */
enum disp_kind { DISP_HEADER, DISP_HOT, DISP_WARM, DISP_MARK };

/* The display options' help, for each command's --help. */
extern const char display_help[];

/* Take the display options out of argv (up to a "--"), anywhere after the
** command name; *argc shrinks. Returns 0, or 2 after an error line. */
int display_options(int *argc, char **argv);
/* Before a command's output: decide colour and width, start the pager if
** paged and stdout is a terminal. */
void display_start(int paged);
/* The width a command fits when stdout is not a terminal and --width was
** not given (call before display_start); 0, the default: no limit. */
void display_default_width(size_t cols);
/* The width decided on by display_start; 0: no limit. */
size_t disp_width(void);
/* Write s and a newline, cut with "..." to the width. */
void disp_line(FILE *f, const char *s);
/* After the command: flush and wait for the pager. */
void display_end(void);

/* Escape sequences around a field of that kind ("" without colour). */
const char *disp_on(enum disp_kind k);
const char *disp_off(void);
/* The kind for a share of a total: HOT from 5%, WARM from 0.5%, else -1. */
int disp_pct_kind(double part, double whole);

/* name as the terminal shows it: C++ template argument lists of more than
** 20 characters become <...> (unless --full-names). Into buf (n bytes). */
const char *disp_short_name(const char *name, char *buf, size_t n);
/* Write name (shortened) and then suffix (may be NULL), cut with "..." to
** fit the width left after `used` columns already printed on the line. */
void disp_name(FILE *f, const char *name, const char *suffix, size_t used);

#endif /* CAPPROF_DISPLAY_H */
