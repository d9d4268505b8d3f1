/*
 * gpuwise sim: replay a GPU cluster trace through the placement policies
 * of src/sched/place.c (the daemon's own code) and compare them.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "sched/sim.h"
#include "util/json.h"

#define N_POLICIES (SCHED_POLICY_GPUWISE + 1)
#define SIM_MAX_SEEDS 100

static void usage(FILE *f)
{
	fprintf(f,
		_("usage: gpuwise sim --pods FILE --nodes FILE [--policy NAME[,NAME...]]\n"
		"                   [--seed N] [--seeds N] [--stop PCT] [--replay times] [--gpu-only]\n"
		"                   [--json] [--plot FILE.svg]\n\n"
		"Replay a GPU cluster trace (Alibaba's openb pod and node lists, Weng et al.,\n"
		"USENIX ATC 2023) through the placement policies the queue daemon uses and\n"
		"compare them: the GPU allocation ratio (GPUs allocated to pods over the\n"
		"cluster's GPUs), the unallocated and fragmented GPUs, and the arrived demand\n"
		"at the first pod that could not be placed.  A pod's gpu_milli becomes a\n"
		"memory request of that share of its GPU's model.\n\n"
		"The default mode inflates the workload as the FGD paper does: pods drawn from\n"
		"the trace with replacement arrive one by one and never leave, until the GPUs\n"
		"they ask for reach --stop percent of the cluster's; figures are taken as the\n"
		"arrived demand passes 50, 80, 90, 100, 110 and 120%%, for --seeds seeds.\n\n"
		"Options:\n"
		"  --pods FILE       pod list (columns num_gpu, gpu_milli, creation_time,\n"
		"                    deletion_time, scheduled_time)\n"
		"  --nodes FILE      node list (columns gpu, model)\n"
		"  --policy LIST     exclusive, first-fit, best-fit, fgd, gpuwise, or all\n"
		"                    (default all)\n"
		"  --seed N          first seed of the pod draws (default 1)\n"
		"  --seeds N         seeds N, N+1 ... to run, 1 to %d (default 5)\n"
		"  --stop PCT        arrived demand to stop at, 1 to 200 (default 130)\n"
		"  --replay times    replay the pods at the trace's own times instead\n"
		"  --gpu-only        ignore the pods' and nodes' CPU (cpu_milli)\n"
		"  --vram-sizes LIST standard sizes (e.g. 4G,8G,16G): run again with every\n"
		"                    shared request rounded up to the next size, as the\n"
		"                    daemon's vram_sizes does, and compare allocation and\n"
		"                    fragmentation with the free-form runs; MODEL=LIST\n"
		"                    (repeatable) gives the nodes whose model holds MODEL\n"
		"                    their own sizes, as vram_sizes[MODEL] does\n"
		"  --json            machine-readable output (docs/json-sim.md)\n"
		"  --plot FILE.svg   write the allocation ratio against arrived demand,\n"
		"                    one line per policy (mean over the seeds)\n"
		"  -h, --help        this help\n\n"
		"Exit status: 0 success, 1 a file could not be read or is malformed (the\n"
		"message names its line), 2 usage error.\n"),
		SIM_MAX_SEEDS);
}

static const char *const policy_colour[N_POLICIES] = {
	[SCHED_POLICY_EXCLUSIVE] = "#9467bd", [SCHED_POLICY_FIRST_FIT] = "#ff7f0e",
	[SCHED_POLICY_BEST_FIT] = "#2ca02c", [SCHED_POLICY_FGD] = "#1f77b4",
	[SCHED_POLICY_GPUWISE] = "#d62728",
};

/* Lines drawn later are thinner, so a policy hidden under a later one still shows its edges. */
static const int policy_width[N_POLICIES] = {
	[SCHED_POLICY_EXCLUSIVE] = 3, [SCHED_POLICY_FIRST_FIT] = 9, [SCHED_POLICY_BEST_FIT] = 7,
	[SCHED_POLICY_FGD] = 5, [SCHED_POLICY_GPUWISE] = 3,
};

typedef struct {
	double mean, sd, min, max;
	int n;
} stat;

static stat stat_of(const double *v, int n)
{
	stat s = {0, 0, INFINITY, -INFINITY, 0};
	for (int i = 0; i < n; i++) {
		if (isnan(v[i]) || v[i] < 0)
			continue;
		s.mean += v[i];
		s.min = fmin(s.min, v[i]);
		s.max = fmax(s.max, v[i]);
		s.n++;
	}
	if (s.n == 0)
		return (stat){NAN, NAN, NAN, NAN, 0};
	s.mean /= s.n;
	for (int i = 0; i < n; i++)
		if (!isnan(v[i]) && v[i] >= 0)
			s.sd += (v[i] - s.mean) * (v[i] - s.mean);
	s.sd = s.n > 1 ? sqrt(s.sd / (s.n - 1)) : 0;
	return s;
}

