/*
 * queue/proto: request parsing and job spec <-> JSON.  Every value from the
 * socket is checked here before anything is allocated from it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue/proto.h"
#include "util/util.h"
#include "watch/watch.h"

static const char *const op_names[] = {
	[PROTO_PING] = "ping", [PROTO_SUBMIT] = "submit", [PROTO_QUEUE] = "queue",
	[PROTO_SHOW] = "show", [PROTO_LOGS] = "logs", [PROTO_CANCEL] = "cancel",
	[PROTO_HOLD] = "hold", [PROTO_RELEASE] = "release", [PROTO_QUOTA] = "quota",
	[PROTO_QUOTA_SET] = "quota-set",
};

const char *proto_op_name(proto_op op)
{
	return (unsigned)op < sizeof op_names / sizeof *op_names ? op_names[op] : "?";
}

static int fail(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, n, fmt, ap);
	va_end(ap);
	return -1;
}

/* A non-negative integer no larger than max. */
static int get_u64(json_t *v, const char *key, uint64_t max, uint64_t *out, char *err, size_t n)
{
	if (!json_is_integer(v))
		return fail(err, n, "'%s' must be an integer", key);
	json_int_t x = json_integer_value(v);
	if (x < 0)
		return fail(err, n, "'%s' must not be negative", key);
	if ((uint64_t)x > max)
		return fail(err, n, "'%s' is too large", key);
	*out = (uint64_t)x;
	return 0;
}

static int get_str(json_t *v, const char *key, size_t max, char **out, char *err, size_t n)
{
	if (!json_is_string(v))
		return fail(err, n, "'%s' must be a string", key);
	size_t l = json_string_length(v);
	const char *s = json_string_value(v);
	if (l > max)
		return fail(err, n, "'%s' is too long", key);
	if (strlen(s) != l)
		return fail(err, n, "'%s' contains a NUL byte", key);
	free(*out);
	*out = xstrdup(s);
	return 0;
}

static int get_strv(json_t *v, const char *key, bool need_eq, char ***out, size_t *count, char *err,
		    size_t n)
{
	if (!json_is_array(v))
		return fail(err, n, "'%s' must be an array of strings", key);
	size_t m = json_array_size(v);
	if (m > PROTO_MAX_ARGS)
		return fail(err, n, "'%s' has more than %d entries", key, PROTO_MAX_ARGS);
	char **a = xcalloc(m + 1, sizeof *a);
	for (size_t i = 0; i < m; i++) {
		json_t *e = json_array_get(v, i);
		if (!json_is_string(e) || strlen(json_string_value(e)) != json_string_length(e)) {
			for (size_t k = 0; k < i; k++)
				free(a[k]);
			free(a);
			return fail(err, n, "'%s' must be an array of strings", key);
		}
		const char *s = json_string_value(e);
		const char *eq = strchr(s, '=');
		if (need_eq && (!eq || eq == s)) {
			for (size_t k = 0; k < i; k++)
				free(a[k]);
			free(a);
			return fail(err, n, "'%s' entries must be NAME=VALUE", key);
		}
		a[i] = xstrdup(s);
	}
	if (*out) {
		for (size_t i = 0; i < *count; i++)
			free((*out)[i]);
		free(*out);
	}
	*out = a;
	*count = m;
	return 0;
}

static bool name_ok(const char *s)
{
	if (!*s || strlen(s) > 64)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '-' || *s == '_' || *s == '.'))
			return false;
	return true;
}

