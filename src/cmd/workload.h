/*
 * workload: the fine-tuning and image-generation options shared by
 * `gpuwise plan` and `gpuwise cards`, and the printing of their plans.
 * cmd/ only (prints); the arithmetic is plan/train and plan/image.
 */
#ifndef GW_CMD_WORKLOAD_H
#define GW_CMD_WORKLOAD_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"
#include "plan/image.h"
#include "plan/train.h"

typedef enum { WORKLOAD_LLM, WORKLOAD_TRAIN, WORKLOAD_IMAGE } workload_kind;

typedef struct workload {
	workload_kind kind;
	train_opts train;
	image_opts image;
	const char *train_only_flag;  /* a training option seen (for errors) */
	const char *image_only_flag;  /* an image option seen */
	bool gpus_given;
} workload;

/* getopt_long ids of the workload options start here. */
#define WORKLOAD_OPT_BASE 0x1000
/* The options, terminated by a zero entry (append them to a command's table). */
extern const struct option workload_options[];
size_t workload_option_count(void);
/* Help lines for the options (for a command's --help). */
extern const char workload_help[];

void workload_init(workload *w);
/*
 * Take one option: 0 when handled, -1 when id is not a workload option,
 * GW_EXIT_USAGE after printing the error for a bad value.
 */
int workload_option(workload *w, int id, const char *arg, const char *cmd);
/* After parsing: options of one workload used without it are usage errors. */
int workload_check(const workload *w, const char *cmd);

/*
 * Plan and print fine-tuning of m with vram_bytes per GPU (0: no budget)
 * on n_gpus GPUs named gpu_name.  Returns the exit status: 0 fits (or no
 * budget), 4 does not fit, 2 or 1 on errors (printed).
 */
int workload_plan_train(workload *w, const model_desc *m, uint64_t vram_bytes, uint32_t n_gpus,
			const char *gpu_name, bool json);
/* Plan and print image generation with model_name on one GPU. */
int workload_plan_image(workload *w, const char *model_name, uint64_t vram_bytes, const char *gpu_name,
			const gpu_spec *gpu, bool json);

#endif
