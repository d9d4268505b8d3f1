/*
 * The Slurm backend of submit / queue / show / logs / cancel: jobs given
 * to sbatch (marked with the comment "gpuwise", so that queue finds them
 * again without a daemon), read back with scontrol, cancelled with scancel.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "queue/proto.h"
#include "sched/export.h"
#include "sched/job.h"
#include "util/json.h"

#define SLURM_COMMENT "gpuwise"

static bool in_path(const char *prog)
{
	const char *p = getenv("PATH");
	if (!p)
		return false;
	char *dirs = xstrdup(p), *save = NULL;
	bool found = false;
	for (char *d = strtok_r(dirs, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
		char *f = xasprintf("%s/%s", *d ? d : ".", prog);
		found = access(f, X_OK) == 0;
		free(f);
	}
	free(dirs);
	return found;
}

bool slurm_backend_configured(void)
{
	if (!in_path("scontrol"))
		return false;
	const char *conf = getenv("SLURM_CONF");
	return (conf && *conf) || access("/etc/slurm/slurm.conf", R_OK) == 0;
}

/* Run argv, its stdout and stderr into *out; the exit status, or -1. */
static int capture(char *const argv[], strbuf *out)
{
	int fd[2];
	if (pipe(fd))
		return -1;
	pid_t pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0)
			dup2(nul, 0);
		dup2(fd[1], 1);
		dup2(fd[1], 2);
		close(fd[0]);
		close(fd[1]);
		execvp(argv[0], argv);
		printf(_("cannot run %s: %s\n"), argv[0], strerror(errno));
		fflush(stdout);
		_exit(127);
	}
	close(fd[1]);
	char buf[4096];
	ssize_t r;
	while ((r = read(fd[0], buf, sizeof buf)) > 0 && out->len < (64u << 20))
		sb_add(out, buf, (size_t)r);
	close(fd[0]);
	int st;
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* The first line of s, for a one-line error. */
static void first_line(const char *s, char *buf, size_t n)
{
	size_t l = strcspn(s, "\n");
	snprintf(buf, n, "%.*s", (int)(l < 400 ? l : 400), s);
}

/* ---- which gpuwise the node runs -------------------------------------------- */

/*
 * The gpuwise a Slurm job runs on the node: --gpuwise, else the configured
 * GPUWISE_SLURM_GPUWISE, else this very binary (/proc/self/exe), which is
 * right on clusters whose nodes share the submit host's file system and
 * wrong elsewhere (the probe below says so).  Writes into buf.
 */
const char *slurm_gpuwise_path(const char *given, char *buf, size_t n)
{
	const char *conf = getenv("GPUWISE_SLURM_GPUWISE");
	if (given && *given)
		return given;
	if (conf && *conf)
		return conf;
	ssize_t k = readlink("/proc/self/exe", buf, n - 1);
	if (k <= 0)
		return "gpuwise";
	buf[k] = '\0';
	return buf;
}

/* Where a probe that worked is remembered: XDG_CACHE_HOME, else ~/.cache. */
static char *probe_cache_path(void)
{
	const char *c = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
	if (c && *c == '/')
		return xasprintf("%s/gpuwise/slurm-probe", c);
	if (h && *h == '/')
		return xasprintf("%s/.cache/gpuwise/slurm-probe", h);
	return NULL;
}

/* The probe's key: the path, the cluster's configuration and the partition. */
static char *probe_key(const char *path, const char *partition)
{
	const char *conf = getenv("SLURM_CONF");
	return xasprintf("%s\t%s\t%s", path, conf && *conf ? conf : "/etc/slurm/slurm.conf",
			 partition ? partition : "");
}

static bool probe_cached(const char *key)
{
	char *f = probe_cache_path();
	FILE *fp = f ? fopen(f, "r") : NULL;
	bool hit = false;
	char line[8192];
	while (fp && !hit && fgets(line, sizeof line, fp)) {
		line[strcspn(line, "\n")] = '\0';
		hit = strcmp(line, key) == 0;
	}
	if (fp)
		fclose(fp);
	free(f);
	return hit;
}