json_t *proto_spec_to_json(const job_spec *s, bool stored)
{
	json_t *o = json_object();
	json_t *a = json_array();
	for (size_t i = 0; i < s->argc; i++)
		json_array_append_new(a, json_string(s->argv[i]));
	json_object_set_new(o, "argv", a);
	if (s->n_env) {
		a = json_array();
		for (size_t i = 0; i < s->n_env; i++)
			json_array_append_new(a, json_string(s->env[i]));
		json_object_set_new(o, "env", a);
	}
	if (s->cwd)
		json_object_set_new(o, "cwd", json_string(s->cwd));
	if (s->project)
		json_object_set_new(o, "project", json_string(s->project));
	if (s->name)
		json_object_set_new(o, "name", json_string(s->name));
	json_object_set_new(o, "vram_bytes", json_integer((json_int_t)s->vram_bytes));
	if (s->vram_auto)
		json_object_set_new(o, "vram_auto", json_true());
	if (s->vram_plan)
		json_object_set_new(o, "vram_plan", json_string(s->vram_plan));
	json_object_set_new(o, "gpus", json_integer(s->n_gpus));
	if (s->mode == JOB_MODE_MIG)
		json_object_set_new(o, "mode", json_sprintf("mig:%s", s->mig_profile ? s->mig_profile : ""));
	else
		json_object_set_new(o, "mode", json_string(job_mode_name(s->mode)));
	json_object_set_new(o, "priority", json_integer(s->priority));
	if (s->time_limit_ms)
		json_object_set_new(o, "time_limit_ms", json_integer((json_int_t)s->time_limit_ms));
	if (s->after_id)
		json_object_set_new(o, "after", json_integer((json_int_t)s->after_id));
	json_object_set_new(o, "restart", json_string(job_restart_name(s->restart)));
	json_object_set_new(o, "max_restarts", json_integer(s->max_restarts));
	if (s->n_run_args) {
		a = json_array();
		for (size_t i = 0; i < s->n_run_args; i++)
			json_array_append_new(a, json_string(s->run_args[i]));
		json_object_set_new(o, "run_args", a);
	}
	if (stored) {
		json_object_set_new(o, "boost", json_integer(s->boost));
		json_object_set_new(o, "uid", json_integer(s->uid));
		json_object_set_new(o, "gid", json_integer(s->gid));
		if (s->user)
			json_object_set_new(o, "user", json_string(s->user));
	}
	return o;
}

