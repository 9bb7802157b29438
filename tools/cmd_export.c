#include "tool.h"
int cmd_export(int argc, char **argv) { (void)argc; (void)argv; return tool_error("export: not yet"); }
