/*
 * gpuwise export k8s|slurm -- CMD: a queue job as a Kubernetes Job or a
 * Slurm batch script; gpuwise export quota k8s|slurm: project quotas as
 * ResourceQuota/Kueue objects or sacctmgr commands.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <limits.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "queue/queue.h"
#include "sched/export.h"
#include "util/json.h"
#include "watch/watch.h"

#define EXPORT_DEFAULT_IMAGE "nvcr.io/nvidia/pytorch:24.05-py3"

static void usage(FILE *f)
{
	fprintf(f,
		_("usage: gpuwise export k8s [JOB OPTIONS] [--image IMAGE] [--queue NAME | --kueue]\n"
		"                          [--time-slicing] -- CMD [ARGS...]\n"
		"       gpuwise export slurm [JOB OPTIONS] [--partition P] [--shards K]\n"
		"                          [--mem-per-gpu SIZE] [--signal-before DUR] [--output PATTERN] -- CMD [ARGS...]\n"
		"       gpuwise export quota k8s [--kueue] [--flavor NAME] [QUOTA OPTIONS]\n"
		"       gpuwise export quota slurm [--cluster NAME] [--vram-gres] [QUOTA OPTIONS]\n"
		"       (gpuwise quota export k8s|slurm ... is the same)\n\n"
		"Print a queue job as a Kubernetes batch/v1 Job (YAML) or a Slurm batch\n"
		"script, the command wrapped in 'gpuwise run' with the job's restart options\n"
		"(a Job only with --gpuwise, for an image that holds gpuwise: dist/Dockerfile);\n"
		"or the projects' quotas as Kubernetes objects or sacctmgr commands.  What\n"
		"cannot be said in the target's words is said on stderr.\n\n"
		"Job options (as 'gpuwise submit'):\n"
		"  --project P           project: the namespace, or the Slurm account (default: default)\n"
		"  --gpus N              GPUs (default 1)\n"
		"  --vram SIZE           GPU memory per GPU (shared jobs)\n"
		"  --mode MODE           shared (default), exclusive or mig:PROFILE\n"
		"  --name NAME           the job's name (default: the command's; a Job's then\n"
		"                        gets a random 8-character suffix, so exports never collide)\n"
		"  --time-limit DUR      stop the job after DUR (activeDeadlineSeconds, --time)\n"
		"  --env NAME=VALUE      set a variable in the job\n"
		"  --restart POLICY      never (default), on-failure or always (as 'gpuwise run')\n"
		"  --max-restarts N      at most N restarts (default 3; 'unlimited')\n"
		"  --run-opt OPT         pass OPT to 'gpuwise run' (repeat)\n"
		"  --chdir DIR           run in DIR\n"
		"  --gpuwise PATH        gpuwise on the nodes (default: gpuwise; with --submit this\n"
		"                        binary) or in the image (default: none, the Job runs the\n"
		"                        command directly)\n"
		"Kubernetes:\n"
		"  --image IMAGE         container image (default %s); one\n"
		"                        with gpuwise: docker build -f dist/Dockerfile, then --gpuwise\n"
		"                        /usr/local/bin/gpuwise\n"
		"  --queue NAME          label the Job for Kueue's LocalQueue NAME\n"
		"  --kueue               the same for the LocalQueue 'gpuwise' of 'export quota k8s --kueue'\n"
		"  --time-slicing        ask nvidia.com/gpu.shared (time-sliced replicas) for a shared job\n"
		"Slurm:\n"
		"  --partition P         the partition\n"
		"  --shards K            --gres=shard:K for a shared job on one GPU\n"
		"  --mem-per-gpu SIZE    host memory per GPU\n"
		"  --signal-before DUR   with --time-limit: SIGTERM that long before it (default 60s)\n"
		"  --output PATTERN      the job's output file (sbatch --output)\n"
		"  --submit              submit the script with 'sbatch --parsable' and print the\n"
		"                        Slurm job id instead of the script\n"
		"Quota options:\n"
		"  --from FILE           the projects of 'gpuwise quota --json' (- for stdin)\n"
		"                        (neither --from nor --quota: the running daemon's)\n"
		"  --quota P:gpus=N,jobs=N,vram=SIZE,borrow=N\n"
		"                        one project's limits (repeat; borrow: GPUs it may borrow)\n"
		"  --kueue               also a ResourceFlavor, and a ClusterQueue and LocalQueue per project\n"
		"  --flavor NAME         the Kueue ResourceFlavor (default default-flavor)\n"
		"  --cluster NAME        the Slurm cluster of the accounts\n"
		"  --vram-gres           print the gres.conf/slurm.conf lines of a count-only VRAM GRES\n"
		"                        and limit gres/vram too\n"
		"  -h, --help            this help\n\n"
		"Exit status: 0 success, 1 a quota file could not be read or sbatch failed,\n2 usage error.\n"),
		EXPORT_DEFAULT_IMAGE);
}

enum {
	O_PROJECT = 256, O_GPUS, O_VRAM, O_MODE, O_NAME, O_TIME, O_ENV, O_RESTART, O_MAXR, O_RUNOPT, O_CHDIR, O_GPUWISE,
	O_IMAGE, O_QUEUE, O_KUEUE, O_TS, O_PARTITION, O_SHARDS, O_MEMGPU, O_SIGNAL, O_OUTPUT, O_FROM, O_QUOTA,
	O_FLAVOR, O_CLUSTER, O_VRAMGRES, O_SUBMIT,
};

static const struct option export_opts[] = {
	{"project", required_argument, NULL, O_PROJECT},   {"gpus", required_argument, NULL, O_GPUS},
	{"vram", required_argument, NULL, O_VRAM},         {"mode", required_argument, NULL, O_MODE},
	{"name", required_argument, NULL, O_NAME},         {"time-limit", required_argument, NULL, O_TIME},
	{"env", required_argument, NULL, O_ENV},           {"restart", required_argument, NULL, O_RESTART},
	{"max-restarts", required_argument, NULL, O_MAXR}, {"run-opt", required_argument, NULL, O_RUNOPT},
	{"chdir", required_argument, NULL, O_CHDIR},       {"gpuwise", required_argument, NULL, O_GPUWISE},
	{"image", required_argument, NULL, O_IMAGE},       {"queue", required_argument, NULL, O_QUEUE},
	{"kueue", no_argument, NULL, O_KUEUE},             {"time-slicing", no_argument, NULL, O_TS},
	{"partition", required_argument, NULL, O_PARTITION}, {"shards", required_argument, NULL, O_SHARDS},
	{"mem-per-gpu", required_argument, NULL, O_MEMGPU}, {"signal-before", required_argument, NULL, O_SIGNAL},
	{"output", required_argument, NULL, O_OUTPUT},     {"from", required_argument, NULL, O_FROM},
	{"quota", required_argument, NULL, O_QUOTA},       {"flavor", required_argument, NULL, O_FLAVOR},
	{"cluster", required_argument, NULL, O_CLUSTER},   {"vram-gres", no_argument, NULL, O_VRAMGRES},
	{"submit", no_argument, NULL, O_SUBMIT},           {"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

static void push(char ***v, size_t *n, const char *s)
{
	*v = xrealloc(*v, (*n + 2) * sizeof **v);
	(*v)[(*n)++] = xstrdup(s);
	(*v)[*n] = NULL;
}

/*
 * Give script to `sbatch --parsable` on its stdin; on success *id holds
 * what it printed (the job id, ";cluster" removed).  Returns 0, or -1 with
 * a message in err.
 */
