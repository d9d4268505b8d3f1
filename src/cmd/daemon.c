/*
 * gpuwise daemon: run the shared-server queue (src/queue/loop.c and its siblings) in the
 * foreground, logging one line per event to stderr (journald under systemd).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/cmd.h"
#include "queue/queue.h"

static void usage(FILE *f)
{
	fprintf(f,
		_("usage: gpuwise daemon [--state DIR] [--socket PATH] [--config FILE] [--new-state]\n\n"
		"Run the GPU job queue in the foreground.  Run as root it serves every user\n"
		"of this server and starts each job as the user who submitted it; run as a\n"
		"normal user it is that user's personal queue.  Clients talk to it over a\n"
		"Unix socket (JSON lines, docs/queue-protocol.md) and are identified by the\n"
		"kernel (SO_PEERCRED).  Its state is an SQLite database: acknowledged jobs\n"
		"survive a crash, and running jobs are re-adopted on the next start.\n"
		"Jobs run under 'gpuwise run'; a job measured over its VRAM request is\n"
		"warned about or stopped (over_request), and with vram_cap = yes shared\n"
		"jobs run under 'gpuwise run --vram-cap' at their request.\n\n"
		"Options:\n"
		"  --state DIR           state directory (default %s as root,\n"
		"                        else $XDG_STATE_HOME/gpuwise or ~/.local/state/gpuwise)\n"
		"  --socket PATH         socket (default %s as root,\n"
		"                        else $XDG_RUNTIME_DIR/gpuwise.sock)\n"
		"  --config FILE         settings (default %s as root, if present;\n"
		"                        see the commented sample daemon.conf)\n"
		"  --new-state           start anew: move state.db (and its -wal, -shm) aside\n"
		"                        as state.db.old-TIME and create a new one whose\n"
		"                        job ids continue after the old ones\n"
		"  -h, --help            show this help\n\n"
		"The state files are 0600 (the daemon sets umask 0077).  A state.db that is\n"
		"empty, damaged (PRAGMA quick_check) or behind the job ids already handed\n"
		"out is refused: restore it from a backup, or start anew with --new-state.\n\n"
		"Exit status: 0 stopped by SIGTERM or SIGINT; 1 cannot start (socket in\n"
		"use, state unreadable, damaged or lost, bad config); 2 usage error.\n"),
		QUEUE_SYSTEM_STATE, QUEUE_SYSTEM_SOCKET, QUEUE_SYSTEM_CONFIG);
}

static void log_line(void *ctx, const char *line)
{
	(void)ctx;
	char t[32];
	time_t now = time(NULL);
	struct tm tm;
	strftime(t, sizeof t, "%Y-%m-%dT%H:%M:%S", localtime_r(&now, &tm));
	/* the daemon's lines are English (src/queue marks their formats, qd_log);
	 * the log shows them in the reader's language, with the same prefix */
	char *tr = gw_translate_text(line);
	/* "job N <note or reason>": the note translated on its own */
	unsigned long long id;
	int n = 0;
	if (strcmp(tr, line) == 0 && sscanf(line, "job %llu %n", &id, &n) == 1 && n > 0) {
		char *rest = gw_translate_text(line + n);
		if (strcmp(rest, line + n) != 0) {
			free(tr);
			tr = xasprintf(_("job %llu %s"), id, rest);
		}
		free(rest);
	}
	fprintf(stderr, "%s gpuwise daemon: %s\n", t, tr);
	free(tr);
	fflush(stderr);
}

int cmd_daemon(int argc, char **argv)
{
	enum { O_STATE = 256, O_SOCKET, O_CONFIG, O_NEW_STATE };
	static const struct option opts[] = {
		{"state", required_argument, 0, O_STATE}, {"socket", required_argument, 0, O_SOCKET},
		{"config", required_argument, 0, O_CONFIG}, {"new-state", no_argument, 0, O_NEW_STATE},
		{"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
	};
	queue_daemon_opts o = {.log = log_line};
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case O_STATE: o.state_dir = optarg; break;
		case O_SOCKET: o.socket_path = optarg; break;
		case O_CONFIG: o.config_path = optarg; break;
		case O_NEW_STATE: o.new_state = true; break;
		case 'h': usage(stdout); return 0;
		default: return usage_error("daemon", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("daemon", "unexpected argument '%s'", argv[optind]);
	if ((o.state_dir && !*o.state_dir) || (o.socket_path && !*o.socket_path) ||
	    (o.config_path && !*o.config_path))
		return usage_error("daemon", "an empty path");
	gw_error err;
	if (queue_daemon_run(&o, &err)) {
		char *tr = xstrdup(gw_error_text(&err));
		gw_errorf("%s", tr);
		free(tr);
		return GW_EXIT_RUNTIME;
	}
	return 0;
}
