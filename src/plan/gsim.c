/*
 * gsim.c: ggml's graph recording and graph allocator, simulated on shapes
 * (see gsim.h).  The allocator rules reproduced:
 *   - graph order: depth-first from each expanded tensor, sources left to
 *     right, a tensor recorded after its sources and once;
 *   - graph inputs are placed before any node, in the order they are
 *     first met; tensors of other buffers (weights, KV cache) and views are
 *     never placed;
 *   - a node whose operator may run in place takes the memory of a source
 *     with the same type and layout that has no other consumer and no view
 *     left (through a view at offset 0 of such a tensor too); graph
 *     outputs are never taken or freed;
 *   - a tensor's memory returns to the free list when its last consumer
 *     (and its last view's last consumer) has been placed;
 *   - placement: the smallest free block that fits among all but the
 *     last; else the last block, which grows the buffer; freed blocks merge
 *     with their neighbours.
 */
#include "plan/gsim.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

enum { F_INPUT = 1, F_OUTPUT = 2, F_EXTERNAL = 4, F_CACHE = 8, F_DEP = 16 };

typedef struct gs_tensor {
	gs_type type;
	gs_op op;
	uint8_t flags;
	bool visited;
	int64_t ne[4];
	size_t nb[4];
	gs_t src[GS_MAX_SRC];
	uint8_t n_src; /* 1 + the last source set (the loops below stop there) */
	gs_t view_src;
	size_t view_offs;
	/* allocator state */
	int n_children, n_views;
	bool allocated;
	uint64_t offset;
	int8_t dev;   /* the device (scheduler backend) it runs on or lives in; -1 not yet */
	uint64_t bytes; /* size when not its shape's (a copy of a weight stored quantized); 0: the shape's */
	int8_t buf;   /* the buffer the allocator placed it in */
} gs_tensor;

struct gs_frame {
	gs_t t;
	int next;
};

struct gsim {
	gs_tensor *t;
	size_t n, cap;
	struct gs_frame *stack; /* gs_expand's, kept between calls */
	size_t cap_stack;
	gs_t *nodes, *leafs;
	size_t n_nodes, n_leafs, cap_nodes, cap_leafs;
	int cur_dev; /* device of the externals made now (gs_set_device) */
};

static const struct {
	uint32_t block, bytes;
} type_size[] = {
	[GS_F32] = {1, 4},   [GS_F16] = {1, 2},   [GS_BF16] = {1, 2},  [GS_I32] = {1, 4},
	[GS_I64] = {1, 8},   [GS_Q8_0] = {32, 34}, [GS_Q5_1] = {32, 24}, [GS_Q5_0] = {32, 22},
	[GS_Q4_1] = {32, 20}, [GS_Q4_0] = {32, 18}, [GS_IQ4_NL] = {32, 18},
};

size_t gs_row_size(gs_type t, int64_t ne0)
{
	return (size_t)ne0 / type_size[t].block * type_size[t].bytes;
}

gsim *gs_new(void)
{
	return xcalloc(1, sizeof(gsim));
}

void gs_free(gsim *g)
{
	if (!g)
		return;
	free(g->t);
	free(g->stack);
	free(g->nodes);
	free(g->leafs);
	free(g);
}

void gs_reset(gsim *g)
{
	g->n = g->n_nodes = g->n_leafs = 0;
	g->cur_dev = 0;
}

void gs_set_device(gsim *g, int dev)
{
	g->cur_dev = dev;
}

void gs_mark_cache(gsim *g, gs_t a)
{
	g->t[a].flags |= F_CACHE;
}

void gs_pin(gsim *g, gs_t a, int dev)
{
	g->t[a].dev = (int8_t)dev;
}

/* n_src after the sources of t were written */
static void count_src(gs_tensor *t)
{
	uint8_t n = GS_MAX_SRC;
	while (n && t->src[n - 1] < 0)
		n--;
	t->n_src = n;
}

void gs_reserve(gsim *g, size_t n)
{
	if (n > g->cap) {
		g->cap = n;
		g->t = xrealloc(g->t, g->cap * sizeof *g->t);
	}
	if (n > g->cap_nodes) {
		g->cap_nodes = n;
		g->nodes = xrealloc(g->nodes, g->cap_nodes * sizeof *g->nodes);
	}
}

size_t gs_size(const gsim *g)
{
	return g->n;
}

