/*
** dumpstat.c -- bench_dumpstat DUMP: loads a dump with the reader library
** and prints its totals (threads, nodes, calls) and the runtime's node size,
** for bench/run.sh. Also times nothing itself: run.sh times the load.
*/
#include <stdio.h>

#include "internal.h"
#include "model/cpd_reader.h"

int main(int argc, char **argv)
{
  if (argc != 2) {
    fprintf(stderr, "usage: bench_dumpstat DUMP\n");
    return 2;
  }
  char err[256];
  struct cpd_dump *d;
  if (cpd_load(argv[1], &d, err, sizeof err) != 0) {
    fprintf(stderr, "bench_dumpstat: %s\n", err);
    return 1;
  }
  unsigned long long nodes = 0, calls = 0;
  for (uint32_t i = 0; i < d->nthreads; i++) {
    nodes += d->threads[i].node_count;
    for (uint32_t j = 1; j < d->threads[i].node_count; j++)
      calls += d->threads[i].nodes[j].calls;
  }
  printf("threads=%u nodes=%llu calls=%llu node_struct=%zu frame_struct=%zu\n",
         d->nthreads, nodes, calls, sizeof(struct cp_node), sizeof(struct cp_frame));
  cpd_free(d);
  return 0;
}
