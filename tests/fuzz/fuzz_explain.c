/*
 * libFuzzer target: explain's matcher (every signature of data/errors.tsv)
 * and the PyTorch out-of-memory parser over arbitrary text.  Any crash,
 * leak or sanitizer report is a bug, and so is a slow input: run.sh gives
 * this target a per-input time limit of 1 s, so a signature that is not
 * linear in its input shows up as a timeout.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "doctor/doctor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* explain reads text: a NUL ends it (cmd/explain.c turns NULs into newlines) */
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	for (size_t i = 0; i < size; i++)
		text[i] = data[i] ? (char)data[i] : '\n';
	text[size] = '\0';
	explain_match_t *m;
	size_t n;
	gw_error err = {0};
	if (explain_match(text, &m, &n, &err) != 0)
		abort(); /* the embedded table always loads */
	for (size_t i = 0; i < n; i++) {
		if (!m[i].id || !m[i].title)
			abort();
		if (m[i].offset > size || m[i].length > size - m[i].offset)
			abort(); /* a match lies inside the text */
	}
	explain_matches_free(m, n);
	oom_info o;
	if (explain_parse_oom(text, &o) == 0 && o.n_others > OOM_MAX_PROCS)
		abort();
	free(text);
	return 0;
}