static gs_t add(gsim *g, gs_type type, gs_op op, const int64_t ne_in[4])
{
	int64_t ne[4]; /* ne_in may point into g->t, which may move */
	memcpy(ne, ne_in, sizeof ne);
	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 1024;
		g->t = xrealloc(g->t, g->cap * sizeof *g->t);
	}
	gs_tensor *t = &g->t[g->n];
	memset(t, 0, sizeof *t);
	t->type = type;
	t->op = op;
	t->view_src = -1;
	t->dev = -1;
	t->ne[0] = ne[0] > 0 ? ne[0] : 0;
	t->ne[1] = ne[1] > 0 ? ne[1] : 0;
	t->ne[2] = ne[2] > 0 ? ne[2] : 0;
	t->ne[3] = ne[3] > 0 ? ne[3] : 0;
	memset(t->src, 0xff, sizeof t->src); /* -1: none */
	t->nb[0] = type_size[type].bytes;
	t->nb[1] = gs_row_size(type, t->ne[0]);
	t->nb[2] = t->nb[1] * (size_t)t->ne[1];
	t->nb[3] = t->nb[2] * (size_t)t->ne[2];
	return (gs_t)g->n++;
}

static size_t nbytes(const gs_tensor *t)
{
	if (t->bytes)
		return t->bytes;
	/* contiguous tensors only are placed */
	return t->nb[3] * (size_t)t->ne[3];
}

int64_t gs_ne(const gsim *g, gs_t a, int dim)
{
	return g->t[a].ne[dim];
}

size_t gs_nb(const gsim *g, gs_t a, int dim)
{
	return g->t[a].nb[dim];
}

gs_t gs_input(gsim *g, gs_type t, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3)
{
	gs_t r = add(g, t, GS_NONE, (int64_t[4]){ne0, ne1, ne2, ne3});
	g->t[r].flags = F_INPUT;
	return r;
}

gs_t gs_external(gsim *g, gs_type t, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3)
{
	gs_t r = add(g, t, GS_NONE, (int64_t[4]){ne0, ne1, ne2, ne3});
	g->t[r].flags = F_EXTERNAL;
	g->t[r].dev = (int8_t)g->cur_dev;
	return r;
}

void gs_set_output(gsim *g, gs_t a)
{
	g->t[a].flags |= F_OUTPUT;
}

gs_t gs_op4(gsim *g, gs_op op, gs_type type, const int64_t ne[4], gs_t s0, gs_t s1, gs_t s2, gs_t s3)
{
	gs_t r = add(g, type, op, ne);
	g->t[r].src[0] = s0;
	g->t[r].src[1] = s1;
	g->t[r].src[2] = s2;
	g->t[r].src[3] = s3;
	count_src(&g->t[r]);
	return r;
}

gs_t gs_unop(gsim *g, gs_op op, gs_t a)
{
	return gs_op4(g, op, g->t[a].type, g->t[a].ne, a, -1, -1, -1);
}

gs_t gs_binop(gsim *g, gs_op op, gs_t a, gs_t b)
{
	return gs_op4(g, op, g->t[a].type, g->t[a].ne, a, b, -1, -1);
}

gs_t gs_mul_mat(gsim *g, gs_t a, gs_t b)
{
	const gs_tensor *A = &g->t[a], *B = &g->t[b];
	return gs_op4(g, GS_MUL_MAT, GS_F32, (int64_t[4]){A->ne[1], B->ne[1], B->ne[2], B->ne[3]}, a, b, -1, -1);
}

gs_t gs_mul_mat_id(gsim *g, gs_t as, gs_t b, gs_t ids)
{
	const gs_tensor *A = &g->t[as], *B = &g->t[b], *I = &g->t[ids];
	return gs_op4(g, GS_MUL_MAT_ID, GS_F32, (int64_t[4]){A->ne[1], I->ne[0], B->ne[2], 1}, as, b, ids, -1);
}

gs_t gs_get_rows(gsim *g, gs_t a, gs_t rows)
{
	const gs_tensor *A = &g->t[a], *R = &g->t[rows];
	gs_type t = A->type == GS_I32 ? GS_I32 : GS_F32;
	return gs_op4(g, GS_GET_ROWS, t, (int64_t[4]){A->ne[0], R->ne[0], R->ne[1], R->ne[2]}, a, rows, -1, -1);
}

