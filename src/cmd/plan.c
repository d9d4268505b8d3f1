/*
 * gpuwise plan (placeholder until its issue lands).
 */
#include "cmd/cmd.h"

int cmd_plan(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	gw_errorf("'plan' is not built yet");
	return GW_EXIT_RUNTIME;
}
