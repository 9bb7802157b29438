#include "tool.h"
int cmd_merge(int argc, char **argv) { (void)argc; (void)argv; return tool_error("merge: not yet"); }
