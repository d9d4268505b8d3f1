/*
 * gpuwise doctor: is the driver / CUDA / PyTorch stack aligned and the GPU
 * healthy; each finding with its evidence and the exact fix.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "doctor/doctor.h"
#include "hw/hw.h"
#include "stack/stack.h"
#include "util/json.h"

#define MAX_PYTHONS 32

static void usage(FILE *f)
{
	fprintf(f, _("usage: gpuwise doctor [--json] [--strict] [--deep] [--python PATH]... [--no-exec]\n\n"
		   "Check that the GPU, driver, CUDA toolkits and PyTorch builds agree and that\n"
		   "the GPUs are healthy.  Findings are grouped Hardware / Driver / CUDA /\n"
		   "Python and PyTorch / Health / Desktop and browser, each with its evidence\n"
		   "and the fix.  Severities: ok (a check passed), info (a fact, not a verdict),\n"
		   "skip (a check could not run; the evidence says why), warn, fail.\n"
		   "  --json         print {\"platform\",\"findings\":[{\"id\",\"severity\",\"group\",\"title\",\"evidence\",\"fix\",\n"
		   "                 \"gpu\",\"gpus\"}]}\n"
		   "  --strict       exit 3 when there are warnings (and no failures)\n"
		   "  --deep         also run real tests: on each GPU a context, allocation, copies with a\n"
		   "                 checksum, a PTX kernel and host-device bandwidth; for each Python with\n"
		   "                 a CUDA PyTorch, torch.cuda.is_available() and a matmul (30 s bound)\n"
		   "  --python PATH  also check this interpreter or environment (repeatable)\n"
		   "  --no-exec      never run interpreters or nvcc (read files only)\n"
		   "  -h, --help     show this help\n\n"
		   "Looks at python3/python on PATH, VIRTUAL_ENV, CONDA_PREFIX, CUDA_HOME/CUDA_PATH,\n"
		   "every nvcc on PATH, /usr/local/cuda*, LD_LIBRARY_PATH and /etc/ld.so.conf.\n"
		   "On WSL 2 the checks are WSL's: the Windows driver, /dev/dxg, a Linux driver\n"
		   "installed inside WSL, which libcuda the loader takes; fixes are done on Windows\n"
		   "or inside WSL, never with a Linux driver.  gpuwise is a Linux program: on\n"
		   "Windows, run it inside WSL 2.\n\n"
		   "Exit status: 0 nothing fails, 1 runtime error, 2 usage error,\n"
		   "3 warnings only (with --strict), 4 a check fails.\n"));
}

static json_t *findings_json(const doctor_report *rep, hw_platform_kind platform)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < rep->n; i++) {
		const doctor_finding *f = &rep->findings[i];
		json_t *o = json_object();
		json_object_set_new(o, "id", json_string(f->id));
		json_object_set_new(o, "severity", json_string(doctor_severity_name(f->severity)));
		json_object_set_new(o, "group", json_string(doctor_group_name(f->group)));
		json_object_set_new(o, "title", json_string(f->title));
		json_object_set_new(o, "evidence", json_string(f->evidence));
		json_object_set_new(o, "fix", json_string(f->fix));
		json_object_set_new(o, "gpu", jint_or_null(f->gpu >= 0, f->gpu));
		json_t *gpus = json_array();
		for (int g = 0; g < 64; g++)
			if (f->gpu_mask >> g & 1)
				json_array_append_new(gpus, json_integer(g));
		json_object_set_new(o, "gpus", gpus);
		json_array_append_new(arr, o);
	}
	json_t *root = json_object();
	json_object_set_new(root, "platform", json_string(hw_platform_name(platform)));
	json_object_set_new(root, "findings", arr);
	return root;
}

/* Print text indented, each of its lines on its own indented line. */
static void print_indented(FILE *f, const char *lead, const char *text, const char *pre, const char *post)
{
	for (const char *p = text; *p;) {
		size_t l = strcspn(p, "\n");
		fprintf(f, "        %s%s%.*s%s\n", pre, p == text ? lead : "  ", (int)l, p, post);
		p += l;
		if (*p)
			p++;
	}
}

static void print_text(const doctor_report *rep)
{
	FILE *f = stdout;
	size_t counts[DOC_NSEV] = {0};
	for (int g = 0; g < DG_COUNT; g++) {
		bool header = false;
		for (size_t i = 0; i < rep->n; i++) {
			const doctor_finding *x = &rep->findings[i];
			if ((int)x->group != g)
				continue;
			if (!header) {
				fprintf(f, "%s%s%s\n", c_bold(f), _(doctor_group_name((doctor_group)g)), c_reset(f));
				header = true;
			}
			const char *col = x->severity == DOC_FAIL ? c_red(f) : x->severity == DOC_WARN ? c_yellow(f)
					: x->severity == DOC_OK ? c_green(f) : c_dim(f);
			/* the severity padded to 4 columns by display width (二字 labels are 4) */
			const char *sev = _(doctor_severity_name(x->severity));
			size_t sw = gw_display_width(sev);
			fprintf(f, "  %s%s%*s%s  %s", col, sev, sw < 4 ? (int)(4 - sw) : 0, "", c_reset(f), x->title);
			if (x->gpu_mask & (x->gpu_mask - 1)) {
				/* merged: say which GPUs it concerns */
				fputs(_(" (GPUs"), f);
				for (int k = 0, first = 1; k < 64; k++)
					if (x->gpu_mask >> k & 1) {
						fprintf(f, "%s %d", first ? "" : ",", k);
						first = 0;
					}
				fputc(')', f);
			}
			fputc('\n', f);
			if (*x->evidence)
				print_indented(f, "", x->evidence, c_dim(f), c_reset(f));
			if (*x->fix)
				print_indented(f, _("fix: "), x->fix, "", "");
			counts[x->severity]++;
		}
		if (header)
			fputc('\n', f);
	}
	fprintf(f, _("%zu ok, %zu info, %zu skipped, "), counts[DOC_OK], counts[DOC_INFO], counts[DOC_SKIP]);
	fprintf(f, P_("%zu warning", "%zu warnings", counts[DOC_WARN]), counts[DOC_WARN]);
	fputs(_(", "), f);
	fprintf(f, P_("%zu failure", "%zu failures", counts[DOC_FAIL]), counts[DOC_FAIL]);
	fputc('\n', f);
}

