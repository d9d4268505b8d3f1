/*
 * queue/store: the daemon's state in SQLite (WAL, synchronous=FULL): every
 * job ever submitted with its spec and what happened to it, and the
 * projects with their quotas and members.  Callers group writes between
 * store_begin and store_commit (group commit).
 */
#ifndef GW_QUEUE_STORE_H
#define GW_QUEUE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sched/job.h"
#include "util/util.h"

typedef struct store store;

typedef struct store_project {
	char *name;
	uint64_t vram_bytes, gpus, jobs;   /* UINT64_MAX = unlimited */
	char *members;                     /* "alice,@lab"; "" = everyone */
} store_project;

/*
 * Open (creating) the database at path.  GW_EFORMAT, with err->msg the
 * rest of a sentence about the file ("is empty (0 bytes)", "is damaged
 * (...)"), when it is not a sound database: a 0-byte file, or one that
 * fails PRAGMA quick_check or is not SQLite at all.
 */
int store_open(const char *path, store **out, gw_error *err);
void store_close(store *s);
int store_begin(store *s, gw_error *err);
int store_commit(store *s, gw_error *err);
/* Undo the open transaction, if SQLite has not already. */
void store_rollback(store *s);
bool store_in_tx(store *s);
/* The highest job id ever handed out (AUTOINCREMENT's sequence), 0 for none. */
uint64_t store_last_id(store *s);
/* Make the next job id last + 1 (a new database continuing an old one's ids). */
int store_set_last_id(store *s, uint64_t last, gw_error *err);

/* Insert a new job; sets j->id. */
int store_add_job(store *s, job *j, gw_error *err);
/* Write what changes (state, times, pid, placement, reason, peak). */
int store_update_job(store *s, const job *j, gw_error *err);
/* Every job not ended, in id order; the caller frees each with job_release+free. */
int store_load_active(store *s, job ***out, size_t *n, gw_error *err);
/* One job by id (any state); GW_ENOTFOUND when absent. */
int store_get_job(store *s, uint64_t id, job *out, gw_error *err);
/* Ended jobs, newest first, at most limit; each passed to fn. */
int store_each_ended(store *s, uint64_t limit, void (*fn)(void *ctx, const job *j), void *ctx,
		     gw_error *err);
/* The same, only ids below before_id (0: no bound): one page of a listing. */
int store_each_ended_before(store *s, uint64_t before_id, uint64_t limit, void (*fn)(void *ctx, const job *j),
			    void *ctx, gw_error *err);
/* Ended jobs that ran and ended at since_ms or later, each passed to fn (fair-share usage). */
int store_each_ran_since(store *s, uint64_t since_ms, void (*fn)(void *ctx, const job *j), void *ctx,
			 gw_error *err);
/* Ended jobs whose logs are older than before_ms and still kept: ids, marked gone. */
int store_expire_logs(store *s, uint64_t before_ms, uint64_t **ids, size_t *n, gw_error *err);
uint64_t store_count_jobs(store *s);
/* Jobs whose logs are kept (uid -1: every user's): the ended ones first, oldest end first. */
typedef struct store_log {
	uint64_t id;
	uint32_t uid;
	bool ended;
	uint64_t bytes;      /* its log_bytes: what its logs took when it ended (0 while it runs) */
	uint64_t end_ms;
} store_log;
int store_kept_logs(store *s, int64_t uid, store_log **out, size_t *n, gw_error *err);
/* Mark one job's logs removed. */
int store_drop_log(store *s, uint64_t id, gw_error *err);
/* An ended job's log bytes (user_logs follows, by trigger). */
int store_set_log_bytes(store *s, uint64_t id, uint64_t bytes, gw_error *err);
/* A user's kept log bytes from user_logs (uid < 0: everyone's); *users: users with any. */
uint64_t store_user_log_bytes(store *s, int64_t uid, size_t *users);
/* user_logs again from the jobs' log_bytes (after those were corrected). */
int store_logs_recount(store *s, gw_error *err);

int store_load_projects(store *s, store_project **out, size_t *n, gw_error *err);
int store_set_project(store *s, const store_project *p, gw_error *err);
void store_projects_free(store_project *p, size_t n);

#endif
