/*
 * gpuwise: answers the everyday questions of people who run AI on GPUs.
 * This file holds only the command table and the global options (git
 * style); each command lives in src/cmd/<name>.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "kb/kb.h"
#include "util/util.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{"plan", cmd_plan, N_("will this model fit this GPU, and how fast will it run")},
	{"fit", cmd_fit, N_("what runs on this machine: every installed and catalog model, ranked")},
	{"cards", cmd_cards, N_("which GPUs run this workload, how fast, at what price")},
	{"cost", cmd_cost, N_("own a card or rent one: monthly cost and break-even hours")},
	{"status", cmd_status, N_("GPUs now: memory, utilisation, temperature, power, processes")},
	{"doctor", cmd_doctor, N_("is the driver, CUDA and PyTorch stack aligned and healthy")},
	{"explain", cmd_explain, N_("what an error message means here, and what to run to fix it")},
	{"run", cmd_run, N_("supervise a long GPU job: watch, restart, report")},
	{"bench", cmd_bench, N_("why GPUs win: parallelism, bandwidth, tensor cores, measured")},
	{"list", cmd_list, N_("the catalog: GPUs with dated prices, models, weight formats")},
	{"daemon", cmd_daemon, N_("run the job queue of a shared GPU server")},
	{"submit", cmd_submit, N_("queue a job with its VRAM, GPUs and project")},
	{"queue", cmd_queue, N_("list the queue's jobs and why each one waits")},
	{"show", cmd_show, N_("everything about one queued job")},
	{"logs", cmd_logs, N_("a queued job's output")},
	{"cancel", cmd_cancel, N_("cancel queued or running jobs")},
	{"hold", cmd_hold, N_("keep queued jobs from starting")},
	{"release", cmd_release, N_("let held jobs start again")},
	{"quota", cmd_quota, N_("projects' use against their quotas; set quotas")},
	{"sim", cmd_sim, N_("replay a GPU cluster trace through the placement policies")},
	{"export", cmd_export, N_("a job as a Kubernetes Job or Slurm script; quotas for both")},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void print_help(FILE *f)
{
	fputs(_("usage: gpuwise [--data-dir DIR] [--no-color] [--lang en|zh] COMMAND [ARGS...]\n"
		"       gpuwise help [COMMAND]\n"
		"       gpuwise --version\n\n"
		"Commands:\n"), f);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, _(commands[i].summary));
	fputs(_("\nGlobal options:\n"
		"  --data-dir DIR  read knowledge tables (NAME.tsv) from DIR instead of the\n"
		"                  built-in copies; tables DIR lacks stay built in (GPUWISE_DATA)\n"
		"  --no-color      never colour the output (also NO_COLOR)\n"
		"  --lang en|zh    the language of messages, help and reports (default: the\n"
		"                  locale, LANG=zh_CN.UTF-8 for Simplified Chinese); --json\n"
		"                  and --prometheus output is the same in every language\n\n"
		"Exit status: 0 success, 1 runtime error, 2 usage error; 3 and 4 are each\n"
		"command's own verdicts (see 'gpuwise COMMAND --help' and gpuwise(1)).\n"), f);
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static int unknown_command(const char *name)
{
	size_t best = (size_t)-1;
	const char *best_name = NULL;
	for (size_t i = 0; i < NCOMMANDS; i++) {
		size_t d = str_distance(name, commands[i].name);
		if (str_starts(commands[i].name, name) && strlen(name) >= 2)
			d = 0;
		if (d < best) {
			best = d;
			best_name = commands[i].name;
		}
	}
	fprintf(stderr, _("gpuwise: '%s' is not a gpuwise command\ntry 'gpuwise help'\n"), name);
	if (best_name && best <= 3)
		fprintf(stderr, _("\nThe most similar command is\n\t%s\n"), best_name);
	return GW_EXIT_USAGE;
}

/*
 * Remove the global options --data-dir DIR, --no-color and --lang L from
 * anywhere before a "--", so they work before or after the command name.
 * The language is chosen here, before any message: --lang, else the
 * locale; --json and --prometheus answers stay English byte for byte.
 */
