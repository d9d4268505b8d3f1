/*
 * gpuwise run (placeholder until its issue lands).
 */
#include "cmd/cmd.h"

int cmd_run(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	gw_errorf("'run' is not built yet");
	return GW_EXIT_RUNTIME;
}
