/*
** calls.c -- the bundled example: a tiny arithmetic interpreter with many
** small functions (a tokenizer, a recursive-descent parser, an evaluator),
** a recursive quicksort and a checksum over a buffer: call paths from a few
** nanoseconds to tens of microseconds. Its input is fixed, so its call tree
** and call counts are the same on every run; only the times change.
**
** Build it instrumented (the CMake target 'calls' does this), run it, then:
**   capprof tree calls.<pid>.capprof
*/
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum tok { T_NUM, T_PLUS, T_MINUS, T_MUL, T_DIV, T_LP, T_RP, T_END };

struct lexer { const char *p; enum tok tok; long num; };

static int is_space(char c) { return c == ' ' || c == '\t'; }

static long read_number(struct lexer *lx)
{
  long v = 0;
  while (isdigit((unsigned char)*lx->p)) v = v * 10 + (*lx->p++ - '0');
  return v;
}

static void next_token(struct lexer *lx)
{
  while (is_space(*lx->p)) lx->p++;
  char c = *lx->p;
  if (isdigit((unsigned char)c)) {
    lx->tok = T_NUM;
    lx->num = read_number(lx);
    return;
  }
  lx->p += c != '\0';
  switch (c) {
  case '+': lx->tok = T_PLUS; break;
  case '-': lx->tok = T_MINUS; break;
  case '*': lx->tok = T_MUL; break;
  case '/': lx->tok = T_DIV; break;
  case '(': lx->tok = T_LP; break;
  case ')': lx->tok = T_RP; break;
  default: lx->tok = T_END; break;
  }
}

static long parse_expr(struct lexer *lx);

static long parse_primary(struct lexer *lx)
{
  if (lx->tok == T_NUM) {
    long v = lx->num;
    next_token(lx);
    return v;
  }
  if (lx->tok == T_LP) {
    next_token(lx);
    long v = parse_expr(lx);
    next_token(lx);                       /* ')' */
    return v;
  }
  next_token(lx);
  return -parse_primary(lx);              /* unary minus */
}

static long apply(enum tok op, long a, long b)
{
  switch (op) {
  case T_PLUS: return a + b;
  case T_MINUS: return a - b;
  case T_MUL: return a * b;
  default: return b ? a / b : 0;
  }
}

static long parse_term(struct lexer *lx)
{
  long v = parse_primary(lx);
  while (lx->tok == T_MUL || lx->tok == T_DIV) {
    enum tok op = lx->tok;
    next_token(lx);
    v = apply(op, v, parse_primary(lx));
  }
  return v;
}

static long parse_expr(struct lexer *lx)
{
  long v = parse_term(lx);
  while (lx->tok == T_PLUS || lx->tok == T_MINUS) {
    enum tok op = lx->tok;
    next_token(lx);
    v = apply(op, v, parse_term(lx));
  }
  return v;
}

static long evaluate(const char *text)
{
  struct lexer lx = { text, T_END, 0 };
  next_token(&lx);
  return parse_expr(&lx);
}

#define SWAP(a, b) do { long t_ = (a); (a) = (b); (b) = t_; } while (0)

static size_t partition(long *v, size_t n)
{
  long pivot = v[n - 1];
  size_t i = 0;
  for (size_t j = 0; j + 1 < n; j++)
    if (v[j] < pivot) { SWAP(v[i], v[j]); i++; }
  SWAP(v[i], v[n - 1]);
  return i;
}

static void insertion_sort(long *v, size_t n)
{
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) SWAP(v[j - 1], v[j]);
}

static void sort(long *v, size_t n)
{
  if (n <= 24) {
    insertion_sort(v, n);
    return;
  }
  size_t p = partition(v, n);
  sort(v, p);
  sort(v + p + 1, n - p - 1);
}

/* A fixed pseudo-random sequence (a linear congruential generator). */
static void fill(long *v, size_t n, unsigned long seed)
{
  for (size_t i = 0; i < n; i++) {
    seed = seed * 6364136223846793005ul + 1442695040888963407ul;
    v[i] = (long)(seed >> 33) % 100000;
  }
}

static unsigned long checksum(const long *v, size_t n)
{
  unsigned long h = 14695981039346656037ul;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned long)v[i]) * 1099511628211ul;
  return h;
}

static const char *const programs[] = {
  "1 + 2 * 3",
  "(4 + 5) * (6 - 7) / 2",
  "((1 + 2) * (3 + 4) - 5) * 6 + 7 * 8 - 9",
  "-(3 * (2 + 1)) + 100 / (5 - 3)",
  "2 * 2 * 2 * 2 * 2 * 2 * 2 * 2 - 1",
};

enum { N_VALUES = 4096 };

int main(int argc, char **argv)
{
  int rounds = argc > 1 ? atoi(argv[1]) : 200;
  size_t n = sizeof programs / sizeof programs[0];
  static long values[N_VALUES];
  long checksum_total = 0;
  for (int r = 0; r < rounds; r++) {
    for (size_t i = 0; i < n; i++) checksum_total += evaluate(programs[i]) + r % 7;
    fill(values, N_VALUES, (unsigned long)r);
    sort(values, N_VALUES);
    checksum_total += (long)(checksum(values, N_VALUES) & 0xFFFF);
  }
  printf("checksum %ld after %d rounds\n", checksum_total, rounds);
  return 0;
}
