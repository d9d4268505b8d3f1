/*
 * sched/trace: read the openb CSV files (plain comma-separated values with
 * a header, no quoting).  Every row error names its file and line.
 */
#include "sched/trace.h"

#include <stdlib.h>
#include <string.h>

#define GIB (1024ULL * 1024 * 1024)
#define TRACE_MAX_BYTES (256u << 20)
#define TRACE_MAX_COLS 64

/*
 * The node list names a GPU model but not its memory.  Public spec sheets:
 * NVIDIA Tesla T4 16 GB GDDR6; Tesla P100 16 GB HBM2 (the 12 GB PCIe
 * variant aside); V100 16 and 32 GB HBM2 (M16/M32 in the trace); A10 24 GB
 * GDDR6 (nvidia.com data sheets).  G1, G2 and G3 are undisclosed models
 * (cluster-trace-gpu-v2023 README): 16 GiB is assumed for them.  Requests
 * are shares of a GPU, so the assumption changes bytes, not placements.
 */
static const struct {
	const char *model;
	uint64_t bytes;
	bool assumed;
} model_mem[] = {
	{"T4", 16 * GIB, false},     {"P100", 16 * GIB, false}, {"V100M16", 16 * GIB, false},
	{"V100M32", 32 * GIB, false}, {"A10", 24 * GIB, false},  {"G1", 16 * GIB, true},
	{"G2", 16 * GIB, true},      {"G3", 16 * GIB, true},
};

uint64_t trace_model_mem_bytes(const char *model, bool *assumed)
{
	for (size_t i = 0; i < sizeof model_mem / sizeof model_mem[0]; i++)
		if (strcmp(model, model_mem[i].model) == 0) {
			if (assumed)
				*assumed = model_mem[i].assumed;
			return model_mem[i].bytes;
		}
	return 0;
}

typedef struct {
	const char *path;
	char *buf;
	char *pos;
	size_t line;
	char *hdr[TRACE_MAX_COLS];
	size_t n_hdr;
	char *f[TRACE_MAX_COLS];
	size_t n_f;
} csv;

/* Next line of c into fields; 1 on a line, 0 at the end. */
static int csv_next(csv *c, gw_error *err)
{
	while (*c->pos) {
		char *line = c->pos;
		char *nl = strchr(line, '\n');
		c->pos = nl ? nl + 1 : line + strlen(line);
		if (nl)
			*nl = '\0';
		c->line++;
		size_t len = strlen(line);
		if (len && line[len - 1] == '\r')
			line[--len] = '\0';
		if (len == 0)
			continue;
		if (strchr(line, '"'))
			return gw_fail(err, GW_EFORMAT, "%s:%zu: quoted fields are not supported", c->path, c->line);
		c->n_f = 0;
		for (char *p = line;;) {
			if (c->n_f == TRACE_MAX_COLS)
				return gw_fail(err, GW_EFORMAT, "%s:%zu: more than %d fields", c->path, c->line,
					       TRACE_MAX_COLS);
			c->f[c->n_f++] = p;
			char *comma = strchr(p, ',');
			if (!comma)
				break;
			*comma = '\0';
			p = comma + 1;
		}
		return 1;
	}
	return 0;
}

static int csv_open(csv *c, const char *path, gw_error *err)
{
	memset(c, 0, sizeof *c);
	c->path = path;
	size_t len = 0;
	int rc = gw_read_file(path, false, TRACE_MAX_BYTES, &c->buf, &len, err);
	if (rc)
		return rc;
	if (memchr(c->buf, '\0', len))
		return gw_fail(err, GW_EFORMAT, "%s: binary data, not a CSV file", path);
	c->pos = c->buf;
	rc = csv_next(c, err);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return gw_fail(err, GW_EFORMAT, "%s: empty file, no header line", path);
	c->n_hdr = c->n_f;
	memcpy(c->hdr, c->f, sizeof c->f);
	return 0;
}

static int csv_col(csv *c, const char *name, int *col, gw_error *err)
{
	for (size_t i = 0; i < c->n_hdr; i++)
		if (strcmp(str_trim(c->hdr[i]), name) == 0) {
			*col = (int)i;
			return 0;
		}
	return gw_fail(err, GW_EFORMAT, "%s:1: missing column '%s'", c->path, name);
}

static int field_int(csv *c, int col, const char *name, long long min, long long max, long long *v, gw_error *err)
{
	if (parse_int(c->f[col], min, max, v))
		return gw_fail(err, GW_EFORMAT, "%s:%zu: %s '%.40s' is not an integer from %lld to %lld", c->path, c->line,
			       name, c->f[col], min, max);
	return 0;
}

