/*
 * gpuwise explain [TEXT | FILE | -] [--json]: what an error message means,
 * its likely causes ranked, and the commands that fix it.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/probe.h"
#include "doctor/doctor.h"
#include "util/json.h"

/* Logs can be long; the error is nearly always near the end. */
#define EXPLAIN_MAX_INPUT (64u << 20)
#define EXPLAIN_MATCH_TAIL (4u << 20)

static void usage(FILE *f)
{
	fputs(_("usage: gpuwise explain [TEXT | FILE | -] [--json] [--no-probe]\n"
		   "       gpuwise explain --batch FILE [--json] [--no-probe]\n\n"
		   "Say what an error message means, its likely causes (most likely first)\n"
		   "and the commands that fix it, made specific with what this machine says.\n"
		   "  TEXT        the message itself (several words are joined)\n"
		   "  FILE        a file holding the message or a whole log\n"
		   "  -           read standard input: python train.py 2>&1 | gpuwise explain -\n"
		   "  --json      print {\"matches\":[{\"id\",\"title\",\"causes\",\"fixes\",\"captures\",\"catalog\",\n"
		   "              \"via\",\"confidence\",\"example\"}]}\n"
		   "  --no-probe  do not look at this machine's GPUs and Python environments\n"
		   "  --batch FILE  many messages ('-': standard input), one per line, each a JSON\n"
		   "              string (\"\\n\" for a line break) or {\"message\": ...}; prints one line\n"
		   "              of JSON per message: {\"line\",\"matches\"} or {\"line\",\"error\"}\n"
		   "  -h, --help  show this help\n\n"
		   "Exit status: 0 a diagnosis was found, 1 runtime error (unreadable input),\n"
		   "2 usage error, 3 the message matches no known signature; with --batch:\n"
		   "0 every message answered, 1 unreadable input or a record that is not one.\n"), f);
}

