/*
** feature.h -- what a feature gives the core: struct cp_feature, the
** callbacks each feature registers (thread life cycle, reset, fork, start-up,
** exit, dump sections), and the link-time table src/features.c lists them
** in. Included by core.h after the types it names; the core walks the table
** on slow paths only, never on a hook's fast path.
*/
#ifndef CAPPROF_FEATURE_H
#define CAPPROF_FEATURE_H

/* ---- features: what each gives the core (src/features.c lists them) ---- */

struct dump_writer;                           /* dump/dump.h */
struct dump_rows;

/* The probe the clock's calibration times (clock.c): a + b, plain and
** through each kind of hook (CP_PROBE_*; NULL where a kind is not built).
** The hooks register it (src/hooks/calib_probe.c, built with the hooks). */
struct cp_calib {
  long (*plain)(long a, long b);
  long (*hooked[CP_PROBE_KINDS])(long a, long b);
};

/* A feature's part in the core's life cycle; any member may be NULL. The
** core calls them in the order of cp_features (fork_parent: reversed), from
** its slow paths only: no hook's fast path makes an indirect call. */
struct cp_feature {
  const char *name;
  /* Start-up (runtime_init): init under os_lock once the settings are
  ** read; start after the clock's calibration, outside the lock; settle
  ** once every feature has started. */
  void (*init)(void);
  void (*start)(void);
  void (*settle)(void);
  void (*finish)(void);                      /* process exit, before the final dump */
  void (*thread_begin)(void);                /* the calling thread's state was made */
  void (*thread_exit)(struct cp_thread *t);  /* t's thread exits (its own thread) */
  /* A zone's frame (id) was popped without its end, by longjmp, an
  ** exception or an exit further down (calltree.c's slow paths). */
  void (*zone_popped)(struct cp_thread *t, uint32_t id);
  /* Ended threads (ended.c), under os_lock. thread_ending: t retires, its
  ** open calls still on its stack (not for a tree recorded before a reset).
  ** pack_size and pack: the bytes the feature keeps with t's packed record
  ** e, written into mem (8-byte aligned, in the record's allocation).
  ** merged: t's tree was added into group's (a merge group's tree). */
  void (*thread_ending)(struct cp_thread *t);
  size_t (*pack_size)(const struct cp_thread *t);
  void (*pack)(const struct cp_thread *t, struct cp_ended *e, void *mem);
  void (*merged)(const struct cp_thread *t, struct cp_thread *group);
  /* t was packed into the ended threads (e: its record, or NULL when merged
  ** into a group); under os_lock. */
  void (*thread_retired)(struct cp_thread *t, const struct cp_ended *e);
  void (*thread_reset)(struct cp_thread *t); /* t's tree rebuilt (reset, fork) */
  void (*thread_free)(struct cp_thread *t);  /* t freed or recycled */
  void (*reset)(void);                       /* capprof_reset, under os_lock */
  void (*fork_prepare)(void);                /* under os_lock, before fork */
  void (*fork_parent)(void);                 /* after fork, in the parent */
  /* In the child, self its only thread (NULL: none): threads_forked before
  ** self's tree is rebuilt, fork_child after. */
  void (*threads_forked)(struct cp_thread *self);
  void (*fork_child)(void);
  /* The dump, under os_lock. dump: the feature's sections, written in the
  ** order of cp_dump_order after the core's THREADS (rows: the threads
  ** written). write_dump: the dump writer (src/dump), one feature's: 0 or
  ** a CAPPROF_E* code, out the file's name, *failure which step failed on
  ** which file. */
  void (*dump)(struct dump_writer *w, const struct dump_rows *rows);
  int (*write_dump)(const char *path, int explicit_path, char *out, size_t outsize,
                    const char **failure);
  const struct cp_calib *calib;              /* the hooks' probe (clock.c) */
};
/* The features linked in, NULL-terminated (src/features.c), and those that
** write dump sections, in the order of their sections in the file. */
extern const struct cp_feature *const cp_features[] CP_HIDDEN;
extern const struct cp_feature *const cp_dump_order[] CP_HIDDEN;
extern const struct cp_feature zone_feature CP_HIDDEN;       /* zone.c */
extern const struct cp_feature intercept_feature CP_HIDDEN;  /* intercept.c */
extern const struct cp_feature dump_feature CP_HIDDEN;       /* dump_write.c */
extern const struct cp_feature throttle_feature CP_HIDDEN;   /* throttle.c */
extern const struct cp_feature sample_feature CP_HIDDEN;     /* sample.c */
extern const struct cp_feature patch_feature CP_HIDDEN;      /* patch_*.c */
extern const struct cp_feature hooks_feature CP_HIDDEN;      /* hooks/calib_probe.c */

#endif /* CAPPROF_FEATURE_H */
