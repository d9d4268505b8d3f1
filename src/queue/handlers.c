/*
 * queue/handlers: one function per request of the protocol
 * (docs/queue-protocol.md); each appends exactly one reply line.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "queue/daemon_int.h"

/* ---- replies ---------------------------------------------------------------------- */
static void reply(client *c, json_t *o)
{
	json_object_set_new(o, "v", json_integer(PROTO_VERSION));
	char *t = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!t)
		return;
	sb_puts(&c->out, t);
	sb_add(&c->out, "\n", 1);
	free(t);
}


void qd_reply_error(client *c, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	json_t *o = json_object();
	json_object_set_new(o, "ok", json_false());
	json_object_set_new(o, "error", json_string(msg));
	reply(c, o);
}

static json_t *ok_reply(void)
{
	json_t *o = json_object();
	json_object_set_new(o, "ok", json_true());
	return o;
}

/*
 * What a shared request is charged on each GPU model here, one entry per
 * model with standard sizes: [{"model": ..., "bytes": ...}]; null when no
 * model has sizes or the job is not shared.
 */
static json_t *standard_sizes_json(qd *d, const job_spec *s)
{
	if (s->mode != JOB_MODE_SHARED)
		return json_null();
	json_t *a = json_array();
	bool sized = false;
	for (size_t i = 0; i < d->n_gpus; i++) {
		const sched_node_gpu *g = &d->gpus[i];
		bool seen = false;
		for (size_t k = 0; k < i; k++)
			seen |= strcmp(d->gpus[k].name, g->name) == 0;
		if (seen || g->n_migs)
			continue;
		sized |= g->n_slots > 0;
		json_t *e = json_object();
		json_object_set_new(e, "model", json_string(g->name));
		json_object_set_new(e, "bytes", json_integer((json_int_t)sched_gpu_charge(s, g)));
		json_object_set_new(e, "standard", json_boolean(g->n_slots > 0));
		json_array_append_new(a, e);
	}
	if (!sized) {
		json_decref(a);
		return json_null();
	}
	return a;
}

static json_t *job_json(qd *d, const job *j, bool detail)
{
	json_t *o = json_object();
	const job_spec *s = &j->spec;
	uint64_t now = wall_ms();
	json_object_set_new(o, "id", json_integer((json_int_t)j->id));
	json_object_set_new(o, "name", json_string(s->name ? s->name : s->argc ? s->argv[0] : "?"));
	json_object_set_new(o, "state", json_string(job_state_name(j->state)));
	json_object_set_new(o, "project", json_string(s->project ? s->project : "default"));
	json_object_set_new(o, "user", json_string(s->user ? s->user : "?"));
	json_object_set_new(o, "uid", json_integer(s->uid));
	json_object_set_new(o, "mode", s->mode == JOB_MODE_MIG ? json_sprintf("mig:%s", s->mig_profile)
							      : json_string(job_mode_name(s->mode)));
	json_object_set_new(o, "gpus_requested", json_integer(s->n_gpus));
	json_object_set_new(o, "vram_request_bytes", json_integer((json_int_t)s->vram_bytes));
	/* once placed: what counts against the quota per GPU (the standard size there) */
	bool placed = j->n_placed > 0 && j->n_placed == s->n_gpus;
	json_object_set_new(o, "vram_charged_bytes",
			    jint_or_null(placed, (long long)(sched_job_vram_bytes(j, d->gpus, d->n_gpus) / (uint64_t)(s->n_gpus > 0 ? s->n_gpus : 1))));
	json_object_set_new(o, "queue_position", jint_or_null(j->state == JOB_QUEUED && j->queue_pos > 0, (long long)j->queue_pos));
	json_object_set_new(o, "estimated_start_ms", jint_or_null(j->state == JOB_QUEUED && j->est_start_ms > 0, (long long)j->est_start_ms));
	json_object_set_new(o, "vram_measured_bytes", jint_or_null(j->vram_peak_bytes > 0, (long long)j->vram_peak_bytes));
	json_object_set_new(o, "priority", json_integer(s->priority));
	json_object_set_new(o, "priority_level", json_integer(s->boost));
	json_t *g = json_array(), *u = json_array();
	for (int i = 0; i < j->n_placed; i++) {
		json_array_append_new(g, json_integer(j->gpu_idx[i]));
		int gi = j->gpu_idx[i];
		if (gi >= 0 && (size_t)gi < d->n_gpus) {
			if (j->mig_idx >= 0 && (size_t)j->mig_idx < d->gpus[gi].n_migs)
				json_array_append_new(u, json_string(d->gpus[gi].migs[j->mig_idx].uuid));
			else
				json_array_append_new(u, json_string(d->gpus[gi].uuid));
		}
	}
	json_object_set_new(o, "gpus", g);
	json_object_set_new(o, "gpu_uuids", u);
	json_object_set_new(o, "borrowed", json_boolean(j->borrowed));
	json_object_set_new(o, "submit_ms", json_integer((json_int_t)j->submit_ms));
	json_object_set_new(o, "start_ms", jint_or_null(j->start_ms > 0, (long long)j->start_ms));
	json_object_set_new(o, "end_ms", jint_or_null(j->end_ms > 0, (long long)j->end_ms));
	uint64_t wait_end = j->start_ms ? j->start_ms : j->end_ms ? j->end_ms : now;
	json_object_set_new(o, "wait_ms", json_integer((json_int_t)(wait_end > j->submit_ms ? wait_end - j->submit_ms : 0)));
	uint64_t run_end = j->end_ms ? j->end_ms : now;
	json_object_set_new(o, "run_ms", jint_or_null(j->start_ms > 0, (long long)(j->start_ms && run_end > j->start_ms ? run_end - j->start_ms : 0)));
	json_object_set_new(o, "exit_status", jint_or_null(job_state_ended(j->state) && j->state != JOB_CANCELLED, j->exit_status));
	json_object_set_new(o, "reason", jstr_or_null(j->reason));
	if (detail) {
		json_object_set_new(o, "pid", jint_or_null(j->pid > 0, j->pid));
		json_object_set_new(o, "spec", proto_spec_to_json(s, true));
		json_object_set_new(o, "vram_standard_sizes", standard_sizes_json(d, s));
	}
	return o;
}

