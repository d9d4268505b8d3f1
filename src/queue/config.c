/*
 * queue/config: daemon.conf, "key = value" lines with their defaults.
 */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "queue/daemon_int.h"

/* ---- config ------------------------------------------------------------- */
void qd_config_defaults(config *c)
{
	memset(c, 0, sizeof *c);
	c->over_grace = 0.10;
	c->over_samples = 3;
	/* a CUDA context takes roughly 300-500 MiB per process (gpu-sharing.md 7.1) */
	c->context_reserve_bytes = 512 * MiB;
	c->log_retention_ms = 30ULL * 86400 * 1000;
	c->client_timeout_ms = 60000;
	c->policy = SCHED_POLICY_GPUWISE;
	qd_limits_defaults(&c->lim);
	c->http_per_address = 64;
	/* Slurm's PriorityDecayHalfLife defaults to 7 days (slurm.conf(5)) */
	c->fairshare_half_life_ms = 7ULL * 86400 * 1000;
	/* a desktop's display server holds a few hundred MiB; more is somebody's job */
	c->exclusive_foreign_bytes = 256 * MiB;
	/* a job's output is kept to 256 MiB and 256 MiB of the state disk stay free, so
	 * that a chatty job cannot fill it: the database must be able to commit */
	c->log_limit_bytes = 256 * MiB;
	c->free_reserve_bytes = 256 * MiB;
	/* and one user's logs, all jobs together, to 1 GiB: their oldest go first */
	c->user_log_limit_bytes = 1 * GiB;
	c->kill_wait_ms = 30000;
	/*
	 * Never inherited from a submitter: the dynamic loader's variables (they
	 * would also displace the VRAM cap's preload), the daemon's own, and the
	 * others glibc drops for setuid programs (its UNSECURE_ENVVARS list,
	 * less TMPDIR and TZDIR, which users set for good reasons).
	 */
	snprintf(c->env_deny, sizeof c->env_deny, "%s",
		 "LD_*,GPUWISE_*,GCONV_PATH,GETCONF_DIR,HOSTALIASES,LOCALDOMAIN,LOCPATH,MALLOC_TRACE,"
		 "NIS_PATH,NLSPATH,RESOLV_HOST_CONF,RES_OPTIONS");
}

/* "8G,12G,24G": ascending sizes, at most 16, into sizes[0..*n); "none" or "" is none. */
static bool parse_sizes(const char *v, uint64_t *sizes, size_t *n)
{
	char buf[512];
	if (strlen(v) >= sizeof buf)
		return false;
	strcpy(buf, v);
	*n = 0;
	if (!strcmp(buf, "none") || !*buf)
		return true;
	char *sp = NULL;
	for (char *t = strtok_r(buf, ",", &sp); t; t = strtok_r(NULL, ",", &sp)) {
		uint64_t u;
		t = str_trim(t);
		if (*n == 16 || parse_size(t, &u) || u == 0 || u > (1ULL << 50) || (*n && u <= sizes[*n - 1]))
			return false;
		sizes[(*n)++] = u;
	}
	return true;
}

/*
 * "vram_sizes[A100] = 10G,20G,40G": sizes for the GPUs whose NVML name
 * holds A100 (case-insensitive).  The same model twice replaces its sizes.
 */
static bool parse_model_sizes(const char *k, const char *v, config *c)
{
	const char *open = k + strlen("vram_sizes["), *close = strrchr(k, ']');
	if (!close || close[1] || close <= open || (size_t)(close - open) >= sizeof c->vram_models[0].model)
		return false;
	char model[96];
	snprintf(model, sizeof model, "%.*s", (int)(close - open), open);
	char *m = str_trim(model);
	if (!*m)
		return false;
	size_t i = 0;
	while (i < c->n_vram_models && strcasecmp(c->vram_models[i].model, m))
		i++;
	if (i == sizeof c->vram_models / sizeof c->vram_models[0])
		return false;
	struct qd_model_sizes *x = &c->vram_models[i];
	if (!parse_sizes(v, x->sizes, &x->n))
		return false;
	snprintf(x->model, sizeof x->model, "%s", m);
	if (i == c->n_vram_models)
		c->n_vram_models++;
	return true;
}

const uint64_t *qd_config_sizes(const config *c, const char *name, size_t *n)
{
	for (size_t i = 0; i < c->n_vram_models; i++)
		if (strcasestr(name, c->vram_models[i].model)) {
			*n = c->vram_models[i].n;
			return *n ? c->vram_models[i].sizes : NULL;
		}
	*n = c->n_vram_sizes;
	return *n ? c->vram_sizes : NULL;
}

