/*
 * common.c: helpers shared by the commands.
 */
#include <stdarg.h>
#include <stdio.h>

#include "cmd/cmd.h"

int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("gpuwise: ", stderr);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\ntry 'gpuwise %s --help'\n", cmd);
	va_end(ap);
	return GW_EXIT_USAGE;
}