/* ---- listing rows as text ------------------------------------------------------ */
/*
 * `queue` writes its rows straight into the reply, the same keys and
 * values as job_json(j, false), without building a JSON object per row
 * (100,000 rows were a second of allocation and hashing in the daemon).
 * Strings are escaped as JSON requires; they came in as JSON (valid UTF-8)
 * or are the daemon's own.
 */
static void row_str(strbuf *sb, const char *s)
{
	if (!s) {
		sb_add(sb, "null", 4);
		return;
	}
	sb_add(sb, "\"", 1);
	const char *run = s;
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch >= 0x20 && ch != '"' && ch != '\\')
			continue;
		sb_add(sb, run, (size_t)(s - run));
		run = s + 1;
		if (ch == '"' || ch == '\\') {
			char e[2] = {'\\', (char)ch};
			sb_add(sb, e, 2);
		} else if (ch == '\n')
			sb_add(sb, "\\n", 2);
		else if (ch == '\t')
			sb_add(sb, "\\t", 2);
		else
			sb_printf(sb, "\\u%04x", ch);
	}
	sb_add(sb, run, (size_t)(s - run));
	sb_add(sb, "\"", 1);
}

static void row_int(strbuf *sb, const char *key, bool have, long long v)
{
	if (have)
		sb_printf(sb, ",\"%s\":%lld", key, v);
	else
		sb_printf(sb, ",\"%s\":null", key);
}

