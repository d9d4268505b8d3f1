/*
 * gpuwise submit / queue / show / logs / cancel / hold / release / quota:
 * the clients of the queue daemon.  Each builds one request, sends it over
 * the daemon's socket and prints the reply (text, or --json).
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "kb/kb.h"
#include "queue/proto.h"
#include "queue/queue.h"
#include "sched/job.h"
#include "util/json.h"

/* Exit status 3: the daemon answered but refused (permission, no such job, bad request). */
#define EXIT_REFUSED GW_EXIT_VERDICT3

static const char exit_text[] =
	N_("Exit status: 0 done; 1 no daemon or a runtime error; 2 usage error;\n"
	"3 the daemon refused the request (permission, no such job, invalid job).\n");

/* Connect, or say in one line that no daemon runs and how to start one. */
/* "gpuwise: MESSAGE" for an English message of the queue's client or
 * daemon (the JSON and the daemon's log keep it English). */
static void error_tr(const char *english)
{
	char *t = gw_translate_text(english);
	gw_errorf("%s", t);
	free(t);
}

static queue_conn *open_conn(const char *socket_opt)
{
	char *path = queue_socket_path(socket_opt);
	queue_conn *c = NULL;
	gw_error err;
	if (queue_connect(path, &c, &err)) {
		if (err.code == GW_ENOENT)
			gw_errorf(_("no queue daemon at '%s'; start one with 'gpuwise daemon%s%s'%s"), path,
				  socket_opt ? " --socket " : "", socket_opt ? socket_opt : "",
				  geteuid() == 0 ? _(" or 'systemctl start gpuwise'") : "");
		else
			gw_errorf("%s", gw_error_text(&err));
	}
	free(path);
	return c;
}

/* One request, one reply; NULL after printing why.  *refused set when the daemon said no. */
static json_t *call(queue_conn *c, json_t *req, bool *refused)
{
	json_t *rep = NULL;
	gw_error err;
	*refused = false;
	if (queue_call(c, req, &rep, &err)) {
		gw_errorf("%s", gw_error_text(&err));
		json_decref(req);
		return NULL;
	}
	json_decref(req);
	if (!json_is_true(json_object_get(rep, "ok")) && json_is_string(json_object_get(rep, "error"))) {
		error_tr(json_string_value(json_object_get(rep, "error")));
		*refused = true;
		json_decref(rep);
		return NULL;
	}
	return rep;
}

static json_t *req_new(const char *op)
{
	json_t *o = json_object();
	json_object_set_new(o, "op", json_string(op));
	return o;
}

static int parse_id(const char *cmd, const char *s, uint64_t *id)
{
	long long v;
	if (parse_int(s, 1, 1LL << 53, &v))
		return usage_error(cmd, "'%s' is not a job id", s);
	*id = (uint64_t)v;
	return 0;
}

static long long jint(json_t *o, const char *k)
{
	return (long long)json_integer_value(json_object_get(o, k));
}

static const char *jstr(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

/*
 * A string another user chose (a job or project name, a command, a reason
 * that quotes one) as text for a terminal: control characters escaped
 * (\x1b), so no name can write escape sequences or a forged row into
 * someone else's output.  Eight calls' results live at once.
 */
static const char *esc(const char *s)
{
	static char buf[8][2048];
	static unsigned k;
	if (!str_has_ctl(s))
		return s;
	k = (k + 1) % 8;
	return str_esc_ctl(s, buf[k], sizeof buf[k]);
}

/* ---- submit ------------------------------------------------------------- */
static void submit_usage(FILE *f)
{
	fprintf(f,
		_("usage: gpuwise submit [OPTIONS] -- CMD [ARGS...]\n"
		"       gpuwise submit --vram auto [OPTIONS] -- PLAN-OPTIONS -- CMD [ARGS...]\n\n"
		"Queue CMD on the shared GPU server and print its job id.  The job runs as\n"
		"you, in this directory, under 'gpuwise run', with CUDA_VISIBLE_DEVICES set\n"
		"to its GPUs' UUIDs, CUDA_DEVICE_ORDER=PCI_BUS_ID, GPUWISE_JOB_ID and\n"
		"GPUWISE_PROJECT, and your environment (--export) less the queue's deny\n"
		"list (env_deny: LD_*, GPUWISE_* ...), then what --env passes.  CMD is\n"
		"looked up on your PATH now: a command not found is refused (exit 1).\n\n"
		"Options:\n"
		"  --project P           charge project P (default: default)\n"
		"  --vram SIZE|auto      GPU memory per GPU (e.g. 20G); auto asks the planner,\n"
		"                        given the 'gpuwise plan' options between the two --\n"
		"  --gpus N              GPUs (default 1)\n"
		"  --mode MODE           shared (default: packed by memory), exclusive (whole\n"
		"                        GPUs) or mig:PROFILE (a MIG instance, e.g. mig:1g.10gb)\n"
		"  --priority N          orders your own jobs: higher first (-1000..1000, default 0)\n"
		"  --name NAME           a name for the queue listing\n"
		"  --time-limit DUR      stop the job after DUR (e.g. 2h)\n"
		"  --after JOBID         start only after job JOBID ended\n"
		"  --env NAME[=VALUE]    pass a variable (NAME alone: its value here)\n"
		"  --export WHAT         what the job inherits, as sbatch: ALL (default, your\n"
		"                        environment), NONE (a clean one), or NAME[=VALUE],...\n"
		"  --restart POLICY      never (default), on-failure or always (as 'gpuwise run')\n"
		"  --max-restarts N      at most N restarts (default 3; 'unlimited')\n"
		"  --backoff MIN..MAX    back-off between attempts (as 'gpuwise run')\n"
		"  --start-limit N/DUR   give up after N starts within DUR (as 'gpuwise run')\n"
		"  --no-restart-on LIST  exit codes or classes never restarted (as 'gpuwise run')\n"
		"  --mem-limit SIZE      stop the job when its GPU memory exceeds SIZE\n"
		"  --run-opt OPT         pass OPT to 'gpuwise run' (repeat: --run-opt --interval\n"
		"                        --run-opt 5s), each option whole (no '--', no\n"
		"                        abbreviation); --log, --vram-cap, --restart are the daemon's\n"
		"  --socket PATH         the daemon's socket (default: GPUWISE_SOCKET, yours\n"
		"                        under XDG_RUNTIME_DIR, else %s)\n"
		"  --json                print {\"id\": N, \"backend\": ...} instead of the id\n"
		"  -h, --help            show this help\n\n"
		"Slurm (no daemon needed; the job prints as slurm:ID):\n"
		"  --backend B           local (default: the queue daemon) or slurm (sbatch\n"
		"                        --parsable: --gres=gpu:N, --account=PROJECT, --time,\n"
		"                        --requeue and --signal for restartable jobs, the\n"
		"                        command under 'gpuwise run' on the node)\n"
		"  --partition P         the partition\n"
		"  --shards K            --gres=shard:K for a shared job (with --vram)\n"
		"  --mem-per-gpu SIZE    host memory per GPU\n"
		"  --gpuwise PATH        gpuwise on the nodes (default: GPUWISE_SLURM_GPUWISE, else\n"
		"                        this binary's own path; srun checks once that it runs\n"
		"                        there and a warning says when it does not)\n"
		"  --output PATTERN      the job's output file (default: slurm-%%j.out here)\n"
		"With --vram auto and no --gpus, the planner's GPU count becomes --gres=gpu:N.\n\n%s"),
		QUEUE_SYSTEM_SOCKET, _(exit_text));
}

/*
 * Run 'gpuwise plan ARGS [EXTRA] --json'.  The request is the largest
 * per-GPU total of the plan's split, and the summary names that GPU's
 * breakdown, so its parts add up to the request.  *fits: the plan's verdict
 * is that it fits on the GPUs.  Returns 0, or -1 when the planner gave no
 * answer.
 */
static int plan_vram(char **args, int n, char **extra, int n_extra, uint64_t *bytes, char **summary,
		     int *n_dev, bool *fits)
{
	int pipefd[2];
	if (pipe(pipefd))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		char **av = xcalloc((size_t)n + (size_t)n_extra + 4, sizeof *av);
		av[0] = "gpuwise";
		av[1] = "plan";
		for (int i = 0; i < n; i++)
			av[2 + i] = args[i];
		for (int i = 0; i < n_extra; i++)
			av[2 + n + i] = extra[i];
		av[2 + n + n_extra] = "--json";
		dup2(pipefd[1], 1);
		close(pipefd[0]);
		close(pipefd[1]);
		execv("/proc/self/exe", av);
		_exit(127);
	}
	close(pipefd[1]);
	strbuf sb = STRBUF_INIT;
	char buf[4096];
	ssize_t r;
	while ((r = read(pipefd[0], buf, sizeof buf)) > 0)
		sb_add(&sb, buf, (size_t)r);
	close(pipefd[0]);
	int ws = 0;
	waitpid(pid, &ws, 0);
	json_error_t je;
	json_t *o = sb.len ? json_loadb(sb.buf, sb.len, 0, &je) : NULL;
	sb_release(&sb);
	if (!o)
		return -1;
	uint64_t best = 0;
	json_t *dev, *top = NULL;
	size_t i;
	*n_dev = 0;
	json_array_foreach(json_object_get(o, "devices"), i, dev) {
		uint64_t t = (uint64_t)json_integer_value(json_object_get(dev, "total_bytes"));
		if (t > best) {
			best = t;
			top = dev;
		}
		*n_dev += t > 0;
	}
	/* the breakdown of the GPU that needs the most (the whole plan's without GPUs) */
	json_t *b = top ? top : json_object_get(o, "breakdown");
	if (!best)
		best = (uint64_t)json_integer_value(json_object_get(o, "vram_bytes"));
	*fits = WIFEXITED(ws) && WEXITSTATUS(ws) == 0 && strcmp(jstr(o, "verdict"), "fits") == 0;
	char a[32], w[32], k[32], c[32], h[32];
	*summary = xasprintf("%s %s ctx %lld (%s): %s per GPU = weights %s + KV cache %s + compute %s + overhead %s",
			     jstr(o, "model"), jstr(o, "quant"), jint(o, "ctx"), jstr(o, "verdict"),
			     fmt_bytes(a, sizeof a, best), fmt_bytes(w, sizeof w, (uint64_t)jint(b, "weights_bytes")),
			     fmt_bytes(k, sizeof k, (uint64_t)jint(b, "kv_cache_bytes")),
			     fmt_bytes(c, sizeof c, (uint64_t)jint(b, "compute_bytes")),
			     fmt_bytes(h, sizeof h, (uint64_t)jint(b, "overhead_bytes")));
	json_decref(o);
	*bytes = best;
	return best ? 0 : -1;
}

