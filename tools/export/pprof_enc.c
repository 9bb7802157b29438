/*
** pprof_enc.c -- protobuf wire format and a store-only gzip writer for the
** pprof export (pprof_enc.h). Stored blocks make the file about as large as
** the message; pprof and every service that ingests it only require gzip.
*/
#include <stdlib.h>
#include <string.h>

#include "export/pprof_enc.h"

void pb_free(struct pb_buf *b)
{
  free(b->p);
  memset(b, 0, sizeof *b);
}

void pb_reset(struct pb_buf *b)
{
  b->len = 0;
  b->oom = 0;
}

static int reserve(struct pb_buf *b, size_t n)
{
  if (b->oom) return -1;
  if (b->len + n <= b->cap) return 0;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + n) cap *= 2;
  unsigned char *p = realloc(b->p, cap);
  if (!p) {
    b->oom = 1;
    return -1;
  }
  b->p = p;
  b->cap = cap;
  return 0;
}

void pb_varint(struct pb_buf *b, uint64_t v)
{
  if (reserve(b, 10)) return;
  do {
    unsigned char c = v & 0x7f;
    v >>= 7;
    b->p[b->len++] = c | (v ? 0x80 : 0);
  } while (v);
}

void pb_uint(struct pb_buf *b, unsigned field, uint64_t v)
{
  pb_varint(b, (uint64_t)field << 3);
  pb_varint(b, v);
}

void pb_bytes(struct pb_buf *b, unsigned field, const void *data, size_t n)
{
  pb_varint(b, (uint64_t)field << 3 | 2);
  pb_varint(b, n);
  if (!n || reserve(b, n)) return;
  memcpy(b->p + b->len, data, n);
  b->len += n;
}

void pb_string(struct pb_buf *b, unsigned field, const char *s)
{
  pb_bytes(b, field, s, strlen(s));
}

uint32_t gz_crc32(uint32_t crc, const unsigned char *data, size_t n)
{
  static uint32_t table[256];
  if (!table[1])
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i;
      for (int k = 0; k < 8; k++) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
      table[i] = c;
    }
  crc = ~crc;
  for (size_t i = 0; i < n; i++) crc = table[(crc ^ data[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

static void put_le32(FILE *f, uint32_t v)
{
  for (int k = 0; k < 4; k++) putc((int)(v >> (8 * k) & 0xff), f);
}

int gz_write(FILE *f, const unsigned char *data, size_t n)
{
  /* magic, deflate, no flags, no mtime, no extra flags, OS unknown */
  static const unsigned char head[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255 };
  fwrite(head, 1, sizeof head, f);
  size_t off = 0;
  do {                        /* stored blocks of at most 65535 bytes */
    size_t len = n - off > 65535 ? 65535 : n - off;
    unsigned char h[5];
    h[0] = off + len == n;    /* BFINAL on the last, BTYPE 00 */
    h[1] = (unsigned char)(len & 0xff);
    h[2] = (unsigned char)(len >> 8);
    h[3] = (unsigned char)(~len & 0xff);
    h[4] = (unsigned char)(~len >> 8 & 0xff);
    fwrite(h, 1, sizeof h, f);
    if (len) fwrite(data + off, 1, len, f);
    off += len;
  } while (off < n);
  put_le32(f, gz_crc32(0, data, n));
  put_le32(f, (uint32_t)n);   /* ISIZE: the length modulo 2^32 */
  return 0;
}
