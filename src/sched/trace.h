/*
 * sched/trace: the Alibaba GPU-sharing cluster trace (openb, Weng et al.,
 * USENIX ATC 2023; alibaba/clusterdata cluster-trace-gpu-v2023) read into
 * plain structs for the simulator.  Never prints.
 */
#ifndef GW_SCHED_TRACE_H
#define GW_SCHED_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

typedef struct trace_pod {
	int n_gpus;            /* num_gpu: 0 (CPU only) .. 64 */
	uint64_t cpu_milli;    /* cpu_milli: thousandths of a core */
	uint32_t gpu_milli;    /* share of each GPU, 1..1000 (0 when n_gpus is 0) */
	double create_s;       /* creation_time, seconds from the trace's start */
	double delete_s;       /* deletion_time; < 0 when empty */
	double sched_s;        /* scheduled_time; < 0 when empty (never scheduled) */
} trace_pod;

typedef struct trace_node {
	int n_gpus;            /* gpu */
	uint64_t cpu_milli;    /* cpu_milli */
	uint64_t gpu_mem_bytes;/* memory of one GPU of its model */
	bool mem_assumed;      /* the model's memory is not public: assumed */
	char model[24];
} trace_node;

/*
 * Read a pod list (columns cpu_milli, num_gpu, gpu_milli, creation_time,
 * deletion_time, scheduled_time, found by name in the header) or a node
 * list (cpu_milli, gpu, model).  On error fills err with "FILE:LINE: what" and
 * returns a negative GW_E* code.  The caller frees *out.
 */
int trace_read_pods(const char *path, trace_pod **out, size_t *n, gw_error *err);
int trace_read_nodes(const char *path, trace_node **out, size_t *n, gw_error *err);

/* Memory of one GPU of an openb model name; 0 for a name not known. */
uint64_t trace_model_mem_bytes(const char *model, bool *assumed);

#endif
