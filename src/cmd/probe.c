/*
 * probe.c: the machine context for explain.
 */
#include "cmd/probe.h"

#include <string.h>

void probe_take(probe_info *p)
{
	memset(p, 0, sizeof *p);
	p->ctx.cc_major = p->ctx.cc_minor = -1;
}

void probe_release(probe_info *p)
{
	memset(p, 0, sizeof *p);
}
