/*
 * llamacpp_builds.c: what differs between llama.cpp builds, one row per
 * build the planner was checked against.  The newest row is the default;
 * older rows stay selectable (--engine llama.cpp@b2824) because Ollama and
 * LM Studio ship older builds.
 */
#include "plan/engine.h"

#include <string.h>

static const plan_llamacpp_build builds[] = {
	/* The build llama-cpp-python 0.3.36 bundles (its CHANGELOG: "update
	 * llama.cpp to ggml-org/llama.cpp@0c1e57098"); tests/e2e/oracle.t
	 * checks every buffer against it.  Flash attention defaults to auto
	 * since ggml-org/llama.cpp pull 15434 (August 2025, "use FA + max. GPU
	 * layers by default"); the automatic fit keeps 1 GiB free per device
	 * (common/common.h fit_params_target). */
	{"0c1e570", "2026-10", true, true, true, true, true,
	 "ggml-org/llama.cpp@0c1e57098 via llama-cpp-python 0.3.36; tests/e2e/oracle.t"},
	/* May 2024: the build of the validation data
	 * (XiongjieDai/GPU-Benchmarks-on-LLM-Inference); flash attention off
	 * unless -fa; Ollama's closed-form compute buffer matches its logs
	 * (tests/validation/llamacpp-buffers.tsv).  It had no automatic fit:
	 * the planner's layer search keeps the same 1 GiB free that a user
	 * finding -ngl by trial ends up with [assumption]. */
	{"b2824", "2024-05", false, true, false, false, false,
	 "XiongjieDai/GPU-Benchmarks-on-LLM-Inference logs; tests/e2e/validation.t"},
};

const plan_llamacpp_build *plan_llamacpp_build_find(const char *id)
{
	if (!id || !*id || str_ieq(id, "latest") || str_ieq(id, "newest"))
		return &builds[0];
	for (size_t i = 0; i < sizeof builds / sizeof builds[0]; i++) {
		size_t n = strlen(id);
		/* a commit may be given longer than the 7 hex digits we keep */
		if (str_ieq(id, builds[i].id) || (n > 7 && !strncmp(id, builds[i].id, 7) && builds[i].id[0] != 'b'))
			return &builds[i];
	}
	return NULL;
}

const char *plan_llamacpp_build_list(void)
{
	return "0c1e570 (latest), b2824";
}
