/*
 * cmd: one file per subcommand.  Each parses its own options, calls the
 * domain code, prints, and returns the exit status (GW_EXIT_*).
 */
#ifndef GW_CMD_H
#define GW_CMD_H

#include "util/util.h"

int cmd_plan(int argc, char **argv);
int cmd_cards(int argc, char **argv);
int cmd_cost(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_bench(int argc, char **argv);
/* cluster12: trace simulator and exports to Slurm / Kubernetes */
int cmd_sim(int argc, char **argv);
int cmd_export(int argc, char **argv);
/* `gpuwise quota export k8s|slurm ...` (argv[0] is "export"), also `gpuwise export quota ...` */
int cmd_quota_export(int argc, char **argv);
/* Give a batch script to `sbatch --parsable`: 0 and the job id, or -1 and a message (for submit --backend slurm). */
int export_sbatch_submit(const char *script, char *id, size_t n_id, char *err, size_t n_err);

/* Print a usage error and return GW_EXIT_USAGE ("try 'gpuwise CMD --help'"). */
int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