/* Does the user's plan options already name the hardware? */
static bool plan_names_gpus(char **args, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(args[i], "--gpu") || !strncmp(args[i], "--gpu=", 6) || !strcmp(args[i], "--vram") ||
		    !strncmp(args[i], "--vram=", 7))
			return true;
	return false;
}

/* A GPU type of the server: its memory, how many usable GPUs of it, its name. */
typedef struct gpu_type {
	uint64_t total;
	int count;
	char name[96];
	char id[64];    /* catalog id for the planner; a stand-in when unknown (only --vram counts) */
} gpu_type;

/*
 * The server's usable GPU types (not lost, not MIG-partitioned), from the
 * daemon's ping, smallest memory first.  Returns how many (at most max).
 */
static size_t server_gpu_types(json_t *ping, gpu_type *t, size_t max)
{
	json_t *g;
	size_t i, n = 0;
	json_array_foreach(json_object_get(ping, "topology"), i, g) {
		uint64_t total = (uint64_t)json_integer_value(json_object_get(g, "mem_total_bytes"));
		if (json_is_true(json_object_get(g, "lost")) || jint(g, "mig_instances") > 0 || !total)
			continue;
		size_t k = 0;
		while (k < n && !(t[k].total == total && strcmp(t[k].name, jstr(g, "name")) == 0))
			k++;
		if (k == n) {
			if (n == max)
				continue;
			t[n] = (gpu_type){.total = total};
			snprintf(t[n].name, sizeof t[n].name, "%s", jstr(g, "name"));
			const gpu_spec *sp = kb_gpu_find(t[n].name);
			snprintf(t[n].id, sizeof t[n].id, "%s", sp ? sp->id : "h100-sxm");
			n++;
		}
		t[k].count++;
	}
	for (size_t x = 1; x < n; x++) /* insertion sort by memory */
		for (size_t y = x; y > 0 && t[y].total < t[y - 1].total; y--) {
			gpu_type tmp = t[y];
			t[y] = t[y - 1];
			t[y - 1] = tmp;
		}
	return n;
}

static void strv_add(json_t *arr, const char *s)
{
	json_array_append_new(arr, json_string(s));
}

enum {
	O_PROJECT = 256, O_VRAM, O_GPUS, O_MODE, O_PRIORITY, O_NAME, O_TIME_LIMIT, O_AFTER, O_ENV,
	O_RESTART, O_MAX_RESTARTS, O_RUN_OPT, O_BACKOFF, O_START_LIMIT, O_NO_RESTART_ON, O_MEM_LIMIT, O_SOCKET, O_JSON, O_ALL, O_FOLLOW, O_MEMBERS, O_JOBS, O_LIMIT,
	O_BACKEND, O_PARTITION, O_SHARDS, O_MEM_PER_GPU, O_GPUWISE, O_OUTPUT,
	O_EXPORT,
};

