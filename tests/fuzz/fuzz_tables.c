/*
 * libFuzzer target: the knowledge-table loader.  The first byte of an
 * input picks a table (gpus, models, quants, used-prices, xid, errors ...);
 * the rest is written as that table in a data directory of its own, and
 * the whole loader runs over it as `gpuwise --data-dir DIR` would: the TSV
 * parser, the typed readers and their cell checks (kb_load_all), then a
 * lookup.  A broken table must be refused with a message naming it, never
 * crash or hang (run with -timeout so a slow input is a finding).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kb/kb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const tables[] = {"gpus", "models", "quants", "used-prices", "xid", "errors",
				     "cuda-drivers", "cuda-compat", "torch-builds", "cuda-arch", "bad-env",
				     "cloud-prices", "diffusion"};
#define NTABLES (sizeof tables / sizeof tables[0])

static char dir[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir[0]) {
		snprintf(dir, sizeof dir, "/tmp/gw-fuzz-tables.XXXXXX");
		if (!mkdtemp(dir))
			abort();
	}
	if (size < 1)
		return 0;
	const char *name = tables[data[0] % NTABLES];
	char path[128];
	snprintf(path, sizeof path, "%s/%s.tsv", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f)
		abort();
	fwrite(data + 1, 1, size - 1, f);
	fclose(f);
	kb_set_data_dir(dir);
	gw_error err = {0};
	int rc = kb_load_all(&err);
	if (rc && (!err.msg[0] || rc >= 0))
		abort(); /* a refusal must say why */
	if (!rc) {
		kb_gpu_find("rtx-4090");
		kb_model_find("llama3.1:8b");
	}
	kb_set_data_dir(NULL);
	unlink(path);
	return 0;
}