static void probe_remember(const char *key)
{
	char *f = probe_cache_path();
	if (!f)
		return;
	char *dir = xstrdup(f);
	*strrchr(dir, '/') = '\0';
	char *parent = xstrdup(dir);
	*strrchr(parent, '/') = '\0';
	mkdir(parent, 0700);
	mkdir(dir, 0700);
	int fd = open(f, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		char *l = xasprintf("%s\n", key);
		ssize_t w = write(fd, l, strlen(l));
		(void)w;
		free(l);
		close(fd);
	}
	free(parent);
	free(dir);
	free(f);
}

/*
 * Once per path, cluster and partition: run `PATH --version` on a node
 * with srun (at most 10 s waiting for a free CPU) and warn when it does
 * not answer as gpuwise, since every job would then die with exit 127
 * after submit printed its id.  Warnings only: the submission goes on.
 */
void slurm_probe(const char *path, const char *partition)
{
	char *key = probe_key(path, partition);
	if (probe_cached(key))
		goto out;
	if (!in_path("srun")) {
		gw_warnf(_("cannot check that '%s' runs on the cluster's nodes: srun is not installed"), path);
		goto out;
	}
	char part[256] = "";
	if (partition)
		snprintf(part, sizeof part, "--partition=%s", partition);
	char *argv[12];
	int a = 0;
	argv[a++] = "srun";
	argv[a++] = "--nodes=1";
	argv[a++] = "--ntasks=1";
	argv[a++] = "--immediate=10";
	argv[a++] = "--time=1";
	argv[a++] = "--job-name=gpuwise-probe";
	argv[a++] = "--quiet";
	if (*part)
		argv[a++] = part;
	argv[a++] = (char *)path;
	argv[a++] = "--version";
	argv[a] = NULL;
	strbuf out;
	sb_init(&out);
	int st = capture(argv, &out);
	if (st == 0 && strncmp(sb_str(&out), "gpuwise ", 8) == 0) {
		probe_remember(key);
	} else {
		/* the line that says why (slurmstepd's execve error), else srun's first */
		const char *o = sb_str(&out), *why = strstr(o, "execve");
		while (why && why > o && why[-1] != '\n')
			why--;
		char first[420];
		first_line(why ? why : o, first, sizeof first);
		const char *f = first;
		if (strncmp(f, "srun: ", 6) == 0)
			f += 6;
		gw_warnf(_("'%s' does not run on the cluster's nodes (srun: %s): the job will fail unless "
			   "gpuwise is installed there; give --gpuwise PATH (its path on the nodes)"),
			 path, *f ? f : st < 0 ? _("could not be started") : _("no output"));
	}
	sb_release(&out);
out:
	free(key);
}