/* {"mean_pct", "sd_pct", "min_pct", "max_pct"} over the seeds (null when no seed has a value). */
static json_t *stat_json(stat s)
{
	json_t *j = json_object();
	const char *k[4] = {"mean_pct", "sd_pct", "min_pct", "max_pct"};
	double v[4] = {s.mean, s.sd, s.min, s.max};
	for (int i = 0; i < 4; i++)
		json_object_set_new(j, k[i], s.n > 0 ? jreal_round(v[i], 3) : json_null());
	return j;
}

/* One policy's runs over the seeds. */
typedef struct {
	bool on;
	sim_result *runs;
	double elapsed_ms;
} pol_runs;

/* Mean over the seeds of policy p's curve at point i; n_pts: points every seed has. */
static double curve_mean(const pol_runs *pr, int n_seeds, int i)
{
	double y = 0;
	for (int s = 0; s < n_seeds; s++)
		y += pr->runs[s].curve_alloc_pct[i];
	return y / n_seeds;
}

static int curve_points(const pol_runs *pr, int n_seeds)
{
	int n = SIM_CURVE_MAX + 1;
	for (int s = 0; s < n_seeds; s++)
		if (pr->runs[s].n_curve < n)
			n = pr->runs[s].n_curve;
	return n;
}

typedef struct {
	double x, y, w, h;        /* the panel's frame in the SVG */
	double x0, x1, y0, y1;    /* the data it shows */
	double xstep, ystep;
} panel;

static double px_x(const panel *p, double v) { return p->x + (v - p->x0) / (p->x1 - p->x0) * p->w; }
static double px_y(const panel *p, double v) { return p->y + p->h - (v - p->y0) / (p->y1 - p->y0) * p->h; }

static void draw_panel(FILE *f, const panel *p, const pol_runs *pr, int n_seeds, const char *title)
{
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\">%s</text>\n", p->x, p->y - 8, title);
	for (double v = p->y0; v <= p->y1 + 1e-9; v += p->ystep) {
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#dddddd\"/>\n", p->x, px_y(p, v),
			p->x + p->w, px_y(p, v));
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g%%</text>\n", p->x - 6, px_y(p, v) + 4, v);
	}
	for (double v = p->x0; v <= p->x1 + 1e-9; v += p->xstep) {
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#dddddd\"/>\n", px_x(p, v), p->y,
			px_x(p, v), p->y + p->h);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g%%</text>\n", px_x(p, v), p->y + p->h + 18, v);
	}
	fprintf(f, "<svg x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" viewBox=\"%.1f %.1f %.1f %.1f\">\n", p->x, p->y,
		p->w, p->h, p->x, p->y, p->w, p->h);
	/* the line where everything that arrived is allocated */
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000000\" stroke-dasharray=\"4 4\"/>\n",
		px_x(p, p->y0), px_y(p, p->y0), px_x(p, 100), px_y(p, 100));
	for (int q = 0; q < N_POLICIES; q++) {
		if (!pr[q].on)
			continue;
		int n = curve_points(&pr[q], n_seeds);
		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%d\" stroke-linejoin=\"round\" points=\"",
			policy_colour[q], policy_width[q]);
		for (int i = 0; i < n; i++)
			fprintf(f, "%s%.1f,%.1f", i ? " " : "", px_x(p, i * SIM_CURVE_STEP_PCT),
				px_y(p, curve_mean(&pr[q], n_seeds, i)));
		fprintf(f, "\"/>\n");
	}
	fprintf(f, "</svg>\n");
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#000000\"/>\n", p->x,
		p->y, p->w, p->h);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", p->x + p->w / 2, p->y + p->h + 40,
		/* xgettext:no-c-format */ _("arrived GPU demand (% of the GPUs)"));
}

/*
 * The allocation ratio against arrived demand, mean over the seeds: the
 * whole run on the left, and on the right the part past 85% arrived, where
 * the policies part, with the vertical axis fitted to the data.
 */