static gs_t view_of(gsim *g, gs_t a, const int64_t ne[4], const size_t nb_in[4], size_t offs)
{
	size_t nb[4]; /* may point into g->t, which add() may move */
	memcpy(nb, nb_in, sizeof nb);
	gs_t r = add(g, g->t[a].type, GS_VIEW, ne);
	gs_tensor *t = &g->t[r], *A = &g->t[a];
	memcpy(t->nb, nb, sizeof t->nb);
	t->src[0] = a;
	t->n_src = 1;
	/* a view of a view points at the tensor that owns the memory */
	t->view_src = A->view_src >= 0 ? A->view_src : a;
	t->view_offs = (A->view_src >= 0 ? A->view_offs : 0) + offs;
	return r;
}

gs_t gs_set_rows(gsim *g, gs_t dst, gs_t src, gs_t rows)
{
	/* ggml_set_rows returns a view of dst (its memory is dst's) */
	gs_t r = view_of(g, dst, g->t[dst].ne, g->t[dst].nb, 0);
	/* ggml's source order: the rows, their indices, the destination */
	g->t[r].op = GS_SET_ROWS;
	g->t[r].src[0] = src;
	g->t[r].src[1] = rows;
	g->t[r].src[2] = dst;
	count_src(&g->t[r]);
	return r;
}

void gs_add_src(gsim *g, gs_t a, gs_t src)
{
	for (int i = 0; i < GS_MAX_SRC; i++) {
		if (g->t[a].src[i] < 0) {
			g->t[a].src[i] = src;
			count_src(&g->t[a]);
			return;
		}
	}
}

gs_t gs_inplace(gsim *g, gs_op op, gs_t a)
{
	gs_t r = view_of(g, a, g->t[a].ne, g->t[a].nb, 0);
	g->t[r].op = op;
	return r;
}

gs_t gs_cpy_into(gsim *g, gs_t a, gs_t dst)
{
	gs_t r = view_of(g, dst, g->t[dst].ne, g->t[dst].nb, 0);
	g->t[r].op = GS_CPY;
	g->t[r].src[0] = a;
	g->t[r].src[1] = dst;
	count_src(&g->t[r]);
	return r;
}

gs_t gs_flash_attn(gsim *g, gs_t q, gs_t k, gs_t v, gs_t mask)
{
	const gs_tensor *Q = &g->t[q], *V = &g->t[v];
	return gs_op4(g, GS_FLASH_ATTN, GS_F32, (int64_t[4]){V->ne[0], Q->ne[2], Q->ne[1], Q->ne[3]}, q, k, v, mask);
}

gs_t gs_concat(gsim *g, gs_t a, gs_t b, int dim)
{
	int64_t ne[4];
	memcpy(ne, g->t[a].ne, sizeof ne);
	ne[dim] += g->t[b].ne[dim];
	return gs_op4(g, GS_CONCAT, g->t[a].type, ne, a, b, -1, -1);
}

gs_t gs_sum_rows(gsim *g, gs_t a)
{
	const gs_tensor *A = &g->t[a];
	return gs_op4(g, GS_SUM_ROWS, A->type, (int64_t[4]){1, A->ne[1], A->ne[2], A->ne[3]}, a, -1, -1, -1);
}

gs_t gs_argsort(gsim *g, gs_t a)
{
	return gs_op4(g, GS_ARGSORT, GS_I32, g->t[a].ne, a, -1, -1, -1);
}

gs_t gs_reshape(gsim *g, gs_t a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3)
{
	int64_t ne[4] = {ne0 > 0 ? ne0 : 0, ne1 > 0 ? ne1 : 0, ne2 > 0 ? ne2 : 0, ne3 > 0 ? ne3 : 0};
	gs_type ty = g->t[a].type;
	size_t nb[4] = {type_size[ty].bytes, gs_row_size(ty, ne[0]), 0, 0};
	nb[2] = nb[1] * (size_t)ne[1];
	nb[3] = nb[2] * (size_t)ne[2];
	return view_of(g, a, ne, nb, 0);
}

gs_t gs_view(gsim *g, gs_t a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, size_t nb1, size_t nb2, size_t nb3,
	     size_t offs)
{
	int64_t ne[4] = {ne0 > 0 ? ne0 : 0, ne1 > 0 ? ne1 : 0, ne2 > 0 ? ne2 : 0, ne3 > 0 ? ne3 : 0};
	size_t nb[4] = {type_size[g->t[a].type].bytes, nb1, nb2, nb3};
	return view_of(g, a, ne, nb, offs);
}

