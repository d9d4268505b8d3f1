/*
 * gpuwise status (placeholder until its issue lands).
 */
#include "cmd/cmd.h"

int cmd_status(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	gw_errorf("'status' is not built yet");
	return GW_EXIT_RUNTIME;
}
