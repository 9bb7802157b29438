/*
** cmd_callers.c -- 'capprof callers FUNC DUMP...': who calls FUNC, with the
** calls each caller made and the time FUNC spent on them (calls.c).
*/
#include "cmd/cmd.h"
#include "model/tool.h"

int cmd_callers(int argc, char **argv)
{
  return calls_main(argc, argv, 0);
}
