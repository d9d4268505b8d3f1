/*
 * libFuzzer target: the GGUF reader over arbitrary bytes (whole file in
 * memory).  Any crash, leak or sanitizer report is a bug; errors are fine.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	model_desc m;
	gw_error err = {0};
	if (gguf_read_mem(data, size, size, &m, &err) == 0) {
		model_release(&m);
	} else if (!err.msg[0] || err.code >= 0) {
		abort(); /* a failure must say why */
	}
	/* the same bytes as a header prefix of a much larger file */
	if (gguf_read_mem(data, size, (uint64_t)size + (1ULL << 36), &m, &err) == 0)
		model_release(&m);
	return 0;
}