static void job_row(qd *d, const job *j, strbuf *sb)
{
	const job_spec *s = &j->spec;
	uint64_t now = wall_ms();
	sb_printf(sb, "{\"id\":%llu,\"name\":", (unsigned long long)j->id);
	row_str(sb, s->name ? s->name : s->argc ? s->argv[0] : "?");
	sb_puts(sb, ",\"state\":");
	row_str(sb, job_state_name(j->state));
	sb_puts(sb, ",\"project\":");
	row_str(sb, s->project ? s->project : "default");
	sb_puts(sb, ",\"user\":");
	row_str(sb, s->user ? s->user : "?");
	sb_printf(sb, ",\"uid\":%lld,\"mode\":", (long long)s->uid);
	if (s->mode == JOB_MODE_MIG) {
		char m[96];
		snprintf(m, sizeof m, "mig:%s", s->mig_profile ? s->mig_profile : "");
		row_str(sb, m);
	} else
		row_str(sb, job_mode_name(s->mode));
	sb_printf(sb, ",\"gpus_requested\":%d,\"vram_request_bytes\":%llu", s->n_gpus, (unsigned long long)s->vram_bytes);
	bool placed = j->n_placed > 0 && j->n_placed == s->n_gpus;
	row_int(sb, "vram_charged_bytes", placed,
		placed ? (long long)(sched_job_vram_bytes(j, d->gpus, d->n_gpus) / (uint64_t)(s->n_gpus > 0 ? s->n_gpus : 1)) : 0);
	row_int(sb, "queue_position", j->state == JOB_QUEUED && j->queue_pos > 0, (long long)j->queue_pos);
	row_int(sb, "estimated_start_ms", j->state == JOB_QUEUED && j->est_start_ms > 0, (long long)j->est_start_ms);
	row_int(sb, "vram_measured_bytes", j->vram_peak_bytes > 0, (long long)j->vram_peak_bytes);
	sb_printf(sb, ",\"priority\":%d,\"priority_level\":%d,\"gpus\":[", s->priority, s->boost);
	for (int i = 0; i < j->n_placed; i++)
		sb_printf(sb, "%s%d", i ? "," : "", j->gpu_idx[i]);
	sb_puts(sb, "],\"gpu_uuids\":[");
	bool first = true;
	for (int i = 0; i < j->n_placed; i++) {
		int gi = j->gpu_idx[i];
		if (gi < 0 || (size_t)gi >= d->n_gpus)
			continue;
		if (!first)
			sb_add(sb, ",", 1);
		first = false;
		if (j->mig_idx >= 0 && (size_t)j->mig_idx < d->gpus[gi].n_migs)
			row_str(sb, d->gpus[gi].migs[j->mig_idx].uuid);
		else
			row_str(sb, d->gpus[gi].uuid);
	}
	sb_printf(sb, "],\"borrowed\":%s,\"submit_ms\":%llu", j->borrowed ? "true" : "false",
		  (unsigned long long)j->submit_ms);
	row_int(sb, "start_ms", j->start_ms > 0, (long long)j->start_ms);
	row_int(sb, "end_ms", j->end_ms > 0, (long long)j->end_ms);
	uint64_t wait_end = j->start_ms ? j->start_ms : j->end_ms ? j->end_ms : now;
	sb_printf(sb, ",\"wait_ms\":%llu", (unsigned long long)(wait_end > j->submit_ms ? wait_end - j->submit_ms : 0));
	uint64_t run_end = j->end_ms ? j->end_ms : now;
	row_int(sb, "run_ms", j->start_ms > 0, (long long)(j->start_ms && run_end > j->start_ms ? run_end - j->start_ms : 0));
	row_int(sb, "exit_status", job_state_ended(j->state) && j->state != JOB_CANCELLED, j->exit_status);
	sb_puts(sb, ",\"reason\":");
	row_str(sb, j->reason);
	sb_add(sb, "}", 1);
}

typedef struct list_ctx {
	qd *d;
	strbuf *sb;
	size_t n;
	uint64_t last_id;
} list_ctx;

static void list_one(void *ctx, const job *j)
{
	list_ctx *l = ctx;
	if (l->n++)
		sb_add(l->sb, ",", 1);
	job_row(l->d, j, l->sb);
	l->last_id = j->id;
}

static const store_project *project_find(qd *d, const char *name)
{
	for (size_t i = 0; i < d->n_projects; i++)
		if (strcmp(d->projects[i].name, name) == 0)
			return &d->projects[i];
	return NULL;
}

/* Does NAME (up to '=') match the deny list "A,B*,..." (a trailing '*' is a prefix)? */
static bool env_denied(const char *deny, const char *entry)
{
	size_t nl = strcspn(entry, "=");
	for (const char *p = deny; *p;) {
		size_t l = strcspn(p, ",");
		const char *w = p;
		size_t wl = l;
		while (wl && *w == ' ')
			w++, wl--;
		while (wl && w[wl - 1] == ' ')
			wl--;
		if (wl && w[wl - 1] == '*' ? nl >= wl - 1 && strncmp(entry, w, wl - 1) == 0
					 : wl && nl == wl && strncmp(entry, w, wl) == 0)
			return true;
		p += l + (p[l] == ',');
	}
	return false;
}

/*
 * The job's environment: what it inherited (less the deny list), then what
 * --env passed explicitly (which wins).  An explicit denied name is refused:
 * returns the reason in why, else NULL.
 */
static const char *merge_env(qd *d, job_spec *s, char *why, size_t n)
{
	for (size_t i = 0; i < s->n_env; i++)
		if (env_denied(d->cfg.env_deny, s->env[i])) {
			snprintf(why, n, N_("the queue does not pass %.*s to jobs (env_deny in daemon.conf)"),
				 (int)strcspn(s->env[i], "="), s->env[i]);
			return why;
		}
	if (!s->n_env_inherited)
		return NULL;
	char **env = xcalloc(s->n_env_inherited + s->n_env + 1, sizeof *env);
	size_t m = 0;
	for (size_t i = 0; i < s->n_env_inherited; i++) {
		if (env_denied(d->cfg.env_deny, s->env_inherited[i]))
			free(s->env_inherited[i]);
		else
			env[m++] = s->env_inherited[i];
	}
	for (size_t i = 0; i < s->n_env; i++)
		env[m++] = s->env[i];
	free(s->env_inherited);
	free(s->env);
	s->env_inherited = NULL;
	s->n_env_inherited = 0;
	s->env = env;
	s->n_env = m;
	return NULL;
}

