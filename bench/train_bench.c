/*
 * train_bench: wall time of one fine-tuning plan in process (the phase
 * model, and the advice that replans up to five times), the question the
 * guide asks: LoRA of a 7B model on an 8 GB card.  Built and run by
 * bench/train.sh.  Prints the median of 5 rounds of 2000 plans.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "plan/train.h"

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

int main(void)
{
	/* meta-llama/Llama-2-7b-hf config.json */
	model_desc m = {.name = "llama-2-7b", .n_layers = 32, .hidden = 4096, .n_heads = 32, .n_kv_heads = 32,
			.head_dim_k = 128, .ffn = 11008, .vocab = 32000, .params_total = 6.74e9};
	train_opts o;
	train_opts_init(&o);
	double r[5];
	size_t n_advice = 0;
	for (int k = 0; k < 5; k++) {
		double t0 = now_s();
		for (int i = 0; i < 2000; i++) {
			train_plan p;
			if (train_plan_compute(&m, &o, 8ULL << 30, &p, NULL))
				return 1;
			n_advice = p.n_advice;
			train_plan_release(&p);
		}
		r[k] = (now_s() - t0) / 2000;
	}
	qsort(r, 5, sizeof r[0], cmp_d);
	printf("train_plan_compute llama-2-7b LoRA on 8G (%zu advice steps): %.2f us per plan (median of 5 x 2000)\n",
	       n_advice, r[2] * 1e6);
	return 0;
}