static int strip_global_options(int *argc, char **argv)
{
	int out = 1;
	bool dashdash = false;
	const char *lang = NULL;
	bool machine = false;
	for (int i = 1; i < *argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0)
			dashdash = true;
		if (!dashdash && (strcmp(a, "--lang") == 0 || str_starts(a, "--lang="))) {
			if (a[6] == '=') {
				lang = a + 7;
			} else if (i + 1 < *argc) {
				lang = argv[++i];
			} else {
				gw_i18n_init(NULL);
				gw_errorf(_("option '--lang' needs a language (en or zh)"));
				return -1;
			}
			continue;
		}
		if (!dashdash && (strcmp(a, "--json") == 0 || strcmp(a, "--prometheus") == 0))
			machine = true;
		argv[out++] = argv[i];
	}
	argv[out] = NULL;
	*argc = out;
	if (gw_i18n_init(lang) < 0) {
		gw_i18n_init(NULL);
		gw_errorf(_("unknown language '%s' (use en or zh)"), lang);
		return -1;
	}
	if (machine)
		gw_i18n_disable();
	if (getenv("GPUWISE_I18N_DEBUG"))
		fprintf(stderr, "gpuwise: catalog: %s\n", gw_i18n_source());
	out = 1;
	dashdash = false;
	for (int i = 1; i < *argc; i++) {
		const char *a = argv[i];
		if (!dashdash && strcmp(a, "--") == 0)
			dashdash = true;
		if (!dashdash && strcmp(a, "--data-dir") == 0) {
			if (i + 1 >= *argc) {
				gw_errorf(_("option '--data-dir' needs a directory"));
				return -1;
			}
			kb_set_data_dir(argv[++i]);
			continue;
		}
		if (!dashdash && str_starts(a, "--data-dir=")) {
			kb_set_data_dir(a + strlen("--data-dir="));
			continue;
		}
		if (!dashdash && strcmp(a, "--no-color") == 0) {
			out_set_nocolor(true);
			continue;
		}
		argv[out++] = argv[i];
	}
	argv[out] = NULL;
	*argc = out;
	return 0;
}

int main(int argc, char **argv)
{
	int rc;
	gw_proc_title_init(argc, argv);
	if (strip_global_options(&argc, argv) < 0)
		return GW_EXIT_USAGE;
	if (argc < 2) {
		print_help(stderr);
		return GW_EXIT_USAGE;
	}
	const char *name = argv[1];
	if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
		if (argc > 2) {
			fprintf(stderr, _("gpuwise: unexpected argument '%s'\ntry 'gpuwise help'\n"), argv[2]);
			return GW_EXIT_USAGE;
		}
		printf("gpuwise %s\n", GPUWISE_VERSION);
		return GW_EXIT_OK;
	}
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
		print_help(stdout);
		return GW_EXIT_OK;
	}
	if (strcmp(name, "help") == 0) {
		if (argc < 3) {
			print_help(stdout);
			return GW_EXIT_OK;
		}
		const struct command *c = find_command(argv[2]);
		if (!c)
			return unknown_command(argv[2]);
		char *args[] = {(char *)c->name, "--help", NULL};
		rc = c->fn(2, args);
		kb_release_all();
		return rc;
	}
	if (name[0] == '-') {
		gw_errorf(_("unknown option '%s'"), name);
		fprintf(stderr, _("try 'gpuwise help'\n"));
		return GW_EXIT_USAGE;
	}
	const struct command *c = find_command(name);
	if (!c)
		return unknown_command(name);
	if (kb_data_dir()) {
		/* a broken replacement table is refused up front, whoever reads it */
		gw_error kerr = {0};
		if (kb_load_all(&kerr)) {
			gw_errorf("%s", gw_error_text(&kerr));
			kb_release_all();
			return GW_EXIT_RUNTIME;
		}
	}
	rc = c->fn(argc - 1, argv + 1);
	kb_release_all();
	return rc;
}