gs_t gs_permute(gsim *g, gs_t a, int p0, int p1, int p2, int p3)
{
	const gs_tensor *A = &g->t[a];
	int p[4] = {p0, p1, p2, p3};
	int64_t ne[4];
	size_t nb[4];
	for (int i = 0; i < 4; i++) {
		ne[p[i]] = A->ne[i];
		nb[p[i]] = A->nb[i];
	}
	return view_of(g, a, ne, nb, 0);
}

gs_t gs_transpose(gsim *g, gs_t a)
{
	return gs_permute(g, a, 1, 0, 2, 3);
}

/* ggml_visit_parents, without recursion (graphs of thousands of nodes) */
static void push_node(gsim *g, gs_t a)
{
	gs_tensor *t = &g->t[a];
	if (t->op == GS_NONE) {
		if (g->n_leafs == g->cap_leafs) {
			g->cap_leafs = g->cap_leafs ? 2 * g->cap_leafs : 256;
			g->leafs = xrealloc(g->leafs, g->cap_leafs * sizeof *g->leafs);
		}
		g->leafs[g->n_leafs++] = a;
	} else {
		if (g->n_nodes == g->cap_nodes) {
			g->cap_nodes = g->cap_nodes ? 2 * g->cap_nodes : 1024;
			g->nodes = xrealloc(g->nodes, g->cap_nodes * sizeof *g->nodes);
		}
		g->nodes[g->n_nodes++] = a;
	}
}

void gs_expand(gsim *g, gs_t root)
{
	if (root < 0 || g->t[root].visited)
		return;
	/* explicit stack of (tensor, next source to visit) */
	if (!g->cap_stack) {
		g->cap_stack = 64;
		g->stack = xmalloc(g->cap_stack * sizeof *g->stack);
	}
	size_t sp = 0;
	g->t[root].visited = true;
	g->stack[sp++] = (struct gs_frame){root, 0};
	while (sp) {
		struct gs_frame *f = &g->stack[sp - 1];
		gs_tensor *t = &g->t[f->t];
		if (f->next < t->n_src) {
			gs_t s = t->src[f->next++];
			if (s >= 0 && !g->t[s].visited) {
				g->t[s].visited = true;
				if (sp == g->cap_stack) {
					g->cap_stack *= 2;
					g->stack = xrealloc(g->stack, g->cap_stack * sizeof *g->stack);
				}
				g->stack[sp++] = (struct gs_frame){s, 0};
			}
			continue;
		}
		push_node(g, f->t);
		sp--;
	}
}

/* ggml: a tensor with a view source has no memory of its own */
static bool is_view(const gs_tensor *t)
{
	return t->view_src >= 0;
}

static bool can_inplace(gs_op op)
{
	return op >= GS_ADD && op <= GS_FILL;
}

/* ---- the dynamic allocator (one chunk: compute buffers have no size cap) ---- */

typedef struct {
	uint64_t offset, size;
} fblock;

typedef struct {
	fblock *b;
	size_t n, cap;
	uint64_t align, max_size;
} dyn;

static uint64_t align_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) / a * a;
}

static void blk_insert(dyn *d, size_t at, uint64_t off, uint64_t size)
{
	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 64;
		d->b = xrealloc(d->b, d->cap * sizeof *d->b);
	}
	memmove(&d->b[at + 1], &d->b[at], (d->n - at) * sizeof *d->b);
	d->b[at] = (fblock){off, size};
	d->n++;
}

static void blk_remove(dyn *d, size_t at)
{
	memmove(&d->b[at], &d->b[at + 1], (d->n - at - 1) * sizeof *d->b);
	d->n--;
}

static uint64_t dyn_alloc(dyn *d, uint64_t size)
{
	size = align_up(size, d->align);
	size_t best = SIZE_MAX;
	uint64_t best_size = UINT64_MAX;
	for (size_t i = 0; i + 1 < d->n; i++) {
		if (d->b[i].size >= size && d->b[i].size <= best_size) {
			best = i;
			best_size = d->b[i].size;
		}
	}
	if (best == SIZE_MAX)
		best = d->n - 1; /* the last block: unbounded */
	uint64_t off = d->b[best].offset;
	d->b[best].offset += size;
	d->b[best].size -= size;
	if (d->b[best].size == 0)
		blk_remove(d, best);
	if (off + size > d->max_size)
		d->max_size = off + size;
	return off;
}