int cmd_submit(int argc, char **argv)
{
	static const struct option opts[] = {
		{"project", required_argument, 0, O_PROJECT}, {"vram", required_argument, 0, O_VRAM},
		{"gpus", required_argument, 0, O_GPUS}, {"mode", required_argument, 0, O_MODE},
		{"priority", required_argument, 0, O_PRIORITY}, {"name", required_argument, 0, O_NAME},
		{"time-limit", required_argument, 0, O_TIME_LIMIT}, {"after", required_argument, 0, O_AFTER},
		{"env", required_argument, 0, O_ENV}, {"restart", required_argument, 0, O_RESTART},
		{"max-restarts", required_argument, 0, O_MAX_RESTARTS},
		{"run-opt", required_argument, 0, O_RUN_OPT}, {"socket", required_argument, 0, O_SOCKET},
		{"backoff", required_argument, 0, O_BACKOFF}, {"start-limit", required_argument, 0, O_START_LIMIT},
		{"no-restart-on", required_argument, 0, O_NO_RESTART_ON}, {"mem-limit", required_argument, 0, O_MEM_LIMIT},
		{"backend", required_argument, 0, O_BACKEND}, {"partition", required_argument, 0, O_PARTITION},
		{"shards", required_argument, 0, O_SHARDS}, {"mem-per-gpu", required_argument, 0, O_MEM_PER_GPU},
		{"gpuwise", required_argument, 0, O_GPUWISE}, {"output", required_argument, 0, O_OUTPUT},
		{"json", no_argument, 0, O_JSON}, {"help", no_argument, 0, 'h'},
		{"export", required_argument, 0, O_EXPORT}, {0, 0, 0, 0},
	};
	const char *export_opt = NULL;
	slurm_submit_opts so = {0};
	bool slurm = false, gpus_given = false, slurm_opt = false;
	json_t *jspec = json_object(), *env = json_array(), *run_args = json_array();
	const char *socket_opt = NULL;
	bool json_out = false, vram_auto = false, have_vram = false;
	int rc = GW_EXIT_USAGE, c;
	long long v;
	uint64_t u;
	queue_conn *conn = NULL;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case O_PROJECT: json_object_set_new(jspec, "project", json_string(optarg)); break;
		case O_VRAM:
			if (strcmp(optarg, "auto") == 0)
				vram_auto = true;
			else if (parse_size(optarg, &u) || u == 0 || u > (1ULL << 50)) {
				rc = usage_error("submit", "--vram '%s' is not a size (e.g. 20G) or auto", optarg);
				goto out;
			} else
				json_object_set_new(jspec, "vram_bytes", json_integer((json_int_t)u));
			have_vram = true;
			break;
		case O_GPUS:
			if (parse_int(optarg, 1, 16, &v)) {
				rc = usage_error("submit", "--gpus '%s' is not a count from 1 to 16", optarg);
				goto out;
			}
			json_object_set_new(jspec, "gpus", json_integer(v));
			gpus_given = true;
			break;
		case O_BACKEND:
			if (strcmp(optarg, "slurm") == 0)
				slurm = true;
			else if (strcmp(optarg, "local") == 0)
				slurm = false;
			else {
				rc = usage_error("submit", "unknown backend '%.40s' (local or slurm)", optarg);
				goto out;
			}
			break;
		case O_PARTITION: so.partition = optarg; slurm_opt = true; break;
		case O_GPUWISE: so.gpuwise_path = optarg; slurm_opt = true; break;
		case O_OUTPUT: so.output = optarg; slurm_opt = true; break;
		case O_SHARDS:
			if (parse_int(optarg, 1, 1000000, &v)) {
				rc = usage_error("submit", "--shards '%s' is not a count", optarg);
				goto out;
			}
			so.shards = (int)v;
			slurm_opt = true;
			break;
		case O_MEM_PER_GPU:
			if (parse_size(optarg, &so.mem_per_gpu_bytes) || so.mem_per_gpu_bytes == 0) {
				rc = usage_error("submit", "--mem-per-gpu '%s' is not a size", optarg);
				goto out;
			}
			slurm_opt = true;
			break;
		case O_MODE: {
			job_mode m;
			char *prof = NULL;
			if (job_mode_parse(optarg, &m, &prof)) {
				rc = usage_error("submit", "--mode '%s' is not shared, exclusive or mig:PROFILE", optarg);
				goto out;
			}
			free(prof);
			json_object_set_new(jspec, "mode", json_string(optarg));
			break;
		}
		case O_PRIORITY:
			if (parse_int(optarg, -1000, 1000, &v)) {
				rc = usage_error("submit", "--priority '%s' is not an integer from -1000 to 1000", optarg);
				goto out;
			}
			json_object_set_new(jspec, "priority", json_integer(v));
			break;
		case O_NAME: json_object_set_new(jspec, "name", json_string(optarg)); break;
		case O_TIME_LIMIT:
			if (parse_duration_ms(optarg, &u) || u == 0 || u > 366ULL * 86400 * 1000) {
				rc = usage_error("submit", "--time-limit '%s' is not a duration (e.g. 2h)", optarg);
				goto out;
			}
			json_object_set_new(jspec, "time_limit_ms", json_integer((json_int_t)u));
			break;
		case O_AFTER:
			if ((rc = parse_id("submit", optarg, &u)))
				goto out;
			rc = GW_EXIT_USAGE;
			json_object_set_new(jspec, "after", json_integer((json_int_t)u));
			break;
		case O_EXPORT: export_opt = optarg; break;
		case O_ENV:
			if (!*optarg || *optarg == '=') {
				rc = usage_error("submit", "--env needs NAME or NAME=VALUE");
				goto out;
			}
			if (strchr(optarg, '='))
				strv_add(env, optarg);
			else {
				const char *val = getenv(optarg);
				char *s = xasprintf("%s=%s", optarg, val ? val : "");
				strv_add(env, s);
				free(s);
			}
			break;
		case O_RESTART: {
			job_restart r;
			if (job_restart_parse(optarg, &r)) {
				rc = usage_error("submit", "--restart '%s' is not never, on-failure or always", optarg);
				goto out;
			}
			json_object_set_new(jspec, "restart", json_string(optarg));
			break;
		}
		case O_MAX_RESTARTS:
			if (strcmp(optarg, "unlimited") == 0)
				v = -1;
			else if (parse_int(optarg, 0, 1000000, &v)) {
				rc = usage_error("submit", "--max-restarts '%s' is not a count or unlimited", optarg);
				goto out;
			}
			json_object_set_new(jspec, "max_restarts", json_integer(v));
			break;
		case O_RUN_OPT: strv_add(run_args, optarg); break;
		case O_MEM_LIMIT:
			if (parse_size(optarg, &u) || u == 0) {
				rc = usage_error("submit", "--mem-limit '%s' is not a size (e.g. 20G)", optarg);
				goto out;
			}
			strv_add(run_args, "--mem-limit");
			strv_add(run_args, optarg);
			break;
		case O_BACKOFF:
		case O_START_LIMIT:
		case O_NO_RESTART_ON:
			/* passed to 'gpuwise run', which checks them when the job starts */
			strv_add(run_args, c == O_BACKOFF ? "--backoff" : c == O_START_LIMIT ? "--start-limit" : "--no-restart-on");
			strv_add(run_args, optarg);
			break;
		case O_SOCKET: socket_opt = optarg; break;
		case O_JSON: json_out = true; break;
		case 'h':
			submit_usage(stdout);
			rc = 0;
			goto out;
		default:
			rc = usage_error("submit", "unknown option '%s'", argv[optind - 1]);
			goto out;
		}
	}
	int first = optind;
	if (first < argc && strcmp(argv[first - 1], "--") != 0 && strcmp(argv[first], "--") == 0)
		first++;
	/* with --vram auto: PLAN-OPTIONS -- CMD */
	int plan_from = -1, plan_n = 0;
	if (vram_auto) {
		int k = first;
		while (k < argc && strcmp(argv[k], "--") != 0)
			k++;
		if (k >= argc) {
			rc = usage_error("submit", "--vram auto needs the plan options, then '--' and the command");
			goto out;
		}
		plan_from = first;
		plan_n = k - first;
		first = k + 1;
		if (plan_n == 0) {
			rc = usage_error("submit", "--vram auto needs a model (the options of 'gpuwise plan')");
			goto out;
		}
	}
	if (first >= argc) {
		rc = usage_error("submit", "no command to queue (put it after --)");
		goto out;
	}
	if (slurm_opt && !slurm) {
		rc = usage_error("submit", "--partition, --shards, --mem-per-gpu, --gpuwise and --output are for --backend slurm");
		goto out;
	}
	if (!have_vram && slurm) {
		const char *m = json_string_value(json_object_get(jspec, "mode"));
		if (!m || strcmp(m, "shared") == 0) {
			if (so.shards) {
				rc = usage_error("submit", "--shards is for a shared job: give --vram SIZE or --vram auto");
				goto out;
			}
			json_object_set_new(jspec, "mode", json_string("exclusive")); /* Slurm gives whole GPUs */
		}
	}
	if (!have_vram && !slurm) {
		const char *m = json_string_value(json_object_get(jspec, "mode"));
		if (!m || strcmp(m, "shared") == 0) {
			rc = usage_error("submit", "a shared job needs --vram SIZE or --vram auto (or --mode exclusive)");
			goto out;
		}
	}
	if (vram_auto) {
		char *summary = NULL;
		int n_dev = 0;
		bool fits = false;
		char *extra[4] = {0};
		int n_extra = 0;
		char gpu_arg[96], vram_arg[32];
		int want = gpus_given ? (int)json_integer_value(json_object_get(jspec, "gpus")) : 0;
		if (!slurm && !plan_names_gpus(argv + plan_from, plan_n)) {
			/* plan for the GPUs the job will get: the server's smallest type */
			if (!(conn = open_conn(socket_opt))) {
				rc = GW_EXIT_RUNTIME;
				goto out;
			}
			bool refused;
			json_t *ping = call(conn, req_new("ping"), &refused);
			gpu_type types[16];
			size_t n_types = ping ? server_gpu_types(ping, types, 16) : 0;
			json_decref(ping);
			queue_close(conn); /* planning may take longer than the daemon waits for a client */
			conn = NULL;
			if (!n_types) {
				if (ping)
					gw_errorf("%s", _("--vram auto: the queue's server has no usable GPU to plan for"));
				rc = GW_EXIT_RUNTIME;
				goto out;
			}
			/*
			 * The fewest GPUs the plan fits on, of the smallest type that
			 * has that many (one GPU of the smallest type first); with
			 * --gpus, that many.
			 */
			int max_count = 0;
			for (size_t t = 0; t < n_types; t++)
				max_count = types[t].count > max_count ? types[t].count : max_count;
			int from = want ? want : 1, to = want ? want : max_count;
			for (int k = from; k <= to && !fits; k++)
				for (size_t t = 0; t < n_types && !fits; t++) {
					if (types[t].count < k)
						continue;
					snprintf(gpu_arg, sizeof gpu_arg, "%dx%s", k, types[t].id);
					snprintf(vram_arg, sizeof vram_arg, "%lluM", (unsigned long long)(types[t].total / MiB));
					extra[0] = "--gpu";
					extra[1] = gpu_arg;
					extra[2] = "--vram";
					extra[3] = vram_arg;
					n_extra = 4;
					free(summary);
					summary = NULL;
					if (plan_vram(argv + plan_from, plan_n, extra, n_extra, &u, &summary, &n_dev, &fits)) {
						gw_errorf("%s", _("--vram auto: the planner could not size the job (try 'gpuwise plan' with the same options)"));
						free(summary);
						rc = GW_EXIT_RUNTIME;
						goto out;
					}
					if (fits)
						want = k;
				}
			if (!fits) {
				char tb[32];
				const gpu_type *big = &types[n_types - 1];
				gw_errorf(want ? _("--vram auto: the model does not fit on %d x %s (%s each) of this server%s")
					       : _("--vram auto: the model does not fit on up to %d x %s (%s each) of this server%s"),
					  want ? want : big->count, big->name, fmt_bytes(tb, sizeof tb, big->total),
					  n_types > 1 ? _(" (its largest GPUs)") : "");
				free(summary);
				rc = EXIT_REFUSED;
				goto out;
			}
			json_object_set_new(jspec, "gpus", json_integer(want));
		} else if (plan_vram(argv + plan_from, plan_n, extra, 0, &u, &summary, &n_dev, &fits)) {
			gw_errorf("%s", _("--vram auto: the planner could not size the job (try 'gpuwise plan' with the same options)"));
			free(summary);
			rc = GW_EXIT_RUNTIME;
			goto out;
		} else if (!slurm && !gpus_given && n_dev > 1) {
			json_object_set_new(jspec, "gpus", json_integer(n_dev));
		}
		json_object_set_new(jspec, "vram_bytes", json_integer((json_int_t)u));
		json_object_set_new(jspec, "vram_auto", json_true());
		json_object_set_new(jspec, "vram_plan", json_string(summary));
		if (slurm && !gpus_given && n_dev > 1)
			json_object_set_new(jspec, "gpus", json_integer(n_dev));
		if (slurm)
		{
			int ng = slurm && !gpus_given && n_dev > 1 ? n_dev : 1;
			fprintf(stderr, P_("gpuwise: --vram auto: %s; %d GPU\n", "gpuwise: --vram auto: %s; %d GPUs\n", ng), summary, ng);
		}
		free(summary);
	}
	json_t *a = json_array();
	for (int i = first; i < argc; i++)
		strv_add(a, argv[i]);
	json_object_set_new(jspec, "argv", a);
	char *cwd = getcwd(NULL, 0);
	if (!cwd) {
		gw_errorf(_("cannot read the working directory: %s"), strerror(errno));
		rc = GW_EXIT_RUNTIME;
		goto out;
	}
	json_object_set_new(jspec, "cwd", json_string(cwd));
	free(cwd);
	if (json_array_size(env))
		json_object_set(jspec, "env", env);
	if (json_array_size(run_args))
		json_object_set(jspec, "run_args", run_args);
	if (slurm) {
		rc = slurm_backend_submit(jspec, &so, json_out);
		goto out;
	}
	{
		/* the local queue: the command as your PATH finds it, the environment --export gives */
		gw_error e;
		char *exe = NULL;
		json_t *inh = json_array();
		if (queue_export_env(export_opt, environ, inh, &e)) {
			json_decref(inh);
			rc = usage_error("submit", "%s", gw_error_text(&e));
			goto out;
		}
		json_object_set_new(jspec, "env_inherited", inh);
		if (queue_resolve_command(argv[first], getenv("PATH"), &exe, &e)) {
		{
			char *t = xstrdup(gw_error_text(&e));
			gw_errorf(_("%s; the job is not queued"), t);
			free(t);
		}
			rc = GW_EXIT_RUNTIME;
			goto out;
		}
		if (!json_object_get(jspec, "name"))
			json_object_set_new(jspec, "name", json_string(argv[first]));
		json_array_set_new(a, 0, json_string(exe));
		free(exe);
	}
	rc = GW_EXIT_RUNTIME;
	if (!conn && !(conn = open_conn(socket_opt)))
		goto out;
	json_t *req = req_new("submit");
	json_object_set(req, "job", jspec);
	bool refused;
	json_t *rep = call(conn, req, &refused);
	if (!rep) {
		rc = refused ? EXIT_REFUSED : GW_EXIT_RUNTIME;
		goto out;
	}
	if (json_out) {
		json_t *o = json_object();
		json_object_set(o, "id", json_object_get(rep, "id"));
		json_object_set_new(o, "backend", json_string("local"));
		json_print(o, stdout);
		json_decref(o);
	} else
		printf("%lld\n", jint(rep, "id"));
	json_decref(rep);
	rc = 0;