static int write_plot(const char *path, const pol_runs *pr, int n_seeds, double stop_pct, size_t n_gpus)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		gw_errorf(_("cannot write '%s': %s"), path, strerror(errno));
		return GW_EXIT_RUNTIME;
	}
	const double W = 1100, H = 500;
	panel full = {70, 60, 380, 360, 0, ceil(stop_pct / 10) * 10, 0, 100, 10, 20};
	if (full.x1 > 100)
		full.xstep = 20;
	panel zoom = {520, 60, 420, 360, stop_pct > 90 ? 85 : 0, stop_pct, 100, 0, 5, 1};
	for (int q = 0; q < N_POLICIES; q++) {
		if (!pr[q].on)
			continue;
		int n = curve_points(&pr[q], n_seeds);
		for (int i = 0; i < n; i++) {
			if (i * SIM_CURVE_STEP_PCT < zoom.x0)
				continue;
			double y = curve_mean(&pr[q], n_seeds, i);
			zoom.y0 = fmin(zoom.y0, y);
			zoom.y1 = fmax(zoom.y1, y);
		}
	}
	/* at most 8 points high, so that close policies stay apart; lower lines are clipped */
	zoom.y1 = ceil(zoom.y1);
	zoom.y0 = fmax(floor(zoom.y0), zoom.y1 - 8);
	zoom.y1 = fmax(zoom.y1, zoom.y0 + 1);
	zoom.ystep = ceil((zoom.y1 - zoom.y0) / 8);
	zoom.y1 = zoom.y0 + zoom.ystep * ceil((zoom.y1 - zoom.y0) / zoom.ystep);
	if (zoom.x0 == 0)
		zoom.xstep = full.xstep;
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		   "font-family=\"sans-serif\" font-size=\"12\">\n", W, H, W, H);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n");
	fputs("<text x=\"70\" y=\"24\" font-size=\"15\">", f);
	fprintf(f, P_("GPU allocation ratio against arrived GPU demand, %zu GPUs, mean of %d seed",
		      "GPU allocation ratio against arrived GPU demand, %zu GPUs, mean of %d seeds", n_seeds),
		n_gpus, n_seeds);
	fputs("</text>\n", f);
	fprintf(f, "<text transform=\"translate(20 %.1f) rotate(-90)\" text-anchor=\"middle\">%s</text>\n",
		full.y + full.h / 2, /* xgettext:no-c-format */ _("GPUs allocated (% of the GPUs)"));
	draw_panel(f, &full, pr, n_seeds, _("the whole run"));
	draw_panel(f, &zoom, pr, n_seeds, _("where the policies part"));
	int row = 0;
	for (int q = 0; q < N_POLICIES; q++) {
		if (!pr[q].on)
			continue;
		double ly = zoom.y + 20 + row++ * 24;
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"6\"/>\n",
			zoom.x + zoom.w + 20, ly, zoom.x + zoom.w + 50, ly, policy_colour[q]);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", zoom.x + zoom.w + 56, ly + 4, sched_policy_name(q));
	}
	fprintf(f, "</svg>\n");
	if (fclose(f) != 0) {
		gw_errorf(_("cannot write '%s': %s"), path, strerror(errno));
		return GW_EXIT_RUNTIME;
	}
	return GW_EXIT_OK;
}

static void print_inflation(const sim_cluster *c, const pol_runs *pr, uint64_t seed, int n_seeds, double stop_pct)
{
	printf(_("Inflation (Weng et al., ATC'23): GPU pods drawn with replacement arrive and never leave\n"
		 "until they ask for %g%% of the GPUs; seeds %llu..%llu\n\n"), stop_pct, (unsigned long long)seed,
	       (unsigned long long)(seed + n_seeds - 1));
	/* printed with %s: "% of" is no directive */
	const char *what[4] = {/* xgettext:no-c-format */ N_("GPU allocation ratio (% of the GPUs allocated to pods)"),
			       /* xgettext:no-c-format */ N_("Unallocated GPUs (% of the GPUs)"),
			       /* xgettext:no-c-format */ N_("Fragmented GPUs (% of the GPUs no typical pod can use)"),
			       /* xgettext:no-c-format */ N_("GPU pods placed (% of the pods arrived)")};
	for (int w = 0; w < 4; w++) {
		printf(P_("%s, mean ± sd over %d seed, at arrived demand:\n",
			  "%s, mean ± sd over %d seeds, at arrived demand:\n", n_seeds), _(what[w]), n_seeds);
		const char *hdr[SIM_N_MARKS + 1] = {_("policy"), "50%", "80%", "90%", "100%", "110%", "120%"};
		table *t = table_new(SIM_N_MARKS + 1, hdr);
		for (int m = 1; m <= SIM_N_MARKS; m++)
			table_set_align(t, (size_t)m, true);
		for (int p = 0; p < N_POLICIES; p++) {
			if (!pr[p].on)
				continue;
			char cells[SIM_N_MARKS][32];
			const char *row[SIM_N_MARKS + 1] = {sched_policy_name(p)};
			for (int m = 0; m < SIM_N_MARKS; m++) {
				double v[SIM_MAX_SEEDS];
				for (int s = 0; s < n_seeds; s++) {
					const sim_result *r = &pr[p].runs[s];
					v[s] = w == 0   ? r->alloc_pct[m]
					       : w == 1 ? 100 - r->alloc_pct[m]
					       : w == 2 ? r->frag_pct[m]
							: r->placed_pct[m];
				}
				stat st = stat_of(v, n_seeds);
				if (st.n == 0)
					snprintf(cells[m], sizeof cells[m], "-");
				else
					snprintf(cells[m], sizeof cells[m], "%.2f ± %.2f", st.mean, st.sd);
				row[m + 1] = cells[m];
			}
			table_addv(t, row);
		}
		table_print(t, stdout);
		table_free(t);
		printf("\n");
	}
	printf(_("First failed placement, mean (min..max) over the seeds:\n"));
	const char *hdr[5] = {_("policy"), _("arrived demand"), _("allocation then"), _("lowest allocation at 100%"),
			      _("time (all seeds)")};
	table *t = table_new(5, hdr);
	for (int p = 0; p < N_POLICIES; p++) {
		if (!pr[p].on)
			continue;
		double a[SIM_MAX_SEEDS], b[SIM_MAX_SEEDS], h[SIM_MAX_SEEDS];
		for (int s = 0; s < n_seeds; s++) {
			a[s] = pr[p].runs[s].fail_arrived_pct;
			b[s] = pr[p].runs[s].fail_alloc_pct;
			h[s] = pr[p].runs[s].alloc_pct[3];
		}
		stat sa = stat_of(a, n_seeds), sb = stat_of(b, n_seeds), sh = stat_of(h, n_seeds);
		char c1[64], c2[64], c3[32], c4[32];
		if (sa.n)
			snprintf(c1, sizeof c1, "%.2f%% (%.2f..%.2f)", sa.mean, sa.min, sa.max);
		else
			snprintf(c1, sizeof c1, "%s", _("none"));
		if (sb.n)
			snprintf(c2, sizeof c2, "%.2f%% (%.2f..%.2f)", sb.mean, sb.min, sb.max);
		else
			snprintf(c2, sizeof c2, "-");
		snprintf(c3, sizeof c3, sh.n ? "%.2f%%" : "-", sh.min);
		snprintf(c4, sizeof c4, "%.2f s", pr[p].elapsed_ms / 1000);
		table_add(t, sched_policy_name(p), c1, c2, c3, c4);
	}
	table_print(t, stdout);
	table_free(t);
	(void)c;
}

