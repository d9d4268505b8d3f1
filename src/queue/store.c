/*
 * queue/store: SQLite persistence of jobs and projects.
 */
#include <sqlite3.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue/proto.h"
#include "queue/store.h"

struct store {
	sqlite3 *db;
	sqlite3_stmt *ins, *upd, *get;
	char *path;
	dev_t dev, wal_dev;      /* the files this connection writes */
	ino_t ino, wal_ino;      /* wal_ino 0: not seen yet */
	char *broken;            /* why commits are refused for good, NULL none */
};

/*
 * Are the database and its WAL still the files this connection writes?
 * Removed (or replaced) under the running daemon, its commits would reach
 * no file anyone opens again: every acknowledged job lost at the next
 * start.  Then refuse every commit from now on, with the reason.
 */
static int check_linked(store *s, gw_error *err)
{
	if (s->broken)
		return gw_fail(err, GW_EIO, "%s", s->broken);
	struct stat a;
	char *wal = xasprintf("%s-wal", s->path);
	const char *what = NULL;
	if (stat(s->path, &a) != 0 || a.st_dev != s->dev || a.st_ino != s->ino || a.st_nlink == 0)
		what = s->path;
	else if (stat(wal, &a) == 0) {
		if (!s->wal_ino) {
			s->wal_dev = a.st_dev;
			s->wal_ino = a.st_ino;
		} else if (a.st_dev != s->wal_dev || a.st_ino != s->wal_ino) {
			what = wal;
		}
	} else if (s->wal_ino) {
		what = wal;
	}
	if (what)
		s->broken = xasprintf("state database: '%s' was removed or replaced while the daemon ran; "
				      "it acknowledges nothing more (stop it, restore the file or move the state "
				      "aside, and start it again)", what);
	free(wal);
	return s->broken ? gw_fail(err, GW_EIO, "%s", s->broken) : 0;
}

static int db_fail(store *s, gw_error *err, const char *what)
{
	return gw_fail(err, GW_EIO, "state database: %s: %s", what, sqlite3_errmsg(s->db));
}

static const char schema[] =
	"CREATE TABLE IF NOT EXISTS jobs ("
	" id INTEGER PRIMARY KEY AUTOINCREMENT,"
	" state INTEGER NOT NULL, project TEXT NOT NULL, uid INTEGER NOT NULL,"
	" spec TEXT NOT NULL, submit_ms INTEGER NOT NULL, start_ms INTEGER NOT NULL DEFAULT 0,"
	" end_ms INTEGER NOT NULL DEFAULT 0, pid INTEGER NOT NULL DEFAULT 0,"
	" pid_start INTEGER NOT NULL DEFAULT 0, exit_status INTEGER NOT NULL DEFAULT 0,"
	" placement TEXT NOT NULL DEFAULT '', borrowed INTEGER NOT NULL DEFAULT 0,"
	" reason TEXT, vram_peak INTEGER NOT NULL DEFAULT 0, logs_kept INTEGER NOT NULL DEFAULT 1,"
	" stop_kind INTEGER NOT NULL DEFAULT 0, stop_deadline INTEGER NOT NULL DEFAULT 0,"
	" log_bytes INTEGER NOT NULL DEFAULT 0);"
	"CREATE INDEX IF NOT EXISTS jobs_active ON jobs(state) WHERE state < 3;"
	"CREATE INDEX IF NOT EXISTS jobs_logs ON jobs(uid) WHERE logs_kept = 1;"
	"CREATE TABLE IF NOT EXISTS projects ("
	" name TEXT PRIMARY KEY, vram_bytes INTEGER, gpus INTEGER, jobs INTEGER,"
	" members TEXT NOT NULL DEFAULT '');"
	"CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);"
	"INSERT OR IGNORE INTO meta VALUES ('schema', '1');";

/*
 * Each user's kept log bytes (ended jobs' logs_kept rows' log_bytes), kept
 * by a trigger in the transaction that changes a job's bytes or drops its
 * logs, so the count is as durable as the rows and never re-read from the
 * disk; the daemon corrects it at start-up with one scan (store_logs_recount).
 */