/* ---- submit ---------------------------------------------------------------- */
int slurm_backend_submit(json_t *jspec, const slurm_submit_opts *so, bool json_out)
{
	job_spec j = {0};
	char e[300];
	int rc = GW_EXIT_USAGE;
	if (proto_spec_from_json(jspec, false, &j, e, sizeof e)) {
		rc = usage_error("submit", "%s", e);
		goto out;
	}
	if (j.after_id) {
		rc = usage_error("submit", "--after is for local jobs (Slurm: sbatch --dependency)");
		goto out;
	}
	if (!j.project)
		j.project = xstrdup("default");
	char self[PATH_MAX];
	const char *gw_path = slurm_gpuwise_path(so->gpuwise_path, self, sizeof self);
	export_slurm_opts o = {.partition = so->partition, .shards = so->shards, .mem_per_gpu_bytes = so->mem_per_gpu_bytes,
			       .signal_before_s = 60, .gpuwise_path = gw_path, .output = so->output};
	strbuf script, notes;
	sb_init(&script);
	sb_init(&notes);
	gw_error err = {0};
	if (export_slurm_script(&j, &o, &script, &notes, &err)) {
		rc = usage_error("submit", "%s", gw_error_text(&err));
		goto done;
	}
	/* the mark queue finds the job by: after the first line, with the other #SBATCH lines */
	const char *s = sb_str(&script), *nl = strchr(s, '\n');
	strbuf marked;
	sb_init(&marked);
	sb_add(&marked, s, (size_t)(nl - s) + 1);
	sb_puts(&marked, "#SBATCH --comment=" SLURM_COMMENT "\n");
	sb_puts(&marked, nl + 1);
	const char *ns = sb_str(&notes);
	while (*ns) {
		size_t l = strcspn(ns, "\n");
		fprintf(stderr, _("gpuwise: note: %.*s\n"), (int)l, ns);
		ns += l + (ns[l] ? 1 : 0);
	}
	char id[128], msg[1200];
	rc = GW_EXIT_RUNTIME;
	bool have_sbatch = in_path("sbatch");
	if (have_sbatch)
		slurm_probe(gw_path, so->partition);
	if (!have_sbatch) {
		gw_errorf(_("--backend slurm: sbatch is not installed (apt-get install slurm-client)"));
	} else if (export_sbatch_submit(sb_str(&marked), id, sizeof id, msg, sizeof msg)) {
		gw_errorf("%s", msg);
	} else {
		long long v;
		if (parse_int(id, 1, 1LL << 53, &v)) {
			gw_errorf(_("sbatch printed '%.60s', not a job id"), id);
		} else {
			if (json_out)
				printf("{\"id\": %lld, \"backend\": \"slurm\"}\n", v);
			else
				printf("slurm:%lld\n", v);
			rc = 0;
		}
	}
	sb_release(&marked);
done:
	sb_release(&script);
	sb_release(&notes);
out:
	job_spec_release(&j);
	return rc;
}

/* ---- scontrol show job -o: KEY=VALUE pairs ------------------------------------ */
typedef struct kv {
	char *text;
	char **k, **v;
	size_t n;
} kv;

static void kv_parse(const char *line, kv *o)
{
	memset(o, 0, sizeof *o);
	o->text = xstrdup(line);
	char *save = NULL;
	for (char *t = strtok_r(o->text, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(t, '=');
		if (!eq) /* the rest of a value with a space in it: not one gpuwise reads */
			continue;
		*eq = '\0';
		o->k = xrealloc(o->k, (o->n + 1) * sizeof *o->k);
		o->v = xrealloc(o->v, (o->n + 1) * sizeof *o->v);
		o->k[o->n] = t;
		o->v[o->n] = eq + 1;
		o->n++;
	}
}

static void kv_free(kv *o)
{
	free(o->k);
	free(o->v);
	free(o->text);
}

static const char *kv_get(const kv *o, const char *k)
{
	for (size_t i = 0; i < o->n; i++)
		if (strcmp(o->k[i], k) == 0)
			return o->v[i];
	return "";
}

/* "2026-12-01T13:30:00" (local time) in ms since the epoch; 0 for Unknown/None. */
static uint64_t slurm_ms(const char *s)
{
	struct tm tm = {0};
	char *end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!end || *end)
		return 0;
	tm.tm_isdst = -1;
	time_t t = mktime(&tm);
	return t > 0 ? (uint64_t)t * 1000 : 0;
}

static const char *map_state(const char *s, const char *reason)
{
	if (strcmp(s, "PENDING") == 0 || strcmp(s, "REQUEUED") == 0 || strcmp(s, "REQUEUE_FED") == 0 ||
	    strcmp(s, "PREEMPTED") == 0 || strcmp(s, "RESIZING") == 0)
		return strncmp(reason, "JobHeld", 7) == 0 ? "held" : "queued";
	if (strcmp(s, "REQUEUE_HOLD") == 0 || strcmp(s, "SUSPENDED") == 0 || strcmp(s, "STOPPED") == 0)
		return "held";
	if (strcmp(s, "RUNNING") == 0 || strcmp(s, "CONFIGURING") == 0 || strcmp(s, "COMPLETING") == 0 ||
	    strcmp(s, "SIGNALING") == 0 || strcmp(s, "STAGE_OUT") == 0)
		return "running";
	if (strcmp(s, "COMPLETED") == 0)
		return "done";
	if (strcmp(s, "CANCELLED") == 0)
		return "cancelled";
	return "failed";
}

