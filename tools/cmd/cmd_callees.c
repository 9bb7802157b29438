/*
** cmd_callees.c -- 'capprof callees FUNC DUMP...': what FUNC calls, with
** the calls it made and the time spent in each callee (calls.c).
*/
#include "cmd/cmd.h"
#include "model/tool.h"

int cmd_callees(int argc, char **argv)
{
  return calls_main(argc, argv, 1);
}
