/*
 * lgraph.h (internal to plan/): llama.cpp's compute graph for a model and
 * the compute buffer its allocator reserves (lgraph.c on gsim.c).
 */
#ifndef GW_PLAN_LGRAPH_H
#define GW_PLAN_LGRAPH_H

#include "plan/plan.h"

typedef struct gsim gsim;

typedef struct lgraph_params {
	uint64_t cells;     /* KV cells of one stream (padded) */
	uint32_t n_ubatch;  /* physical batch (llama.cpp -ub), 0: 512 */
	uint32_t n_seq;     /* parallel sequences */
	uint32_t n_stream;  /* KV streams: 0 or 1 one unified cache, n_seq one per sequence */
	uint64_t swa_cells; /* cells of one stream of the sliding-window cache; 0: llama.cpp's rule */
	bool flash_attn;
	plan_kv_type kv_k, kv_v;
	size_t alignment;   /* buffer alignment: 32 CPU, 128 CUDA; 0: 32 */
	/* several devices: the device of each block and of the output layer
	 * (n_layers + 1 entries; 0..n_dev-2 the GPUs, n_dev-1 the CPU, where
	 * the token embedding is); NULL: one device */
	const int8_t *layer_dev;
	int n_dev;
	uint32_t n_cpu_moe; /* experts of the first N blocks on the CPU */
} lgraph_params;

/* Does the graph builder know this architecture? */
bool plan_lgraph_supported(const model_desc *m);
/* Build the graph into g (reset first); 0 when not supported. */
uint64_t plan_lgraph_build(gsim *g, const model_desc *m, const lgraph_params *p);
/* The compute buffer for the whole graph on one device; 0 when the
 * architecture is not supported. */
uint64_t plan_lgraph_compute_bytes(const model_desc *m, const lgraph_params *p);
/* The graph split over p->n_dev devices (p->layer_dev) as llama.cpp's
 * scheduler splits it: each device's compute buffer into peak[0..n_dev),
 * the CPU's last.  n_copies: pipeline parallelism's input copies (4) or 1;
 * op_offload: GPU 0 runs the large-batch ops of weights in host memory,
 * copying each weight in (weight_scale: its bytes over f16's; 0: f16).
 * Returns false when the architecture is not supported. */
bool plan_lgraph_device_bytes(const model_desc *m, const lgraph_params *p, int n_copies, bool op_offload,
			      double weight_scale, uint64_t *peak);

#endif
