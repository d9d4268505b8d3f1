/*
 * sched/export: queue jobs and quotas in the words of Kubernetes and Slurm.
 *
 * Kubernetes facts: GPUs are the extended resource nvidia.com/gpu under
 * resources.limits, MIG instances nvidia.com/mig-<profile> (mixed strategy),
 * time-sliced replicas nvidia.com/gpu.shared when the plugin renames them
 * (NVIDIA/k8s-device-plugin README); a Job's pod template may only restart
 * Never or OnFailure and backoffLimit counts the retries (kubernetes.io,
 * "Jobs"); quota on extended resources takes only the requests. prefix
 * (kubernetes.io, "Resource Quotas"); Kueue's ClusterQueue has per-flavor
 * nominalQuota and borrowingLimit within a cohort, and a LocalQueue is
 * chosen by the kueue.x-k8s.io/queue-name label (kueue.sigs.k8s.io,
 * concepts/cluster_queue, local_queue; API kueue.x-k8s.io/v1beta2).
 * Slurm facts: --gres=gpu:N, --gres=shard:K, --mem-per-gpu, --requeue,
 * --signal=B:SIG@SECONDS (sbatch(1)); GrpTRES=gres/gpu=N and GrpJobs=N per
 * account, enforced with AccountingStorageEnforce=limits and slurmdbd
 * (SchedMD resource_limits.html); a count-only GRES with Flags=CountOnly
 * (gres.conf(5)).
 */
#include "sched/export.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define K8S_NAME_MAX 63
#define K8S_INT32_MAX 2147483647

char *export_k8s_name(const char *s)
{
	char buf[K8S_NAME_MAX + 1];
	size_t n = 0;
	for (; *s && n < K8S_NAME_MAX; s++) {
		unsigned char c = (unsigned char)*s;
		if (isalnum(c) && c < 128)
			buf[n++] = (char)tolower(c);
		else if (n > 0 && buf[n - 1] != '-')
			buf[n++] = '-';
	}
	while (n > 0 && buf[n - 1] == '-')
		n--;
	buf[n] = '\0';
	return xstrdup(n ? buf : "gpuwise");
}

/* A YAML scalar: a double-quoted string with JSON escapes (valid YAML 1.2). */
static void yq(strbuf *o, const char *s)
{
	sb_puts(o, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			sb_printf(o, "\\%c", c);
		else if (c == '\n')
			sb_puts(o, "\\n");
		else if (c == '\t')
			sb_puts(o, "\\t");
		else if (c < 0x20 || c == 0x7f)
			sb_printf(o, "\\u%04x", c);
		else
			sb_add(o, (const char *)&c, 1);
	}
	sb_puts(o, "\"");
}

/* A word for a POSIX shell: single-quoted unless plainly safe. */
static void shq(strbuf *o, const char *s)
{
	bool plain = *s != '\0';
	for (const char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("@%+=:,./_-", *p))
			plain = false;
	if (plain) {
		sb_puts(o, s);
		return;
	}
	sb_puts(o, "'");
	for (; *s; s++) {
		if (*s == '\'')
			sb_puts(o, "'\\''");
		else
			sb_add(o, s, 1);
	}
	sb_puts(o, "'");
}

static const char *job_base_name(const job_spec *j)
{
	if (j->name && *j->name)
		return j->name;
	const char *a = j->argc ? j->argv[0] : "job";
	const char *slash = strrchr(a, '/');
	return slash ? slash + 1 : a;
}

char **export_run_argv(const job_spec *j, const char *gpuwise_path, bool restarts_inside, size_t *argc)
{
	size_t cap = 8 + j->n_run_args + j->argc, n = 0;
	char **v = xcalloc(cap + 1, sizeof *v);
	v[n++] = xstrdup(gpuwise_path ? gpuwise_path : "gpuwise");
	v[n++] = xstrdup("run");
	job_restart r = restarts_inside ? j->restart : JOB_RESTART_NEVER;
	v[n++] = xstrdup("--restart");
	v[n++] = xstrdup(job_restart_name(r));
	if (r != JOB_RESTART_NEVER) {
		v[n++] = xstrdup("--max-restarts");
		v[n++] = j->max_restarts == JOB_MAX_RESTARTS_UNLIMITED ? xstrdup("unlimited")
								       : xasprintf("%d", j->max_restarts);
	}
	for (size_t i = 0; i < j->n_run_args; i++)
		v[n++] = xstrdup(j->run_args[i]);
	v[n++] = xstrdup("--");
	for (size_t i = 0; i < j->argc; i++)
		v[n++] = xstrdup(j->argv[i]);
	*argc = n;
	return v;
}

