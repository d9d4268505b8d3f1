/*
 * gpuwise doctor (placeholder until its issue lands).
 */
#include "cmd/cmd.h"

int cmd_doctor(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	gw_errorf("'doctor' is not built yet");
	return GW_EXIT_RUNTIME;
}
