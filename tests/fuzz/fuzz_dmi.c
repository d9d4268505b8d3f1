/*
 * libFuzzer target: the SMBIOS memory-device parser (src/hw/dmi.c) over a
 * raw table, as /sys/firmware/dmi/tables/DMI would hold it.  Truncated
 * structures, lying lengths and strings without their terminators must
 * give a clean refusal or a sane figure, never a read past the end.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hw/hw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size copy: ASan sees any read past the end */
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	hw_host_memory m;
	gw_error err = {0};
	int rc = hw_dmi_memory_parse(buf, size, &m, &err);
	if (rc == 0 && !(m.bandwidth_gbs > 0 && m.n_devices > 0 && m.mts > 0))
		abort();
	if (rc != 0 && !err.msg[0])
		abort();
	free(buf);
	return 0;
}