static void do_submit(qd *d, client *c, proto_req *r)
{
	djob *x = xcalloc(1, sizeof *x);
	job *j = &x->j;
	j->spec = r->spec;
	memset(&r->spec, 0, sizeof r->spec);
	job_spec *s = &j->spec;
	s->uid = c->uid;
	s->gid = c->gid;
	free(s->user);
	s->user = qd_user_name(c->uid);
	if (!s->project)
		s->project = xstrdup("default");
	/*
	 * The level across users: an administrator's priority, else the
	 * priority capped at the project's max_priority (0 unless set), so a
	 * user's --priority orders their own jobs and cannot jump fair share.
	 */
	int cap = qd_is_admin(d, c) ? 1000 : qd_config_max_priority(&d->cfg, s->project);
	s->boost = s->priority < cap ? s->priority : cap;
	const store_project *p = project_find(d, s->project);
	char why[256];
	const char *bad = NULL;
	if (!p && strcmp(s->project, "default") != 0) {
		snprintf(why, sizeof why, N_("no project '%s' (an administrator creates it with 'gpuwise quota set')"), s->project);
		bad = why;
	} else if (p && !qd_is_admin(d, c) && !qd_member_of(p->members, c->uid, c->gid)) {
		snprintf(why, sizeof why, N_("user %s is not a member of project '%s'"), s->user, s->project);
		bad = why;
	} else if (!s->cwd) {
		bad = N_("'cwd' is required");
	} else if ((bad = merge_env(d, s, why, sizeof why))) {
		/* bad says why */
	} else if (s->after_id && !qd_find_job(d, s->after_id)) {
		job tmp;
		gw_error e;
		if (store_get_job(d->st, s->after_id, &tmp, &e)) {
			snprintf(why, sizeof why, N_("no job %llu to wait for"), (unsigned long long)s->after_id);
			bad = why;
		} else
			job_release(&tmp);
	}
	if (!bad)
		bad = qd_user_jobs_refusal(d, c, why, sizeof why);
	if (!bad)
		bad = sched_check_fits(s, d->gpus, d->n_gpus, d->cfg.context_reserve_bytes, why, sizeof why);
	/* standard sizes: the request is kept; placement decides the size it is charged */
	if (!bad) {
		size_t np;
		sched_project *all = qd_quota_projects(d, &np);
		const sched_project *mine = NULL;
		for (size_t i = 0; i < np; i++)
			if (strcmp(all[i].name, s->project) == 0)
				mine = &all[i];
		bad = sched_check_quota(s, mine, all, np, d->cfg.borrowing, d->gpus, d->n_gpus, why, sizeof why);
		free(all);
	}
	if (!bad)
		bad = qd_logs_refusal(d, s->uid, qd_is_admin(d, c), why, sizeof why);
	if (!bad && !qd_tx_ok(d)) {
		snprintf(why, sizeof why, N_("the daemon could not save its state: %.200s"), d->err.msg);
		bad = why;
	}
	if (bad) {
		qd_reply_error(c, "%s", bad);
		qd_djob_free(x);
		return;
	}
	j->state = JOB_QUEUED;
	j->submit_ms = wall_ms();
	j->mig_idx = -1;
	if (store_add_job(d->st, j, &d->err)) {
		qd_tx_fail(d);
		qd_reply_error(c, "the daemon could not save its state: %s", d->err.msg);
		qd_djob_free(x);
		return;
	}
	d->jobs = xgrow(d->jobs, &d->cap_jobs, d->n_jobs + 1, sizeof *d->jobs);
	d->jobs[d->n_jobs++] = x;
	qd_user_jobs(d, s->uid, +1);
	d->tx_new = xgrow(d->tx_new, &d->cap_tx_new, d->n_tx_new + 1, sizeof *d->tx_new);
	d->tx_new[d->n_tx_new++] = x;
	d->dirty = true;
	json_t *o = ok_reply();
	json_object_set_new(o, "id", json_integer((json_int_t)j->id));
	reply(c, o);
}

/*
 * One page of at most PROTO_QUEUE_PAGE jobs: the active ones in id order,
 * then (with all) the ended ones newest first, at most limit of them; the
 * reply's 'next' continues it.  A reply stays well under a megabyte however
 * long the queue, so one listing never holds the loop or its memory.
 */