int proto_spec_from_json(json_t *o, bool stored, job_spec *s, char *err, size_t n)
{
	memset(s, 0, sizeof *s);
	s->n_gpus = 1;
	s->max_restarts = 3;
	if (!json_is_object(o))
		return fail(err, n, "'job' must be an object");
	const char *key;
	json_t *v;
	uint64_t u, asked = 0;
	bool has_boost = false;
	json_object_foreach(o, key, v) {
		if (strcmp(key, "argv") == 0) {
			if (get_strv(v, key, false, &s->argv, &s->argc, err, n))
				goto bad;
		} else if (strcmp(key, "env") == 0) {
			if (get_strv(v, key, true, &s->env, &s->n_env, err, n))
				goto bad;
		} else if (strcmp(key, "env_inherited") == 0 && !stored) {
			if (get_strv(v, key, true, &s->env_inherited, &s->n_env_inherited, err, n))
				goto bad;
		} else if (strcmp(key, "run_args") == 0) {
			if (get_strv(v, key, false, &s->run_args, &s->n_run_args, err, n))
				goto bad;
			/* parsed as gpuwise run parses them, so none can displace the daemon's own */
			if (watch_run_args_check(s->run_args, s->n_run_args, err, n))
				goto bad;
		} else if (strcmp(key, "cwd") == 0) {
			if (get_str(v, key, 4096, &s->cwd, err, n))
				goto bad;
			if (s->cwd[0] != '/') {
				fail(err, n, "'cwd' must be an absolute path");
				goto bad;
			}
		} else if (strcmp(key, "project") == 0) {
			if (get_str(v, key, 64, &s->project, err, n))
				goto bad;
			if (!name_ok(s->project)) {
				fail(err, n, "'project' must be 1-64 letters, digits, '-', '_' or '.'");
				goto bad;
			}
		} else if (strcmp(key, "name") == 0) {
			if (get_str(v, key, 128, &s->name, err, n))
				goto bad;
			/* names reach other users' terminals: no escape sequences, bells or line breaks */
			if (!stored && str_has_ctl(s->name)) {
				fail(err, n, "'name' must not hold control characters (escape, bell, newline...)");
				goto bad;
			}
		} else if (strcmp(key, "vram_bytes") == 0) {
			if (get_u64(v, key, 1ULL << 50, &s->vram_bytes, err, n))
				goto bad;
		} else if (strcmp(key, "vram_auto") == 0) {
			if (!json_is_boolean(v)) {
				fail(err, n, "'vram_auto' must be true or false");
				goto bad;
			}
			s->vram_auto = json_is_true(v);
		} else if (strcmp(key, "vram_plan") == 0) {
			if (get_str(v, key, 4096, &s->vram_plan, err, n))
				goto bad;
		} else if (strcmp(key, "gpus") == 0) {
			if (get_u64(v, key, 16, &u, err, n))
				goto bad;
			if (u < 1) {
				fail(err, n, "'gpus' must be 1 to 16");
				goto bad;
			}
			s->n_gpus = (int)u;
		} else if (strcmp(key, "mode") == 0) {
			if (!json_is_string(v) || job_mode_parse(json_string_value(v), &s->mode, &s->mig_profile)) {
				fail(err, n, "'mode' must be shared, exclusive or mig:PROFILE");
				goto bad;
			}
		} else if (strcmp(key, "priority") == 0) {
			if (!json_is_integer(v) || json_integer_value(v) < -1000 || json_integer_value(v) > 1000) {
				fail(err, n, "'priority' must be an integer from -1000 to 1000");
				goto bad;
			}
			s->priority = (int)json_integer_value(v);
		} else if (stored && strcmp(key, "boost") == 0) {
			if (!json_is_integer(v) || json_integer_value(v) < -1000 || json_integer_value(v) > 1000) {
				fail(err, n, "'boost' must be an integer from -1000 to 1000");
				goto bad;
			}
			s->boost = (int)json_integer_value(v);
			has_boost = true;
		} else if (strcmp(key, "time_limit_ms") == 0) {
			if (get_u64(v, key, 366ULL * 86400 * 1000, &s->time_limit_ms, err, n))
				goto bad;
		} else if (strcmp(key, "after") == 0) {
			if (get_u64(v, key, 1ULL << 53, &s->after_id, err, n))
				goto bad;
		} else if (strcmp(key, "restart") == 0) {
			if (!json_is_string(v) || job_restart_parse(json_string_value(v), &s->restart)) {
				fail(err, n, "'restart' must be never, on-failure or always");
				goto bad;
			}
		} else if (strcmp(key, "max_restarts") == 0) {
			if (!json_is_integer(v) || json_integer_value(v) < -1 || json_integer_value(v) > 1000000) {
				fail(err, n, "'max_restarts' must be -1 (unlimited) or 0 to 1000000");
				goto bad;
			}
			s->max_restarts = (int)json_integer_value(v);
		} else if (stored && strcmp(key, "vram_asked_bytes") == 0) {
			/* stored by a daemon that rounded requests at submit: the request was this */
			if (get_u64(v, key, 1ULL << 50, &asked, err, n))
				goto bad;
		} else if (stored && strcmp(key, "uid") == 0) {
			if (get_u64(v, key, UINT32_MAX, &u, err, n))
				goto bad;
			s->uid = (uint32_t)u;
		} else if (stored && strcmp(key, "gid") == 0) {
			if (get_u64(v, key, UINT32_MAX, &u, err, n))
				goto bad;
			s->gid = (uint32_t)u;
		} else if (stored && strcmp(key, "user") == 0) {
			if (get_str(v, key, 64, &s->user, err, n))
				goto bad;
		} else {
			fail(err, n, "unknown key '%s' in 'job'", key);
			goto bad;
		}
	}
	if (asked && s->mode == JOB_MODE_SHARED)
		s->vram_bytes = asked;
	if (!s->argc) {
		fail(err, n, "'job' needs a non-empty 'argv'");
		goto bad;
	}
	if (s->mode == JOB_MODE_SHARED && s->vram_bytes == 0) {
		fail(err, n, "a shared job needs 'vram_bytes' (use exclusive for whole GPUs)");
		goto bad;
	}
	if (s->mode == JOB_MODE_MIG && s->n_gpus != 1) {
		fail(err, n, "a MIG job takes one instance ('gpus' 1)");
		goto bad;
	}
	/* stored before levels existed: a negative priority still yields, a positive one is the user's own */
	if (stored && !has_boost)
		s->boost = s->priority < 0 ? s->priority : 0;
	return 0;
bad:
	job_spec_release(s);
	return -1;
}

