/*
 * cmd: one file per subcommand.  Each parses its own options, calls the
 * domain code, prints, and returns the exit status (GW_EXIT_*).
 */
#ifndef GW_CMD_H
#define GW_CMD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "util/util.h"

int cmd_plan(int argc, char **argv);
int cmd_fit(int argc, char **argv);
int cmd_cards(int argc, char **argv);
int cmd_cost(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_list(int argc, char **argv);
/* the shared-server queue (issue 11) */
int cmd_daemon(int argc, char **argv);
int cmd_submit(int argc, char **argv);
int cmd_queue(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_logs(int argc, char **argv);
int cmd_cancel(int argc, char **argv);
int cmd_hold(int argc, char **argv);
int cmd_release(int argc, char **argv);
int cmd_quota(int argc, char **argv);
/* cluster12: trace simulator and exports to Slurm / Kubernetes */
int cmd_sim(int argc, char **argv);
int cmd_export(int argc, char **argv);
/* `gpuwise quota export k8s|slurm ...` (argv[0] is "export"), also `gpuwise export quota ...` */
int cmd_quota_export(int argc, char **argv);
/* Give a batch script to `sbatch --parsable`: 0 and the job id, or -1 and a message (for submit --backend slurm). */
int export_sbatch_submit(const char *script, char *id, size_t n_id, char *err, size_t n_err);

/* cluster12b: the Slurm backend of submit/queue/show/logs/cancel (src/cmd/slurm.c) */
typedef struct json_t json_t;
typedef struct slurm_submit_opts {
	const char *partition, *gpuwise_path, *output;
	int shards;
	uint64_t mem_per_gpu_bytes;
} slurm_submit_opts;
int slurm_backend_submit(json_t *jspec, const slurm_submit_opts *so, bool json_out);
bool slurm_backend_configured(void);               /* scontrol on PATH and a slurm.conf */
/* gpuwise for the nodes: given, else GPUWISE_SLURM_GPUWISE, else /proc/self/exe (into buf). */
const char *slurm_gpuwise_path(const char *given, char *buf, size_t n);
/* Warn on stderr when PATH --version does not run on a node (srun; remembered once it does). */
void slurm_probe(const char *path, const char *partition);
json_t *slurm_backend_jobs(bool all, char *err, size_t n_err);   /* queue rows, or NULL and err */
json_t *slurm_backend_job(uint64_t id, char *err, size_t n_err); /* one row, or NULL and err */
int slurm_backend_logs(uint64_t id, bool follow);
int slurm_backend_cancel(uint64_t id);
int slurm_err_exit(const char *err);               /* 1 Slurm unreachable, 3 no such / not your job */
int slurm_parse_job_id(const char *cmd, const char *s, uint64_t *id, bool *slurm);

/* Print a usage error and return GW_EXIT_USAGE ("try 'gpuwise CMD --help'"). */
int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Input as people type it; each prints the usage error itself and returns
 * GW_EXIT_USAGE, or 0.  Dollars: "1000", "1,000", "$1000", "1000 USD".
 * Sizes need a unit (8G = 8 GiB, 8GB = 8e9 bytes): a bare "8" is refused
 * with the unit forms, never read as bytes.  Context: "8192", "32k",
 * "128K" (k = 1024 tokens).
 */
/* An amount in currency cur ("15000", "15,000 CNY", "$1000"); another currency named is a usage error. */
int parse_money_opt(const char *cmd, const char *opt, const char *arg, double max, const char *cur, double *out);
/* The currency a money option names ("8000CNY", "CNY 8000", "$500", "¥8000": CNY); false when none. */
bool money_opt_currency(const char *arg, char out[4]);
/*
 * The buyer's currency and region from --currency/--region, else
 * GPUWISE_CURRENCY/GPUWISE_REGION, else each other's (cn <-> CNY, us <->
 * USD, eu <-> EUR), else USD and us.  A currency without a dated rate in
 * data/fx-rates.tsv is a usage error (returned); *region NULL when the
 * currency has no region row (the caller then needs --kwh-price).
 */
int money_context(const char *cmd, const char *cur_opt, const char *region_opt, const char **cur, const char **region);
int parse_size_opt(const char *cmd, const char *opt, const char *arg, uint64_t *out);
int parse_ctx_opt(const char *cmd, const char *opt, const char *arg, uint64_t *out);
/*
 * A weight-format shorthand (q4, int4, 4bit, 8bit, fp8, half ...) as the
 * named format it stands for (GGUF engines: q4_k_m, q8_0; vllm and
 * transformers: awq-int4, int8), saying so on stderr; other names as given.
 */
const char *quant_resolve(const char *cmd, const char *q, bool gguf_engine);
/* The weight formats a user may name (recipes and formats), comma-separated. */
void quant_names(char *buf, size_t n);

/* The hardware plan would plan on (src/cmd/plan.c), for fit: 0 or a usage exit status. */
struct plan_request;
int plan_hardware(struct plan_request *rq, const char *gpu_arg, uint64_t vram, uint64_t ram, bool *on_machine);

/* Which store answered for a model ("from Ollama's store: ..."), with the
 * store's settings (num_ctx, num_gpu, projector); nothing for a path or
 * the catalog.  The JSON: docs/json-plan.md, `source`. */
struct model_desc;
void model_origin_print(FILE *f, const struct model_desc *m);
json_t *model_origin_json(const struct model_desc *m);

#endif
