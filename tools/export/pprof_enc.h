/*
** pprof_enc.h -- the few pieces of protobuf and gzip that export_pprof.c
** needs: a growable buffer that takes varints, fixed tags and
** length-delimited fields, and a gzip writer made of deflate's stored
** blocks (no compression, no zlib dependency) with its CRC-32.
*/
#ifndef CAPPROF_PPROF_ENC_H
#define CAPPROF_PPROF_ENC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A protobuf message being built. oom is set (and later writes ignored)
** when memory runs out, so callers check once at the end. */
struct pb_buf {
  unsigned char *p;
  size_t len, cap;
  int oom;
};

void pb_free(struct pb_buf *b);
void pb_reset(struct pb_buf *b);                 /* empty, memory kept */
void pb_varint(struct pb_buf *b, uint64_t v);
/* Field `field` as a varint (wire type 0); 0 values are written too, which
** protobuf readers take as the default. */
void pb_uint(struct pb_buf *b, unsigned field, uint64_t v);
/* Field `field` as length-delimited bytes (wire type 2): strings, nested
** messages (another pb_buf's contents), packed repeated varints. */
void pb_bytes(struct pb_buf *b, unsigned field, const void *data, size_t n);
void pb_string(struct pb_buf *b, unsigned field, const char *s);
static inline void pb_msg(struct pb_buf *b, unsigned field, const struct pb_buf *m)
{
  pb_bytes(b, field, m->p, m->len);
  if (m->oom) b->oom = 1;
}

/* CRC-32 (IEEE 802.3, as gzip uses) of n bytes, continuing from crc (0 to
** start). */
uint32_t gz_crc32(uint32_t crc, const unsigned char *data, size_t n);
/* data as one gzip member (RFC 1952) of stored deflate blocks. Returns 0;
** write errors are left in ferror(f). */
int gz_write(FILE *f, const unsigned char *data, size_t n);

#endif /* CAPPROF_PPROF_ENC_H */