out:
	queue_close(conn);
	json_decref(jspec);
	json_decref(env);
	json_decref(run_args);
	return rc;
}

/* ---- queue -------------------------------------------------------------- */
static void queue_usage(FILE *f)
{
	fprintf(f,
		_("usage: gpuwise queue [--all] [--json] [--socket PATH]\n\n"
		"List the jobs waiting and running (with --all, the ended ones too, newest\n"
		"1000): id, name, user, project, state, GPUs, VRAM requested and measured,\n"
		"waiting and running time, and for a waiting job why it waits.  Where Slurm\n"
		"is configured (scontrol and a slurm.conf), the Slurm jobs you gave it with\n"
		"'gpuwise submit' follow, as slurm:ID, with or without a daemon.\n\n"
		"Options:\n"
		"  --all                 ended jobs too\n"
		"  --limit N             with --all, at most N ended jobs (default 1000)\n"
		"  --json                the jobs as JSON (docs/json-queue.md)\n"
		"  --socket PATH         the daemon's socket\n"
		"  -h, --help            show this help\n\n%s"),
		_(exit_text));
}

/* "  LABEL       " of show: the label in the reader's language, padded to
 * 12 display columns (two a CJK character), at least one space after it. */
static void field(const char *label)
{
	const char *t = _(label);
	size_t w = gw_display_width(t);
	printf("  %s%*s", t, w < 12 ? (int)(12 - w) : 1, "");
}

static const char *ms_text(char *buf, size_t n, json_t *v)
{
	if (!json_is_integer(v))
		return "-";
	return fmt_duration(buf, n, (uint64_t)json_integer_value(v));
}

static const char *bytes_text(char *buf, size_t n, json_t *v)
{
	if (!json_is_integer(v) || json_integer_value(v) <= 0)
		return "-";
	return fmt_bytes(buf, n, (uint64_t)json_integer_value(v));
}