static json_t *inflation_json(const pol_runs *pr, uint64_t seed, int n_seeds, double stop_pct)
{
	json_t *j = json_object();
	json_object_set_new(j, "stop_pct", jreal_round(stop_pct, 2));
	json_t *seeds = json_array();
	for (int s = 0; s < n_seeds; s++)
		json_array_append_new(seeds, json_integer((json_int_t)(seed + (uint64_t)s)));
	json_object_set_new(j, "seeds", seeds);
	json_t *pols = json_array();
	for (int p = 0; p < N_POLICIES; p++) {
		if (!pr[p].on)
			continue;
		json_t *o = json_object();
		json_object_set_new(o, "policy", json_string(sched_policy_name(p)));
		json_t *marks = json_array();
		for (int m = 0; m < SIM_N_MARKS; m++) {
			double a[SIM_MAX_SEEDS], u[SIM_MAX_SEEDS], fr[SIM_MAX_SEEDS], pl[SIM_MAX_SEEDS];
			for (int s = 0; s < n_seeds; s++) {
				const sim_result *r = &pr[p].runs[s];
				a[s] = r->alloc_pct[m];
				u[s] = 100 - r->alloc_pct[m];
				fr[s] = r->frag_pct[m];
				pl[s] = r->placed_pct[m];
			}
			json_t *mk = json_object();
			json_object_set_new(mk, "arrived_pct", jreal_round(sim_marks_pct[m], 2));
			json_object_set_new(mk, "alloc", stat_json(stat_of(a, n_seeds)));
			json_object_set_new(mk, "unallocated", stat_json(stat_of(u, n_seeds)));
			json_object_set_new(mk, "fragmented", stat_json(stat_of(fr, n_seeds)));
			json_object_set_new(mk, "placed_pods", stat_json(stat_of(pl, n_seeds)));
			json_array_append_new(marks, mk);
		}
		json_object_set_new(o, "marks", marks);
		double a[SIM_MAX_SEEDS], b[SIM_MAX_SEEDS];
		json_t *runs = json_array();
		for (int s = 0; s < n_seeds; s++) {
			const sim_result *r = &pr[p].runs[s];
			a[s] = r->fail_arrived_pct;
			b[s] = r->fail_alloc_pct;
			json_t *ro = json_object();
			json_object_set_new(ro, "seed", json_integer((json_int_t)(seed + (uint64_t)s)));
			json_t *al = json_array();
			for (int m = 0; m < SIM_N_MARKS; m++) {
				json_t *mo = json_object();
				json_object_set_new(mo, "arrived_pct", jreal_round(sim_marks_pct[m], 2));
				json_object_set_new(mo, "alloc_pct", jreal_or_null(!isnan(r->alloc_pct[m]), round(r->alloc_pct[m] * 1000) / 1000));
				json_object_set_new(mo, "fragmented_pct", jreal_or_null(!isnan(r->frag_pct[m]), round(r->frag_pct[m] * 1000) / 1000));
				json_array_append_new(al, mo);
			}
			json_object_set_new(ro, "marks", al);
			json_object_set_new(ro, "first_failure_arrived_pct",
					    jreal_or_null(r->fail_arrived_pct >= 0, round(r->fail_arrived_pct * 1000) / 1000));
			json_object_set_new(ro, "first_failure_alloc_pct",
					    jreal_or_null(r->fail_alloc_pct >= 0, round(r->fail_alloc_pct * 1000) / 1000));
			json_object_set_new(ro, "pods_arrived", json_integer((json_int_t)r->n_arrived));
			json_object_set_new(ro, "pods_placed", json_integer((json_int_t)r->n_placed));
			json_object_set_new(ro, "final_alloc_pct", jreal_round(r->final_alloc_pct, 3));
			json_array_append_new(runs, ro);
		}
		json_t *ff = json_object();
		json_object_set_new(ff, "arrived", stat_json(stat_of(a, n_seeds)));
		json_object_set_new(ff, "alloc", stat_json(stat_of(b, n_seeds)));
		json_object_set_new(o, "first_failure", ff);
		json_object_set_new(o, "runs", runs);
		json_object_set_new(o, "elapsed_ms", jreal_round(pr[p].elapsed_ms, 1));
		json_array_append_new(pols, o);
	}
	json_object_set_new(j, "policies", pols);
	return j;
}

