/*
 * gpuwise cards (placeholder until its issue lands).
 */
#include "cmd/cmd.h"

int cmd_cards(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	gw_errorf("'cards' is not built yet");
	return GW_EXIT_RUNTIME;
}