void proto_req_release(proto_req *r)
{
	job_spec_release(&r->spec);
	free(r->project);
	free(r->members);
	memset(r, 0, sizeof *r);
}

static int get_ids(json_t *v, proto_req *r, char *err, size_t n)
{
	if (json_is_integer(v)) {
		if (get_u64(v, "id", 1ULL << 53, &r->ids[0], err, n))
			return -1;
		r->n_ids = 1;
		return 0;
	}
	if (!json_is_array(v) || json_array_size(v) == 0)
		return fail(err, n, "'ids' must be a non-empty array of job ids");
	if (json_array_size(v) > PROTO_MAX_IDS)
		return fail(err, n, "'ids' has more than %d entries", PROTO_MAX_IDS);
	for (size_t i = 0; i < json_array_size(v); i++)
		if (get_u64(json_array_get(v, i), "ids", 1ULL << 53, &r->ids[i], err, n))
			return -1;
	r->n_ids = json_array_size(v);
	return 0;
}

/* Quota amounts: a non-negative integer, or null for unlimited. */
static int get_limit(json_t *v, const char *key, uint64_t *out, char *err, size_t n)
{
	if (json_is_null(v)) {
		*out = UINT64_MAX;
		return 0;
	}
	return get_u64(v, key, 1ULL << 60, out, err, n);
}