static bool yes_no(const char *v, bool *out)
{
	if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "on") || !strcmp(v, "1"))
		*out = true;
	else if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "off") || !strcmp(v, "0"))
		*out = false;
	else
		return false;
	return true;
}

/* "key = value" lines, '#' comments; an unknown key or bad value is an error. */
int qd_config_load(const char *path, bool must_exist, config *c, gw_error *err)
{
	char *text = NULL;
	size_t len;
	gw_error e2;
	if (gw_read_file(path, false, 1 << 20, &text, &len, &e2)) {
		if (!must_exist && e2.code == GW_ENOENT)
			return 0;
		return gw_fail(err, GW_EIO, "cannot read config '%s': %s", path, e2.msg);
	}
	int rc = 0, lineno = 0;
	for (char *line = text, *next; line; line = next) {
		/* line by line, blank ones counted, so errors name the right line */
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		lineno++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		char *l = str_trim(line);
		if (!*l)
			continue;
		char *eq = strchr(l, '=');
		if (!eq) {
			rc = gw_fail(err, GW_EFORMAT, "config '%s' line %d: expected KEY = VALUE", path, lineno);
			break;
		}
		*eq = 0;
		char *k = str_trim(l), *v = str_trim(eq + 1);
		size_t vl = strlen(v);
		while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
			v[--vl] = 0;
		size_t kl = strlen(k);
		while (kl && (k[kl - 1] == ' ' || k[kl - 1] == '\t'))
			k[--kl] = 0;
		bool ok = true;
		uint64_t u;
		long long ll;
		if (!strcmp(k, "borrowing"))
			ok = yes_no(v, &c->borrowing);
		else if (!strcmp(k, "vram_cap"))
			ok = yes_no(v, &c->vram_cap);
		else if (!strcmp(k, "over_request")) {
			ok = !strcmp(v, "warn") || !strcmp(v, "stop");
			c->over_stop = !strcmp(v, "stop");
		} else if (!strcmp(k, "over_request_grace")) {
			if (vl && v[vl - 1] == '%')
				v[--vl] = 0; /* "10%" or "10" */
			ok = parse_int(v, 0, 1000, &ll) == 0;
			c->over_grace = (double)ll / 100.0;
		} else if (!strcmp(k, "over_request_samples")) {
			ok = parse_int(v, 1, 1000, &ll) == 0;
			c->over_samples = (int)ll;
		} else if (!strcmp(k, "context_reserve")) {
			ok = parse_size(v, &u) == 0 && u <= 64 * GiB;
			c->context_reserve_bytes = u;
		} else if (!strcmp(k, "log_limit")) {
			u = 0;
			ok = !strcmp(v, "0") || (parse_size(v, &u) == 0 && u >= 4096);
			c->log_limit_bytes = u;
		} else if (!strcmp(k, "free_space_reserve")) {
			u = 0;
			ok = !strcmp(v, "0") || parse_size(v, &u) == 0;
			c->free_reserve_bytes = u;
		} else if (!strcmp(k, "log_retention")) {
			ok = parse_duration_ms(v, &u) == 0;
			c->log_retention_ms = u;
		} else if (!strcmp(k, "client_timeout")) {
			ok = parse_duration_ms(v, &u) == 0 && u >= 100;
			c->client_timeout_ms = u;
		} else if (!strcmp(k, "env_deny")) {
			ok = strlen(v) < sizeof c->env_deny;
			if (ok)
				strcpy(c->env_deny, v);
		} else if (!strcmp(k, "kill_wait")) {
			ok = parse_duration_ms(v, &u) == 0 && u >= 100 && u <= 3600 * 1000;
			c->kill_wait_ms = u;
		} else if (!strcmp(k, "user_log_limit")) {
			u = 0;
			ok = !strcmp(v, "0") || (parse_size(v, &u) == 0 && u >= 4096);
			c->user_log_limit_bytes = u;
		} else if (!strcmp(k, "max_priority")) {
			ok = parse_int(v, -1000, 1000, &ll) == 0;
			c->max_priority = (int)ll;
		} else if (!strncmp(k, "max_priority[", strlen("max_priority["))) {
			const char *pn = k + strlen("max_priority[");
			size_t pl = strcspn(pn, "]");
			if (pn[pl] != ']' || pn[pl + 1] || !pl || pl >= sizeof c->prio_caps[0].project) {
				rc = gw_fail(err, GW_EFORMAT, "config '%s' line %d: expected max_priority[PROJECT] = N", path, lineno);
				break;
			}
			size_t i = 0;
			while (i < c->n_prio_caps && (strlen(c->prio_caps[i].project) != pl ||
						      strncmp(c->prio_caps[i].project, pn, pl)))
				i++;
			ok = parse_int(v, -1000, 1000, &ll) == 0 && i < sizeof c->prio_caps / sizeof *c->prio_caps;
			if (ok) {
				memcpy(c->prio_caps[i].project, pn, pl);
				c->prio_caps[i].project[pl] = 0;
				c->prio_caps[i].max = (int)ll;
				if (i == c->n_prio_caps)
					c->n_prio_caps++;
			}
		} else if (!strncmp(k, "user_log_limit[", strlen("user_log_limit[")) ||
			   !strncmp(k, "log_retention[", strlen("log_retention["))) {
			bool lim = k[0] == 'u';
			const char *un = strchr(k, '[') + 1;
			size_t ul = strcspn(un, "]");
			char name[64];
			if (un[ul] != ']' || un[ul + 1] || !ul || ul >= sizeof name) {
				rc = gw_fail(err, GW_EFORMAT, "config '%s' line %d: expected %s[USER] = %s", path, lineno,
					     lim ? "user_log_limit" : "log_retention", lim ? "SIZE" : "DURATION");
				break;
			}
			memcpy(name, un, ul);
			name[ul] = 0;
			long long id;
			struct passwd *pw = getpwnam(name);
			if (!pw && parse_int(name, 0, 4294967294LL, &id)) {
				rc = gw_fail(err, GW_EFORMAT, "config '%s' line %d: no user '%s'", path, lineno, name);
				break;
			}
			uint32_t uid = pw ? (uint32_t)pw->pw_uid : (uint32_t)id;
			size_t i = 0;
			while (i < c->n_user_logs && c->user_logs[i].uid != uid)
				i++;
			ok = i < sizeof c->user_logs / sizeof *c->user_logs &&
			     (lim ? (u = 0, !strcmp(v, "0") || parse_size(v, &u) == 0) : parse_duration_ms(v, &u) == 0);
			if (ok) {
				if (i == c->n_user_logs) {
					memset(&c->user_logs[i], 0, sizeof c->user_logs[i]);
					c->user_logs[i].uid = uid;
					c->n_user_logs++;
				}
				if (lim) {
					c->user_logs[i].has_limit = true;
					c->user_logs[i].limit_bytes = u;
				} else {
					c->user_logs[i].has_retention = true;
					c->user_logs[i].retention_ms = u;
				}
			}
		} else if (!strcmp(k, "admin_group")) {
			ok = strlen(v) < sizeof c->admin_group;
			if (ok)
				strcpy(c->admin_group, v);
		} else if (!strcmp(k, "fairshare_half_life")) {
			ok = parse_duration_ms(v, &u) == 0;
			c->fairshare_half_life_ms = u;
		} else if (!strcmp(k, "exclusive_foreign")) {
			ok = parse_size(v, &u) == 0 && u <= 1024 * GiB;
			c->exclusive_foreign_bytes = u;
		} else if (!strcmp(k, "vram_sizes")) {
			ok = parse_sizes(v, c->vram_sizes, &c->n_vram_sizes);
		} else if (!strncmp(k, "vram_sizes[", strlen("vram_sizes["))) {
			ok = parse_model_sizes(k, v, c);
			if (!ok && !strchr(k, ']')) {
				rc = gw_fail(err, GW_EFORMAT, "config '%s' line %d: expected vram_sizes[MODEL] = SIZES", path, lineno);
				break;
			}
		} else if (!strcmp(k, "policy"))
			ok = sched_policy_parse(v, &c->policy) == 0;
		else if (qd_limits_key(c, k, v, &ok))
			;
		else {
			rc = gw_fail(err, GW_EFORMAT, "config '%s' line %d: unknown key '%s'", path, lineno, k);
			break;
		}
		if (!ok) {
			rc = gw_fail(err, GW_EFORMAT, "config '%s' line %d: bad value '%s' for '%s'", path, lineno, v, k);
			break;
		}
	}
	free(text);
	return rc;
}

int qd_config_max_priority(const config *c, const char *project)
{
	for (size_t i = 0; project && i < c->n_prio_caps; i++)
		if (!strcmp(c->prio_caps[i].project, project))
			return c->prio_caps[i].max;
	return c->max_priority;
}