static const char schema_logs[] =
	"CREATE TABLE IF NOT EXISTS user_logs (uid INTEGER PRIMARY KEY, bytes INTEGER NOT NULL DEFAULT 0);"
	"CREATE TRIGGER IF NOT EXISTS jobs_log_bytes AFTER UPDATE OF log_bytes, logs_kept ON jobs"
	" WHEN OLD.log_bytes * OLD.logs_kept != NEW.log_bytes * NEW.logs_kept BEGIN"
	" INSERT OR IGNORE INTO user_logs (uid, bytes) VALUES (NEW.uid, 0);"
	" UPDATE user_logs SET bytes = bytes - OLD.log_bytes * OLD.logs_kept + NEW.log_bytes * NEW.logs_kept"
	" WHERE uid = NEW.uid;"
	" END;";

/* True for the codes SQLite gives a file that is not (or no longer) a database. */
static bool damaged_code(int code)
{
	code &= 0xff;
	return code == SQLITE_CORRUPT || code == SQLITE_NOTADB;
}

/* First row of PRAGMA quick_check: "ok", or what is wrong (malloc'd). */
static char *quick_check(sqlite3 *db)
{
	sqlite3_stmt *st;
	char *res = NULL;
	if (sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &st, NULL) != SQLITE_OK)
		return xstrdup(sqlite3_errmsg(db));
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0);
		res = xstrdup(t ? t : "no result");
		/* one line: "*** in database main ***\nPage 2: ..." becomes "Page 2: ..." */
		const char *head = "*** in database main ***\n";
		if (str_starts(res, head))
			memmove(res, res + strlen(head), strlen(res) - strlen(head) + 1);
		for (char *c = res; *c; c++)
			if (*c == '\n')
				*c = ' ';
	} else
		res = xstrdup(sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return res;
}

int store_open(const char *path, store **out, gw_error *err)
{
	store *s = xcalloc(1, sizeof *s);
	int rc = GW_EIO;
	struct stat sb;
	/* SQLite takes a 0-byte file for a new database: ours never is one */
	if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size == 0) {
		rc = gw_fail(err, GW_EFORMAT, "is empty (0 bytes)");
		goto out;
	}
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		rc = gw_fail(err, GW_EIO, "cannot open state database '%s': %s", path,
			     s->db ? sqlite3_errmsg(s->db) : "out of memory");
		goto out;
	}
	sqlite3_busy_timeout(s->db, 5000);
	s->path = xstrdup(path);
	if (stat(path, &sb) == 0) {
		s->dev = sb.st_dev;
		s->ino = sb.st_ino;
	}
	/* WAL with synchronous=FULL: a commit is on disk before it returns */
	int e = sqlite3_exec(s->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA cache_size=-2000;",
			     NULL, NULL, NULL);
	if (e == SQLITE_OK) {
		char *qc = quick_check(s->db);
		bool good = strcmp(qc, "ok") == 0;
		if (!good)
			rc = gw_fail(err, GW_EFORMAT, "is damaged (quick_check: %s)", qc);
		free(qc);
		if (!good)
			goto out;
		e = sqlite3_exec(s->db, schema, NULL, NULL, NULL);
	}
	/* a database of an earlier version: the columns of a stop under way */
	sqlite3_stmt *probe = NULL;
	if (e == SQLITE_OK && sqlite3_prepare_v2(s->db, "SELECT stop_kind FROM jobs LIMIT 0", -1, &probe, NULL) != SQLITE_OK)
		e = sqlite3_exec(s->db,
				 "ALTER TABLE jobs ADD COLUMN stop_kind INTEGER NOT NULL DEFAULT 0;"
				 "ALTER TABLE jobs ADD COLUMN stop_deadline INTEGER NOT NULL DEFAULT 0;",
				 NULL, NULL, NULL);
	sqlite3_finalize(probe);
	/* ... and of the per-user log bytes */
	probe = NULL;
	if (e == SQLITE_OK && sqlite3_prepare_v2(s->db, "SELECT log_bytes FROM jobs LIMIT 0", -1, &probe, NULL) != SQLITE_OK)
		e = sqlite3_exec(s->db, "ALTER TABLE jobs ADD COLUMN log_bytes INTEGER NOT NULL DEFAULT 0;", NULL, NULL, NULL);
	sqlite3_finalize(probe);
	if (e == SQLITE_OK)
		e = sqlite3_exec(s->db, schema_logs, NULL, NULL, NULL);
	if (e != SQLITE_OK) {
		if (damaged_code(sqlite3_extended_errcode(s->db)))
			rc = gw_fail(err, GW_EFORMAT, "is damaged (%s)", sqlite3_errmsg(s->db));
		else
			rc = gw_fail(err, GW_EIO, "cannot set up state database '%s': %s", path, sqlite3_errmsg(s->db));
		goto out;
	}
	if (sqlite3_prepare_v2(s->db,
			       "INSERT INTO jobs (state, project, uid, spec, submit_ms, reason) VALUES (?,?,?,?,?,?)",
			       -1, &s->ins, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db,
			       "UPDATE jobs SET state=?, start_ms=?, end_ms=?, pid=?, pid_start=?, exit_status=?,"
			       " placement=?, borrowed=?, reason=?, vram_peak=?, stop_kind=?, stop_deadline=? WHERE id=?",
			       -1, &s->upd, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db,
			       "SELECT id, state, spec, submit_ms, start_ms, end_ms, pid, pid_start, exit_status,"
			       " placement, borrowed, reason, vram_peak, stop_kind, stop_deadline FROM jobs WHERE id=?",
			       -1, &s->get, NULL) != SQLITE_OK) {
		rc = db_fail(s, err, "prepare");
		goto out;
	}
	*out = s;
	return 0;