static void print_jobs(json_t *jobs)
{
	/* GPUS: how many it asked for; ON: the indices it runs on (one thing per column) */
	static const char *const hdr_en[] = {N_("ID"), N_("NAME"), N_("USER"), N_("PROJECT"), N_("STATE"), N_("GPUS"),
					     N_("ON"), N_("VRAM"), N_("USED"), N_("WAIT"), N_("RUN"), N_("POS"), N_("START"),
					     N_("REASON")};
	const char *hdr[14];
	for (size_t h = 0; h < 14; h++)
		hdr[h] = _(hdr_en[h]);
	table *t = table_new(14, hdr);
	uint64_t now = wall_ms();
	table_set_align(t, 0, true);
	size_t i;
	json_t *j;
	json_array_foreach(jobs, i, j) {
		char id[24], g[64] = "", vr[32], vu[32], w[32], r[32];
		snprintf(id, sizeof id, "%s%lld", strcmp(jstr(j, "backend"), "slurm") == 0 ? "slurm:" : "", jint(j, "id"));
		json_t *gi;
		size_t k;
		size_t l = 0;
		json_array_foreach(json_object_get(j, "gpus"), k, gi)
			l += (size_t)snprintf(g + l, l < sizeof g ? sizeof g - l : 0, "%s%lld", k ? "," : "",
					      (long long)json_integer_value(gi));
		if (!l)
			snprintf(g, sizeof g, "-");
		char nreq[16];
		snprintf(nreq, sizeof nreq, "%lld", jint(j, "gpus_requested"));
		const char *mode = jstr(j, "mode");
		const char *vreq = strcmp(mode, "shared") == 0 ? bytes_text(vr, sizeof vr, json_object_get(j, "vram_request_bytes"))
							       : mode;
		char pos[16] = "-", est[40] = "-", vsz[48];
		if (json_is_integer(json_object_get(j, "queue_position")))
			snprintf(pos, sizeof pos, "%lld", jint(j, "queue_position"));
		if (json_is_integer(json_object_get(j, "estimated_start_ms"))) {
			uint64_t at = (uint64_t)jint(j, "estimated_start_ms");
			char d[32];
			if (at <= now + 1000)
				snprintf(est, sizeof est, "%s", _("now"));
			else
				snprintf(est, sizeof est, _("in %s"), fmt_duration(d, sizeof d, at - now));
		}
		json_t *ch = json_object_get(j, "vram_charged_bytes");
		if (json_is_integer(ch) && strcmp(mode, "shared") == 0 &&
		    json_integer_value(ch) != jint(j, "vram_request_bytes")) {
			/* charged the standard size of the GPU it runs on */
			char cb[32];
			snprintf(vsz, sizeof vsz, _("%s (std %s)"), vreq, bytes_text(cb, sizeof cb, ch));
			vreq = vsz;
		}
		const char *cells[14] = {id, esc(jstr(j, "name")), esc(jstr(j, "user")), esc(jstr(j, "project")), jstr(j, "state"), nreq, g, vreq,
				       bytes_text(vu, sizeof vu, json_object_get(j, "vram_measured_bytes")),
				       ms_text(w, sizeof w, json_object_get(j, "wait_ms")),
				       ms_text(r, sizeof r, json_object_get(j, "run_ms")), pos, est, NULL};
		/* the daemon's reason is English (its state, the JSON); shown in the reader's language */
		char *reason = gw_translate_text(jstr(j, "reason"));
		cells[13] = esc(reason);
		table_addv(t, cells);
		free(reason);
	}
	table_print(t, stdout);
	table_free(t);
}