int proto_parse(const char *line, size_t len, proto_req *r, char *err, size_t n)
{
	memset(r, 0, sizeof *r);
	if (len > PROTO_MAX_LINE)
		return fail(err, n, "request longer than %d bytes", PROTO_MAX_LINE);
	json_error_t je;
	json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
	if (!o)
		return fail(err, n, "malformed JSON: %s", je.text);
	int rc = -1;
	if (!json_is_object(o)) {
		fail(err, n, "a request must be a JSON object");
		goto out;
	}
	json_t *v = json_object_get(o, "v");
	if (!v || !json_is_integer(v)) {
		fail(err, n, "missing protocol version 'v'");
		goto out;
	}
	if (json_integer_value(v) != PROTO_VERSION) {
		fail(err, n, "protocol version %lld is not supported (this daemon speaks %d)",
		     (long long)json_integer_value(v), PROTO_VERSION);
		goto out;
	}
	json_t *opv = json_object_get(o, "op");
	if (!json_is_string(opv)) {
		fail(err, n, "missing 'op'");
		goto out;
	}
	size_t op;
	for (op = 0; op < sizeof op_names / sizeof *op_names; op++)
		if (strcmp(op_names[op], json_string_value(opv)) == 0)
			break;
	if (op == sizeof op_names / sizeof *op_names) {
		fail(err, n, "unknown op '%.40s'", json_string_value(opv));
		goto out;
	}
	r->op = (proto_op)op;
	bool have_job = false, have_ids = false, have_project = false;
	const char *key;
	json_object_foreach(o, key, v) {
		if (strcmp(key, "v") == 0 || strcmp(key, "op") == 0)
			continue;
		if (r->op == PROTO_SUBMIT && strcmp(key, "job") == 0) {
			if (proto_spec_from_json(v, false, &r->spec, err, n))
				goto out;
			have_job = true;
		} else if ((r->op == PROTO_SHOW || r->op == PROTO_LOGS) && strcmp(key, "id") == 0) {
			if (get_u64(v, key, 1ULL << 53, &r->ids[0], err, n))
				goto out;
			r->n_ids = 1;
			have_ids = true;
		} else if ((r->op == PROTO_CANCEL || r->op == PROTO_HOLD || r->op == PROTO_RELEASE) &&
			   strcmp(key, "ids") == 0) {
			if (get_ids(v, r, err, n))
				goto out;
			have_ids = true;
		} else if (r->op == PROTO_QUEUE && strcmp(key, "all") == 0) {
			if (!json_is_boolean(v)) {
				fail(err, n, "'all' must be true or false");
				goto out;
			}
			r->all = json_is_true(v);
		} else if (r->op == PROTO_QUEUE && strcmp(key, "limit") == 0) {
			if (get_u64(v, key, 1000000, &r->limit, err, n))
				goto out;
		} else if (r->op == PROTO_QUEUE && strcmp(key, "page") == 0) {
			if (get_u64(v, key, PROTO_QUEUE_PAGE_MAX, &r->page, err, n))
				goto out;
		} else if (r->op == PROTO_QUEUE && strcmp(key, "cursor") == 0) {
			/* "a:ID" (active jobs after ID) or "e:ID:LEFT" (ended jobs before ID, LEFT more) */
			const char *cs = json_string_value(v);
			unsigned long long id = 0, left = 0;
			int used = 0;
			if (cs && sscanf(cs, "a:%llu%n", &id, &used) == 1 && !cs[used])
				r->cursor_ended = false;
			else if (cs && sscanf(cs, "e:%llu:%llu%n", &id, &left, &used) == 2 && !cs[used] &&
				 left <= 1000000)
				r->cursor_ended = true;
			else {
				fail(err, n, "'cursor' must be a string from a previous reply's 'next'");
				goto out;
			}
			r->has_cursor = true;
			r->cursor_id = id;
			r->cursor_left = left;
		} else if (r->op == PROTO_LOGS && strcmp(key, "offset") == 0) {
			if (get_u64(v, key, 1ULL << 50, &r->offset, err, n))
				goto out;
		} else if (r->op == PROTO_QUOTA_SET && strcmp(key, "project") == 0) {
			if (get_str(v, key, 64, &r->project, err, n))
				goto out;
			if (!name_ok(r->project)) {
				fail(err, n, "'project' must be 1-64 letters, digits, '-', '_' or '.'");
				goto out;
			}
			have_project = true;
		} else if (r->op == PROTO_QUOTA_SET && strcmp(key, "vram_bytes") == 0) {
			if (get_limit(v, key, &r->vram_bytes, err, n))
				goto out;
			r->has_vram = true;
		} else if (r->op == PROTO_QUOTA_SET && strcmp(key, "gpus") == 0) {
			if (get_limit(v, key, &r->gpus, err, n))
				goto out;
			r->has_gpus = true;
		} else if (r->op == PROTO_QUOTA_SET && strcmp(key, "jobs") == 0) {
			if (get_limit(v, key, &r->jobs, err, n))
				goto out;
			r->has_jobs = true;
		} else if (r->op == PROTO_QUOTA_SET && strcmp(key, "members") == 0) {
			if (get_str(v, key, 4096, &r->members, err, n))
				goto out;
			r->has_members = true;
		} else {
			fail(err, n, "unknown key '%.40s' for op '%s'", key, op_names[op]);
			goto out;
		}
	}
	if (r->op == PROTO_SUBMIT && !have_job) {
		fail(err, n, "'submit' needs 'job'");
		goto out;
	}
	if ((r->op == PROTO_SHOW || r->op == PROTO_LOGS) && !have_ids) {
		fail(err, n, "'%s' needs 'id'", op_names[op]);
		goto out;
	}
	if ((r->op == PROTO_CANCEL || r->op == PROTO_HOLD || r->op == PROTO_RELEASE) && !have_ids) {
		fail(err, n, "'%s' needs 'ids'", op_names[op]);
		goto out;
	}
	if (r->op == PROTO_QUOTA_SET && !have_project) {
		fail(err, n, "'quota-set' needs 'project'");
		goto out;
	}
	rc = 0;
out:
	json_decref(o);
	if (rc)
		proto_req_release(r);
	return rc;
}