static void dyn_free(dyn *d, uint64_t off, uint64_t size)
{
	size = align_up(size, d->align);
	for (size_t i = 0; i < d->n; i++) {
		fblock *b = &d->b[i];
		if (b->offset + b->size == off) {
			b->size += size;
			if (i + 1 < d->n && b->offset + b->size == d->b[i + 1].offset) {
				b->size += d->b[i + 1].size;
				blk_remove(d, i + 1);
			}
			return;
		}
		if (off + size == b->offset) {
			b->offset = off;
			b->size += size;
			if (i > 0 && d->b[i - 1].offset + d->b[i - 1].size == b->offset) {
				d->b[i - 1].size += b->size;
				blk_remove(d, i);
			}
			return;
		}
	}
	size_t at = 0;
	while (at < d->n && d->b[at].offset < off)
		at++;
	blk_insert(d, at, off, size);
}

static bool same_layout(const gs_tensor *a, const gs_tensor *b)
{
	if (a->type != b->type)
		return false;
	for (int i = 0; i < 4; i++)
		if (a->ne[i] != b->ne[i] || a->nb[i] != b->nb[i])
			return false;
	return true;
}

static bool placed(const gs_tensor *t)
{
	return (t->flags & F_EXTERNAL) || t->allocated;
}

static void free_node(gsim *g, dyn *d, gs_t a)
{
	gs_tensor *t = &g->t[a];
	if (t->flags & F_OUTPUT)
		return;
	dyn_free(&d[t->buf], t->offset, nbytes(t));
	t->allocated = false;
}

/* Place a in buffer `buf` of d (one per device), or in its parent's memory. */
static void allocate_node(gsim *g, dyn *d, gs_t a, int buf)
{
	gs_tensor *t = &g->t[a];
	if (placed(t) || is_view(t) || (t->flags & F_DEP))
		return;
	t->allocated = true;
	if (can_inplace(t->op)) {
		for (int i = 0; i < t->n_src; i++) {
			gs_t p = t->src[i];
			if (p < 0)
				continue;
			gs_tensor *P = &g->t[p];
			/* only memory this allocator placed; views never count as
			 * placed (ggml_gallocr_is_own), so reuse never goes through one */
			if (!P->allocated)
				continue;
			if ((P->flags & F_OUTPUT) || (P->view_src >= 0 && (g->t[P->view_src].flags & F_OUTPUT)))
				continue;
			if (!same_layout(t, P))
				continue;
			if (P->n_children != 1 || P->n_views != 0)
				continue;
			t->offset = P->offset;
			t->buf = P->buf;
			P->allocated = false;
			return;
		}
	}
	t->buf = (int8_t)buf;
	t->offset = dyn_alloc(&d[buf], nbytes(t));
}

/* ggml_gallocr_alloc_graph over nodes[0..n_nodes) and leafs[0..n_leafs):
 * every tensor's buffer is its device's (buf_of: the tensor's dev, or 0
 * for one buffer); peak[b] receives each buffer's size. */
