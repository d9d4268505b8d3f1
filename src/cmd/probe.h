/*
 * probe: gather what this machine says (GPUs, driver, Python environments)
 * for explain's machine-specific fixes.  Never fails: whatever cannot be
 * read is left unknown.
 */
#ifndef GW_CMD_PROBE_H
#define GW_CMD_PROBE_H

#include "doctor/doctor.h"

typedef struct probe_info {
	explain_context ctx;
	char driver[32];
	char gpu[96];
	char torch[64];
	char torch_cuda[16];
	char python[512];
} probe_info;

void probe_take(probe_info *p);
void probe_release(probe_info *p);

#endif
