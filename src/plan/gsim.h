/*
 * gsim.h (internal to plan/): a compute graph as ggml records it and the
 * memory ggml's graph allocator reserves for it.
 *
 * A builder creates tensors with the shapes ggml's operators give them
 * (gs_mul_mat, gs_rope, views ...) and expands the graph in the order the
 * engine calls ggml_build_forward_expand; gs_alloc_peak then replays the
 * allocator over the node list (inputs first, in-place reuse of a parent
 * that has no other consumer, every intermediate freed after its last
 * use, best fit among the free blocks) and returns the buffer size it
 * reaches.  Only shapes and order are simulated; nothing is computed.
 *
 * Written from the behaviour of ggml/src/ggml-alloc.c (ggml_gallocr,
 * ggml_dyn_tallocr) and ggml.c (ggml_visit_parents) as described in the
 * design notes of docs/plan-model.md; checked against the buffers
 * llama.cpp prints by tests/e2e/oracle.t.
 */
#ifndef GW_PLAN_GSIM_H
#define GW_PLAN_GSIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum gs_type {
	GS_F32, GS_F16, GS_BF16, GS_I32, GS_I64,
	GS_Q8_0, GS_Q5_1, GS_Q5_0, GS_Q4_1, GS_Q4_0, GS_IQ4_NL,
} gs_type;

/* Operators: only whether one may reuse its parent's memory (ggml's
 * ggml_op_can_inplace) and whether it is a view matter to the allocator. */
typedef enum gs_op {
	GS_NONE, GS_VIEW,
	/* may run in place */
	GS_ADD, GS_ADD_ID, GS_SUB, GS_MUL, GS_DIV, GS_SCALE, GS_SQR, GS_SQRT, GS_UNARY, GS_ROPE,
	GS_RMS_NORM, GS_CLAMP, GS_SOFT_MAX, GS_FILL,
	/* always a new tensor */
	GS_OTHER, GS_GET_ROWS, GS_SET_ROWS, GS_MUL_MAT, GS_MUL_MAT_ID, GS_NORM, GS_GLU, GS_CONT, GS_CPY,
	GS_FLASH_ATTN, GS_ARGSORT, GS_SUM_ROWS, GS_CONCAT, GS_SSM_CONV, GS_SSM_SCAN, GS_GROUP_NORM,
} gs_op;

typedef int32_t gs_t; /* a tensor of the graph; -1 none */

#define GS_MAX_SRC 10 /* GGML_MAX_SRC */

typedef struct gsim gsim;

gsim *gs_new(void);
void gs_free(gsim *g);
/* Forget every tensor (keeps the memory for the next graph). */
void gs_reset(gsim *g);
/* Room for n tensors and nodes before the first is recorded (a graph of
 * a known size then never moves in memory as it grows); its tensor count. */
void gs_reserve(gsim *g, size_t n);
size_t gs_size(const gsim *g);

/* Leaves: graph inputs the allocator places (ggml_set_input), and tensors
 * that live in other buffers (weights, the KV cache): never placed. */
gs_t gs_input(gsim *g, gs_type t, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
gs_t gs_external(gsim *g, gs_type t, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
/* ggml_set_output: never freed, never reused. */
void gs_set_output(gsim *g, gs_t a);

/* A new tensor of the given shape computed from up to four sources. */
gs_t gs_op4(gsim *g, gs_op op, gs_type t, const int64_t ne[4], gs_t s0, gs_t s1, gs_t s2, gs_t s3);

/* One more source for a (operators with more than four: SSM_SCAN). */
void gs_add_src(gsim *g, gs_t a, gs_t src);

/* ggml's operators, with ggml's result shapes. */
gs_t gs_unop(gsim *g, gs_op op, gs_t a);           /* same shape, f32-like: SCALE, UNARY, CLAMP, RMS_NORM, NORM, SQR, SQRT, CONT */
gs_t gs_binop(gsim *g, gs_op op, gs_t a, gs_t b);  /* shape of a: ADD, SUB, MUL, DIV, ROPE (b = positions), SOFT_MAX (b = mask or -1), GLU, ADD_ID */
gs_t gs_mul_mat(gsim *g, gs_t a, gs_t b);          /* [a1, b1, b2, b3] f32 */
gs_t gs_mul_mat_id(gsim *g, gs_t as, gs_t b, gs_t ids); /* [as1, ids0, b2] f32 */
gs_t gs_get_rows(gsim *g, gs_t a, gs_t rows);      /* [a0, rows0, rows1, rows2] f32 (a's type if f16/f32... ggml: f32) */
gs_t gs_set_rows(gsim *g, gs_t dst, gs_t src, gs_t rows); /* a view of dst */
gs_t gs_flash_attn(gsim *g, gs_t q, gs_t k, gs_t v, gs_t mask); /* [v0, q2, q1, q3] f32 */
gs_t gs_concat(gsim *g, gs_t a, gs_t b, int dim);
gs_t gs_sum_rows(gsim *g, gs_t a);
gs_t gs_argsort(gsim *g, gs_t a);                  /* i32, shape of a */

/* Views: no memory of their own. */
gs_t gs_reshape(gsim *g, gs_t a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
gs_t gs_view(gsim *g, gs_t a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, size_t nb1, size_t nb2, size_t nb3,
	     size_t offs);
gs_t gs_permute(gsim *g, gs_t a, int p0, int p1, int p2, int p3);
gs_t gs_transpose(gsim *g, gs_t a);

/* ggml's *_inplace operators and ggml_cpy into an existing tensor: the
 * result is a view of a (of dst for the copy), no memory of its own. */
gs_t gs_inplace(gsim *g, gs_op op, gs_t a);
gs_t gs_cpy_into(gsim *g, gs_t a, gs_t dst);

/* ggml_build_forward_expand */
void gs_expand(gsim *g, gs_t a);

/* Shape queries for builders. */
int64_t gs_ne(const gsim *g, gs_t a, int dim);
size_t gs_nb(const gsim *g, gs_t a, int dim);
size_t gs_row_size(gs_type t, int64_t ne0);

/* Devices for a graph split over several (ggml_backend_sched): the
 * externals made after gs_set_device(g, d) live on device d (0 until
 * set); gs_mark_cache marks one that is not a weight (a KV cache, a
 * recurrent state: never a reason to run an op there). */
void gs_set_device(gsim *g, int dev);
void gs_mark_cache(gsim *g, gs_t a);
/* ggml_backend_sched_set_tensor_backend: a runs on dev whatever its sources. */
void gs_pin(gsim *g, gs_t a, int dev);

typedef struct gs_sched_opts {
	int n_dev;                /* devices, the last the CPU (at most 127) */
	int n_copies;             /* pipeline parallelism: copies of every input (4), else 1 */
	bool offload_cpu_weights; /* device 0 runs large-batch ops of weights in host memory (CUDA) */
	size_t alignment;         /* of every buffer; 0: 32 */
	double weight_scale;      /* a copied weight's bytes over its shape's (quantized files); 0: 1 */
} gs_sched_opts;

/* Split the expanded graph over the devices as ggml_backend_sched does
 * and replay the allocator on the split graph, each device in its own
 * buffer: peak[d] is device d's compute buffer.  The graph's sources are
 * rewired to the copies; build it again before another use. */
void gs_sched_peaks(gsim *g, const gs_sched_opts *o, uint64_t *peak);

/* The compute buffer ggml's allocator reserves for the expanded graph
 * (tensor sizes rounded up to `alignment`); 0 for an empty graph. */
uint64_t gs_alloc_peak(gsim *g, size_t alignment);

#endif