static void alloc_graph(gsim *g, const gs_t *nodes, size_t n_nodes, const gs_t *leafs, size_t n_leafs, int n_buf,
			bool by_dev, size_t alignment, uint64_t *peak)
{
	dyn *d = xcalloc((size_t)n_buf, sizeof *d);
	for (int b = 0; b < n_buf; b++) {
		d[b].align = alignment ? alignment : 32;
		blk_insert(&d[b], 0, 0, UINT64_MAX / 2);
	}
	for (size_t i = 0; i < g->n; i++) {
		g->t[i].n_children = g->t[i].n_views = 0;
		g->t[i].allocated = false;
		g->t[i].offset = 0;
	}
#define BUF_OF(a) (by_dev && g->t[a].dev >= 0 ? g->t[a].dev : 0)
	/* leaves first, in the order they were met (weights and the cache
	 * live in other buffers) */
	for (size_t i = 0; i < n_leafs; i++)
		allocate_node(g, d, leafs[i], BUF_OF(leafs[i]));
	for (size_t i = 0; i < n_nodes; i++) {
		gs_tensor *t = &g->t[nodes[i]];
		if (is_view(t))
			g->t[t->view_src].n_views++;
		if (t->flags & F_INPUT)
			allocate_node(g, d, nodes[i], BUF_OF(nodes[i]));
		for (int j = 0; j < t->n_src; j++) {
			if (t->src[j] < 0)
				continue;
			g->t[t->src[j]].n_children++;
			if (g->t[t->src[j]].flags & F_INPUT)
				allocate_node(g, d, t->src[j], BUF_OF(nodes[i]));
		}
	}
	for (size_t i = 0; i < n_nodes; i++) {
		gs_t a = nodes[i];
		gs_tensor *t = &g->t[a];
		for (int j = 0; j < t->n_src; j++)
			if (t->src[j] >= 0)
				allocate_node(g, d, t->src[j], BUF_OF(a));
		allocate_node(g, d, a, BUF_OF(a));
		for (int j = 0; j < t->n_src; j++) {
			gs_t p = t->src[j];
			if (p < 0)
				continue;
			gs_tensor *P = &g->t[p];
			P->n_children--;
			if (P->n_children || P->n_views)
				continue;
			if (is_view(P)) {
				gs_tensor *V = &g->t[P->view_src];
				V->n_views--;
				if (!V->n_views && !V->n_children && V->allocated)
					free_node(g, d, P->view_src);
			} else if (P->allocated) {
				free_node(g, d, p);
			}
		}
	}
#undef BUF_OF
	for (int b = 0; b < n_buf; b++) {
		peak[b] = d[b].max_size;
		free(d[b].b);
	}
	free(d);
}

uint64_t gs_alloc_peak(gsim *g, size_t alignment)
{
	if (!g->n_nodes)
		return 0;
	uint64_t peak = 0;
	alloc_graph(g, g->nodes, g->n_nodes, g->leafs, g->n_leafs, 1, false, alignment, &peak);
	return peak;
}

/* ---- ggml_backend_sched: the graph split over devices ------------------- */
/*
 * ggml/src/ggml-backend.cpp ggml_backend_sched_split_graph, on shapes:
 * devices 0..n-1 in priority order, the last the CPU.  Pass 1: a tensor in
 * another buffer (or a view of one) runs where that buffer is; graph
 * inputs on the CPU; an op with a weight among its sources where the
 * weight is (ROPE and FLASH_ATTN_EXT excepted), or on device 0 when the
 * weight is in host memory and device 0 takes large batches
 * (offload_cpu_weights: CUDA's offload_op, batch >= 32).  Pass 2: GPU
 * assignments spread down then up the node list over unassigned nodes,
 * then any assignment.  Pass 4: views and unassigned sources follow.
 * Pass 5: a new split where the device changes (or a weight of another
 * device is met in a split that already copies inputs); every source on
 * another device is copied into the split's device (once per device),
 * n_copies times when pipeline parallelism keeps copies (then never
 * freed).  The allocator then runs over the split graph, each device in
 * its own buffer.
 */
static bool sched_view_op(const gs_tensor *t)
{
	return t->op == GS_VIEW;
}

static bool is_weight(const gs_tensor *t)
{
	return (t->flags & F_EXTERNAL) && !(t->flags & F_CACHE);
}

/* get_op_batch_size of ggml-cuda.cu */
static int64_t op_batch(const gs_tensor *t)
{
	switch (t->op) {
	case GS_GET_ROWS: return 0;
	case GS_MUL_MAT: return t->ne[1];
	case GS_MUL_MAT_ID: case GS_ROPE: return t->ne[2];
	default: return t->ne[1] * t->ne[2] * t->ne[3];
	}
}

static int from_cur(const gsim *g, const gs_tensor *t, const gs_sched_opts *o)
{
	int cpu = o->n_dev - 1;
	if (t->view_src >= 0 && (g->t[t->view_src].flags & F_EXTERNAL))
		return g->t[t->view_src].dev;
	if (t->flags & F_INPUT)
		return cpu;
	if (t->op == GS_ROPE || t->op == GS_FLASH_ATTN)
		return -1;
	for (int i = 0; i < GS_MAX_SRC; i++) {
		if (t->src[i] < 0)
			continue;
		const gs_tensor *S = &g->t[t->src[i]];
		if (!is_weight(S))
			continue;
		if (o->offload_cpu_weights && S->dev == cpu && o->n_dev > 1 && op_batch(t) >= 32)
			return 0;
		return S->dev;
	}
	return -1;
}