int export_sbatch_submit(const char *script, char *id, size_t n_id, char *err, size_t n_err)
{
	int in[2], out[2];
	if (pipe(in) || pipe(out)) {
		snprintf(err, n_err, _("cannot run sbatch: %s"), strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, n_err, _("cannot run sbatch: %s"), strerror(errno));
		return -1;
	}
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(out[1], 2);
		close(in[0]), close(in[1]), close(out[0]), close(out[1]);
		execlp("sbatch", "sbatch", "--parsable", (char *)NULL);
		fprintf(stderr, _("cannot run sbatch: %s"), strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	void (*old)(int) = signal(SIGPIPE, SIG_IGN); /* sbatch may not read it all */
	size_t len = strlen(script);
	for (size_t off = 0; off < len;) {
		ssize_t w = write(in[1], script + off, len - off);
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	close(in[1]);
	signal(SIGPIPE, old);
	char buf[1024];
	size_t got = 0;
	ssize_t r;
	while ((r = read(out[0], buf + got, sizeof buf - 1 - got)) > 0 && got < sizeof buf - 1)
		got += (size_t)r;
	close(out[0]);
	buf[got] = '\0';
	int status;
	waitpid(pid, &status, 0);
	char *nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !buf[0]) {
		snprintf(err, n_err, _("sbatch failed: %s"), buf[0] ? buf : _("no output"));
		return -1;
	}
	char *semi = strchr(buf, ';');
	if (semi)
		*semi = '\0';
	snprintf(id, n_id, "%s", buf);
	return 0;
}

static void print_notes(const strbuf *notes)
{
	const char *s = sb_str(notes);
	while (*s) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) : strlen(s);
		fprintf(stderr, _("gpuwise: note: %.*s\n"), (int)n, s);
		s += n + (nl ? 1 : 0);
	}
}

