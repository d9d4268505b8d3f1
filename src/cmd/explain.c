/*
 * gpuwise explain (placeholder until its issue lands).
 */
#include "cmd/cmd.h"

int cmd_explain(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	gw_errorf("'explain' is not built yet");
	return GW_EXIT_RUNTIME;
}