/* A time in seconds, or -1 for an empty field when allow_empty. */
static int field_time(csv *c, int col, const char *name, bool allow_empty, double *v, gw_error *err)
{
	if (c->f[col][0] == '\0' && allow_empty) {
		*v = -1;
		return 0;
	}
	long long t;
	if (parse_int(c->f[col], 0, 1000000000000LL, &t))
		return gw_fail(err, GW_EFORMAT, "%s:%zu: %s '%.40s' is not a time in seconds", c->path, c->line, name,
			       c->f[col]);
	*v = (double)t;
	return 0;
}

static int check_width(csv *c, gw_error *err)
{
	if (c->n_f != c->n_hdr)
		return gw_fail(err, GW_EFORMAT, "%s:%zu: %zu fields, the header has %zu", c->path, c->line, c->n_f,
			       c->n_hdr);
	return 0;
}

int trace_read_pods(const char *path, trace_pod **out, size_t *n, gw_error *err)
{
	csv c;
	trace_pod *pods = NULL;
	size_t np = 0, cap = 0;
	int cc, ng, gm, ct, dt, st;
	int rc = csv_open(&c, path, err);
	if (rc)
		goto out;
	if ((rc = csv_col(&c, "cpu_milli", &cc, err)) || (rc = csv_col(&c, "num_gpu", &ng, err)) || (rc = csv_col(&c, "gpu_milli", &gm, err)) ||
	    (rc = csv_col(&c, "creation_time", &ct, err)) || (rc = csv_col(&c, "deletion_time", &dt, err)) ||
	    (rc = csv_col(&c, "scheduled_time", &st, err)))
		goto out;
	while ((rc = csv_next(&c, err)) == 1) {
		if ((rc = check_width(&c, err)))
			goto out;
		long long g, m, cpu;
		trace_pod p = {0};
		if ((rc = field_int(&c, cc, "cpu_milli", 0, 100000000, &cpu, err)) || (rc = field_int(&c, ng, "num_gpu", 0, 64, &g, err)) ||
		    (rc = field_int(&c, gm, "gpu_milli", 0, 1000, &m, err)) ||
		    (rc = field_time(&c, ct, "creation_time", false, &p.create_s, err)) ||
		    (rc = field_time(&c, dt, "deletion_time", true, &p.delete_s, err)) ||
		    (rc = field_time(&c, st, "scheduled_time", true, &p.sched_s, err)))
			goto out;
		if (g > 0 && m == 0) {
			rc = gw_fail(err, GW_EFORMAT, "%s:%zu: num_gpu %lld with gpu_milli 0", path, c.line, g);
			goto out;
		}
		p.n_gpus = (int)g;
		p.cpu_milli = (uint64_t)cpu;
		p.gpu_milli = g > 0 ? (uint32_t)m : 0;
		pods = xgrow(pods, &cap, np + 1, sizeof *pods);
		pods[np++] = p;
	}
	if (rc < 0)
		goto out;
	rc = 0;
	if (np == 0)
		rc = gw_fail(err, GW_EFORMAT, "%s: no pods after the header", path);
out:
	free(c.buf);
	if (rc) {
		free(pods);
		pods = NULL;
		np = 0;
	}
	*out = pods;
	*n = np;
	return rc;
}

int trace_read_nodes(const char *path, trace_node **out, size_t *n, gw_error *err)
{
	csv c;
	trace_node *nodes = NULL;
	size_t nn = 0, cap = 0;
	int cc, gc, mc;
	int rc = csv_open(&c, path, err);
	if (rc)
		goto out;
	if ((rc = csv_col(&c, "cpu_milli", &cc, err)) || (rc = csv_col(&c, "gpu", &gc, err)) || (rc = csv_col(&c, "model", &mc, err)))
		goto out;
	while ((rc = csv_next(&c, err)) == 1) {
		if ((rc = check_width(&c, err)))
			goto out;
		long long g, cpu;
		trace_node nd = {0};
		if ((rc = field_int(&c, gc, "gpu", 0, 64, &g, err)) ||
		    (rc = field_int(&c, cc, "cpu_milli", 0, 100000000, &cpu, err)))
			goto out;
		const char *model = c.f[mc];
		if (g > 0) {
			nd.gpu_mem_bytes = trace_model_mem_bytes(model, &nd.mem_assumed);
			if (!nd.gpu_mem_bytes) {
				rc = gw_fail(err, GW_EFORMAT, "%s:%zu: unknown GPU model '%.40s'", path, c.line, model);
				goto out;
			}
		}
		nd.n_gpus = (int)g;
		nd.cpu_milli = (uint64_t)cpu;
		snprintf(nd.model, sizeof nd.model, "%s", model);
		nodes = xgrow(nodes, &cap, nn + 1, sizeof *nodes);
		nodes[nn++] = nd;
	}
	if (rc < 0)
		goto out;
	rc = 0;
	if (nn == 0)
		rc = gw_fail(err, GW_EFORMAT, "%s: no nodes after the header", path);
out:
	free(c.buf);
	if (rc) {
		free(nodes);
		nodes = NULL;
		nn = 0;
	}
	*out = nodes;
	*n = nn;
	return rc;
}
