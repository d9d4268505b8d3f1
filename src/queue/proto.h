/*
 * queue/proto: the daemon's wire protocol, JSON lines over a Unix socket
 * (docs/queue-protocol.md).  One request object a line, one reply object a
 * line, in order.  This file parses and validates requests and converts a
 * job spec to and from JSON (the same form is stored in SQLite).  It never
 * prints and never touches a socket; the fuzz target drives proto_parse.
 */
#ifndef GW_QUEUE_PROTO_H
#define GW_QUEUE_PROTO_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sched/job.h"

#define PROTO_VERSION 1
#define PROTO_MAX_LINE (1024 * 1024)   /* bytes in one request line */
#define PROTO_MAX_IDS 1024
#define PROTO_MAX_ARGS 4096             /* argv, env and run_args entries */
#define PROTO_QUEUE_PAGE 200            /* jobs in one 'queue' reply; 'next' asks for more */
#define PROTO_QUEUE_PAGE_MAX 1000       /* ... or up to this many when the request's 'page' asks */

typedef enum {
	PROTO_PING, PROTO_SUBMIT, PROTO_QUEUE, PROTO_SHOW, PROTO_LOGS, PROTO_CANCEL,
	PROTO_HOLD, PROTO_RELEASE, PROTO_QUOTA, PROTO_QUOTA_SET,
} proto_op;

typedef struct proto_req {
	proto_op op;
	job_spec spec;            /* submit (uid, gid, user come from the socket) */
	uint64_t ids[PROTO_MAX_IDS];  /* show, logs (one), cancel, hold, release */
	size_t n_ids;
	bool all;                 /* queue: ended jobs too */
	uint64_t limit;           /* queue: at most this many ended jobs (0 = 1000) */
	uint64_t page;            /* queue: jobs in a reply, at most PROTO_QUEUE_PAGE_MAX (0 = PROTO_QUEUE_PAGE) */
	bool has_cursor, cursor_ended;  /* queue: where the previous page ended (its 'next') */
	uint64_t cursor_id, cursor_left;
	uint64_t offset;          /* logs: byte offset to read from */
	/* quota set */
	char *project;
	bool has_vram, has_gpus, has_jobs, has_members;
	uint64_t vram_bytes, gpus, jobs;  /* UINT64_MAX = unlimited */
	char *members;            /* "alice,@lab" */
} proto_req;

const char *proto_op_name(proto_op op);
/*
 * Parse one request line (without its newline).  Returns 0, or -1 with a
 * one-line reason in err.  Unknown keys, wrong types, negative or
 * overflowing numbers and oversized arrays are errors.
 */
int proto_parse(const char *line, size_t len, proto_req *out, char *err, size_t errlen);
void proto_req_release(proto_req *r);

/* A job spec as JSON (stored adds uid, gid and user). */
json_t *proto_spec_to_json(const job_spec *s, bool stored);
int proto_spec_from_json(json_t *o, bool stored, job_spec *s, char *err, size_t errlen);

#endif
