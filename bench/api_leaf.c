/* api_leaf.c -- the empty function bench/run_api.sh calls N times, built
** with and without compiler hooks: the hooks' cost per call. */
void api_leaf(void)
{
  __asm__ __volatile__("" ::: "memory");
}