static int parse_policies(const char *s, bool on[N_POLICIES])
{
	memset(on, 0, N_POLICIES * sizeof *on);
	if (strcmp(s, "all") == 0) {
		for (int p = 0; p < N_POLICIES; p++)
			on[p] = true;
		return 0;
	}
	char *copy = xstrdup(s), *save = NULL;
	int rc = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		sched_policy p;
		if (sched_policy_parse(tok, &p)) {
			rc = usage_error("sim", "unknown policy '%.40s' (exclusive, first-fit, best-fit, fgd, gpuwise, all)", tok);
			break;
		}
		on[p] = true;
	}
	if (!rc && !memchr(on, true, N_POLICIES))
		rc = usage_error("sim", "--policy names no policy");
	free(copy);
	return rc;
}

/* "4G,8G,16G": ascending, at most 16; 0 or -1. */
static int parse_sizes(const char *v, uint64_t *out, size_t *n)
{
	char buf[512];
	if (strlen(v) >= sizeof buf)
		return -1;
	strcpy(buf, v);
	*n = 0;
	char *sp = NULL;
	for (char *t = strtok_r(buf, ",", &sp); t; t = strtok_r(NULL, ",", &sp)) {
		uint64_t u;
		if (*n == 16 || parse_size(str_trim(t), &u) || u == 0 || (*n && u <= out[*n - 1]))
			return -1;
		out[(*n)++] = u;
	}
	return *n ? 0 : -1;
}

/* --vram-sizes: the default list, and lists per GPU model ("V100M32=8G,16G,32G"). */
typedef struct sim_sizes {
	uint64_t sizes[16];
	size_t n;
	struct {
		char model[24];
		uint64_t sizes[16];
		size_t n;
	} model[8];
	size_t n_models;
} sim_sizes;

/* The sizes of a node of model (its MODEL=LIST, else the default); sets *n. */
static const uint64_t *sizes_of(const sim_sizes *z, const char *model, size_t *n)
{
	for (size_t i = 0; i < z->n_models; i++)
		if (strcasestr(model, z->model[i].model)) {
			*n = z->model[i].n;
			return z->model[i].sizes;
		}
	*n = z->n;
	return z->n ? z->sizes : NULL;
}

/*
 * Run every policy again with each GPU's shared requests rounded up to the
 * standard sizes (a request over every size takes the whole GPU) and set
 * the allocation ratio (what the pods asked for, not the slots they hold)
 * and the fragmentation at 100% arrived demand against the free-form runs.
 */
