/*
 * queue: the shared-server queue's daemon and the client side of its
 * socket.  The daemon (daemon_int.h lists its files) owns the socket, the SQLite state and the
 * jobs' processes and calls sched/ for every decision; it reports through
 * a log callback and never prints itself.
 */
#ifndef GW_QUEUE_QUEUE_H
#define GW_QUEUE_QUEUE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/util.h"

#define QUEUE_SYSTEM_SOCKET "/run/gpuwise/gpuwise.sock"
#define QUEUE_SYSTEM_STATE "/var/lib/gpuwise"
#define QUEUE_SYSTEM_CONFIG "/etc/gpuwise/daemon.conf"

typedef struct queue_daemon_opts {
	const char *state_dir;    /* NULL = default for root or the user */
	const char *socket_path;  /* NULL = default */
	const char *config_path;  /* NULL = the system config when root (if present) */
	bool new_state;           /* move a state.db aside and start a new one (ids continue) */
	void (*log)(void *ctx, const char *line);
	void *log_ctx;
} queue_daemon_opts;

/*
 * Run the daemon until SIGTERM or SIGINT.  Returns 0 after a clean stop,
 * or a negative code with err set when it cannot start (socket in use,
 * state unreadable, bad config); GW_EFORMAT for a state database that is
 * empty, damaged or behind the ids already handed out.
 */
int queue_daemon_run(const queue_daemon_opts *o, gw_error *err);

/* The socket a client uses: --socket, GPUWISE_SOCKET, the user's own if it exists, else the system one. */
char *queue_socket_path(const char *explicit_path);
/* The daemon's default socket for the calling user (malloc'd). */
char *queue_default_socket(void);
char *queue_default_state(void);

/* ---- what submit takes from the submitter ------------------------------ */
/*
 * Append to out (a JSON array) the "NAME=value" entries a job inherits
 * under --export spec as sbatch spells it: NULL or "ALL" every variable of
 * envp, "NONE" none, "[ALL,]NAME[=VALUE],..." the named ones (values as
 * given or from getenv).  GW_EINVAL for a word that is not a name.
 */
int queue_export_env(const char *spec, char *const *envp, json_t *out, gw_error *err);
/*
 * The command as the job will run it: a name without '/' searched on path
 * (the submitter's PATH), a path checked; *out is absolute for a name found
 * on PATH (malloc'd).  GW_ENOENT when it is not there or not executable.
 */
int queue_resolve_command(const char *cmd, const char *path, char **out, gw_error *err);

/* ---- client ---------------------------------------------------------- */
typedef struct queue_conn queue_conn;
/* GW_ENOENT when nobody listens at path (no daemon). */
int queue_connect(const char *path, queue_conn **out, gw_error *err);
/* Send one request (v is added) and wait for its reply; *reply owned by caller. */
int queue_call(queue_conn *c, json_t *req, json_t **reply, gw_error *err);
/* Send without waiting (pipelining) and read replies in order. */
int queue_send(queue_conn *c, json_t *req, gw_error *err);
int queue_recv(queue_conn *c, json_t **reply, gw_error *err);
void queue_close(queue_conn *c);
/* A reply not complete within ms (and a send stuck as long) is an error. */
void queue_set_timeout(queue_conn *c, uint64_t ms);

#endif