static void do_queue(qd *d, client *c, proto_req *r)
{
	if (!r->has_cursor) {
		/*
		 * estimated starts of the first waiting jobs, from the time limits:
		 * once per listing, on its first page (the next pages show what it
		 * found; one pass over every job per page made 100,000 jobs a
		 * minute's listing)
		 */
		size_t np;
		sched_project *pr = qd_sched_projects(d, &np);
		job **jobs = xcalloc(d->n_jobs ? d->n_jobs : 1, sizeof *jobs);
		for (size_t i = 0; i < d->n_jobs; i++)
			jobs[i] = &d->jobs[i]->j;
		sched_config cfg = qd_sched_config(d);
		sched_estimate(&cfg, d->gpus, d->n_gpus, pr, np, jobs, d->n_jobs, wall_ms(), 500);
		free(jobs);
		free(pr);
	}
	size_t room = r->page ? (size_t)r->page : PROTO_QUEUE_PAGE;
	char next[64] = "";
	uint64_t before = 0, left = r->limit ? r->limit : 1000;
	bool ended = r->all;
	/* the reply is written as text, row by row (job_row) */
	strbuf *sb = &c->out;
	sb_puts(sb, "{\"ok\":true,\"jobs\":[");
	list_ctx l = {d, sb, 0, 0};
	if (r->has_cursor && r->cursor_ended) {
		before = r->cursor_id;
		left = r->cursor_left;
	} else {
		size_t i = r->has_cursor ? qd_job_index(d, r->cursor_id + 1) : 0;
		for (; i < d->n_jobs && room; i++, room--)
			list_one(&l, &d->jobs[i]->j);
		if (i < d->n_jobs) {
			snprintf(next, sizeof next, "a:%llu", (unsigned long long)d->jobs[i - 1]->j.id);
			ended = false;
		} else if (r->all && !room) {
			snprintf(next, sizeof next, "e:0:%llu", (unsigned long long)left);
			ended = false;
		}
	}
	if (ended && left) {
		gw_error e;
		size_t had = l.n;
		uint64_t take = left < room ? left : room;
		store_each_ended_before(d->st, before, take, list_one, &l, &e);
		size_t got = l.n - had;
		if (got == take && left > take && got)
			snprintf(next, sizeof next, "e:%llu:%llu", (unsigned long long)l.last_id,
				 (unsigned long long)(left - take));
	}
	sb_add(sb, "]", 1);
	if (next[0])
		sb_printf(sb, ",\"next\":\"%s\"", next);
	sb_printf(sb, ",\"v\":%d}\n", PROTO_VERSION);
}

/* A job by id, from memory or the store; *tmp is released by the caller when used. */
static const job *lookup(qd *d, uint64_t id, job *tmp, bool *from_store)
{
	djob *x = qd_find_job(d, id);
	*from_store = false;
	if (x)
		return &x->j;
	gw_error e;
	if (store_get_job(d->st, id, tmp, &e))
		return NULL;
	*from_store = true;
	return tmp;
}

static void do_show(qd *d, client *c, proto_req *r)
{
	job tmp;
	bool fs;
	const job *j = lookup(d, r->ids[0], &tmp, &fs);
	if (!j) {
		qd_reply_error(c, "no job %llu", (unsigned long long)r->ids[0]);
		return;
	}
	if (!qd_may_touch(d, c, j))
		qd_reply_error(c, "job %llu belongs to another user", (unsigned long long)r->ids[0]);
	else {
		json_t *o = ok_reply();
		json_object_set_new(o, "job", job_json(d, j, true));
		reply(c, o);
	}
	if (fs)
		job_release(&tmp);
}

/* Bytes as a JSON string: invalid UTF-8 becomes '?', a split last character is left for later. */
static json_t *text_json(char *buf, size_t *n)
{
	size_t len = *n;
	/* do not cut a multi-byte character in two */
	size_t k = len;
	for (size_t back = 0; back < 3 && k > 0; back++) {
		unsigned char ch = (unsigned char)buf[k - 1];
		if ((ch & 0xC0) == 0x80) {
			k--;
			continue;
		}
		if (ch >= 0xC0) {
			size_t need = ch >= 0xF0 ? 4 : ch >= 0xE0 ? 3 : 2;
			if (len - (k - 1) < need)
				len = k - 1;
		}
		break;
	}
	*n = len;
	json_t *s = json_stringn(buf, len);
	if (s)
		return s;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)buf[i] >= 0x80 || buf[i] == 0)
			buf[i] = '?';
	return json_stringn(buf, len);
}