static void compare_sizes(sim_cluster *cl, const trace_node *nodes, size_t n_nodes, const pol_runs *free_runs,
			  const bool *on, const sim_sizes *z, uint64_t seed, int n_seeds, double stop, json_t *j)
{
	int mark = 3; /* 100% */
	/* the cluster's GPUs are the nodes' with GPUs, in node-list order */
	size_t gi = 0;
	for (size_t i = 0; i < n_nodes; i++)
		for (int k = 0; k < nodes[i].n_gpus && gi < cl->n_gpus; k++, gi++)
			cl->gpus[gi].slot_bytes = sizes_of(z, nodes[i].model, &cl->gpus[gi].n_slots);
	char list[512] = "";
	size_t l = 0;
	for (size_t m = 0; m <= z->n_models; m++) {
		const uint64_t *sz = m < z->n_models ? z->model[m].sizes : z->sizes;
		size_t n = m < z->n_models ? z->model[m].n : z->n;
		if (m == z->n_models && !n)
			break;
		if (l && l < sizeof list)
			l += (size_t)snprintf(list + l, sizeof list - l, "; ");
		if (m < z->n_models && l < sizeof list)
			l += (size_t)snprintf(list + l, sizeof list - l, "%s: ", z->model[m].model);
		else if (z->n_models && l < sizeof list)
			l += (size_t)snprintf(list + l, sizeof list - l, "%s", j ? "others: " : _("others: "));
		for (size_t i = 0; i < n && l < sizeof list; i++) {
			char b[32];
			l += (size_t)snprintf(list + l, sizeof list - l, "%s%s", i ? "," : "", fmt_bytes(b, sizeof b, sz[i]));
		}
	}
	json_t *arr = j ? json_array() : NULL;
	table *t = NULL;
	if (!j) {
		const char *hdr[5] = {_("policy"), _("allocation free-form"), _("allocation sized"),
				      _("fragmentation free-form"), _("fragmentation sized")};
		t = table_new(5, hdr);
	}
	for (int p = 0; p < N_POLICIES; p++) {
		if (!on[p] || !free_runs[p].on)
			continue;
		double fa[64], fs[64], sa[64], ss[64];
		int n = n_seeds < 64 ? n_seeds : 64;
		for (int k = 0; k < n; k++) {
			sim_result r;
			sim_inflate(cl, (sched_policy)p, seed + (uint64_t)k, stop, &r);
			sa[k] = r.alloc_pct[mark];
			ss[k] = r.frag_pct[mark];
			fa[k] = free_runs[p].runs[k].alloc_pct[mark];
			fs[k] = free_runs[p].runs[k].frag_pct[mark];
		}
		stat a0 = stat_of(fa, n), a1 = stat_of(sa, n), f0 = stat_of(fs, n), f1 = stat_of(ss, n);
		if (j) {
			json_t *o = json_object();
			json_object_set_new(o, "policy", json_string(sched_policy_name(p)));
			json_object_set_new(o, "alloc_free_form_pct", jreal_round(a0.mean, 3));
			json_object_set_new(o, "alloc_sized_pct", jreal_round(a1.mean, 3));
			json_object_set_new(o, "frag_free_form_pct", jreal_round(f0.mean, 3));
			json_object_set_new(o, "frag_sized_pct", jreal_round(f1.mean, 3));
			json_array_append_new(arr, o);
		} else {
			char c1[32], c2[32], c3[32], c4[32];
			snprintf(c1, sizeof c1, "%.2f%%", a0.mean);
			snprintf(c2, sizeof c2, "%.2f%%", a1.mean);
			snprintf(c3, sizeof c3, "%.2f%%", f0.mean);
			snprintf(c4, sizeof c4, "%.2f%%", f1.mean);
			table_add(t, sched_policy_name(p), c1, c2, c3, c4);
		}
	}
	for (size_t i = 0; i < cl->n_gpus; i++) {
		cl->gpus[i].slot_bytes = NULL;
		cl->gpus[i].n_slots = 0;
	}
	if (j) {
		json_t *o = json_object();
		json_object_set_new(o, "sizes", json_string(list));
		json_object_set_new(o, "at_arrived_pct", json_integer(100));
		json_object_set_new(o, "policies", arr);
		json_object_set_new(j, "vram_sizes", o);
		return;
	}
	printf(_("\nStandard sizes %s against free-form requests, at 100%% arrived demand (mean of %d seeds):\n"
		 "allocation counts what the pods asked for, not the slots they hold; fragmentation\n"
		 "is F(M) (free GPU the next request could not use), with sizes measured by slots\n"),
	       list, n_seeds);
	table_print(t, stdout);
	table_free(t);
}