out:
	store_close(s);
	return rc;
}

void store_close(store *s)
{
	if (!s)
		return;
	sqlite3_finalize(s->ins);
	sqlite3_finalize(s->upd);
	sqlite3_finalize(s->get);
	sqlite3_close(s->db);
	free(s->path);
	free(s->broken);
	free(s);
}

int store_begin(store *s, gw_error *err)
{
	return sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK ? 0 : db_fail(s, err, "begin");
}

int store_commit(store *s, gw_error *err)
{
	if (check_linked(s, err))
		return -1;
	return sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK ? 0 : db_fail(s, err, "commit");
}

void store_rollback(store *s)
{
	/* after SQLITE_FULL SQLite may have rolled back already: then this fails, harmlessly */
	if (!sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

bool store_in_tx(store *s)
{
	return !sqlite3_get_autocommit(s->db);
}

uint64_t store_last_id(store *s)
{
	sqlite3_stmt *st;
	uint64_t n = 0;
	if (sqlite3_prepare_v2(s->db,
			       "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'jobs'), 0),"
			       " coalesce((SELECT max(id) FROM jobs), 0))",
			       -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			n = (uint64_t)sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	return n;
}

int store_set_last_id(store *s, uint64_t id, gw_error *err)
{
	sqlite3_stmt *st;
	/* AUTOINCREMENT hands out max(seq, max(id)) + 1; sqlite_sequence exists with the jobs table */
	if (sqlite3_prepare_v2(s->db, "DELETE FROM sqlite_sequence WHERE name = 'jobs'", -1, &st, NULL) != SQLITE_OK)
		return db_fail(s, err, "set the next id");
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE ||
	    sqlite3_prepare_v2(s->db, "INSERT INTO sqlite_sequence (name, seq) VALUES ('jobs', ?)", -1, &st, NULL) !=
		    SQLITE_OK)
		return db_fail(s, err, "set the next id");
	sqlite3_bind_int64(st, 1, (sqlite3_int64)id);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_fail(s, err, "set the next id");
}

int store_add_job(store *s, job *j, gw_error *err)
{
	json_t *o = proto_spec_to_json(&j->spec, true);
	char *text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	sqlite3_reset(s->ins);
	sqlite3_bind_int(s->ins, 1, j->state);
	sqlite3_bind_text(s->ins, 2, j->spec.project, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s->ins, 3, j->spec.uid);
	sqlite3_bind_text(s->ins, 4, text, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s->ins, 5, (sqlite3_int64)j->submit_ms);
	if (j->reason)
		sqlite3_bind_text(s->ins, 6, j->reason, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s->ins, 6);
	int rc = sqlite3_step(s->ins);
	free(text);
	sqlite3_clear_bindings(s->ins);
	if (rc != SQLITE_DONE)
		return db_fail(s, err, "insert job");
	j->id = (uint64_t)sqlite3_last_insert_rowid(s->db);
	return 0;
}

static void placement_text(const job *j, char *buf, size_t n)
{
	size_t l = 0;
	buf[0] = 0;
	for (int i = 0; i < j->n_placed && l + 16 < n; i++)
		l += (size_t)snprintf(buf + l, n - l, "%s%d", i ? "," : "", j->gpu_idx[i]);
	if (j->mig_idx >= 0 && l + 16 < n)
		snprintf(buf + l, n - l, "/%d", j->mig_idx);
}

static void placement_parse(job *j, const char *t)
{
	j->n_placed = 0;
	j->mig_idx = -1;
	while (t && *t && j->n_placed < 16) {
		char *end;
		long v = strtol(t, &end, 10);
		if (end == t)
			break;
		j->gpu_idx[j->n_placed++] = (int)v;
		t = end;
		if (*t == '/') {
			j->mig_idx = (int)strtol(t + 1, &end, 10);
			break;
		}
		if (*t == ',')
			t++;
	}
}

int store_update_job(store *s, const job *j, gw_error *err)
{
	char pl[128];
	placement_text(j, pl, sizeof pl);
	sqlite3_stmt *u = s->upd;
	sqlite3_reset(u);
	sqlite3_bind_int(u, 1, j->state);
	sqlite3_bind_int64(u, 2, (sqlite3_int64)j->start_ms);
	sqlite3_bind_int64(u, 3, (sqlite3_int64)j->end_ms);
	sqlite3_bind_int(u, 4, j->pid);
	sqlite3_bind_int64(u, 5, (sqlite3_int64)j->pid_start_ticks);
	sqlite3_bind_int(u, 6, j->exit_status);
	sqlite3_bind_text(u, 7, pl, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(u, 8, j->borrowed);
	if (j->reason)
		sqlite3_bind_text(u, 9, j->reason, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(u, 9);
	sqlite3_bind_int64(u, 10, (sqlite3_int64)j->vram_peak_bytes);
	sqlite3_bind_int(u, 11, j->stop_kind);
	sqlite3_bind_int64(u, 12, (sqlite3_int64)j->stop_deadline_ms);
	sqlite3_bind_int64(u, 13, (sqlite3_int64)j->id);
	int rc = sqlite3_step(u);
	sqlite3_clear_bindings(u);
	return rc == SQLITE_DONE ? 0 : db_fail(s, err, "update job");
}

/* Fill j from a row of (id, state, spec, submit, start, end, pid, pid_start, exit, placement, borrowed, reason, peak). */
static int row_to_job(sqlite3_stmt *st, job *j, gw_error *err)
{
	memset(j, 0, sizeof *j);
	j->id = (uint64_t)sqlite3_column_int64(st, 0);
	j->state = (job_state)sqlite3_column_int(st, 1);
	const char *spec = (const char *)sqlite3_column_text(st, 2);
	json_error_t je;
	json_t *o = spec ? json_loads(spec, 0, &je) : NULL;
	char e[200];
	if (!o || proto_spec_from_json(o, true, &j->spec, e, sizeof e)) {
		json_decref(o);
		return gw_fail(err, GW_EFORMAT, "state database: job %llu has a broken spec",
			       (unsigned long long)j->id);
	}
	json_decref(o);
	j->submit_ms = (uint64_t)sqlite3_column_int64(st, 3);
	j->start_ms = (uint64_t)sqlite3_column_int64(st, 4);
	j->end_ms = (uint64_t)sqlite3_column_int64(st, 5);
	j->pid = sqlite3_column_int(st, 6);
	j->pid_start_ticks = (uint64_t)sqlite3_column_int64(st, 7);
	j->exit_status = sqlite3_column_int(st, 8);
	placement_parse(j, (const char *)sqlite3_column_text(st, 9));
	j->borrowed = sqlite3_column_int(st, 10) != 0;
	const char *r = (const char *)sqlite3_column_text(st, 11);
	j->reason = r ? xstrdup(r) : NULL;
	j->vram_peak_bytes = (uint64_t)sqlite3_column_int64(st, 12);
	j->stop_kind = sqlite3_column_int(st, 13);
	j->stop_deadline_ms = (uint64_t)sqlite3_column_int64(st, 14);
	return 0;
}

#define JOB_COLS "id, state, spec, submit_ms, start_ms, end_ms, pid, pid_start, exit_status, placement, borrowed, reason, vram_peak, stop_kind, stop_deadline"

int store_load_active(store *s, job ***out, size_t *n, gw_error *err)
{
	sqlite3_stmt *st;
	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(s->db, "SELECT " JOB_COLS " FROM jobs WHERE state < 3 ORDER BY id", -1, &st,
			       NULL) != SQLITE_OK)
		return db_fail(s, err, "load jobs");
	size_t cap = 0;
	int rc = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		job *j = xcalloc(1, sizeof *j);
		if ((rc = row_to_job(st, j, err))) {
			job_release(j);
			free(j);
			break;
		}
		*out = xgrow(*out, &cap, *n + 1, sizeof **out);
		(*out)[(*n)++] = j;
	}
	sqlite3_finalize(st);
	return rc;
}

int store_get_job(store *s, uint64_t id, job *out, gw_error *err)
{
	sqlite3_reset(s->get);
	sqlite3_bind_int64(s->get, 1, (sqlite3_int64)id);
	int rc = sqlite3_step(s->get);
	if (rc != SQLITE_ROW) {
		sqlite3_reset(s->get);
		return rc == SQLITE_DONE ? gw_fail(err, GW_ENOTFOUND, "no job %llu", (unsigned long long)id)
					 : db_fail(s, err, "read job");
	}
	rc = row_to_job(s->get, out, err);
	sqlite3_reset(s->get);
	return rc;
}

int store_each_ended(store *s, uint64_t limit, void (*fn)(void *ctx, const job *j), void *ctx,
		     gw_error *err)
{
	return store_each_ended_before(s, 0, limit, fn, ctx, err);
}

int store_each_ended_before(store *s, uint64_t before_id, uint64_t limit, void (*fn)(void *ctx, const job *j),
			    void *ctx, gw_error *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT " JOB_COLS " FROM jobs WHERE state >= 3 AND id < ? ORDER BY id DESC LIMIT ?",
			       -1, &st, NULL) != SQLITE_OK)
		return db_fail(s, err, "list jobs");
	sqlite3_bind_int64(st, 1, before_id ? (sqlite3_int64)before_id : INT64_MAX);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)limit);
	int rc = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		job j;
		if ((rc = row_to_job(st, &j, err)))
			break;
		fn(ctx, &j);
		job_release(&j);
	}
	sqlite3_finalize(st);
	return rc;
}

