/*
 * watch/runargs.c: the `gpuwise run` options another program may pass
 * through to a supervised job (the queue's run_args, export's --run-opt).
 *
 * The daemon builds `gpuwise run [restart] RUN_ARGS --vram-cap N --log F
 * -- CMD`.  Matching prefixes of forbidden names is not enough: `--` in
 * RUN_ARGS turns the daemon's own --vram-cap and --log into the job's
 * arguments, an abbreviation (`--lo`, `--vram`) is one getopt_long(3)
 * accepts, and an option left without its value takes the daemon's next
 * word as the value.  So RUN_ARGS are parsed here as gpuwise run parses
 * them, and only whole options from the table below pass.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "watch/watch.h"

typedef struct run_opt {
	const char *name;
	bool has_arg;
	bool allowed; /* false: the daemon sets it (or it has no place in a queued job) */
} run_opt;

/* Every long option of cmd/run.c (tests/e2e/run-args.t checks that the two agree). */
static const run_opt opts[] = {
	{"interval", true, true},      {"backoff", true, true},      {"start-limit", true, true},
	{"no-restart-on", true, true}, {"oom-halve", true, true},    {"oom-halve-arg", true, true},
	{"mem-limit", true, true},     {"on-leak", true, true},      {"on-heat", true, true},
	{"temp-limit", true, true},    {"hang-timeout", true, true}, {"leak-warmup", true, true},
	{"leak-window", true, true},   {"grace", true, true},        {"no-gpu", false, true},
	{"restart", true, false},      {"max-restarts", true, false}, {"vram-cap", true, false},
	{"log", true, false},          {"report", true, false},      {"json", false, false},
	{"xid-file", true, false},     {"on-event", true, false},    {"help", false, false},
};

static int bad(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *err, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, n, fmt, ap);
	va_end(ap);
	return GW_EINVAL;
}

int watch_run_args_check(char *const *args, size_t n, char *err, size_t errn)
{
	for (size_t i = 0; i < n; i++) {
		const char *a = args[i];
		if (strcmp(a, "--") == 0)
			return bad(err, errn,
				   "'run_args' may not hold '--': the job's command goes after the daemon's options");
		if (strncmp(a, "--", 2) != 0)
			return bad(err, errn,
				   "'run_args' holds '%s', which is not a gpuwise run option "
				   "(write --NAME VALUE or --NAME=VALUE)", a);
		const char *name = a + 2, *eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name);
		const run_opt *o = NULL;
		for (size_t k = 0; k < sizeof opts / sizeof *opts && !o; k++)
			if (strlen(opts[k].name) == len && strncmp(opts[k].name, name, len) == 0)
				o = &opts[k];
		if (!o) {
			for (size_t k = 0; k < sizeof opts / sizeof *opts; k++)
				if (len && strncmp(opts[k].name, name, len) == 0)
					return bad(err, errn,
						   "'run_args' may not abbreviate options: '%s' (write it in full, e.g. '--%s')",
						   a, opts[k].name);
			return bad(err, errn, "'run_args' holds '%s', which is not a gpuwise run option", a);
		}
		if (!o->allowed)
			return bad(err, errn, "'run_args' may not set '--%s' (the daemon sets it)", o->name);
		if (!o->has_arg && eq)
			return bad(err, errn, "'run_args': option '--%s' takes no value, not '%s'", o->name, a);
		if (o->has_arg && !eq && ++i >= n)
			return bad(err, errn, "'run_args': option '%s' needs a value", a);
	}
	return 0;
}