/* One job as a docs/json-queue.md row (backend "slurm"). */
static json_t *row_from(const kv *o, uint64_t now_ms)
{
	json_t *r = json_object();
	long long id = atoll(kv_get(o, "JobId"));
	const char *st = kv_get(o, "JobState"), *reason = kv_get(o, "Reason");
	const char *state = map_state(st, reason);
	json_object_set_new(r, "id", json_integer(id));
	json_object_set_new(r, "backend", json_string("slurm"));
	json_object_set_new(r, "name", json_string(kv_get(o, "JobName")));
	json_object_set_new(r, "state", json_string(state));
	json_object_set_new(r, "slurm_state", json_string(st));
	json_object_set_new(r, "project", json_string(kv_get(o, "Account")));
	/* UserId=name(uid) */
	char user[128] = "";
	long long uid = -1;
	const char *u = kv_get(o, "UserId"), *par = strchr(u, '(');
	if (par) {
		snprintf(user, sizeof user, "%.*s", (int)(par - u < 100 ? par - u : 100), u);
		uid = atoll(par + 1);
	}
	json_object_set_new(r, "user", json_string(user));
	json_object_set_new(r, "uid", uid >= 0 ? json_integer(uid) : json_null());
	/* TresPerNode=gres:gpu:2 (22.05) or gres/gpu:2; gres:shard:K */
	const char *tres = kv_get(o, "TresPerNode");
	if (!*tres)
		tres = kv_get(o, "TresPerJob");
	const char *colon = strrchr(tres, ':');
	long long n = colon ? atoll(colon + 1) : 0;
	bool shard = strstr(tres, "shard") != NULL;
	json_object_set_new(r, "mode", json_string(shard ? "shared" : "exclusive"));
	json_object_set_new(r, "gpus_requested", json_integer(shard ? 1 : n));
	json_object_set_new(r, "vram_request_bytes", json_integer(0));
	json_object_set_new(r, "vram_charged_bytes", json_null());
	json_object_set_new(r, "vram_measured_bytes", json_null());
	json_object_set_new(r, "priority", json_integer(0));
	json_object_set_new(r, "gpus", json_array());
	json_object_set_new(r, "gpu_uuids", json_array());
	json_object_set_new(r, "borrowed", json_false());
	uint64_t sub = slurm_ms(kv_get(o, "SubmitTime")), start = slurm_ms(kv_get(o, "StartTime")),
		 end = slurm_ms(kv_get(o, "EndTime"));
	bool waiting = strcmp(state, "queued") == 0 || strcmp(state, "held") == 0;
	bool ended = !waiting && strcmp(state, "running") != 0;
	if (waiting)
		start = end = 0; /* a pending job's StartTime is Slurm's guess */
	if (!ended)
		end = 0;
	json_object_set_new(r, "submit_ms", json_integer((json_int_t)sub));
	json_object_set_new(r, "start_ms", start ? json_integer((json_int_t)start) : json_null());
	json_object_set_new(r, "end_ms", end ? json_integer((json_int_t)end) : json_null());
	uint64_t w = start ? (start > sub ? start - sub : 0) : (now_ms > sub ? now_ms - sub : 0);
	json_object_set_new(r, "wait_ms", json_integer((json_int_t)w));
	json_t *run = json_null();
	if (start && (end || !ended))
		run = json_integer((json_int_t)((end ? end : now_ms) > start ? (end ? end : now_ms) - start : 0));
	json_object_set_new(r, "run_ms", run);
	/* ExitCode=STATUS:SIGNAL */
	json_t *ex = json_null();
	const char *ec = kv_get(o, "ExitCode");
	if (ended && strcmp(state, "cancelled") != 0 && *ec) {
		int a = atoi(ec), sig = strchr(ec, ':') ? atoi(strchr(ec, ':') + 1) : 0;
		ex = json_integer(sig ? 128 + sig : a);
	}
	json_object_set_new(r, "exit_status", ex);
	json_object_set_new(r, "reason", *reason && strcmp(reason, "None") != 0 ? json_string(reason) : json_null());
	const char *so = kv_get(o, "StdOut");
	json_object_set_new(r, "stdout_path", *so ? json_string(so) : json_null());
	return r;
}