int store_expire_logs(store *s, uint64_t before_ms, uint64_t **ids, size_t *n, gw_error *err)
{
	sqlite3_stmt *st;
	*ids = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(s->db, "SELECT id FROM jobs WHERE state >= 3 AND logs_kept = 1 AND end_ms < ?",
			       -1, &st, NULL) != SQLITE_OK)
		return db_fail(s, err, "expire logs");
	sqlite3_bind_int64(st, 1, (sqlite3_int64)before_ms);
	size_t cap = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		*ids = xgrow(*ids, &cap, *n + 1, sizeof **ids);
		(*ids)[(*n)++] = (uint64_t)sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	if (*n && sqlite3_prepare_v2(s->db, "UPDATE jobs SET logs_kept = 0 WHERE state >= 3 AND logs_kept = 1 AND end_ms < ?",
				     -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, (sqlite3_int64)before_ms);
		sqlite3_step(st);
		sqlite3_finalize(st);
	}
	return 0;
}

int store_kept_logs(store *s, int64_t uid, store_log **out, size_t *n, gw_error *err)
{
	sqlite3_stmt *st;
	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(s->db,
			       uid < 0 ? "SELECT id, uid, state >= 3, log_bytes, end_ms FROM jobs WHERE logs_kept = 1 ORDER BY state >= 3 DESC, end_ms, id"
				       : "SELECT id, uid, state >= 3, log_bytes, end_ms FROM jobs WHERE logs_kept = 1 AND uid = ? "
					 "ORDER BY state >= 3 DESC, end_ms, id",
			       -1, &st, NULL) != SQLITE_OK)
		return db_fail(s, err, "list kept logs");
	if (uid >= 0)
		sqlite3_bind_int64(st, 1, uid);
	size_t cap = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		*out = xgrow(*out, &cap, *n + 1, sizeof **out);
		(*out)[(*n)++] = (store_log){.id = (uint64_t)sqlite3_column_int64(st, 0),
					     .uid = (uint32_t)sqlite3_column_int64(st, 1),
					     .ended = sqlite3_column_int(st, 2) != 0,
					     .bytes = (uint64_t)sqlite3_column_int64(st, 3),
					     .end_ms = (uint64_t)sqlite3_column_int64(st, 4)};
	}
	sqlite3_finalize(st);
	return 0;
}