static void free_argv(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void note(strbuf *notes, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(strbuf *notes, const char *fmt, ...)
{
	if (!notes)
		return;
	va_list ap;
	va_start(ap, fmt);
	sb_vprintf(notes, fmt, ap);
	va_end(ap);
	sb_puts(notes, "\n");
}

static int check_spec(const job_spec *j, gw_error *err)
{
	if (!j->argc || !j->argv || !j->argv[0] || !*j->argv[0])
		return gw_fail(err, GW_EINVAL, "no command to export");
	if (j->n_gpus < 1 || j->n_gpus > 64)
		return gw_fail(err, GW_EINVAL, "GPU count %d out of range (1 to 64)", j->n_gpus);
	if (j->mode == JOB_MODE_MIG && (!j->mig_profile || !*j->mig_profile))
		return gw_fail(err, GW_EINVAL, "MIG job without a profile");
	return 0;
}

int export_k8s_job(const job_spec *j, const export_k8s_opts *o, strbuf *out, strbuf *notes, gw_error *err)
{
	int rc = check_spec(j, err);
	if (rc)
		return rc;
	if (!o->image || !*o->image)
		return gw_fail(err, GW_EINVAL, "no container image");
	/* Without gpuwise in the image the command runs as it is: a Job whose
	 * command is `gpuwise run` in an image without it dies with exit 127. */
	bool wrap = o->gpuwise_path && *o->gpuwise_path;
	if (!wrap && j->restart == JOB_RESTART_ALWAYS)
		return gw_fail(err, GW_EINVAL, "--restart always needs gpuwise run in the image (--gpuwise PATH): "
					      "a Job does not restart a pod that succeeded");
	if (!wrap && j->n_run_args)
		return gw_fail(err, GW_EINVAL, "--run-opt needs gpuwise run in the image (--gpuwise PATH)");
	char *name = export_k8s_name(job_base_name(j));
	if (!j->name && o->name_suffix && *o->name_suffix) {
		/* a name of the command's is shared by every export of it: make it this Job's own */
		size_t keep = 62 - strlen(o->name_suffix);
		if (strlen(name) > keep)
			name[keep] = '\0';
		while (*name && name[strlen(name) - 1] == '-')
			name[strlen(name) - 1] = '\0';
		char *n2 = xasprintf("%s-%s", *name ? name : "gpuwise", o->name_suffix);
		free(name);
		name = export_k8s_name(n2);
		free(n2);
	}
	char *ns = export_k8s_name(j->project ? j->project : "default");
	if (j->project && strcmp(ns, j->project) != 0)
		note(notes, _("project '%s' becomes namespace '%s' (Kubernetes names are lowercase DNS labels)"), j->project, ns);
	/* restarts: on-failure moves to Kubernetes (a fresh container each time,
	 * and a lost node is retried too); always stays inside gpuwise run, as a
	 * Job's pods cannot be restarted after a success */
	bool k8s_restarts = j->restart == JOB_RESTART_ON_FAILURE;
	long backoff = 0;
	if (k8s_restarts)
		backoff = j->max_restarts == JOB_MAX_RESTARTS_UNLIMITED ? K8S_INT32_MAX : j->max_restarts;
	size_t rn;
	char **run;
	if (wrap) {
		run = export_run_argv(j, o->gpuwise_path, !k8s_restarts, &rn);
	} else {
		run = xcalloc(j->argc + 1, sizeof *run);
		for (rn = 0; rn < j->argc; rn++)
			run[rn] = xstrdup(j->argv[rn]);
		note(notes, _("the Job runs '%s' directly, without gpuwise run: the image '%s' is not known to hold gpuwise "
			    "(no restarts or GPU memory log inside the pod); build one with dist/Dockerfile and give "
			    "--gpuwise /usr/local/bin/gpuwise to wrap the command"), j->argv[0], o->image);
	}

	char resource[96];
	if (j->mode == JOB_MODE_MIG) {
		snprintf(resource, sizeof resource, "nvidia.com/mig-%s", j->mig_profile);
	} else if (j->mode == JOB_MODE_SHARED && o->time_slicing) {
		snprintf(resource, sizeof resource, "nvidia.com/gpu.shared");
		note(notes, _("time-sliced replicas share the GPU's memory unfenced: the job's %s per GPU is a request "
			    "gpuwise cannot enforce there"), j->vram_bytes ? _("VRAM") : _("memory"));
	} else {
		snprintf(resource, sizeof resource, "nvidia.com/gpu");
		if (j->mode == JOB_MODE_SHARED)
			note(notes, P_("Kubernetes gives whole GPUs: the shared job gets %d whole GPU (use --time-slicing "
				       "where the cluster time-slices them)",
				       "Kubernetes gives whole GPUs: the shared job gets %d whole GPUs (use --time-slicing "
				       "where the cluster time-slices them)", j->n_gpus), j->n_gpus);
	}

	sb_puts(out, "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: ");
	yq(out, name);
	sb_puts(out, "\n  namespace: ");
	yq(out, ns);
	sb_puts(out, "\n  labels:\n    app.kubernetes.io/managed-by: gpuwise\n");
	if (o->queue) {
		sb_puts(out, "    kueue.x-k8s.io/queue-name: ");
		yq(out, o->queue);
		sb_puts(out, "\n");
	}
	sb_puts(out, "  annotations:\n    gpuwise/project: ");
	yq(out, j->project ? j->project : "default");
	sb_printf(out, "\n    gpuwise/mode: \"%s\"\n", job_mode_name(j->mode));
	if (j->vram_bytes)
		sb_printf(out, "    gpuwise/vram-per-gpu-bytes: \"%llu\"\n", (unsigned long long)j->vram_bytes);
	sb_printf(out, "spec:\n  backoffLimit: %ld\n", backoff);
	if (j->time_limit_ms)
		sb_printf(out, "  activeDeadlineSeconds: %llu\n", (unsigned long long)((j->time_limit_ms + 999) / 1000));
	sb_puts(out, "  template:\n    metadata:\n      labels:\n        app.kubernetes.io/managed-by: gpuwise\n");
	sb_printf(out, "    spec:\n      restartPolicy: %s\n", k8s_restarts ? "OnFailure" : "Never");
	sb_puts(out, "      tolerations:\n      - key: nvidia.com/gpu\n        operator: Exists\n        effect: NoSchedule\n");
	sb_puts(out, "      containers:\n      - name: job\n        image: ");
	yq(out, o->image);
	sb_puts(out, "\n        command:\n");
	for (size_t i = 0; i < rn; i++) {
		sb_puts(out, "        - ");
		yq(out, run[i]);
		sb_puts(out, "\n");
	}
	if (j->cwd) {
		sb_puts(out, "        workingDir: ");
		yq(out, j->cwd);
		sb_puts(out, "\n");
	}
	bool any_env = false;
	for (size_t i = 0; i < j->n_env; i++) {
		const char *eq = strchr(j->env[i], '=');
		if (!eq || eq == j->env[i])
			continue;
		if (!any_env)
			sb_puts(out, "        env:\n");
		any_env = true;
		char *k = xstrndup(j->env[i], (size_t)(eq - j->env[i]));
		sb_puts(out, "        - name: ");
		yq(out, k);
		sb_puts(out, "\n          value: ");
		yq(out, eq + 1);
		sb_puts(out, "\n");
		free(k);
	}
	sb_printf(out, "        resources:\n          limits:\n            %s: %d\n", resource, j->n_gpus);
	if (j->vram_bytes)
		note(notes, _("Kubernetes has no GPU-memory resource: the VRAM request is kept as an annotation"));
	free_argv(run, rn);
	free(name);
	free(ns);
	return 0;
}

static void slurm_time(strbuf *o, uint64_t ms)
{
	uint64_t s = (ms + 999) / 1000;
	uint64_t m = (s + 59) / 60; /* Slurm's resolution is the minute */
	sb_printf(o, "%llu-%02llu:%02llu:00", (unsigned long long)(m / 1440), (unsigned long long)(m / 60 % 24),
		  (unsigned long long)(m % 60));
}

/* Slurm account names: letters, digits, '_', '-' and '.'. */
static bool slurm_word(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("_-.", *s))
			return false;
	return true;
}

int export_slurm_script(const job_spec *j, const export_slurm_opts *o, strbuf *out, strbuf *notes, gw_error *err)
{
	int rc = check_spec(j, err);
	if (rc)
		return rc;
	const char *account = j->project ? j->project : "default";
	if (!slurm_word(account))
		return gw_fail(err, GW_EINVAL, "project '%.60s' is not a Slurm account name (letters, digits, _ - .)",
			       account);
	if (o->partition && !slurm_word(o->partition))
		return gw_fail(err, GW_EINVAL, "partition '%.60s' is not a Slurm name", o->partition);
	if (o->shards > 0 && j->mode != JOB_MODE_SHARED)
		return gw_fail(err, GW_EINVAL, "shards are for shared jobs, not %s ones", job_mode_name(j->mode));
	if (o->shards > 0 && j->n_gpus > 1)
		return gw_fail(err, GW_EINVAL, "a shard request must fit on one GPU (Slurm's default): use --gpus 1");
	bool requeue = j->restart != JOB_RESTART_NEVER;
	size_t rn;
	char **run = export_run_argv(j, o->gpuwise_path, true, &rn);
	sb_puts(out, "#!/bin/sh\n");
	char *name = xstrdup(job_base_name(j));
	for (char *p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("_-.", *p))
			*p = '_';
	sb_printf(out, "#SBATCH --job-name=%s\n#SBATCH --account=%s\n", name, account);
	free(name);
	if (o->partition)
		sb_printf(out, "#SBATCH --partition=%s\n", o->partition);
	if (j->mode == JOB_MODE_MIG) {
		char *t = xstrdup(j->mig_profile);
		for (char *p = t; *p; p++)
			if (!isalnum((unsigned char)*p) && *p != '.')
				*p = '_';
		sb_printf(out, "#SBATCH --gres=gpu:%s:%d\n", t, j->n_gpus);
		note(notes, _("the MIG type '%s' must be declared in the cluster's gres.conf/slurm.conf (AutoDetect=nvml)"), t);
		free(t);
	} else if (o->shards > 0) {
		sb_printf(out, "#SBATCH --gres=shard:%d\n", o->shards);
		note(notes, _("Slurm shards share a GPU without fencing its memory: the job's VRAM request is not enforced"));
	} else {
		sb_printf(out, "#SBATCH --gres=gpu:%d\n", j->n_gpus);
		if (j->mode == JOB_MODE_SHARED)
			note(notes, P_("Slurm gives whole GPUs: the shared job gets %d whole GPU (use --shards K where the "
				       "cluster has gres/shard)",
				       "Slurm gives whole GPUs: the shared job gets %d whole GPUs (use --shards K where the "
				       "cluster has gres/shard)", j->n_gpus), j->n_gpus);
	}
	if (o->mem_per_gpu_bytes)
		sb_printf(out, "#SBATCH --mem-per-gpu=%lluM\n",
			  (unsigned long long)((o->mem_per_gpu_bytes + (1 << 20) - 1) >> 20));
	if (j->time_limit_ms) {
		sb_puts(out, "#SBATCH --time=");
		slurm_time(out, j->time_limit_ms);
		sb_puts(out, "\n");
		if (o->signal_before_s > 0)
			sb_printf(out, "#SBATCH --signal=B:TERM@%d\n", o->signal_before_s);
	}
	sb_puts(out, requeue ? "#SBATCH --requeue\n" : "#SBATCH --no-requeue\n");
	if (o->output)
		sb_printf(out, "#SBATCH --output=%s\n", o->output);
	if (j->cwd) {
		sb_puts(out, "#SBATCH --chdir=");
		sb_puts(out, j->cwd);
		sb_puts(out, "\n");
	}
	sb_puts(out, "# written by gpuwise export slurm: the job runs under gpuwise run, which\n"
		     "# restarts it in place; Slurm requeues it when its node is lost or preempted\n");
	for (size_t i = 0; i < j->n_env; i++) {
		const char *eq = strchr(j->env[i], '=');
		if (!eq || eq == j->env[i])
			continue;
		char *k = xstrndup(j->env[i], (size_t)(eq - j->env[i]));
		sb_printf(out, "export %s=", k);
		shq(out, eq + 1);
		sb_puts(out, "\n");
		free(k);
	}
	sb_puts(out, "exec");
	for (size_t i = 0; i < rn; i++) {
		sb_puts(out, " ");
		shq(out, run[i]);
	}
	sb_puts(out, "\n");
	free_argv(run, rn);
	return 0;
}

int export_quota_k8s(const export_quota *q, size_t n, bool kueue, const char *flavor, strbuf *out, strbuf *notes)
{
	bool first = true;
	if (kueue) {
		sb_puts(out, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: ");
		yq(out, flavor);
		sb_puts(out, "\n");
		first = false;
	}
	for (size_t i = 0; i < n; i++) {
		char *ns = export_k8s_name(q[i].project);
		if (strcmp(ns, q[i].project) != 0)
			note(notes, _("project '%s' becomes namespace '%s'"), q[i].project, ns);
		if (q[i].vram_bytes)
			note(notes, _("project '%s': Kubernetes has no GPU-memory resource, its VRAM quota (%llu bytes) has no "
				    "equivalent"), q[i].project, (unsigned long long)q[i].vram_bytes);
		if (q[i].gpus > 0 || q[i].jobs > 0) {
			sb_puts(out, first ? "" : "---\n");
			first = false;
			sb_puts(out, "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: gpuwise-quota\n  namespace: ");
			yq(out, ns);
			sb_puts(out, "\nspec:\n  hard:\n");
			if (q[i].gpus > 0)
				sb_printf(out, "    requests.nvidia.com/gpu: \"%d\"\n", q[i].gpus);
			if (q[i].jobs > 0)
				sb_printf(out, "    pods: \"%d\"\n", q[i].jobs);
		} else {
			note(notes, _("project '%s' has no GPU or job limit: no ResourceQuota"), q[i].project);
		}
		if (kueue) {
			sb_puts(out, "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: ");
			char *cq = xasprintf("%s-cq", ns);
			yq(out, cq);
			sb_puts(out, "\nspec:\n  namespaceSelector:\n    matchLabels:\n      kubernetes.io/metadata.name: ");
			yq(out, ns);
			sb_puts(out, "\n  cohortName: gpuwise\n  queueingStrategy: BestEffortFIFO\n  resourceGroups:\n"
				     "  - coveredResources:\n    - nvidia.com/gpu\n");
			if (q[i].jobs > 0)
				sb_puts(out, "    - pods\n");
			sb_puts(out, "    flavors:\n    - name: ");
			yq(out, flavor);
			sb_printf(out, "\n      resources:\n      - name: nvidia.com/gpu\n        nominalQuota: %d\n",
				  q[i].gpus > 0 ? q[i].gpus : 0);
			if (q[i].borrow_gpus >= 0)
				sb_printf(out, "        borrowingLimit: %d\n", q[i].borrow_gpus);
			if (q[i].gpus <= 0)
				note(notes, _("project '%s' has no GPU limit: nominal quota 0, every GPU borrowed from the "
					    "cohort"), q[i].project);
			if (q[i].jobs > 0)
				sb_printf(out, "      - name: pods\n        nominalQuota: %d\n", q[i].jobs);
			sb_puts(out, "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: gpuwise\n"
				     "  namespace: ");
			yq(out, ns);
			sb_puts(out, "\nspec:\n  clusterQueue: ");
			yq(out, cq);
			sb_puts(out, "\n");
			free(cq);
		}
		free(ns);
	}
	return 0;
}

int export_quota_slurm(const export_quota *q, size_t n, const char *cluster, bool vram_gres, strbuf *out,
		       strbuf *notes)
{
	sb_puts(out, "# gpuwise quota export slurm: one Slurm account per project.  Limits are\n"
		     "# enforced with slurmdbd and AccountingStorageEnforce=limits in slurm.conf.\n");
	bool any_vram = false;
	for (size_t i = 0; i < n; i++) {
		if (!slurm_word(q[i].project)) {
			note(notes, _("project '%s' is not a Slurm account name: skipped"), q[i].project);
			continue;
		}
		sb_printf(out, "sacctmgr -i add account %s", q[i].project);
		if (cluster)
			sb_printf(out, " cluster=%s", cluster);
		sb_puts(out, " Description=gpuwise\n");
		strbuf set;
		sb_init(&set);
		if (q[i].gpus > 0 || (vram_gres && q[i].vram_bytes)) {
			sb_puts(&set, " GrpTRES=");
			if (q[i].gpus > 0)
				sb_printf(&set, "gres/gpu=%d", q[i].gpus);
			if (vram_gres && q[i].vram_bytes)
				sb_printf(&set, "%sgres/vram=%llu", q[i].gpus > 0 ? "," : "",
					  (unsigned long long)(q[i].vram_bytes >> 30));
		}
		if (q[i].jobs > 0)
			sb_printf(&set, " GrpJobs=%d", q[i].jobs);
		if (set.len)
			sb_printf(out, "sacctmgr -i modify account where name=%s set%s\n", q[i].project, sb_str(&set));
		sb_release(&set);
		if (q[i].vram_bytes)
			any_vram = true;
	}
	if (any_vram && !vram_gres) {
		note(notes, _("VRAM quotas have no Slurm equivalent: Slurm counts GPUs, not their memory, unless the cluster "
			    "configures a custom count-only GRES (--vram-gres prints it)"));
	}
	if (vram_gres) {
		sb_puts(out, "# VRAM as a count-only GRES in GiB (gres.conf(5) Flags=CountOnly); jobs then ask\n"
			     "# --gres=gpu:1,vram:20.  On each node, in gres.conf:\n"
			     "#   Name=vram Count=<GiB of GPU memory on the node> Flags=CountOnly\n"
			     "# and in slurm.conf:\n"
			     "#   GresTypes=gpu,vram\n"
			     "#   AccountingStorageTRES=gres/gpu,gres/vram\n"
			     "#   NodeName=<node> Gres=gpu:<N>,vram:<GiB> ...\n");
	}
	return 0;
}
