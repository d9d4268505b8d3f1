/*
 * model_bench: wall time of the model readers on big inputs.  Writes (in
 * a temp dir) a sparse GGUF whose header describes a Llama-3-70B Q4_K_M
 * (~40 GB of tensors, 128,256 tokens of vocabulary) and times gguf_read,
 * then model_load on a catalog name.  Built and run by bench/model.sh.
 * Usage: model_bench DIR [CATALOG_NAME [keep]]  (keep: leave DIR/bench-70b.gguf)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gguf_writer.h"
#include "model/model.h"

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Llama-3-70B shapes (meta-llama/Meta-Llama-3-70B config.json), Q4_K_M-like types. */
static void build_70b(ggw *w)
{
	const uint64_t L = 80, H = 8192, F = 28672, V = 128256, KV = 1024;
	char n[64];
	ggw_kv_str(w, "general.architecture", "llama");
	ggw_kv_str(w, "general.name", "bench 70B");
	ggw_kv_u32(w, "general.file_type", 15);
	ggw_kv_u32(w, "llama.block_count", (uint32_t)L);
	ggw_kv_u32(w, "llama.embedding_length", (uint32_t)H);
	ggw_kv_u32(w, "llama.feed_forward_length", (uint32_t)F);
	ggw_kv_u32(w, "llama.attention.head_count", 64);
	ggw_kv_u32(w, "llama.attention.head_count_kv", 8);
	ggw_kv_u32(w, "llama.context_length", 8192);
	ggw_kv_str(w, "tokenizer.ggml.model", "gpt2");
	ggw_kv_tokens(w, "tokenizer.ggml.tokens", V);
	ggw_kv_arr_f32(w, "tokenizer.ggml.scores", V);
	ggw_tensor2(w, "token_embd.weight", GGT_Q4_K, H, V);
	for (uint64_t l = 0; l < L; l++) {
		uint32_t bump = (l < L / 8 || l >= 7 * L / 8 || (l - L / 8) % 3 == 2) ? GGT_Q6_K : GGT_Q4_K;
#define T(x) (snprintf(n, sizeof n, "blk.%llu." x, (unsigned long long)l), n)
		ggw_tensor2(w, T("attn_norm.weight"), GGT_F32, H, 0);
		ggw_tensor2(w, T("attn_q.weight"), GGT_Q4_K, H, H);
		ggw_tensor2(w, T("attn_k.weight"), GGT_Q4_K, H, KV);
		ggw_tensor2(w, T("attn_v.weight"), bump, H, KV);
		ggw_tensor2(w, T("attn_output.weight"), GGT_Q4_K, H, H);
		ggw_tensor2(w, T("ffn_norm.weight"), GGT_F32, H, 0);
		ggw_tensor2(w, T("ffn_gate.weight"), GGT_Q4_K, H, F);
		ggw_tensor2(w, T("ffn_up.weight"), GGT_Q4_K, H, F);
		ggw_tensor2(w, T("ffn_down.weight"), bump, F, H);
#undef T
	}
	ggw_tensor2(w, "output_norm.weight", GGT_F32, H, 0);
	ggw_tensor2(w, "output.weight", GGT_Q6_K, H, V);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/tmp";
	const char *catalog = argc > 2 ? argv[2] : "llama-3.1-8b";
	int reps = 20;
	char path[1024];
	ggw w;
	model_desc m;
	gw_error err = {0};
	double t[64];

	snprintf(path, sizeof path, "%s/bench-70b.gguf", dir);
	ggw_init(&w, 3);
	build_70b(&w);
	uint64_t size = ggw_write(&w, path, 0);
	ggw_free(&w);
	if (!size) {
		fprintf(stderr, "model_bench: cannot write '%s'\n", path);
		return 1;
	}
	for (int i = 0; i < reps; i++) {
		double a = now_s();
		if (gguf_read(path, &m, &err)) {
			fprintf(stderr, "model_bench: %s\n", err.msg);
			return 1;
		}
		t[i] = now_s() - a;
		if (i + 1 < reps)
			model_release(&m);
	}
	qsort(t, (size_t)reps, sizeof t[0], cmp_d);
	printf("gguf_read   %-28s %6.1f GB of tensors, %u layers, %llu tensors, vocab %u: median %.2f ms, min %.2f ms (%d runs)\n",
	       "(sparse 70B Q4_K_M header)", m.total_bytes / 1e9, m.n_layers, (unsigned long long)m.n_tensors, m.vocab,
	       t[reps / 2] * 1e3, t[0] * 1e3, reps);
	model_release(&m);

	for (int i = 0; i < reps; i++) {
		double a = now_s();
		if (model_load(catalog, NULL, &m, &err)) {
			fprintf(stderr, "model_bench: %s\n", err.msg);
			return 1;
		}
		t[i] = now_s() - a;
		model_release(&m);
	}
	double first = t[0];
	qsort(t, (size_t)reps, sizeof t[0], cmp_d);
	printf("model_load  %-28s first %.3f ms (parses the tables), median %.4f ms (%d runs)\n", catalog, first * 1e3,
	       t[reps / 2] * 1e3, reps);
	if (argc <= 3 || strcmp(argv[3], "keep"))
		remove(path);
	return 0;
}