int store_drop_log(store *s, uint64_t id, gw_error *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "UPDATE jobs SET logs_kept = 0 WHERE id = ?", -1, &st, NULL) != SQLITE_OK)
		return db_fail(s, err, "drop a log");
	sqlite3_bind_int64(st, 1, (sqlite3_int64)id);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_fail(s, err, "drop a log");
}

int store_set_log_bytes(store *s, uint64_t id, uint64_t bytes, gw_error *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "UPDATE jobs SET log_bytes = ? WHERE id = ?", -1, &st, NULL) != SQLITE_OK)
		return db_fail(s, err, "count a job's log");
	sqlite3_bind_int64(st, 1, (sqlite3_int64)bytes);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)id);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_fail(s, err, "count a job's log");
}

uint64_t store_user_log_bytes(store *s, int64_t uid, size_t *users)
{
	sqlite3_stmt *st;
	uint64_t b = 0;
	if (users)
		*users = 0;
	if (sqlite3_prepare_v2(s->db,
			       uid < 0 ? "SELECT coalesce(sum(bytes), 0), count(*) FROM user_logs WHERE bytes > 0"
				       : "SELECT coalesce(sum(bytes), 0), count(*) FROM user_logs WHERE bytes > 0 AND uid = ?",
			       -1, &st, NULL) != SQLITE_OK)
		return 0;
	if (uid >= 0)
		sqlite3_bind_int64(st, 1, uid);
	if (sqlite3_step(st) == SQLITE_ROW) {
		sqlite3_int64 v = sqlite3_column_int64(st, 0);
		b = v > 0 ? (uint64_t)v : 0;
		if (users)
			*users = (size_t)sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	return b;
}

int store_logs_recount(store *s, gw_error *err)
{
	if (sqlite3_exec(s->db,
			 "DELETE FROM user_logs;"
			 "INSERT INTO user_logs (uid, bytes) SELECT uid, sum(log_bytes) FROM jobs"
			 " WHERE logs_kept = 1 AND state >= 3 GROUP BY uid;",
			 NULL, NULL, NULL) != SQLITE_OK)
		return db_fail(s, err, "count the users' logs");
	return 0;
}

uint64_t store_count_jobs(store *s)
{
	sqlite3_stmt *st;
	uint64_t n = 0;
	if (sqlite3_prepare_v2(s->db, "SELECT count(*) FROM jobs", -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			n = (uint64_t)sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	return n;
}

static uint64_t col_limit(sqlite3_stmt *st, int c)
{
	return sqlite3_column_type(st, c) == SQLITE_NULL ? UINT64_MAX : (uint64_t)sqlite3_column_int64(st, c);
}

int store_load_projects(store *s, store_project **out, size_t *n, gw_error *err)
{
	sqlite3_stmt *st;
	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(s->db, "SELECT name, vram_bytes, gpus, jobs, members FROM projects ORDER BY name",
			       -1, &st, NULL) != SQLITE_OK)
		return db_fail(s, err, "load projects");
	size_t cap = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		*out = xgrow(*out, &cap, *n + 1, sizeof **out);
		store_project *p = &(*out)[(*n)++];
		p->name = xstrdup((const char *)sqlite3_column_text(st, 0));
		p->vram_bytes = col_limit(st, 1);
		p->gpus = col_limit(st, 2);
		p->jobs = col_limit(st, 3);
		const char *m = (const char *)sqlite3_column_text(st, 4);
		p->members = xstrdup(m ? m : "");
	}
	sqlite3_finalize(st);
	return 0;
}

static void bind_limit(sqlite3_stmt *st, int c, uint64_t v)
{
	if (v == UINT64_MAX)
		sqlite3_bind_null(st, c);
	else
		sqlite3_bind_int64(st, c, (sqlite3_int64)v);
}

int store_set_project(store *s, const store_project *p, gw_error *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO projects VALUES (?,?,?,?,?)", -1, &st, NULL) !=
	    SQLITE_OK)
		return db_fail(s, err, "set project");
	sqlite3_bind_text(st, 1, p->name, -1, SQLITE_STATIC);
	bind_limit(st, 2, p->vram_bytes);
	bind_limit(st, 3, p->gpus);
	bind_limit(st, 4, p->jobs);
	sqlite3_bind_text(st, 5, p->members ? p->members : "", -1, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_fail(s, err, "set project");
}

void store_projects_free(store_project *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(p[i].name);
		free(p[i].members);
	}
	free(p);
}

int store_each_ran_since(store *s, uint64_t since_ms, void (*fn)(void *ctx, const job *j), void *ctx,
			 gw_error *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT " JOB_COLS " FROM jobs WHERE state >= 3 AND start_ms > 0 AND end_ms >= ?",
			       -1, &st, NULL) != SQLITE_OK)
		return db_fail(s, err, "list jobs");
	sqlite3_bind_int64(st, 1, (sqlite3_int64)since_ms);
	int rc = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		job j;
		if ((rc = row_to_job(st, &j, err)))
			break;
		fn(ctx, &j);
		job_release(&j);
	}
	sqlite3_finalize(st);
	return rc;
}