static int read_stream(FILE *f, const char *name, char **out, size_t *len)
{
	strbuf sb = STRBUF_INIT;
	char buf[65536];
	size_t r;
	while ((r = fread(buf, 1, sizeof buf, f)) > 0) {
		if (sb.len + r > EXPLAIN_MAX_INPUT) {
			sb_release(&sb);
			gw_errorf(_("cannot read '%s': larger than %u MiB"), name, EXPLAIN_MAX_INPUT >> 20);
			return GW_ERANGE;
		}
		sb_add(&sb, buf, r);
	}
	if (ferror(f)) {
		sb_release(&sb);
		gw_errorf(_("cannot read '%s': input/output error"), name);
		return GW_EIO;
	}
	/* A log may hold a stray NUL (a truncated, rewritten file); binary data is not a message. */
	size_t ctl = 0;
	for (size_t i = 0; i < sb.len; i++) {
		unsigned char ch = (unsigned char)sb.buf[i];
		if (ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r' && ch != '\f' && ch != 0x1b)
			ctl++;
	}
	if (ctl * 10 > sb.len) {
		sb_release(&sb);
		gw_errorf(_("cannot read '%s': binary data, not a message or a log"), name);
		return GW_EINVAL;
	}
	for (size_t i = 0; i < sb.len; i++)
		if (sb.buf[i] == '\0')
			sb.buf[i] = '\n';
	sb_puts(&sb, "");
	*len = sb.len;
	*out = sb_detach(&sb);
	return 0;
}

static json_t *oom_json(const char *text)
{
	oom_info o;
	if (explain_parse_oom(text, &o) != 0)
		return NULL;
	json_t *j = json_object();
	json_object_set_new(j, "format", json_string(o.old_format ? "old" : "new"));
	json_object_set_new(j, "gpu", jint_or_null(o.gpu >= 0, o.gpu));
	json_object_set_new(j, "requested_bytes", jint_or_null(o.requested >= 0, o.requested));
	json_object_set_new(j, "total_bytes", jint_or_null(o.total >= 0, o.total));
	json_object_set_new(j, "free_bytes", jint_or_null(o.free >= 0, o.free));
	json_object_set_new(j, "this_process_bytes", jint_or_null(o.process >= 0, o.process));
	json_object_set_new(j, "allocated_bytes", jint_or_null(o.allocated >= 0, o.allocated));
	json_object_set_new(j, "reserved_bytes", jint_or_null(o.reserved >= 0, o.reserved));
	json_object_set_new(j, "reserved_unallocated_bytes", jint_or_null(o.reserved_unalloc >= 0, o.reserved_unalloc));
	json_t *procs = json_array();
	for (size_t i = 0; i < o.n_others; i++) {
		json_t *p = json_object();
		json_object_set_new(p, "pid", json_integer(o.others[i].pid));
		json_object_set_new(p, "used_bytes", json_integer(o.others[i].bytes));
		json_object_set_new(p, "is_this_job", json_boolean((int)i == o.self_index));
		json_array_append_new(procs, p);
	}
	json_object_set_new(j, "other_processes", procs);
	json_object_set_new(j, "verdict", json_string(oom_verdict_name(o.verdict)));
	json_object_set_new(j, "shortfall_bytes", jint_or_null(o.shortfall >= 0, o.shortfall));
	json_object_set_new(j, "expandable_segments_helps", json_boolean(o.expandable_helps));
	return j;
}

static json_t *matches_json(const explain_match_t *m, size_t n, const char *text)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < n; i++) {
		json_t *o = json_object();
		json_object_set_new(o, "id", json_string(m[i].id));
		json_object_set_new(o, "title", json_string(m[i].title));
		json_t *c = json_array();
		for (size_t k = 0; k < m[i].n_causes; k++)
			json_array_append_new(c, json_string(m[i].causes[k]));
		json_object_set_new(o, "causes", c);
		json_t *f = json_array();
		for (size_t k = 0; k < m[i].n_fixes; k++)
			json_array_append_new(f, json_string(m[i].fixes[k]));
		json_object_set_new(o, "fixes", f);
		json_t *caps = json_object();
		for (size_t k = 0; k < m[i].n_caps; k++)
			json_object_set_new(caps, m[i].caps[k].name, json_string(m[i].caps[k].value));
		json_object_set_new(o, "captures", caps);
		json_t *cat = json_array();
		for (size_t k = 0; k < m[i].n_catalog; k++) {
			const explain_catalog_row *r = &m[i].catalog[k];
			json_t *row = json_object();
			json_object_set_new(row, "family", json_string(r->family));
			json_object_set_new(row, "name", json_string(r->name));
			json_object_set_new(row, "code", json_integer(r->code));
			json_object_set_new(row, "message", json_string(r->message));
			json_object_set_new(row, "meaning", json_string(r->meaning));
			json_object_set_new(row, "source", json_string(r->source));
			json_array_append_new(cat, row);
		}
		json_object_set_new(o, "catalog", cat);
		json_object_set_new(o, "via", json_string(m[i].via ? m[i].via : "signature"));
		json_object_set_new(o, "confidence", m[i].confidence >= 0 ? json_real(m[i].confidence) : json_null());
		json_t *ex = json_null();
		if (m[i].example_source) {
			ex = json_object();
			json_object_set_new(ex, "source", json_string(m[i].example_source));
			json_object_set_new(ex, "message", json_string(m[i].example_message));
			json_object_set_new(ex, "resolution", json_string(m[i].example_resolution ? m[i].example_resolution : ""));
		}
		json_object_set_new(o, "example", ex);
		if (strcmp(m[i].id, "cuda-oom") == 0) {
			json_t *oj = oom_json(text);
			if (oj)
				json_object_set_new(o, "oom", oj);
		}
		json_array_append_new(arr, o);
	}
	return arr;
}

static void print_json(const explain_match_t *m, size_t n, const char *text)
{
	json_t *root = json_object();
	json_object_set_new(root, "matches", matches_json(m, n, text));
	json_print(root, stdout);
	json_decref(root);
}

