/*
 * libFuzzer target: the queue daemon's request parser (queue/proto), the
 * code every byte from the socket goes through first.  A parsed submit is
 * also turned into its stored JSON and read back, as the daemon does.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "queue/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	proto_req r;
	char err[256];
	if (proto_parse((const char *)data, size, &r, err, sizeof err) == 0) {
		if (r.op == PROTO_SUBMIT) {
			json_t *o = proto_spec_to_json(&r.spec, true);
			job_spec s;
			if (proto_spec_from_json(o, true, &s, err, sizeof err) == 0)
				job_spec_release(&s);
			json_decref(o);
		}
		proto_req_release(&r);
	} else if (strlen(err) == 0) {
		__builtin_trap(); /* every refusal says why */
	}
	return 0;
}