static void do_logs(qd *d, client *c, proto_req *r)
{
	job tmp;
	bool fs;
	const job *j = lookup(d, r->ids[0], &tmp, &fs);
	if (!j) {
		qd_reply_error(c, "no job %llu", (unsigned long long)r->ids[0]);
		return;
	}
	if (!qd_may_touch(d, c, j)) {
		qd_reply_error(c, "job %llu belongs to another user", (unsigned long long)r->ids[0]);
		goto out;
	}
	char *p = qd_job_path(d, d->logs_dir, j->id, "log");
	int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	free(p);
	char *buf = xmalloc(LOG_CHUNK);
	size_t got = 0;
	if (fd >= 0) {
		ssize_t n = pread(fd, buf, LOG_CHUNK, (off_t)r->offset);
		got = n > 0 ? (size_t)n : 0;
		close(fd);
	} else if (job_state_ended(j->state) && j->start_ms) {
		free(buf);
		qd_reply_error(c, "the logs of job %llu are gone (older than the retention)", (unsigned long long)j->id);
		goto out;
	}
	json_t *o = ok_reply();
	json_object_set_new(o, "data", text_json(buf, &got));
	json_object_set_new(o, "offset", json_integer((json_int_t)(r->offset + got)));
	json_object_set_new(o, "state", json_string(job_state_name(j->state)));
	json_object_set_new(o, "ended", json_boolean(job_state_ended(j->state)));
	free(buf);
	reply(c, o);
out:
	if (fs)
		job_release(&tmp);
}

/* cancel, hold, release: all or nothing per id, one result each. */
static void do_change(qd *d, client *c, proto_req *r)
{
	json_t *o = ok_reply(), *res = json_array();
	bool all_ok = true;
	for (size_t i = 0; i < r->n_ids; i++) {
		uint64_t id = r->ids[i];
		djob *x = qd_find_job(d, id);
		json_t *e = json_object();
		json_object_set_new(e, "id", json_integer((json_int_t)id));
		const char *err = NULL;
		char buf[128];
		if (x && x->dropping) {
			/* named twice in this request: cancelled a moment ago */
			snprintf(buf, sizeof buf, N_("job %llu has already ended (%s)"), (unsigned long long)id,
				 job_state_name(x->j.state));
			err = buf;
		} else if (!x) {
			job tmp;
			gw_error ge;
			if (store_get_job(d->st, id, &tmp, &ge) == 0) {
				snprintf(buf, sizeof buf, N_("job %llu has already ended (%s)"), (unsigned long long)id,
					 job_state_name(tmp.state));
				job_release(&tmp);
				err = buf;
			} else {
				snprintf(buf, sizeof buf, N_("no job %llu"), (unsigned long long)id);
				err = buf;
			}
		} else if (!qd_may_touch(d, c, &x->j)) {
			snprintf(buf, sizeof buf, N_("job %llu belongs to another user"), (unsigned long long)id);
			err = buf;
		} else if (r->op == PROTO_CANCEL) {
			if (x->j.state == JOB_RUNNING) {
				if (x->stop == STOP_PREEMPT) {
					x->stop = STOP_CANCEL; /* already stopping: end cancelled, not requeued */
					x->j.stop_kind = STOP_CANCEL;
					qd_save(d, x);
				}
				qd_stop_job(d, x, STOP_CANCEL, NULL);
				json_object_set_new(e, "state", json_string("cancelling"));
			} else {
				x->j.state = JOB_CANCELLED;
				x->j.end_ms = wall_ms();
				qd_set_reason(&x->j, "cancelled before it started");
				qd_save(d, x);
				x->dropping = true; /* out of memory in one pass below */
				json_object_set_new(e, "state", json_string("cancelled"));
				d->dirty = true;
			}
		} else if (r->op == PROTO_HOLD) {
			if (x->j.state != JOB_QUEUED && x->j.state != JOB_HELD) {
				snprintf(buf, sizeof buf, N_("job %llu is %s; only a queued job can be held"),
					 (unsigned long long)id, job_state_name(x->j.state));
				err = buf;
			} else {
				x->j.state = JOB_HELD;
				qd_set_reason(&x->j, "held by %s", c->uid == x->j.spec.uid ? N_("its owner") : N_("an administrator"));
				qd_save(d, x);
				json_object_set_new(e, "state", json_string("held"));
				d->dirty = true;
			}
		} else {
			if (x->j.state != JOB_HELD) {
				snprintf(buf, sizeof buf, N_("job %llu is %s, not held"), (unsigned long long)id,
					 job_state_name(x->j.state));
				err = buf;
			} else {
				x->j.state = JOB_QUEUED;
				qd_set_reason(&x->j, NULL);
				qd_save(d, x);
				json_object_set_new(e, "state", json_string("queued"));
				d->dirty = true;
			}
		}
		if (err) {
			json_object_set_new(e, "error", json_string(err));
			all_ok = false;
		}
		json_array_append_new(res, e);
	}
	qd_drop_marked(d);
	json_object_set_new(o, "results", res);
	json_object_set(o, "ok", json_boolean(all_ok));
	reply(c, o);
}