/* One --quota P:gpus=N,jobs=N,vram=SIZE,borrow=N into q (project malloc'd). */
static int parse_quota(const char *arg, export_quota *q)
{
	const char *colon = strchr(arg, ':');
	memset(q, 0, sizeof *q);
	q->borrow_gpus = -1;
	if (!colon || colon == arg)
		return usage_error("export", "--quota '%.60s' is not PROJECT:gpus=N,jobs=N,vram=SIZE,borrow=N", arg);
	char *rest = xstrdup(colon + 1), *save = NULL;
	int rc = 0;
	for (char *kv = strtok_r(rest, ",", &save); kv && !rc; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		long long v;
		if (!eq) {
			rc = usage_error("export", "--quota: '%.40s' is not KEY=VALUE", kv);
			break;
		}
		*eq = '\0';
		const char *val = eq + 1;
		if (strcmp(kv, "vram") == 0) {
			if (parse_size(val, &q->vram_bytes))
				rc = usage_error("export", "--quota: vram '%.40s' is not a size", val);
		} else if (strcmp(kv, "gpus") == 0 || strcmp(kv, "jobs") == 0 || strcmp(kv, "borrow") == 0) {
			if (parse_int(val, 0, 1000000, &v))
				rc = usage_error("export", "--quota: %s '%.40s' is not a count", kv, val);
			else if (kv[0] == 'g')
				q->gpus = (int)v;
			else if (kv[0] == 'j')
				q->jobs = (int)v;
			else
				q->borrow_gpus = (int)v;
		} else {
			rc = usage_error("export", "--quota: unknown key '%.40s' (gpus, jobs, vram, borrow)", kv);
		}
	}
	free(rest);
	if (!rc)
		q->project = xstrndup(arg, (size_t)(colon - arg));
	return rc;
}

static int quota_from_json(json_t *j, const char *name, export_quota **qs, size_t *n);

/* The projects of the running queue daemon ('gpuwise quota --json'); 0, or -1 when none answers. */
static int read_quota_daemon(export_quota **qs, size_t *n, int *rc)
{
	char *path = queue_socket_path(NULL);
	queue_conn *c = NULL;
	gw_error err;
	json_t *rep = NULL;
	int r = -1;
	if (queue_connect(path, &c, &err))
		goto out;
	json_t *req = json_object();
	json_object_set_new(req, "op", json_string("quota"));
	if (queue_call(c, req, &rep, &err) == 0 && json_is_true(json_object_get(rep, "ok"))) {
		*rc = quota_from_json(rep, path, qs, n);
		r = 0;
	}
	json_decref(req);
	json_decref(rep);
	queue_close(c);
out:
	free(path);
	return r;
}

/* The projects of `gpuwise quota --json` (docs/json-quota.md). */
static int read_quota_json(const char *path, export_quota **qs, size_t *n)
{
	char *text = NULL;
	size_t len = 0;
	gw_error err = {0};
	int rc = GW_EXIT_RUNTIME;
	json_t *j = NULL;
	if (strcmp(path, "-") == 0) {
		strbuf sb;
		sb_init(&sb);
		char buf[4096];
		size_t r;
		while ((r = fread(buf, 1, sizeof buf, stdin)) > 0 && sb.len < (16u << 20))
			sb_add(&sb, buf, r);
		len = sb.len;
		text = sb_detach(&sb);
	} else if (gw_read_file(path, false, 16u << 20, &text, &len, &err)) {
		gw_errorf("%s", gw_error_text(&err));
		return GW_EXIT_RUNTIME;
	}
	char ebuf[200];
	j = json_parse_limited(text, len, ebuf, sizeof ebuf);
	const char *name = strcmp(path, "-") == 0 ? "stdin" : path;
	if (!j) {
		gw_errorf(_("cannot read '%s': %s"), name, ebuf);
		goto out;
	}
	rc = quota_from_json(j, name, qs, n);
out:
	json_decref(j);
	free(text);
	return rc;
}