/* the device a source's data is on (its own, or its view source's) */
static int data_dev(const gsim *g, gs_t a)
{
	const gs_tensor *t = &g->t[a];
	if (t->view_src >= 0 && (g->t[t->view_src].flags & F_EXTERNAL))
		return g->t[t->view_src].dev;
	if (t->dev < 0 && t->view_src >= 0)
		return g->t[t->view_src].dev;
	return t->dev;
}

static void push(gs_t **v, size_t *n, size_t *cap, gs_t a)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 1024;
		*v = xrealloc(*v, *cap * sizeof **v);
	}
	(*v)[(*n)++] = a;
}

void gs_sched_peaks(gsim *g, const gs_sched_opts *o, uint64_t *peak)
{
	int nd = o->n_dev, cpu = nd - 1;
	int ncp = o->n_copies > 1 ? o->n_copies : 1;
	for (int d = 0; d < nd; d++)
		peak[d] = 0;
	if (!g->n_nodes || nd < 1)
		return;
	size_t n0 = g->n; /* tensors of the graph itself */
	for (size_t i = 0; i < g->n_leafs; i++) {
		gs_tensor *t = &g->t[g->leafs[i]];
		if (t->flags & F_INPUT)
			t->dev = (int8_t)cpu;
	}
	for (size_t i = 0; i < g->n_nodes; i++) {
		gs_tensor *t = &g->t[g->nodes[i]];
		if (t->dev < 0)
			t->dev = (int8_t)from_cur(g, t, o);
	}
	/* pass 2: GPU down, GPU up, any down, any up */
	for (int pass = 0; pass < 4; pass++) {
		int cur = -1;
		bool down = pass % 2 == 0, gpu_only = pass < 2;
		for (size_t k = 0; k < g->n_nodes; k++) {
			gs_tensor *t = &g->t[g->nodes[down ? k : g->n_nodes - 1 - k]];
			if (sched_view_op(t))
				continue;
			if (t->dev >= 0)
				cur = gpu_only && t->dev == cpu ? -1 : t->dev;
			else if (cur >= 0)
				t->dev = (int8_t)cur;
		}
	}
	/* pass 3 (unassigned nodes: the device most of their sources are on) */
	for (size_t i = 0; i < g->n_nodes; i++) {
		gs_tensor *t = &g->t[g->nodes[i]];
		if (sched_view_op(t) || t->dev >= 0)
			continue;
		int best = -1, best_n = -1;
		for (int b = 0; b < nd; b++) {
			int n = 0;
			for (int j = 0; j < GS_MAX_SRC; j++)
				if (t->src[j] >= 0 && data_dev(g, t->src[j]) == b)
					n++;
			if (n > best_n) {
				best_n = n;
				best = b;
			}
		}
		t->dev = (int8_t)best;
	}
	/* pass 4 */
	for (size_t i = 0; i < g->n_nodes; i++) {
		gs_tensor *t = &g->t[g->nodes[i]];
		if (t->view_src >= 0 && t->dev < 0)
			t->dev = g->t[t->view_src].dev;
		for (int j = 0; j < GS_MAX_SRC; j++) {
			if (t->src[j] < 0)
				continue;
			gs_tensor *S = &g->t[t->src[j]];
			if (S->dev < 0)
				S->dev = S->view_src >= 0 ? g->t[S->view_src].dev : t->dev;
		}
		if (t->dev < 0)
			t->dev = 0;
	}
	/* pass 5: splits and the copies of their inputs; copy[src * nd + dev] */
	gs_t *copy = xcalloc(n0 * (size_t)nd, sizeof *copy);
	for (size_t i = 0; i < n0 * (size_t)nd; i++)
		copy[i] = -1;
	gs_t *nodes = NULL, *leafs = NULL, *inputs = NULL, *keep = NULL;
	size_t nn = 0, cn = 0, nl = 0, cl = 0, ni = 0, ci = 0, nk = 0, ck = 0;
	size_t k = 0, split_inputs = 0; /* inputs[split_inputs..ni) belong to the open split */
	int cur = -1;
	while (k < g->n_nodes && sched_view_op(&g->t[g->nodes[k]]))
		k++;
	if (k < g->n_nodes)
		cur = g->t[g->nodes[k]].dev;
	/* nodes of the split graph, with each split's input deps and copies
	 * first: collected per split, flushed when the next one starts */
	gs_t *body = NULL;
	size_t nb_ = 0, cb = 0;
	for (size_t i = 0; i <= g->n_nodes; i++) {
		gs_tensor *t = i < g->n_nodes ? &g->t[g->nodes[i]] : NULL;
		bool flush = i == g->n_nodes;
		if (t && !sched_view_op(t)) {
			bool need = false;
			if (t->dev == cur && ni > split_inputs)
				for (int j = 0; j < GS_MAX_SRC; j++) {
					gs_t s = t->src[j];
					if (s >= 0 && is_weight(&g->t[s]) && g->t[s].dev != cur) {
						need = true;
						break;
					}
				}
			if (t->dev != cur || need)
				flush = true;
		}
		if (flush) {
			for (size_t q = split_inputs; q < ni; q++) {
				gs_t src = inputs[q];
				gs_t dep = add(g, g->t[src].type, GS_OTHER, g->t[src].ne);
				g->t[dep].flags = F_DEP;
				g->t[dep].src[0] = src;
				g->t[dep].n_src = 1;
				g->t[dep].dev = g->t[src].dev;
				push(&nodes, &nn, &cn, dep);
				push(&nodes, &nn, &cn, copy[(size_t)src * nd + cur]);
			}
			for (size_t q = 0; q < nb_; q++)
				push(&nodes, &nn, &cn, body[q]);
			nb_ = 0;
			split_inputs = ni;
			if (!t)
				break;
			t = &g->t[g->nodes[i]]; /* add() may have moved the tensors */
			cur = t->dev;
		}
		push(&body, &nb_, &cb, g->nodes[i]);
		if (sched_view_op(t))
			continue;
		for (int j = 0; j < GS_MAX_SRC; j++) {
			gs_t s = t->src[j];
			if (s < 0 || (size_t)s >= n0)
				continue;
			int sd = g->t[s].dev;
			bool supported = data_dev(g, s) == cur;
			if (sd == cur || supported)
				continue;
			gs_t *c = &copy[(size_t)s * nd + cur];
			if (*c < 0) {
				/* ggml_dup_tensor_layout: same type, shape and strides */
				for (int r = 0; r < ncp; r++) {
					gs_t x = add(g, g->t[s].type, GS_CPY, g->t[s].ne);
					t = &g->t[g->nodes[i]];
					memcpy(g->t[x].nb, g->t[s].nb, sizeof g->t[x].nb);
					g->t[x].dev = (int8_t)cur;
					if (is_weight(&g->t[s]) && o->weight_scale > 0)
						g->t[x].bytes = (uint64_t)((double)nbytes(&g->t[s]) * o->weight_scale) + 1;
					if (ncp > 1) {
						g->t[x].flags = F_INPUT | F_OUTPUT;
						push(&keep, &nk, &ck, x);
					}
					if (r == 0)
						*c = x;
				}
				push(&inputs, &ni, &ci, s);
			}
			t->src[j] = *c;
		}
	}
	/* leafs: with copies, every graph input's further copies and the
	 * split inputs' copies first, then the graph's own leafs */
	if (ncp > 1) {
		for (size_t i = 0; i < g->n_leafs; i++) {
			gs_t l = g->leafs[i];
			if (!(g->t[l].flags & F_INPUT))
				continue;
			g->t[l].flags |= F_OUTPUT;
			push(&leafs, &nl, &cl, l);
			for (int r = 1; r < ncp; r++) {
				gs_t x = add(g, g->t[l].type, GS_NONE, g->t[l].ne);
				g->t[x].flags = F_INPUT | F_OUTPUT;
				g->t[x].dev = g->t[l].dev;
				push(&leafs, &nl, &cl, x);
			}
		}
		for (size_t q = 0; q < nk; q++)
			push(&leafs, &nl, &cl, keep[q]);
	}
	for (size_t i = 0; i < g->n_leafs; i++)
		push(&leafs, &nl, &cl, g->leafs[i]);
	alloc_graph(g, nodes, nn, leafs, nl, nd, true, o->alignment, peak);
	free(copy);
	free(nodes);
	free(leafs);
	free(inputs);
	free(keep);
	free(body);
}