static json_t *limit_json(uint64_t v)
{
	return v == UINT64_MAX ? json_null() : json_integer((json_int_t)v);
}

static void do_quota(qd *d, client *c)
{
	/* usage of running jobs by project */
	json_t *o = ok_reply(), *arr = json_array();
	size_t n = d->n_projects, n_fs;
	sched_project *fs = qd_sched_projects(d, &n_fs);
	bool have_default = project_find(d, "default") != NULL;
	for (size_t i = 0; i < n + !have_default; i++) {
		const char *name = i < n ? d->projects[i].name : "default";
		uint64_t uv = 0, ug = 0, uj = 0, qv = 0;
		size_t queued = 0;
		for (size_t k = 0; k < d->n_jobs; k++) {
			const job *j = &d->jobs[k]->j;
			if (strcmp(j->spec.project, name))
				continue;
			if (j->state == JOB_RUNNING) {
				uv += sched_job_vram_bytes(j, d->gpus, d->n_gpus);
				ug += sched_job_gpus(j);
				uj++;
				qv += j->borrowed;
			} else
				queued++;
		}
		json_t *p = json_object();
		json_object_set_new(p, "project", json_string(name));
		json_object_set_new(p, "vram_quota_bytes", limit_json(i < n ? d->projects[i].vram_bytes : UINT64_MAX));
		json_object_set_new(p, "gpus_quota", limit_json(i < n ? d->projects[i].gpus : UINT64_MAX));
		json_object_set_new(p, "jobs_quota", limit_json(i < n ? d->projects[i].jobs : UINT64_MAX));
		json_object_set_new(p, "vram_used_bytes", json_integer((json_int_t)uv));
		json_object_set_new(p, "gpus_used", json_integer((json_int_t)ug));
		json_object_set_new(p, "jobs_running", json_integer((json_int_t)uj));
		json_object_set_new(p, "jobs_borrowing", json_integer((json_int_t)qv));
		json_object_set_new(p, "jobs_waiting", json_integer((json_int_t)queued));
		json_object_set_new(p, "members", json_string(i < n ? d->projects[i].members : ""));
		for (size_t k = 0; k < n_fs; k++)
			if (strcmp(fs[k].name, name) == 0) {
				json_object_set_new(p, "usage_vram_gib_hours", json_real(fs[k].usage_vram_byte_s / (double)GiB / 3600));
				json_object_set_new(p, "usage_gpu_hours", json_real(fs[k].usage_gpu_s / 3600));
				json_object_set_new(p, "usage_share", json_real(fs[k].usage_norm));
				json_object_set_new(p, "fairshare_share", json_real(fs[k].share_norm));
				json_object_set_new(p, "fairshare_factor", json_real(fs[k].fairshare));
			}
		json_array_append_new(arr, p);
	}
	free(fs);
	/* each GPU: what the queue gave its running jobs beside what NVML sees used */
	json_t *ga = json_array();
	uint64_t *res = xcalloc(d->n_gpus ? d->n_gpus : 1, sizeof *res);
	job **jobs = xcalloc(d->n_jobs ? d->n_jobs : 1, sizeof *jobs);
	for (size_t i = 0; i < d->n_jobs; i++)
		jobs[i] = &d->jobs[i]->j;
	sched_gpu_reserved(jobs, d->n_jobs, d->gpus, d->n_gpus, d->cfg.context_reserve_bytes, res);
	for (size_t i = 0; i < d->n_gpus; i++) {
		const sched_node_gpu *g = &d->gpus[i];
		size_t nj = 0;
		for (size_t k = 0; k < d->n_jobs; k++) {
			const job *j = jobs[k];
			for (int x = 0; j->state == JOB_RUNNING && x < j->n_placed && x < 16; x++)
				nj += j->gpu_idx[x] == (int)i;
		}
		json_array_append_new(ga, json_pack("{s:I,s:s,s:s,s:I,s:I,s:I,s:I,s:b}", "index", (json_int_t)i, "name", g->name, "uuid", g->uuid,
						    "memory_total_bytes", (json_int_t)g->mem_total_bytes,
						    "memory_used_bytes", (json_int_t)g->mem_used_bytes,
						    "reserved_bytes", (json_int_t)res[i], "jobs_running", (json_int_t)nj,
						    "lost", g->lost));
	}
	free(jobs);
	free(res);
	json_object_set_new(o, "gpus", ga);
	json_object_set_new(o, "fairshare_half_life_ms", json_integer((json_int_t)d->cfg.fairshare_half_life_ms));
	json_object_set_new(o, "projects", arr);
	json_object_set_new(o, "borrowing", json_boolean(d->cfg.borrowing));
	json_object_set_new(o, "admin", json_boolean(qd_is_admin(d, c)));
	reply(c, o);
}