static int quota_from_json(json_t *j, const char *name, export_quota **qs, size_t *n)
{
	int rc = GW_EXIT_RUNTIME;
	json_t *projects = json_object_get(j, "projects");
	if (!json_is_array(projects)) {
		gw_errorf(_("cannot read '%s': no \"projects\" array (the output of 'gpuwise quota --json')"), name);
		goto out;
	}
	bool borrowing = json_is_true(json_object_get(j, "borrowing"));
	size_t i;
	json_t *p;
	json_array_foreach(projects, i, p) {
		const char *proj = json_string_value(json_object_get(p, "project"));
		if (!proj || !*proj) {
			gw_errorf(_("cannot read '%s': projects[%zu] has no \"project\" name"), name, i);
			goto out;
		}
		export_quota q = {.project = xstrdup(proj), .borrow_gpus = borrowing ? -1 : 0};
		json_t *g = json_object_get(p, "gpus_quota"), *jb = json_object_get(p, "jobs_quota"),
		       *v = json_object_get(p, "vram_quota_bytes");
		if ((g && !json_is_null(g) && (!json_is_integer(g) || json_integer_value(g) < 0)) ||
		    (jb && !json_is_null(jb) && (!json_is_integer(jb) || json_integer_value(jb) < 0)) ||
		    (v && !json_is_null(v) && (!json_is_integer(v) || json_integer_value(v) < 0))) {
			free((char *)q.project);
			gw_errorf(_("cannot read '%s': project '%s' has a quota that is not a count or null"), name, proj);
			goto out;
		}
		q.gpus = json_is_integer(g) ? (int)json_integer_value(g) : 0;
		q.jobs = json_is_integer(jb) ? (int)json_integer_value(jb) : 0;
		q.vram_bytes = json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
		*qs = xrealloc(*qs, (*n + 1) * sizeof **qs);
		(*qs)[(*n)++] = q;
	}
	rc = 0;
out:
	return rc;
}

static int quota_export(int argc, char **argv, const char *target)
{
	export_quota *qs = NULL;
	size_t n = 0;
	bool kueue = false, vram_gres = false;
	const char *flavor = "default-flavor", *cluster = NULL, *from = NULL;
	int c, rc = 0;
	while ((c = getopt_long(argc, argv, "+:h", export_opts, NULL)) != -1 && !rc) {
		switch (c) {
		case O_FROM: from = optarg; break;
		case O_QUOTA:
			qs = xrealloc(qs, (n + 1) * sizeof *qs);
			if (!(rc = parse_quota(optarg, &qs[n])))
				n++;
			break;
		case O_KUEUE: kueue = true; break;
		case O_FLAVOR: flavor = optarg; break;
		case O_CLUSTER: cluster = optarg; break;
		case O_VRAMGRES: vram_gres = true; break;
		case 'h': usage(stdout); goto out;
		case ':': rc = usage_error("export", "option '%s' needs a value", argv[optind - 1]); break;
		default: rc = usage_error("export", "option '%s' is not one of export quota's", argv[optind - 1]); break;
		}
	}
	if (rc)
		goto out;
	if (optind < argc) {
		rc = usage_error("export", "unexpected argument '%s'", argv[optind]);
		goto out;
	}
	bool k8s = strcmp(target, "k8s") == 0;
	if ((kueue || strcmp(flavor, "default-flavor") != 0) && !k8s) {
		rc = usage_error("export", "--kueue and --flavor are for 'export quota k8s'");
		goto out;
	}
	if ((cluster || vram_gres) && k8s) {
		rc = usage_error("export", "--cluster and --vram-gres are for 'export quota slurm'");
		goto out;
	}
	if (from && (rc = read_quota_json(from, &qs, &n)))
		goto out;
	if (!from && n == 0 && read_quota_daemon(&qs, &n, &rc) == 0 && rc)
		goto out;
	if (n == 0) {
		rc = usage_error("export", "no projects: give --from FILE ('gpuwise quota --json') or --quota, or start the queue daemon");
		goto out;
	}
	char *fl = export_k8s_name(flavor);
	strbuf o, notes;
	sb_init(&o);
	sb_init(&notes);
	if (k8s)
		export_quota_k8s(qs, n, kueue, fl, &o, &notes);
	else
		export_quota_slurm(qs, n, cluster, vram_gres, &o, &notes);
	fputs(sb_str(&o), stdout);
	print_notes(&notes);
	sb_release(&o);
	sb_release(&notes);
	free(fl);
out:
	for (size_t i = 0; i < n; i++)
		free((char *)qs[i].project);
	free(qs);
	return rc;
}