/* gpuwise's jobs (comment "gpuwise") of this user that scontrol knows; id 0 = all of them. */
static json_t *scontrol_jobs(uint64_t id, char *err, size_t n_err)
{
	char idbuf[32];
	char *argv[] = {"scontrol", "show", "job", "-o", NULL, NULL};
	if (id) {
		snprintf(idbuf, sizeof idbuf, "%llu", (unsigned long long)id);
		argv[4] = idbuf;
	}
	strbuf out;
	sb_init(&out);
	int st = capture(argv, &out);
	json_t *rows = NULL;
	if (st != 0) {
		char l[420];
		first_line(sb_str(&out), l, sizeof l);
		if (id && strstr(l, "Invalid job id"))
			snprintf(err, n_err, _("no Slurm job %llu (Slurm forgets ended jobs after MinJobAge)"), (unsigned long long)id);
		else
			snprintf(err, n_err, _("Slurm: scontrol failed: %s"), *l ? l : _("no output"));
		goto out;
	}
	rows = json_array();
	uint64_t now = (uint64_t)time(NULL) * 1000;
	uid_t me = getuid();
	const char *s = sb_str(&out);
	while (*s) {
		size_t l = strcspn(s, "\n");
		char *line = xstrndup(s, l);
		s += l + (s[l] ? 1 : 0);
		kv o;
		kv_parse(line, &o);
		free(line);
		json_t *r = o.n && strcmp(kv_get(&o, "Comment"), SLURM_COMMENT) == 0 ? row_from(&o, now) : NULL;
		kv_free(&o);
		if (!r)
			continue;
		if (!id && me != 0 && json_integer_value(json_object_get(r, "uid")) != (json_int_t)me) {
			json_decref(r);
			continue;
		}
		json_array_append_new(rows, r);
	}
	if (id && json_array_size(rows) == 0) {
		snprintf(err, n_err, _("Slurm job %llu was not submitted by gpuwise"), (unsigned long long)id);
		json_decref(rows);
		rows = NULL;
	}
out:
	sb_release(&out);
	return rows;
}

json_t *slurm_backend_jobs(bool all, char *err, size_t n_err)
{
	json_t *rows = scontrol_jobs(0, err, n_err);
	if (!rows || all)
		return rows;
	json_t *keep = json_array();
	size_t i;
	json_t *r;
	json_array_foreach(rows, i, r) {
		const char *st = json_string_value(json_object_get(r, "state"));
		if (strcmp(st, "queued") == 0 || strcmp(st, "held") == 0 || strcmp(st, "running") == 0)
			json_array_append(keep, r);
	}
	json_decref(rows);
	return keep;
}

int slurm_err_exit(const char *err)
{
	/* "Slurm: ..." (Slurm itself failed) in English or the reader's language */
	const char *pre = _("Slurm: ");
	return strncmp(err, "Slurm: ", 7) == 0 || strncmp(err, pre, strlen(pre)) == 0 ? GW_EXIT_RUNTIME
											: GW_EXIT_VERDICT3;
}

json_t *slurm_backend_job(uint64_t id, char *err, size_t n_err)
{
	if (!in_path("scontrol")) {
		snprintf(err, n_err, _("Slurm: scontrol is not installed (apt-get install slurm-client)"));
		return NULL;
	}
	json_t *rows = scontrol_jobs(id, err, n_err);
	if (!rows)
		return NULL;
	json_t *r = json_incref(json_array_get(rows, 0));
	json_decref(rows);
	json_int_t uid = json_integer_value(json_object_get(r, "uid"));
	if (getuid() != 0 && uid != (json_int_t)getuid()) {
		snprintf(err, n_err, _("Slurm job %llu is another user's"), (unsigned long long)id);
		json_decref(r);
		return NULL;
	}
	return r;
}