static void print_text(const explain_match_t *m, size_t n)
{
	FILE *f = stdout;
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc('\n', f);
		fprintf(f, "%s%s%s%s: %s\n", i == 0 ? c_red(f) : c_yellow(f), c_bold(f), m[i].id, c_reset(f), m[i].title);
		if (m[i].n_caps) {
			fprintf(f, _("  %sfrom the message:%s"), c_dim(f), c_reset(f));
			for (size_t k = 0; k < m[i].n_caps; k++)
				fprintf(f, "%s %s=%s", k ? "," : "", m[i].caps[k].name, m[i].caps[k].value);
			fputc('\n', f);
		}
		if (m[i].via && !strcmp(m[i].via, "retrieval") && m[i].example_source)
			fprintf(f, _("  %sanswered from the nearest known case (similarity %.0f%%):%s %s\n"), c_dim(f),
				100 * m[i].confidence, c_reset(f), m[i].example_source);
		else if (m[i].example_source)
			fprintf(f, _("  %sa known case:%s %s\n"), c_dim(f), c_reset(f), m[i].example_source);
		for (size_t k = 0; k < m[i].n_catalog; k++)
			fprintf(f, _("  %scatalog:%s %s = %ld (%s): %s\n"), c_dim(f), c_reset(f), m[i].catalog[k].name,
				m[i].catalog[k].code, m[i].catalog[k].family, _(m[i].catalog[k].meaning));
		if (m[i].n_causes) {
			fprintf(f, _("  likely causes:\n"));
			for (size_t k = 0; k < m[i].n_causes; k++)
				fprintf(f, "    %zu. %s\n", k + 1, m[i].causes[k]);
		}
		if (m[i].n_fixes) {
			fprintf(f, _("  %sfix:%s\n"), c_green(f), c_reset(f));
			for (size_t k = 0; k < m[i].n_fixes; k++)
				fprintf(f, "    - %s\n", m[i].fixes[k]);
		}
	}
}

/*
 * --batch FILE: one message per line of FILE (or standard input for "-"),
 * each a JSON string or an object {"message": "...", "exclude_source":
 * URL}; a JSON string carries a multi-line message as "\n".  Each
 * non-blank line prints one line of JSON: {"line": N, "matches": [...]},
 * or {"line": N, "error": "..."} for a record that is not one.  The
 * signatures, the corpus index and the probe are loaded once.  Returns the
 * exit status: 0 every record answered, 1 unreadable input or a bad record.
 */
