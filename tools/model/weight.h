/*
** weight.h -- the one figure that sizes and orders every view of a profile
** (docs/tool.md, "The profile model"): report's first share column, its
** colour and sort, tree's order and shares, the page's icicle, folded,
** callgrind's first event, speedscope, CSV, JSON, diff. Every command and
** export asks these functions for a node's or a function's self and
** inclusive figure and for the total the shares divide; none sums times or
** samples itself.
**
**   cpu      CPU time from the samples charged to the call path (samples x
**            interval; sample counts for an event source). Leaves out time
**            spent blocked. The default of a sampled run.
**   elapsed  wall time from the hooks, probe-compensated (raw with --raw),
**            over the calls that were timed. The default of an unsampled run.
**   calls    exact calls (self and incl alike: a call is not split).
*/
#ifndef CAPPROF_WEIGHT_H
#define CAPPROF_WEIGHT_H

#include <stdio.h>

#include "model/profile.h"

enum prof_weight { PROF_W_AUTO, PROF_W_CPU, PROF_W_ELAPSED, PROF_W_CALLS };

/* "cpu", "elapsed" or "calls" (as --weight takes them) into *w; returns 0,
** or -1 for any other word. */
int prof_weight_parse(const char *s, enum prof_weight *w);

/* Choose the figure for p (AUTO: cpu when samples were charged to call
** paths, else elapsed; cpu without such samples falls back to elapsed) and
** whether elapsed times are raw. Every function below then uses it. */
void prof_weight_set(struct profile *p, enum prof_weight w, int raw);
/* The figure chosen (never AUTO), its name as columns show it ("cpu",
** "elapsed", "calls") and its unit: 1 when it is a time in ns. */
enum prof_weight prof_weight_of(const struct profile *p);
const char *prof_weight_name(const struct profile *p);
int prof_weight_is_time(const struct profile *p);

/* Any figure w (AUTO: the chosen one) of node i of tree t or of function f,
** inclusive when incl, else self; elapsed raw when the profile's is. */
double prof_node_figure(const struct profile *p, const struct prof_thread *t, uint32_t i,
                        enum prof_weight w, int incl);
double prof_func_figure(const struct profile *p, const struct prof_func *f, enum prof_weight w,
                        int incl);
/* Node i of tree t: self and inclusive figure (for calls both are its calls). */
double prof_node_self(const struct profile *p, const struct prof_thread *t, uint32_t i);
double prof_node_incl(const struct profile *p, const struct prof_thread *t, uint32_t i);
/* A function's flat figures (prof_flat first): self over every path, and
** inclusive over its outermost activations, so never above the total. */
double prof_func_self(const struct profile *p, const struct prof_func *f);
double prof_func_incl(const struct profile *p, const struct prof_func *f);
/* What shares divide: the sum of every node's self over all threads
** (equal to the sum of the functions' self), or a tree's root. */
double prof_weight_total(const struct profile *p);
double prof_tree_total(const struct profile *p, const struct prof_thread *t);
/* part / whole as a share clamped to [0, 1]; 0 when whole is not > 0. */
double prof_share(double part, double whole);

/* The header line saying which figure sizes and ranks the view, and what
** it leaves out ("ranked by cpu: CPU time from N samples, blocked time left
** out"), without a newline, into buf. */
const char *prof_weight_line(const struct profile *p, char *buf, size_t n);

#endif /* CAPPROF_WEIGHT_H */