int cmd_sim(int argc, char **argv)
{
	static const struct option opts[] = {
		{"pods", required_argument, NULL, 'p'},   {"nodes", required_argument, NULL, 'n'},
		{"policy", required_argument, NULL, 'P'}, {"seed", required_argument, NULL, 's'},
		{"seeds", required_argument, NULL, 'S'},  {"stop", required_argument, NULL, 't'},
		{"replay", required_argument, NULL, 'r'}, {"json", no_argument, NULL, 'j'},
		{"plot", required_argument, NULL, 'o'},   {"help", no_argument, NULL, 'h'},
		{"gpu-only", no_argument, NULL, 'G'},     {"vram-sizes", required_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	const char *pods_path = NULL, *nodes_path = NULL, *plot = NULL;
	bool on[N_POLICIES], json = false, replay = false, gpu_only = false;
	long long seed = 1, n_seeds = 5, stop = 130;
	sim_sizes z = {0};
	int c, rc;
	parse_policies("all", on);
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p': pods_path = optarg; break;
		case 'n': nodes_path = optarg; break;
		case 'P': if ((rc = parse_policies(optarg, on))) return rc; break;
		case 's':
			if (parse_int(optarg, 0, (1LL << 53), &seed))
				return usage_error("sim", "invalid --seed '%.40s' (an integer from 0 to 2^53)", optarg);
			break;
		case 'S':
			if (parse_int(optarg, 1, SIM_MAX_SEEDS, &n_seeds))
				return usage_error("sim", "invalid --seeds '%.40s' (an integer from 1 to %d)", optarg, SIM_MAX_SEEDS);
			break;
		case 't':
			if (parse_int(optarg, 1, SIM_CURVE_MAX, &stop))
				return usage_error("sim", "invalid --stop '%.40s' (a percentage from 1 to %d)", optarg, SIM_CURVE_MAX);
			break;
		case 'r':
			if (strcmp(optarg, "times") != 0)
				return usage_error("sim", "invalid --replay '%.40s' (the one mode is 'times')", optarg);
			replay = true;
			break;
		case 'j': json = true; break;
		case 'G': gpu_only = true; break;
		case 'V': {
			const char *eq = strchr(optarg, '=');
			if (!eq) {
				if (parse_sizes(optarg, z.sizes, &z.n))
					return usage_error("sim", "--vram-sizes '%.60s' is not ascending sizes such as 4G,8G,16G", optarg);
				break;
			}
			size_t ml = (size_t)(eq - optarg);
			if (!ml || ml >= sizeof z.model[0].model || z.n_models == sizeof z.model / sizeof z.model[0])
				return usage_error("sim", "--vram-sizes '%.60s': MODEL=LIST takes a model of 1 to %zu characters, at most %zu models",
						   optarg, sizeof z.model[0].model - 1, sizeof z.model / sizeof z.model[0]);
			if (parse_sizes(eq + 1, z.model[z.n_models].sizes, &z.model[z.n_models].n))
				return usage_error("sim", "--vram-sizes '%.60s' is not ascending sizes such as 4G,8G,16G", optarg);
			snprintf(z.model[z.n_models].model, sizeof z.model[0].model, "%.*s", (int)ml, optarg);
			z.n_models++;
			break;
		}
		case 'o': plot = optarg; break;
		case 'h': usage(stdout); return GW_EXIT_OK;
		case ':': return usage_error("sim", "option '%s' needs a value", argv[optind - 1]);
		default: return usage_error("sim", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("sim", "unexpected argument '%s'", argv[optind]);
	if (!pods_path || !nodes_path)
		return usage_error("sim", "give --pods FILE and --nodes FILE");
	if (plot && replay)
		return usage_error("sim", "--plot draws the inflation runs; it does not go with --replay");
	bool sized = z.n || z.n_models;
	if (sized && replay)
		return usage_error("sim", "--vram-sizes compares inflation runs; it does not go with --replay");

	trace_pod *pods = NULL;
	trace_node *nodes = NULL;
	size_t n_pods = 0, n_nodes = 0;
	gw_error err = {0};
	sim_cluster cl = {0};
	pol_runs pr[N_POLICIES] = {0};
	rc = GW_EXIT_RUNTIME;
	if (trace_read_pods(pods_path, &pods, &n_pods, &err) || trace_read_nodes(nodes_path, &nodes, &n_nodes, &err)) {
		gw_errorf("%s", gw_error_text(&err));
		goto out;
	}
	sim_cluster_init(&cl, pods, n_pods, nodes, n_nodes, !gpu_only);
	if (cl.n_gpus == 0) {
		gw_errorf(_("'%s': no node has a GPU"), nodes_path);
		goto out;
	}
	if (cl.n_gpu_pods == 0) {
		gw_errorf(_("'%s': no pod asks for a GPU"), pods_path);
		goto out;
	}
	json_t *j = json ? json_object() : NULL;
	if (j) {
		json_t *tr = json_object();
		json_object_set_new(tr, "pods", json_integer((json_int_t)n_pods));
		json_object_set_new(tr, "gpu_pods", json_integer((json_int_t)cl.n_gpu_pods));
		json_object_set_new(tr, "requested_gpus", jreal_round(cl.demand_gpus, 3));
		json_object_set_new(tr, "nodes", json_integer((json_int_t)cl.n_nodes));
		json_object_set_new(tr, "gpus", json_integer((json_int_t)cl.n_gpus));
		json_object_set_new(tr, "nodes_memory_assumed", json_integer((json_int_t)cl.n_nodes_assumed));
		json_object_set_new(tr, "request_types", json_integer((json_int_t)cl.n_types));
		json_object_set_new(tr, "cpu_modelled", json_boolean(!gpu_only));
		json_object_set_new(j, "trace", tr);
		json_object_set_new(j, "mode", json_string(replay ? "replay" : "inflation"));
	} else {
		printf(_("Trace: %zu pods (%zu ask for GPUs, %.1f GPUs in all, %zu request shapes); %zu nodes with %zu GPUs\n"
			 "Pods ask for %s\n"),
		       n_pods, cl.n_gpu_pods, cl.demand_gpus, cl.n_types, cl.n_nodes, cl.n_gpus,
		       gpu_only ? _("GPU memory only (--gpu-only)")
				: _("GPU memory and their node's CPU (cpu_milli), as in the FGD paper"));
		if (cl.n_nodes_assumed)
			printf(_("(%zu nodes are of an undisclosed GPU model: 16 GiB assumed; requests are shares of a GPU)\n"),
			       cl.n_nodes_assumed);
		printf("\n");
	}
	if (replay) {
		json_t *arr = j ? json_array() : NULL;
		table *t = NULL;
		if (!j) {
			const char *hdr[7] = {_("policy"), _("pods"), _("placed"), _("failed"), _("peak GPUs asked"),
					      _("peak allocation"), _("mean allocation")};
			t = table_new(7, hdr);
		}
		double peak = 0, span = 0;
		for (int p = 0; p < N_POLICIES; p++) {
			if (!on[p])
				continue;
			sim_replay_result r;
			sim_replay(&cl, (sched_policy)p, &r);
			peak = r.peak_requested_gpus;
			span = r.span_s;
			if (j) {
				json_t *o = json_object();
				json_object_set_new(o, "policy", json_string(sched_policy_name(p)));
				json_object_set_new(o, "pods", json_integer((json_int_t)r.n_pods));
				json_object_set_new(o, "pods_placed", json_integer((json_int_t)r.n_placed));
				json_object_set_new(o, "pods_failed", json_integer((json_int_t)r.n_failed));
				json_object_set_new(o, "peak_requested_gpus", jreal_round(r.peak_requested_gpus, 3));
				json_object_set_new(o, "peak_alloc_pct", jreal_round(r.peak_alloc_pct, 3));
				json_object_set_new(o, "mean_alloc_pct", jreal_round(r.mean_alloc_pct, 4));
				json_object_set_new(o, "span_s", jreal_round(r.span_s, 0));
				json_array_append_new(arr, o);
			} else {
				char a[32], b[32], cc[32], d[32], e[32], f[32];
				snprintf(a, sizeof a, "%zu", r.n_pods);
				snprintf(b, sizeof b, "%zu", r.n_placed);
				snprintf(cc, sizeof cc, "%zu", r.n_failed);
				snprintf(d, sizeof d, "%.2f", r.peak_requested_gpus);
				snprintf(e, sizeof e, "%.2f%%", r.peak_alloc_pct);
				snprintf(f, sizeof f, "%.3f%%", r.mean_alloc_pct);
				table_add(t, sched_policy_name(p), a, b, cc, d, e, f);
			}
		}
		if (j) {
			json_object_set_new(j, "replay", arr);
		} else {
			printf(_("Replay at the trace's own times (%.1f days):\n"), span / 86400);
			table_print(t, stdout);
			table_free(t);
			printf(_("\nAt most %.2f of the %zu GPUs (%.2f%%) are asked for at once: the trace's own times\n"
				 "never stress the cluster; the default mode inflates the workload instead.\n"),
			       peak, cl.n_gpus, 100 * peak / (double)cl.n_gpus);
		}
	} else {
		for (int p = 0; p < N_POLICIES; p++) {
			if (!on[p])
				continue;
			pr[p].on = true;
			pr[p].runs = xcalloc((size_t)n_seeds, sizeof *pr[p].runs);
			uint64_t t0 = now_ms();
			for (int s = 0; s < n_seeds; s++)
				sim_inflate(&cl, (sched_policy)p, (uint64_t)seed + (uint64_t)s, (double)stop, &pr[p].runs[s]);
			pr[p].elapsed_ms = (double)(now_ms() - t0);
		}
		if (j)
			json_object_set_new(j, "inflation", inflation_json(pr, (uint64_t)seed, (int)n_seeds, (double)stop));
		else
			print_inflation(&cl, pr, (uint64_t)seed, (int)n_seeds, (double)stop);
		if (sized)
			compare_sizes(&cl, nodes, n_nodes, pr, on, &z, (uint64_t)seed, (int)n_seeds, (double)stop, j);
	}
	rc = GW_EXIT_OK;
	if (plot)
		rc = write_plot(plot, pr, (int)n_seeds, (double)stop, cl.n_gpus);
	if (j) {
		if (rc == GW_EXIT_OK)
			json_print(j, stdout);
		json_decref(j);
	}
out:
	for (int p = 0; p < N_POLICIES; p++)
		free(pr[p].runs);
	sim_cluster_release(&cl);
	free(pods);
	free(nodes);
	return rc;
}