int cmd_queue(int argc, char **argv)
{
	static const struct option opts[] = {
		{"all", no_argument, 0, O_ALL}, {"json", no_argument, 0, O_JSON},
		{"limit", required_argument, 0, O_LIMIT}, {"socket", required_argument, 0, O_SOCKET},
		{"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
	};
	bool all = false, json_out = false;
	const char *socket_opt = NULL;
	long long limit = 0;
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case O_ALL: all = true; break;
		case O_JSON: json_out = true; break;
		case O_LIMIT:
			if (parse_int(optarg, 1, 1000000, &limit))
				return usage_error("queue", "--limit '%s' is not a count from 1 to 1000000", optarg);
			break;
		case O_SOCKET: socket_opt = optarg; break;
		case 'h': queue_usage(stdout); return 0;
		default: return usage_error("queue", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("queue", "unexpected argument '%s'", argv[optind]);
	/* the daemon's jobs, and gpuwise's Slurm jobs where Slurm is configured */
	bool slurm = slurm_backend_configured();
	queue_conn *conn = NULL;
	json_t *rep = NULL;
	if (slurm) {
		char *path = queue_socket_path(socket_opt);
		gw_error cerr;
		if (queue_connect(path, &conn, &cerr))
			conn = NULL;
		free(path);
	} else if (!(conn = open_conn(socket_opt)))
		return GW_EXIT_RUNTIME;
	if (conn) {
		/* the daemon answers in pages of at most 1,000 jobs; 'next' continues (docs/queue-protocol.md) */
		json_t *cursor = NULL;
		/* job id -> its index in rep's jobs: a job that ends between two
		 * pages is listed again among the ended ones; it is shown once,
		 * as the later page saw it */
		json_t *at = json_object();
		do {
			json_t *req = req_new("queue");
			if (all)
				json_object_set_new(req, "all", json_true());
			if (limit)
				json_object_set_new(req, "limit", json_integer(limit));
			/* the largest pages: a listing of 100,000 jobs is 100 round trips, not 500 */
			json_object_set_new(req, "page", json_integer(PROTO_QUEUE_PAGE_MAX));
			if (cursor)
				json_object_set_new(req, "cursor", cursor);
			cursor = NULL;
			bool refused;
			json_t *page = call(conn, req, &refused);
			if (!page) {
				queue_close(conn);
				json_decref(rep);
				json_decref(at);
				return refused ? EXIT_REFUSED : GW_EXIT_RUNTIME;
			}
			json_t *next = json_object_get(page, "next");
			if (json_is_string(next))
				cursor = json_incref(next);
			json_t *src = json_incref(json_object_get(page, "jobs"));
			if (!rep) {
				rep = page; /* its other keys; the jobs are gathered below */
				json_object_set_new(rep, "jobs", json_array());
			}
			json_t *all_jobs = json_object_get(rep, "jobs");
			size_t k;
			json_t *jb;
			json_array_foreach(src, k, jb) {
				/* without --all ids only grow from page to page: nothing to merge */
				if (!all) {
					json_array_append(all_jobs, jb);
					continue;
				}
				char key[32];
				snprintf(key, sizeof key, "%lld", (long long)json_integer_value(json_object_get(jb, "id")));
				json_t *idx = json_object_get(at, key);
				if (idx) {
					json_array_set(all_jobs, (size_t)json_integer_value(idx), jb);
				} else {
					json_object_set_new(at, key, json_integer((json_int_t)json_array_size(all_jobs)));
					json_array_append(all_jobs, jb);
				}
			}
			json_decref(src);
			if (page != rep)
				json_decref(page);
		} while (cursor);
		json_decref(at);
		queue_close(conn);
	}
	json_t *jobs = json_array();
	size_t ji;
	json_t *jr;
	json_array_foreach(rep ? json_object_get(rep, "jobs") : NULL, ji, jr) {
		json_object_set_new(jr, "backend", json_string("local"));
		json_array_append(jobs, jr);
	}
	if (slurm) {
		char serr[512];
		json_t *sj = slurm_backend_jobs(all, serr, sizeof serr);
		if (!sj && !rep) {
			json_decref(jobs);
			gw_errorf(_("no queue daemon, and %s"), serr);
			return GW_EXIT_RUNTIME;
		}
		if (!sj)
			fprintf(stderr, _("gpuwise: note: %s\n"), serr);
		json_array_extend(jobs, sj);
		json_decref(sj);
	}
	if (json_out) {
		json_t *o = json_object();
		json_object_set(o, "jobs", jobs);
		/* as json_print, into memory first: one write, not one per token */
		char *t = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
		if (t) {
			fputs(t, stdout);
			fputc('\n', stdout);
			free(t);
		} else
			json_print(o, stdout);
		json_decref(o);
	} else if (json_array_size(jobs) == 0)
		puts(all ? _("no jobs") : _("no jobs waiting or running"));
	else
		print_jobs(jobs);
	json_decref(rep);
	json_decref(jobs);
	return 0;
}

/* ---- show --------------------------------------------------------------- */
static void show_usage(FILE *f)
{
	fprintf(f,
		_("usage: gpuwise show [--json] [--socket PATH] JOBID\n\n"
		"Everything about one of your jobs: command, directory, request, what the\n"
		"planner computed for a VRAM request of auto, placement, times, exit status,\n"
		"reason.  JOBID slurm:N: a Slurm job of 'gpuwise submit', from scontrol.\n\n"
		"Options:\n"
		"  --json                the job as JSON (docs/json-show.md)\n"
		"  --socket PATH         the daemon's socket\n"
		"  -h, --help            show this help\n\n%s"),
		_(exit_text));
}

int cmd_show(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, 0, O_JSON}, {"socket", required_argument, 0, O_SOCKET},
		{"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
	};
	bool json_out = false;
	const char *socket_opt = NULL;
	int c, rc;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case O_JSON: json_out = true; break;
		case O_SOCKET: socket_opt = optarg; break;
		case 'h': show_usage(stdout); return 0;
		default: return usage_error("show", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return usage_error("show", optind >= argc ? N_("which job? (a job id)") : N_("one job id at a time"));
	uint64_t id = 0;
	bool slurm;
	if ((rc = slurm_parse_job_id("show", argv[optind], &id, &slurm)))
		return rc;
	if (slurm) {
		char serr[512];
		json_t *r = slurm_backend_job(id, serr, sizeof serr);
		if (!r) {
			gw_errorf("%s", serr);
			return slurm_err_exit(serr);
		}
		json_object_set_new(r, "pid", json_null());
		if (json_out)
			json_print(r, stdout);
		else {
			char a[32];
			printf(_("job slurm:%lld: %s (%s; Slurm: %s)\n"), jint(r, "id"), esc(jstr(r, "name")), jstr(r, "state"),
			       esc(jstr(r, "slurm_state")));
			field(N_("user"));
			printf(_("%s (uid %lld)\n"), esc(jstr(r, "user")), jint(r, "uid"));
			field(N_("project"));
			printf(_("%s (Slurm account)\n"), esc(jstr(r, "project")));
			field(N_("request"));
			printf(P_("%s, %lld GPU\n", "%s, %lld GPUs\n", jint(r, "gpus_requested")), jstr(r, "mode"),
			       jint(r, "gpus_requested"));
			field(N_("output"));
			printf("%s\n", jstr(r, "stdout_path"));
			field(N_("waited"));
			printf("%s\n", ms_text(a, sizeof a, json_object_get(r, "wait_ms")));
			field(N_("ran"));
			printf("%s\n", ms_text(a, sizeof a, json_object_get(r, "run_ms")));
			if (json_is_integer(json_object_get(r, "exit_status"))) {
				field(N_("exit status"));
				printf("%lld\n", jint(r, "exit_status"));
			}
			if (json_is_string(json_object_get(r, "reason"))) {
				char *why = gw_translate_text(jstr(r, "reason"));
				field(N_("reason"));
				printf("%s\n", esc(why));
				free(why);
			}
		}
		json_decref(r);
		return 0;
	}
	queue_conn *conn = open_conn(socket_opt);
	if (!conn)
		return GW_EXIT_RUNTIME;
	json_t *req = req_new("show");
	json_object_set_new(req, "id", json_integer((json_int_t)id));
	bool refused;
	json_t *rep = call(conn, req, &refused);
	queue_close(conn);
	if (!rep)
		return refused ? EXIT_REFUSED : GW_EXIT_RUNTIME;
	json_t *j = json_object_get(rep, "job");
	json_object_set_new(j, "backend", json_string("local"));
	if (json_out) {
		json_print(j, stdout);
	} else {
		json_t *s = json_object_get(j, "spec");
		char a[32], b[32];
		printf(_("job %lld: %s (%s)\n"), jint(j, "id"), esc(jstr(j, "name")), jstr(j, "state"));
		field(N_("user"));
		printf(_("%s (uid %lld)\n"), esc(jstr(j, "user")), jint(j, "uid"));
		field(N_("project"));
		printf("%s%s\n", esc(jstr(j, "project")), json_is_true(json_object_get(j, "borrowed")) ? _(" (on borrowed quota)") : "");
		field(N_("command"));
		size_t i;
		json_t *v;
		json_array_foreach(json_object_get(s, "argv"), i, v)
			printf("%s%s", i ? " " : "", esc(json_string_value(v)));
		printf("\n");
		field(N_("directory"));
		printf("%s\n", esc(jstr(s, "cwd")));
		field(N_("request"));
		printf(P_("%s, %lld GPU, VRAM %s per GPU%s\n", "%s, %lld GPUs, VRAM %s per GPU%s\n", jint(j, "gpus_requested")),
		       jstr(j, "mode"), jint(j, "gpus_requested"),
		       bytes_text(a, sizeof a, json_object_get(j, "vram_request_bytes")),
		       json_is_true(json_object_get(s, "vram_auto")) ? _(" (planner)") : "");
		json_t *ch = json_object_get(j, "vram_charged_bytes"), *std = json_object_get(j, "vram_standard_sizes");
		if (json_is_integer(ch) && strcmp(jstr(j, "mode"), "shared") == 0) {
			field(N_("charged"));
			printf(_("%s per GPU against the quota%s\n"), bytes_text(a, sizeof a, ch),
			       json_array_size(std) ? _(" (the standard size of the GPU it runs on)") : "");
		} else if (json_array_size(std)) {
			/* not placed yet: what each model would charge */
			field(N_("std sizes"));
			json_array_foreach(std, i, v) {
				if (i)
					fputs(_(", "), stdout);
				printf(_("%s on %s%s"), bytes_text(a, sizeof a, json_object_get(v, "bytes")), esc(jstr(v, "model")),
				       json_is_true(json_object_get(v, "standard")) ? "" : _(" (free-form)"));
			}
			printf("\n");
		}
		if (json_is_integer(json_object_get(j, "queue_position"))) {
			field(N_("position"));
			printf(_("%lld in the queue\n"), jint(j, "queue_position"));
		}
		if (json_is_integer(json_object_get(j, "estimated_start_ms"))) {
			uint64_t at = (uint64_t)jint(j, "estimated_start_ms"), now = wall_ms();
			field(N_("starts"));
			if (at <= now + 1000)
				puts(_("now (estimated from the time limits)"));
			else
				printf(_("in %s (estimated from the time limits)\n"), fmt_duration(b, sizeof b, at - now));
		}
		if (json_is_string(json_object_get(s, "vram_plan"))) {
			field(N_("planner"));
			printf("%s\n", esc(jstr(s, "vram_plan")));
		}
		field(N_("priority"));
		printf("%lld\n", jint(j, "priority"));
		if (json_array_size(json_object_get(j, "gpu_uuids"))) {
			field(N_("GPUs"));
			json_array_foreach(json_object_get(j, "gpu_uuids"), i, v)
				printf("%s%s", i ? " " : "", esc(json_string_value(v)));
			printf("\n");
		}
		field(N_("measured"));
		printf("%s\n", bytes_text(b, sizeof b, json_object_get(j, "vram_measured_bytes")));
		field(N_("waited"));
		printf("%s\n", ms_text(a, sizeof a, json_object_get(j, "wait_ms")));
		field(N_("ran"));
		printf("%s\n", ms_text(a, sizeof a, json_object_get(j, "run_ms")));
		if (json_is_integer(json_object_get(j, "exit_status"))) {
			field(N_("exit status"));
			printf("%lld\n", jint(j, "exit_status"));
		}
		if (json_is_string(json_object_get(j, "reason"))) {
			char *why = gw_translate_text(jstr(j, "reason"));
			field(N_("reason"));
			printf("%s\n", esc(why));
			free(why);
		}
	}
	json_decref(rep);
	return 0;
}

/* ---- logs --------------------------------------------------------------- */
static void logs_usage(FILE *f)
{
	fprintf(f,
		_("usage: gpuwise logs [-f] [--socket PATH] JOBID\n\n"
		"Print the output (stdout and stderr) of one of your jobs.  JOBID slurm:N:\n"
		"a Slurm job of 'gpuwise submit': its output file as scontrol names it.\n\n"
		"Options:\n"
		"  -f, --follow          keep printing new output until the job ends\n"
		"  --socket PATH         the daemon's socket\n"
		"  -h, --help            show this help\n\n%s"),
		_(exit_text));
}

int cmd_logs(int argc, char **argv)
{
	static const struct option opts[] = {
		{"follow", no_argument, 0, 'f'}, {"socket", required_argument, 0, O_SOCKET},
		{"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
	};
	bool follow = false;
	const char *socket_opt = NULL;
	int c, rc;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
		switch (c) {
		case 'f': follow = true; break;
		case O_SOCKET: socket_opt = optarg; break;
		case 'h': logs_usage(stdout); return 0;
		default: return usage_error("logs", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return usage_error("logs", optind >= argc ? N_("which job? (a job id)") : N_("one job id at a time"));
	uint64_t id = 0;
	bool slurm;
	if ((rc = slurm_parse_job_id("logs", argv[optind], &id, &slurm)))
		return rc;
	if (slurm)
		return slurm_backend_logs(id, follow);
	queue_conn *conn = open_conn(socket_opt);
	if (!conn)
		return GW_EXIT_RUNTIME;
	uint64_t off = 0;
	rc = 0;
	for (;;) {
		json_t *req = req_new("logs");
		json_object_set_new(req, "id", json_integer((json_int_t)id));
		json_object_set_new(req, "offset", json_integer((json_int_t)off));
		bool refused;
		json_t *rep = call(conn, req, &refused);
		if (!rep) {
			rc = refused ? EXIT_REFUSED : GW_EXIT_RUNTIME;
			break;
		}
		const char *data = jstr(rep, "data");
		size_t n = json_string_length(json_object_get(rep, "data"));
		fwrite(data, 1, n, stdout);
		fflush(stdout);
		off = (uint64_t)jint(rep, "offset");
		bool ended = json_is_true(json_object_get(rep, "ended"));
		json_decref(rep);
		if (n > 0)
			continue;
		if (!follow || ended)
			break;
		sleep_ms(200);
	}
	queue_close(conn);
	return rc;
}

/* ---- cancel / hold / release --------------------------------------------- */
static int change(const char *cmd, const char *op, const char *done, int argc, char **argv)
{
	static const struct option opts[] = {
		{"socket", required_argument, 0, O_SOCKET}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
	};
	const char *socket_opt = NULL;
	int c, rc;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case O_SOCKET: socket_opt = optarg; break;
		case 'h':
			printf(_("usage: gpuwise %s [--socket PATH] JOBID...\n\n"), cmd);
			if (strcmp(cmd, "cancel") == 0)
				fputs(_("Cancel jobs: a waiting job is dropped, a running one is stopped\n"
				       "(SIGTERM, then SIGKILL after 30s).  Only your own jobs (or any, for an\n"
				       "administrator).  JOBID slurm:N: through scancel.\n\n"), stdout);
			else if (strcmp(cmd, "hold") == 0)
				fputs(_("Hold waiting jobs: they stay in the queue but do not start until\n"
				       "'gpuwise release'.  Only your own jobs (or any, for an administrator).\n\n"), stdout);
			else
				fputs(_("Release held jobs: they wait again in their place in the queue.\n"
				       "Only your own jobs (or any, for an administrator).\n\n"), stdout);
			printf(_("Options:\n"
			       "  --socket PATH         the daemon's socket\n"
			       "  -h, --help            show this help\n\n%s"), _(exit_text));
			return 0;
		default: return usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error(cmd, "which job? (one or more job ids)");
	if (argc - optind > PROTO_MAX_IDS)
		return usage_error(cmd, "at most %d job ids at a time", PROTO_MAX_IDS);
	json_t *ids = json_array(), *slurm_ids = json_array();
	for (int i = optind; i < argc; i++) {
		uint64_t id = 0;
		bool slurm;
		if ((rc = slurm_parse_job_id(cmd, argv[i], &id, &slurm))) {
			json_decref(ids);
			json_decref(slurm_ids);
			return rc;
		}
		if (slurm && strcmp(cmd, "cancel") != 0) {
			json_decref(ids);
			json_decref(slurm_ids);
			return usage_error(cmd, "'%s': %s is for local jobs (Slurm: scontrol %s)", argv[i], cmd, cmd);
		}
		json_array_append_new(slurm ? slurm_ids : ids, json_integer((json_int_t)id));
	}
	/* Slurm jobs through scancel; then the daemon's, if any */
	int src = 0;
	size_t si;
	json_t *sv;
	json_array_foreach(slurm_ids, si, sv) {
		int r = slurm_backend_cancel((uint64_t)json_integer_value(sv));
		if (r && !src)
			src = r;
	}
	json_decref(slurm_ids);
	if (json_array_size(ids) == 0) {
		json_decref(ids);
		return src;
	}
	queue_conn *conn = open_conn(socket_opt);
	if (!conn) {
		json_decref(ids);
		return GW_EXIT_RUNTIME;
	}
	json_t *req = req_new(op);
	json_object_set_new(req, "ids", ids);
	json_t *rep = NULL;
	gw_error err;
	if (queue_call(conn, req, &rep, &err)) {
		gw_errorf("%s", gw_error_text(&err));
		json_decref(req);
		queue_close(conn);
		return GW_EXIT_RUNTIME;
	}
	json_decref(req);
	queue_close(conn);
	rc = 0;
	json_t *res = json_object_get(rep, "results");
	if (!res) {
		error_tr(jstr(rep, "error"));
		rc = EXIT_REFUSED;
	}
	size_t i;
	json_t *e;
	json_array_foreach(res, i, e) {
		if (json_is_string(json_object_get(e, "error"))) {
			error_tr(jstr(e, "error"));
			rc = EXIT_REFUSED;
		} else if (strcmp(jstr(e, "state"), "cancelling") == 0)
			printf(_("job %lld is being stopped\n"), jint(e, "id"));
		else
			printf(strcmp(done, "cancelled") == 0 ? _("job %lld cancelled\n")
			       : strcmp(done, "held") == 0    ? _("job %lld held\n")
							      : _("job %lld released\n"),
			       jint(e, "id"));
	}
	json_decref(rep);
	return rc ? rc : src;
}

int cmd_cancel(int argc, char **argv) { return change("cancel", "cancel", "cancelled", argc, argv); }
int cmd_hold(int argc, char **argv) { return change("hold", "hold", "held", argc, argv); }
int cmd_release(int argc, char **argv) { return change("release", "release", "released", argc, argv); }

/* ---- quota -------------------------------------------------------------- */
static void quota_usage(FILE *f)
{
	fprintf(f,
		_("usage: gpuwise quota [--json] [--socket PATH]\n"
		"       gpuwise quota set PROJECT [--vram SIZE] [--gpus N] [--jobs N]\n"
		"                     [--members USER,@GROUP,...] [--socket PATH]\n"
		"       gpuwise quota export k8s|slurm ...  (as 'gpuwise export quota'; see\n"
		"                     'gpuwise export --help'; the daemon's quotas by default)\n\n"
		"Show each project's use against its quota (VRAM requested by its running\n"
		"jobs, whole GPUs held by its exclusive jobs, running jobs), or set a\n"
		"project's quota and members (administrators only: root or the configured\n"
		"admin_group).  'set' creates the project; 'unlimited' removes a limit; an\n"
		"empty --members '' opens the project to everyone.\n\n"
		"Options:\n"
		"  --vram SIZE           VRAM quota (e.g. 48G, or unlimited)\n"
		"  --gpus N              whole-GPU quota for exclusive jobs (or unlimited)\n"
		"  --jobs N              running-job quota (or unlimited)\n"
		"  --members LIST        users and @groups who may submit to the project\n"
		"  --json                the projects as JSON (docs/json-quota.md)\n"
		"  --socket PATH         the daemon's socket\n"
		"  -h, --help            show this help\n\n%s"),
		_(exit_text));
}

static json_t *limit_arg(const char *s, bool size, bool *bad)
{
	uint64_t u;
	long long v;
	*bad = false;
	if (strcmp(s, "unlimited") == 0)
		return json_null();
	if (size ? parse_size(s, &u) == 0 && u <= (1ULL << 60) : parse_int(s, 0, 1000000, &v) == 0)
		return json_integer(size ? (json_int_t)u : v);
	*bad = true;
	return NULL;
}

static const char *limit_text(char *buf, size_t n, json_t *v, bool size)
{
	if (json_is_null(v))
		return "-";
	if (size)
		return fmt_bytes(buf, n, (uint64_t)json_integer_value(v));
	snprintf(buf, n, "%lld", (long long)json_integer_value(v));
	return buf;
}

int cmd_quota(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, 0, O_JSON}, {"socket", required_argument, 0, O_SOCKET},
		{"vram", required_argument, 0, O_VRAM}, {"gpus", required_argument, 0, O_GPUS},
		{"jobs", required_argument, 0, O_JOBS}, {"members", required_argument, 0, O_MEMBERS},
		{"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
	};
	if (argc > 1 && strcmp(argv[1], "export") == 0)
		return cmd_quota_export(argc - 1, argv + 1);
	bool json_out = false, is_set = argc > 1 && strcmp(argv[1], "set") == 0;
	const char *socket_opt = NULL;
	json_t *req = req_new(is_set ? "quota-set" : "quota");
	int c, rc = GW_EXIT_USAGE;
	bool bad, any = false;
	opterr = 0;
	optind = is_set ? 2 : 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case O_JSON: json_out = true; break;
		case O_SOCKET: socket_opt = optarg; break;
		case O_VRAM:
		case O_GPUS:
		case O_JOBS: {
			const char *key = c == O_VRAM ? "vram_bytes" : c == O_GPUS ? "gpus" : "jobs";
			if (!is_set) {
				rc = usage_error("quota", "--%s is for 'gpuwise quota set PROJECT'", c == O_VRAM ? "vram" : key);
				goto out;
			}
			json_t *v = limit_arg(optarg, c == O_VRAM, &bad);
			if (bad) {
				rc = usage_error("quota", "--%s '%s' is not %s or unlimited", c == O_VRAM ? "vram" : key, optarg,
						 c == O_VRAM ? "a size" : "a count");
				goto out;
			}
			json_object_set_new(req, key, v);
			any = true;
			break;
		}
		case O_MEMBERS:
			if (!is_set) {
				rc = usage_error("quota", "--members is for 'gpuwise quota set PROJECT'");
				goto out;
			}
			json_object_set_new(req, "members", json_string(optarg));
			any = true;
			break;
		case 'h':
			quota_usage(stdout);
			rc = 0;
			goto out;
		default:
			rc = usage_error("quota", "unknown option '%s'", argv[optind - 1]);
			goto out;
		}
	}
	if (is_set) {
		if (optind != argc - 1) {
			rc = usage_error("quota", optind >= argc ? N_("quota set: which project?") : N_("quota set: one project at a time"));
			goto out;
		}
		if (!any) {
			rc = usage_error("quota", "quota set: nothing to set (give --vram, --gpus, --jobs or --members)");
			goto out;
		}
		json_object_set_new(req, "project", json_string(argv[optind]));
	} else if (optind < argc) {
		rc = usage_error("quota", "unexpected argument '%s'", argv[optind]);
		goto out;
	}
	queue_conn *conn = open_conn(socket_opt);
	if (!conn) {
		rc = GW_EXIT_RUNTIME;
		goto out;
	}
	bool refused;
	json_t *rep = call(conn, req, &refused);
	req = NULL;
	queue_close(conn);
	if (!rep) {
		rc = refused ? EXIT_REFUSED : GW_EXIT_RUNTIME;
		goto out;
	}
	rc = 0;
	if (is_set) {
		if (!json_out)
			printf(_("project %s updated\n"), argv[optind]);
		else
			printf("{\"ok\": true}\n");
	} else if (json_out) {
		json_t *o = json_object();
		json_object_set(o, "projects", json_object_get(rep, "projects"));
		json_object_set(o, "borrowing", json_object_get(rep, "borrowing"));
		json_object_set(o, "fairshare_half_life_ms", json_object_get(rep, "fairshare_half_life_ms"));
		if (json_object_get(rep, "gpus"))
			json_object_set(o, "gpus", json_object_get(rep, "gpus"));
		json_print(o, stdout);
		json_decref(o);
	} else {
		static const char *const hdr_en[] = {N_("PROJECT"), N_("VRAM"), N_("GPUS"), N_("JOBS"), N_("WAITING"),
						     N_("USAGE (decayed)"), N_("FAIR SHARE"), N_("MEMBERS")};
		const char *hdr[8];
		for (size_t h = 0; h < 8; h++)
			hdr[h] = _(hdr_en[h]);
		table *t = table_new(8, hdr);
		size_t i;
		json_t *p;
		json_array_foreach(json_object_get(rep, "projects"), i, p) {
			char a[32], b[32], vram[80], gq[32], jq[32], jobs[80], gpus[80], w[24];
			snprintf(vram, sizeof vram, "%s / %s", fmt_bytes(a, sizeof a, (uint64_t)jint(p, "vram_used_bytes")),
				 limit_text(b, sizeof b, json_object_get(p, "vram_quota_bytes"), true));
			snprintf(gpus, sizeof gpus, "%lld / %s", jint(p, "gpus_used"),
				 limit_text(gq, sizeof gq, json_object_get(p, "gpus_quota"), false));
			snprintf(jobs, sizeof jobs, "%lld / %s%s", jint(p, "jobs_running"),
				 limit_text(jq, sizeof jq, json_object_get(p, "jobs_quota"), false),
				 jint(p, "jobs_borrowing") ? _(" (borrowing)") : "");
			snprintf(w, sizeof w, "%lld", jint(p, "jobs_waiting"));
			const char *m = esc(jstr(p, "members"));
			char use[80], fs[64];
			snprintf(use, sizeof use, "%.2f GiB-h, %.2f GPU-h", json_number_value(json_object_get(p, "usage_vram_gib_hours")),
				 json_number_value(json_object_get(p, "usage_gpu_hours")));
			snprintf(fs, sizeof fs, _("%.3f (%.0f%% of use, %.0f%% of shares)"),
				 json_number_value(json_object_get(p, "fairshare_factor")),
				 100 * json_number_value(json_object_get(p, "usage_share")),
				 100 * json_number_value(json_object_get(p, "fairshare_share")));
			const char *cells[] = {esc(jstr(p, "project")), vram, gpus, jobs, w, use, fs, *m ? m : _("everyone")};
			table_addv(t, cells);
		}
		table_print(t, stdout);
		table_free(t);
		/* each GPU: what the queue gave its running jobs beside what NVML counts used */
		json_t *ga = json_object_get(rep, "gpus");
		if (json_array_size(ga)) {
			static const char *const ghdr_en[] = {N_("GPU"), N_("NAME"), N_("RESERVED BY QUEUE"), N_("USED (NVML)"),
							      N_("JOBS")};
			const char *ghdr[5];
			for (size_t h = 0; h < 5; h++)
				ghdr[h] = _(ghdr_en[h]);
			table *gt = table_new(5, ghdr);
			json_array_foreach(ga, i, p) {
				char idx[24], a[32], b[32], c2[32], rv[80], us[80], nj[24];
				snprintf(idx, sizeof idx, "%lld", jint(p, "index"));
				fmt_bytes(c2, sizeof c2, (uint64_t)jint(p, "memory_total_bytes"));
				snprintf(rv, sizeof rv, "%s / %s", fmt_bytes(a, sizeof a, (uint64_t)jint(p, "reserved_bytes")), c2);
				snprintf(us, sizeof us, "%s / %s", fmt_bytes(b, sizeof b, (uint64_t)jint(p, "memory_used_bytes")), c2);
				snprintf(nj, sizeof nj, "%lld", jint(p, "jobs_running"));
				const char *cells[] = {idx, esc(jstr(p, "name")), rv, us, nj};
				table_addv(gt, cells);
			}
			printf("\n");
			table_print(gt, stdout);
			table_free(gt);
		}
		printf(_("borrowing of idle quota: %s\n"), json_is_true(json_object_get(rep, "borrowing")) ? _("on") : _("off"));
		char hl[32];
		printf(_("fair share: projects with the highest factor start first; usage halves every %s\n"),
		       json_is_integer(json_object_get(rep, "fairshare_half_life_ms")) && jint(rep, "fairshare_half_life_ms") > 0
			       ? fmt_duration(hl, sizeof hl, (uint64_t)jint(rep, "fairshare_half_life_ms")) : _("never (no decay)"));
	}
	json_decref(rep);
out:
	json_decref(req);
	return rc;
}
