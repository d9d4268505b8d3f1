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

/* Print a usage error and return GW_EXIT_USAGE ("try 'gpuwise CMD --help'"). */
int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