static void do_quota_set(qd *d, client *c, proto_req *r)
{
	if (!qd_is_admin(d, c)) {
		char *u = qd_user_name(c->uid);
		qd_reply_error(c, "only an administrator may set quotas (user %s is not root%s%s)", u,
			    d->cfg.admin_group[0] ? " nor in group " : "", d->cfg.admin_group);
		free(u);
		return;
	}
	const store_project *old = project_find(d, r->project);
	store_project p = {r->project, UINT64_MAX, UINT64_MAX, UINT64_MAX, (char *)""};
	if (old)
		p = (store_project){r->project, old->vram_bytes, old->gpus, old->jobs, old->members};
	if (r->has_vram)
		p.vram_bytes = r->vram_bytes;
	if (r->has_gpus)
		p.gpus = r->gpus;
	if (r->has_jobs)
		p.jobs = r->jobs;
	if (r->has_members)
		p.members = r->members;
	if (!qd_tx_ok(d) || store_set_project(d->st, &p, &d->err)) {
		qd_tx_fail(d);
		qd_reply_error(c, "%s", d->err.msg);
		return;
	}
	store_projects_free(d->projects, d->n_projects);
	d->projects = NULL;
	d->n_projects = 0;
	store_load_projects(d->st, &d->projects, &d->n_projects, &d->err);
	d->dirty = true;
	reply(c, ok_reply());
}

void qd_handle_line(qd *d, client *c, const char *line, size_t len)
{
	proto_req r;
	char err[256];
	if (proto_parse(line, len, &r, err, sizeof err)) {
		qd_reply_error(c, "%s", err);
		return;
	}
	switch (r.op) {
	case PROTO_PING: {
		json_t *o = ok_reply();
		json_object_set_new(o, "version", json_string(GPUWISE_VERSION));
		json_object_set_new(o, "protocol", json_integer(PROTO_VERSION));
		json_object_set_new(o, "mode", json_string(d->root ? "system" : "personal"));
		json_object_set_new(o, "jobs_active", json_integer((json_int_t)d->n_jobs));
		json_object_set_new(o, "gpus", json_integer((json_int_t)d->n_gpus));
		/* the GPUs as the scheduler sees them */
		json_t *t = json_array();
		for (size_t i = 0; i < d->n_gpus; i++) {
			const sched_node_gpu *g = &d->gpus[i];
			json_t *x = json_object();
			json_object_set_new(x, "index", json_integer((json_int_t)i));
			json_object_set_new(x, "uuid", json_string(g->uuid));
			json_object_set_new(x, "name", json_string(g->name));
			json_object_set_new(x, "mem_total_bytes", json_integer((json_int_t)g->mem_total_bytes));
			json_object_set_new(x, "mem_outside_bytes", json_integer((json_int_t)g->mem_outside_bytes));
			json_object_set_new(x, "numa", jint_or_null(g->numa >= 0, g->numa));
			json_object_set_new(x, "pcie_switch", jint_or_null(g->pcie_switch >= 0, g->pcie_switch));
			json_object_set_new(x, "nvlink_group", jint_or_null(g->nvlink_group >= 0, g->nvlink_group));
			json_object_set_new(x, "mig_instances", json_integer((json_int_t)g->n_migs));
			json_object_set_new(x, "lost", json_boolean(g->lost));
			json_array_append_new(t, x);
		}
		json_object_set_new(o, "topology", t);
		reply(c, o);
		break;
	}
	case PROTO_SUBMIT: do_submit(d, c, &r); break;
	case PROTO_QUEUE: do_queue(d, c, &r); break;
	case PROTO_SHOW: do_show(d, c, &r); break;
	case PROTO_LOGS: do_logs(d, c, &r); break;
	case PROTO_CANCEL:
	case PROTO_HOLD:
	case PROTO_RELEASE: do_change(d, c, &r); break;
	case PROTO_QUOTA: do_quota(d, c); break;
	case PROTO_QUOTA_SET: do_quota_set(d, c, &r); break;
	}
	proto_req_release(&r);
}