/* Print the job's output file from offset *off on; 0, or -1 when it cannot be read. */
static int print_from(const char *path, uint64_t *off)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	if (fseeko(f, (off_t)*off, SEEK_SET) == 0) {
		char buf[8192];
		size_t r;
		while ((r = fread(buf, 1, sizeof buf, f)) > 0) {
			fwrite(buf, 1, r, stdout);
			*off += r;
		}
	}
	fclose(f);
	fflush(stdout);
	return 0;
}

int slurm_backend_logs(uint64_t id, bool follow)
{
	char err[512];
	json_t *r = slurm_backend_job(id, err, sizeof err);
	if (!r) {
		gw_errorf("%s", err);
		return slurm_err_exit(err);
	}
	char *path = xstrdup(json_string_value(json_object_get(r, "stdout_path")) ?
				     json_string_value(json_object_get(r, "stdout_path")) : "");
	const char *st = json_string_value(json_object_get(r, "state"));
	bool waiting = strcmp(st, "queued") == 0 || strcmp(st, "held") == 0;
	json_decref(r);
	uint64_t off = 0;
	int rc = 0;
	if (!*path) {
		gw_errorf(_("Slurm job %llu has no output file"), (unsigned long long)id);
		rc = GW_EXIT_RUNTIME;
		goto out;
	}
	if (print_from(path, &off) && !waiting && !follow) {
		gw_errorf(_("cannot read the output of Slurm job %llu at '%s': %s (the file is on the node that ran it)"),
			  (unsigned long long)id, path, strerror(errno));
		rc = GW_EXIT_RUNTIME;
		goto out;
	}
	while (follow) {
		r = slurm_backend_job(id, err, sizeof err);
		bool ended = !r;
		if (r) {
			st = json_string_value(json_object_get(r, "state"));
			ended = strcmp(st, "queued") != 0 && strcmp(st, "held") != 0 && strcmp(st, "running") != 0;
			json_decref(r);
		}
		print_from(path, &off);
		if (ended)
			break;
		sleep_ms(500);
	}
out:
	free(path);
	return rc;
}

int slurm_backend_cancel(uint64_t id)
{
	char err[512];
	json_t *r = slurm_backend_job(id, err, sizeof err);
	if (!r) {
		gw_errorf("%s", err);
		return slurm_err_exit(err);
	}
	const char *st = json_string_value(json_object_get(r, "state"));
	bool running = strcmp(st, "running") == 0;
	bool ended = !running && strcmp(st, "queued") != 0 && strcmp(st, "held") != 0;
	json_decref(r);
	if (ended) {
		gw_errorf(_("Slurm job %llu has already ended"), (unsigned long long)id);
		return GW_EXIT_VERDICT3;
	}
	char idbuf[32];
	snprintf(idbuf, sizeof idbuf, "%llu", (unsigned long long)id);
	char *argv[] = {"scancel", idbuf, NULL};
	strbuf out;
	sb_init(&out);
	int stc = capture(argv, &out);
	int rc = 0;
	if (stc != 0) {
		char l[420];
		first_line(sb_str(&out), l, sizeof l);
		gw_errorf(_("scancel %s failed: %s"), idbuf, *l ? l : _("no output"));
		rc = stc == 127 ? GW_EXIT_RUNTIME : GW_EXIT_VERDICT3;
	} else {
		printf(running ? _("job slurm:%s is being stopped\n") : _("job slurm:%s cancelled\n"), idbuf);
	}
	sb_release(&out);
	return rc;
}

/* "slurm:N" → N and true; "local:N" or "N" → N and false; 2 on a bad id. */
int slurm_parse_job_id(const char *cmd, const char *s, uint64_t *id, bool *slurm)
{
	long long v;
	*slurm = strncmp(s, "slurm:", 6) == 0;
	const char *num = *slurm ? s + 6 : strncmp(s, "local:", 6) == 0 ? s + 6 : s;
	if (parse_int(num, 1, 1LL << 53, &v))
		return usage_error(cmd, "'%s' is not a job id (N, local:N or slurm:N)", s);
	*id = (uint64_t)v;
	return 0;
}