static int explain_batch(const char *path, bool probe)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	if (!f) {
		gw_errorf(_("cannot read '%s': %s"), path, strerror(errno));
		return GW_EXIT_RUNTIME;
	}
	int status = GW_EXIT_OK;
	bool probed = false;
	probe_info pi;
	char *line = NULL;
	size_t cap = 0;
	ssize_t got;
	for (long no = 1; (got = getline(&line, &cap, f)) >= 0; no++) {
		size_t len = (size_t)got;
		if (strspn(line, " \t\r\n") == len)
			continue;
		json_t *out = json_object();
		json_object_set_new(out, "line", json_integer(no));
		const char *bad = NULL;
		json_t *rec = len > EXPLAIN_MAX_INPUT ? NULL : json_loadb(line, len, JSON_DECODE_ANY, NULL);
		json_t *msg = json_is_object(rec) ? json_object_get(rec, "message") : rec;
		json_t *ex = json_is_object(rec) ? json_object_get(rec, "exclude_source") : NULL;
		size_t mlen = json_is_string(msg) ? json_string_length(msg) : 0;
		const char *text = json_is_string(msg) ? json_string_value(msg) : NULL;
		if (!rec)
			bad = len > EXPLAIN_MAX_INPUT ? "larger than the input limit" : "not JSON";
		else if (!text)
			bad = "not a JSON string or an object with a string \"message\"";
		else if (ex && !json_is_string(ex))
			bad = "\"exclude_source\" is not a string";
		else if (strspn(text, " \t\r\n") == mlen)
			bad = "the message is empty";
		if (bad) {
			json_object_set_new(out, "error", json_string(bad));
			status = GW_EXIT_RUNTIME;
		} else {
			if (mlen > EXPLAIN_MATCH_TAIL)
				text += mlen - EXPLAIN_MATCH_TAIL;
			explain_retrieve_exclude(ex ? json_string_value(ex) : NULL);
			explain_match_t *m;
			size_t n;
			gw_error err = {0};
			if (explain_match(text, &m, &n, &err)) {
				gw_errorf(_("cannot load the error signatures: %s"), gw_error_text(&err));
				json_decref(rec);
				json_decref(out);
				status = GW_EXIT_RUNTIME;
				break;
			}
			if (probe && n) {
				if (!probed)
					probe_take(&pi);
				probed = true;
				explain_contextualize(m, n, text, &pi.ctx);
			}
			json_object_set_new(out, "matches", matches_json(m, n, text));
			explain_matches_free(m, n);
		}
		json_decref(rec);
		json_dumpf(out, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
		fputc('\n', stdout);
		json_decref(out);
	}
	explain_retrieve_exclude(NULL);
	if (ferror(f)) {
		gw_errorf(_("cannot read '%s': input/output error"), path);
		status = GW_EXIT_RUNTIME;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	if (probed)
		probe_release(&pi);
	return status;
}

int cmd_explain(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"no-probe", no_argument, NULL, 'P'},
		{"batch", required_argument, NULL, 'b'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	bool json = false, probe = true;
	const char *batch = NULL;
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'P':
			probe = false;
			break;
		case 'b':
			batch = optarg;
			break;
		case 'h':
			usage(stdout);
			return GW_EXIT_OK;
		default:
			if (optopt == 'b')
				return usage_error("explain", "--batch needs a file ('-' for standard input)");
			if (optopt)
				return usage_error("explain", "unknown option '-%c'", optopt);
			return usage_error("explain", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (batch) {
		if (optind < argc)
			return usage_error("explain", "--batch reads its messages from the file: give no message too");
		return explain_batch(batch, probe);
	}
	int status = GW_EXIT_RUNTIME;
	char *text = NULL;
	size_t len = 0;
	int nargs = argc - optind;
	struct stat st;
	for (int i = optind; nargs > 1 && i < argc; i++)
		if (strcmp(argv[i], "-") == 0)
			return usage_error("explain", "'-' (standard input) must be the only argument");
	if (nargs == 0) {
		if (isatty(STDIN_FILENO))
			return usage_error("explain", "give the error message, a file, or '-' for standard input");
		if (read_stream(stdin, "-", &text, &len))
			goto out;
	} else if (nargs == 1 && strcmp(argv[optind], "-") == 0) {
		if (read_stream(stdin, "-", &text, &len))
			goto out;
	} else if (nargs == 1 && stat(argv[optind], &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			gw_errorf(_("cannot read '%s': is a directory"), argv[optind]);
			goto out;
		}
		FILE *f = fopen(argv[optind], "rb");
		if (!f) {
			gw_errorf(_("cannot read '%s': permission denied or unreadable"), argv[optind]);
			goto out;
		}
		int rc = read_stream(f, argv[optind], &text, &len);
		fclose(f);
		if (rc)
			goto out;
	} else if (nargs == 1 && strchr(argv[optind], '/') && !strpbrk(argv[optind], " \t\n")) {
		/* one word with a slash is a file name, not a message */
		gw_errorf(_("cannot read '%s': %s"), argv[optind], strerror(errno));
		goto out;
	} else {
		strbuf sb = STRBUF_INIT;
		for (int i = optind; i < argc; i++)
			sb_printf(&sb, "%s%s", i > optind ? " " : "", argv[i]);
		sb_puts(&sb, "");
		len = sb.len;
		text = sb_detach(&sb);
	}
	if (strlen(text) == 0 || strspn(text, " \t\r\n") == strlen(text)) {
		status = usage_error("explain", "the message is empty");
		goto out;
	}
	const char *subject = text;
	if (len > EXPLAIN_MATCH_TAIL)
		subject = text + len - EXPLAIN_MATCH_TAIL;

	explain_match_t *m;
	size_t n;
	gw_error err = {0};
	if (explain_match(subject, &m, &n, &err)) {
		gw_errorf(_("cannot load the error signatures: %s"), gw_error_text(&err));
		goto out;
	}
	if (probe && n) {
		probe_info pi;
		probe_take(&pi);
		explain_contextualize(m, n, subject, &pi.ctx);
		probe_release(&pi);
	}
	if (json)
		print_json(m, n, subject);
	else if (n)
		print_text(m, n);
	else
		fputs(_("This message matches no known error signature (gpuwise knows the ids listed in "
			"docs/diagnoses.md).\n"), stdout);
	status = n ? GW_EXIT_OK : GW_EXIT_VERDICT3;
	explain_matches_free(m, n);
out:
	free(text);
	return status;
}
