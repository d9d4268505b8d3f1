/*
 * libFuzzer target: the safetensors header reader and the config.json
 * reader over arbitrary bytes.  Each input is tried as a whole file, as a
 * JSON header wrapped with a valid length prefix (so mutations explore the
 * JSON rather than the length), and as a config.json.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int rc, model_desc *m, const gw_error *err)
{
	if (rc == 0)
		model_release(m);
	else if (!err->msg[0] || err->code >= 0)
		abort(); /* a failure must say why */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	model_desc m;
	gw_error err = {0};
	check(safetensors_read_mem(data, size, size, &m, &err), &m, &err);

	uint8_t *buf = malloc(size + 8);
	if (!buf)
		return 0;
	for (int i = 0; i < 8; i++)
		buf[i] = (uint8_t)((uint64_t)size >> (8 * i));
	if (size)
		memcpy(buf + 8, data, size);
	/* the header alone, describing a file with 64 KiB of data after it */
	check(safetensors_read_mem(buf, size + 8, (uint64_t)size + 8 + 65536, &m, &err), &m, &err);
	free(buf);

	check(hfconfig_read_mem((const char *)data, size, &m, &err), &m, &err);
	return 0;
}