static void progress(const char *what)
{
	if (isatty(STDERR_FILENO))
		fprintf(stderr, _("gpuwise: %s...\n"), _(what));
}

int cmd_doctor(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"strict", no_argument, NULL, 's'},
		{"deep", no_argument, NULL, 'd'},
		{"python", required_argument, NULL, 'p'},
		{"no-exec", no_argument, NULL, 'n'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	bool json = false, strict = false, deep = false, no_exec = false;
	const char *pythons[MAX_PYTHONS];
	size_t n_pythons = 0;
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 's':
			strict = true;
			break;
		case 'd':
			deep = true;
			break;
		case 'n':
			no_exec = true;
			break;
		case 'p': {
			if (n_pythons == MAX_PYTHONS)
				return usage_error("doctor", "at most %d --python options", MAX_PYTHONS);
			char *full = gw_path(optarg);
			bool ok = access(full, X_OK) == 0;
			struct stat st;
			if (ok && stat(full, &st) == 0 && S_ISDIR(st.st_mode)) {
				/* an environment has bin/python or bin/python3 (a dangling link counts: doctor says so) */
				char *p = xasprintf("%s/bin/python", full), *p3 = xasprintf("%s/bin/python3", full);
				ok = lstat(p, &st) == 0 || lstat(p3, &st) == 0;
				free(p);
				free(p3);
			}
			free(full);
			if (!ok) {
				gw_errorf(_("cannot use --python '%s': not an executable or environment directory"), optarg);
				return GW_EXIT_USAGE;
			}
			pythons[n_pythons++] = optarg;
			break;
		}
		case 'h':
			usage(stdout);
			return GW_EXIT_OK;
		case ':':
			return usage_error("doctor", "option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error("doctor", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("doctor", "unexpected argument '%s'", argv[optind]);

	int status = GW_EXIT_RUNTIME;
	hw_snapshot snap;
	memset(&snap, 0, sizeof snap);
	stack_info st;
	memset(&st, 0, sizeof st);
	hw_xid *xids = NULL;
	size_t n_xids = 0;
	doctor_report rep = {0};
	gw_error err = {0};
	bool have_snap = false;

	progress(N_("reading the GPUs"));
	hw_opts ho = {.wake = true}; /* a deliberate check may wake a sleeping dGPU */
	if (hw_snapshot_take(&ho, &snap, &err)) {
		gw_errorf("%s", gw_error_text(&err));
		goto out;
	}
	have_snap = true;
	progress(N_("looking for CUDA toolkits and Python environments"));
	stack_opts so = {.pythons = pythons, .n_pythons = n_pythons, .no_exec = no_exec, .timeout_ms = 10000};
	if (stack_discover(&so, &st, &err)) {
		gw_errorf("%s", gw_error_text(&err));
		goto out;
	}
	/* Xid events of the last 24 h: kmsg timestamps count from boot */
	doctor_input in = {.hw = &snap, .stack = &st};
	uint64_t since_us = 0;
	char *up = gw_read_line("/proc/uptime");
	if (up) {
		double s = atof(up);
		since_us = s > 86400 ? (uint64_t)((s - 86400) * 1e6) : 0;
		free(up);
	}
	gw_error xe = {0};
	in.xids_read = hw_xid_read(NULL, since_us, &xids, &n_xids, &xe) == 0;
	in.xid_error = xe.msg;
	in.xids = xids;
	in.n_xids = n_xids;
	doctor_check(&in, &rep);
	if (deep) {
		progress(N_("running the CUDA tests"));
		doctor_deep_cuda(&rep);
		if (!no_exec) {
			progress(N_("running PyTorch on the GPU"));
			doctor_deep_python(&st, 30000, &rep);
		}
	}
	doctor_merge_duplicates(&rep);
	if (json) {
		json_t *j = findings_json(&rep, snap.platform);
		json_print(j, stdout);
		json_decref(j);
	} else {
		print_text(&rep);
	}
	doctor_severity w = doctor_worst(&rep);
	status = w == DOC_FAIL ? GW_EXIT_VERDICT4 : (w == DOC_WARN && strict) ? GW_EXIT_VERDICT3 : GW_EXIT_OK;
out:
	doctor_report_release(&rep);
	free(xids);
	stack_release(&st);
	if (have_snap)
		hw_snapshot_release(&snap);
	return status;
}