int cmd_quota_export(int argc, char **argv)
{
	opterr = 0;
	optind = 1;
	if (argc < 2 || (strcmp(argv[1], "k8s") != 0 && strcmp(argv[1], "slurm") != 0)) {
		if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
			usage(stdout);
			return GW_EXIT_OK;
		}
		return usage_error("export", "export quota: give k8s or slurm");
	}
	optind = 2;
	return quota_export(argc, argv, argv[1]);
}

int cmd_export(int argc, char **argv)
{
	if (argc < 2)
		return usage_error("export", "give k8s, slurm or quota");
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return GW_EXIT_OK;
	}
	if (strcmp(argv[1], "quota") == 0)
		return cmd_quota_export(argc - 1, argv + 1);
	bool k8s = strcmp(argv[1], "k8s") == 0;
	if (!k8s && strcmp(argv[1], "slurm") != 0)
		return usage_error("export", "unknown target '%.40s' (k8s, slurm or quota)", argv[1]);
	job_spec j = {.n_gpus = 1, .mode = JOB_MODE_SHARED, .restart = JOB_RESTART_NEVER, .max_restarts = 3};
	export_k8s_opts ko = {.image = EXPORT_DEFAULT_IMAGE};
	export_slurm_opts so = {.signal_before_s = 60};
	bool max_given = false, submit = false;
	int c, rc = 0;
	long long v;
	uint64_t u;
	opterr = 0;
	optind = 2;
	while ((c = getopt_long(argc, argv, "+:h", export_opts, NULL)) != -1 && !rc) {
		bool k8s_only = c == O_IMAGE || c == O_QUEUE || c == O_KUEUE || c == O_TS;
		bool slurm_only = c == O_PARTITION || c == O_SHARDS || c == O_MEMGPU || c == O_SIGNAL || c == O_OUTPUT ||
				  c == O_SUBMIT;
		if ((k8s_only && !k8s) || (slurm_only && k8s)) {
			const char *oname = "?";
			for (const struct option *op = export_opts; op->name; op++)
				if (op->val == c)
					oname = op->name;
			rc = usage_error("export", "--%s is not an option of 'export %s'", oname, argv[1]);
			break;
		}
		switch (c) {
		case O_PROJECT:
			if (!*optarg)
				rc = usage_error("export", "--project needs a name");
			free(j.project);
			j.project = xstrdup(optarg);
			break;
		case O_GPUS:
			if (parse_int(optarg, 1, 64, &v))
				rc = usage_error("export", "--gpus '%.40s' is not a count from 1 to 64", optarg);
			j.n_gpus = (int)v;
			break;
		case O_VRAM:
			if (parse_size(optarg, &j.vram_bytes) || j.vram_bytes == 0)
				rc = usage_error("export", "--vram '%.40s' is not a size (e.g. 20G)", optarg);
			break;
		case O_MODE:
			free(j.mig_profile);
			j.mig_profile = NULL;
			if (job_mode_parse(optarg, &j.mode, &j.mig_profile))
				rc = usage_error("export", "--mode '%.40s' is not shared, exclusive or mig:PROFILE", optarg);
			break;
		case O_NAME:
			free(j.name);
			j.name = xstrdup(optarg);
			break;
		case O_TIME:
			if (parse_duration_ms(optarg, &j.time_limit_ms) || j.time_limit_ms == 0)
				rc = usage_error("export", "--time-limit '%.40s' is not a duration (e.g. 2h)", optarg);
			break;
		case O_ENV:
			if (!strchr(optarg, '=') || optarg[0] == '=')
				rc = usage_error("export", "--env '%.40s' is not NAME=VALUE", optarg);
			else
				push(&j.env, &j.n_env, optarg);
			break;
		case O_RESTART:
			if (job_restart_parse(optarg, &j.restart))
				rc = usage_error("export", "--restart '%.40s' is not never, on-failure or always", optarg);
			break;
		case O_MAXR:
			max_given = true;
			if (strcmp(optarg, "unlimited") == 0)
				j.max_restarts = JOB_MAX_RESTARTS_UNLIMITED;
			else if (parse_int(optarg, 0, 1000000, &v))
				rc = usage_error("export", "--max-restarts needs a count or 'unlimited', not '%.40s'", optarg);
			else
				j.max_restarts = (int)v;
			break;
		case O_RUNOPT: push(&j.run_args, &j.n_run_args, optarg); break;
		case O_CHDIR:
			free(j.cwd);
			j.cwd = xstrdup(optarg);
			break;
		case O_GPUWISE: ko.gpuwise_path = so.gpuwise_path = optarg; break;
		case O_IMAGE: ko.image = optarg; break;
		case O_QUEUE: ko.queue = optarg; break;
		case O_KUEUE: ko.queue = "gpuwise"; break;
		case O_TS: ko.time_slicing = true; break;
		case O_PARTITION: so.partition = optarg; break;
		case O_SHARDS:
			if (parse_int(optarg, 1, 1000000, &v))
				rc = usage_error("export", "--shards '%.40s' is not a count", optarg);
			so.shards = (int)v;
			break;
		case O_MEMGPU:
			if (parse_size(optarg, &so.mem_per_gpu_bytes) || so.mem_per_gpu_bytes == 0)
				rc = usage_error("export", "--mem-per-gpu '%.40s' is not a size", optarg);
			break;
		case O_SIGNAL:
			if (parse_duration_ms(optarg, &u) || u < 1000 || u > 65535000)
				rc = usage_error("export", "--signal-before '%.40s' is not a duration from 1s to 65535s", optarg);
			so.signal_before_s = (int)(u / 1000);
			break;
		case O_OUTPUT: so.output = optarg; break;
		case O_SUBMIT: submit = true; break;
		case 'h': usage(stdout); goto out;
		case ':': rc = usage_error("export", "option '%s' needs a value", argv[optind - 1]); break;
		default: rc = usage_error("export", "unknown option '%s'", argv[optind - 1]); break;
		}
	}
	if (rc)
		goto out;
	if (optind >= argc || strcmp(argv[optind - 1], "--") != 0) {
		rc = usage_error("export", "give the command after '--' (gpuwise export %s [OPTIONS] -- CMD)", argv[1]);
		goto out;
	}
	if (max_given && j.restart == JOB_RESTART_NEVER) {
		rc = usage_error("export", "--max-restarts needs --restart on-failure or always");
		goto out;
	}
	if (j.vram_bytes && j.mode != JOB_MODE_SHARED) {
		rc = usage_error("export", "--vram is for shared jobs, not %s ones", job_mode_name(j.mode));
		goto out;
	}
	for (int i = optind; i < argc; i++)
		push(&j.argv, &j.argc, argv[i]);
	if (!j.project)
		j.project = xstrdup("default");
	strbuf o, notes;
	sb_init(&o);
	sb_init(&notes);
	gw_error err = {0};
	char e[300];
	if (watch_run_args_check(j.run_args, j.n_run_args, e, sizeof e)) {
		rc = usage_error("export", "%s", e);
		goto out;
	}
	/* the Job's own name when it would be the command's: 8 random [a-z0-9] */
	char suffix[9] = "";
	unsigned char rnd[8];
	if (k8s && !j.name && getrandom(rnd, sizeof rnd, 0) == (ssize_t)sizeof rnd) {
		for (size_t i = 0; i < sizeof rnd; i++)
			suffix[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[rnd[i] % 36];
		ko.name_suffix = suffix;
	}
	char self[PATH_MAX];
	if (submit)
		so.gpuwise_path = slurm_gpuwise_path(so.gpuwise_path, self, sizeof self);
	int erc = k8s ? export_k8s_job(&j, &ko, &o, &notes, &err) : export_slurm_script(&j, &so, &o, &notes, &err);
	if (erc) {
		rc = usage_error("export", "%s", gw_error_text(&err));
	} else if (submit) {
		char id[128], msg[1200];
		print_notes(&notes);
		slurm_probe(so.gpuwise_path, so.partition);
		if (export_sbatch_submit(sb_str(&o), id, sizeof id, msg, sizeof msg)) {
			gw_errorf("%s", msg);
			rc = GW_EXIT_RUNTIME;
		} else {
			printf("%s\n", id);
		}
	} else {
		fputs(sb_str(&o), stdout);
		print_notes(&notes);
	}
	sb_release(&o);
	sb_release(&notes);
out:
	job_spec_release(&j);
	return rc;
}
