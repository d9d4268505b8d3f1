/*
 * gpuwise cost (placeholder until its issue lands).
 */
#include "cmd/cmd.h"

int cmd_cost(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	gw_errorf("'cost' is not built yet");
	return GW_EXIT_RUNTIME;
}
