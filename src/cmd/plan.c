/*
 * gpuwise plan MODEL: will a model fit these GPUs (plus host RAM), how is
 * it split, how fast does it run, and what to change so it fits.
 *
 * Options are parsed in groups (model shape, hardware, inference run,
 * output), each by its own function over struct plan_cli, so further
 * groups (training, images) slot in beside them.
 */
#include <ctype.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/workload.h"
#include "hw/hw.h"
#include "kb/kb.h"
#include "model/hub.h"
#include "model/model.h"
#include "bench/bench.h"
#include "plan/cards.h"
#include "plan/plan.h"
#include "plan/prices.h"
#include "util/json.h"

enum {
	/* model shape */
	OPT_PARAMS = 1000, OPT_LAYERS, OPT_HIDDEN, OPT_HEADS, OPT_KV_HEADS, OPT_HEAD_DIM, OPT_FFN,
	OPT_VOCAB, OPT_QUANT, OPT_FILE,
	/* hardware */
	OPT_GPU = 1100, OPT_VRAM, OPT_RAM, OPT_RAM_BW, OPT_CPU, OPT_THREADS, OPT_HOST_MEM, OPT_PLATFORM,
	/* inference run */
	OPT_CTX = 1200, OPT_BATCH, OPT_PARALLEL, OPT_KV_TYPE, OPT_FLASH_ATTN, OPT_ENGINE,
	OPT_GPU_LAYERS, OPT_GPU_UTIL, OPT_N_CPU_MOE, OPT_PER_USER_TPS, OPT_BACKEND, OPT_KV_UNIFIED,
	OPT_NO_KV_UNIFIED, OPT_NO_OP_OFFLOAD, OPT_NO_MMAP, OPT_SPLIT_MODE,
	/* output */
	OPT_JSON = 1300, OPT_HELP,
};

static const struct option long_opts[] = {
	{"params", required_argument, NULL, OPT_PARAMS},
	{"layers", required_argument, NULL, OPT_LAYERS},
	{"hidden", required_argument, NULL, OPT_HIDDEN},
	{"heads", required_argument, NULL, OPT_HEADS},
	{"kv-heads", required_argument, NULL, OPT_KV_HEADS},
	{"head-dim", required_argument, NULL, OPT_HEAD_DIM},
	{"ffn", required_argument, NULL, OPT_FFN},
	{"vocab", required_argument, NULL, OPT_VOCAB},
	{"quant", required_argument, NULL, OPT_QUANT},
	{"file", required_argument, NULL, OPT_FILE},
	{"gpu", required_argument, NULL, OPT_GPU},
	{"vram", required_argument, NULL, OPT_VRAM},
	{"ram", required_argument, NULL, OPT_RAM},
	{"ram-bw", required_argument, NULL, OPT_RAM_BW},
	{"host-bw", required_argument, NULL, OPT_RAM_BW},
	{"cpu", no_argument, NULL, OPT_CPU},
	{"threads", required_argument, NULL, OPT_THREADS},
	{"host-mem", required_argument, NULL, OPT_HOST_MEM},
	{"platform", required_argument, NULL, OPT_PLATFORM},
	{"ctx", required_argument, NULL, OPT_CTX},
	{"batch", required_argument, NULL, OPT_BATCH},
	{"ubatch", required_argument, NULL, OPT_BATCH},
	{"parallel", required_argument, NULL, OPT_PARALLEL},
	{"per-user-tps", required_argument, NULL, OPT_PER_USER_TPS},
	{"kv-unified", no_argument, NULL, OPT_KV_UNIFIED},
	{"no-kv-unified", no_argument, NULL, OPT_NO_KV_UNIFIED},
	{"no-op-offload", no_argument, NULL, OPT_NO_OP_OFFLOAD},
	{"no-mmap", no_argument, NULL, OPT_NO_MMAP},
	{"kv-type", required_argument, NULL, OPT_KV_TYPE},
	{"flash-attn", optional_argument, NULL, OPT_FLASH_ATTN},
	{"engine", required_argument, NULL, OPT_ENGINE},
	{"backend", required_argument, NULL, OPT_BACKEND},
	{"gpu-layers", required_argument, NULL, OPT_GPU_LAYERS},
	{"gpu-util", required_argument, NULL, OPT_GPU_UTIL},
	{"n-cpu-moe", required_argument, NULL, OPT_N_CPU_MOE},
	{"split-mode", required_argument, NULL, OPT_SPLIT_MODE},
	{"json", no_argument, NULL, OPT_JSON},
	{"help", no_argument, NULL, OPT_HELP},
	{NULL, 0, NULL, 0},
};

typedef struct plan_cli {
	plan_request rq;
	model_numbers nums;
	const char *model;
	const char *file;       /* --file: a file of the Hub repository MODEL */
	const char *gpu_arg;
	uint64_t vram;
	bool cpu;               /* --gpu none / --cpu: llama.cpp on the host CPU */
	bool no_kv_unified;     /* --no-kv-unified given (wins over --parallel auto's default) */
	bool threads_from_machine; /* rq.cpu_threads counted in /proc/cpuinfo */
	char host_mem[40];      /* --host-mem as read ("DDR5-5600 x2"); "" none */
	double per_user_tps;    /* --per-user-tps: users served at this decode rate each */
	const plan_serve *serve; /* many users (--parallel N > 1, --per-user-tps); NULL otherwise */
	bool json;
	bool help;
	bool engine_set, fa_set;
	char bw_from[PLAN_MAX_GPUS][64]; /* "gpuwise bench 0.1.0 on 2026-12-01" per GPU */
	char ram_bw_from[64];
	char host_mem_from[160]; /* rq.host_mem_from's text */
	const char *host_bw_source; /* smbios, smbios-cache, bench, --host-mem, --ram-bw, assumed */
	workload wl;            /* --train / --image (cmd/workload.c) */
	/* planning on this machine */
	bool on_machine;
	hw_proc *procs;         /* other processes holding memory on the chosen GPUs */
	size_t *proc_gpu;       /* index into rq.gpus of each */
	size_t n_procs;
	bool ram_from_machine;  /* rq.ram_bytes from /proc/meminfo */
	uint64_t ram_total, ram_avail, ram_headroom;
	bool unified_host;      /* rq.ram_bytes is the rest of unified memory */
	/* added for WSL 2: host RAM is the VM's, VRAM includes the Windows desktop's */
	hw_platform_kind platform;
	const char *platform_opt; /* --platform: "linux", "windows", "wsl2"; NULL: detected */
	bool wsl_mem_read;
	hw_wsl_memory wsl_mem;
	uint64_t gpu_used_bytes[PLAN_MAX_GPUS];   /* NVML's used memory per planned GPU, 0 unknown */
	uint64_t gpu_listed_bytes[PLAN_MAX_GPUS]; /* of which processes Linux can see */
} plan_cli;

/*
 * Headroom left to the rest of the machine when host RAM is read from
 * /proc/meminfo: 1 GiB for the engine's own process (runtime, tokenizer,
 * buffers outside the model) and the larger of 1 GiB and 5% of the RAM for
 * the OS and the desktop [assumption].
 */
static uint64_t ram_headroom(uint64_t total)
{
	uint64_t os = total / 20 > GiB ? total / 20 : GiB;
	return GiB + os;
}

/*
 * What installed RAM (--ram SIZE) keeps for the system beyond that
 * headroom: the kernel's page map (a 64-byte struct page per 4 KiB page,
 * 1/64 of the RAM) [derived] and the kernel and a desktop session at idle,
 * 2 GiB [assumption: MemTotal less MemAvailable of an idle desktop].  A
 * host part that does not fit beside it starves the host: llama.cpp maps
 * the GGUF (mmap, its default), so its weights in host RAM live in the page
 * cache and, without room, are re-read from disk every token.
 */
static uint64_t installed_ram_reserve(uint64_t total)
{
	return total / 64 + 2 * GiB + ram_headroom(total);
}

static void usage(FILE *f)
{
	fputs(_("usage: gpuwise plan MODEL [--gpu ID[,ID...] | --gpu 2x3090 | --vram 8G | --gpu none] [--ram 32G]\n"
		"                    [--file NAME] [--quant Q] [--ctx N] [--batch N] [--kv-type T]\n"
		"                    [--flash-attn on|off|auto] [--engine E] [--backend B] [--json]\n"
		"       gpuwise plan --params 13b --layers 40 --hidden 5120 --heads 40 [...]\n\n"
		"Will MODEL fit these GPUs (plus host RAM)?  Prints the memory breakdown per\n"
		"GPU, the verdict, the largest context, decode and prefill tokens/s and the\n"
		"changes that would make it fit or run faster, each with its computed effect.\n\n"
		"MODEL is a GGUF file, a safetensors file or directory, a config.json, or a\n"
		"name, looked up in this order: Ollama's store (qwen3:14b, user/model:tag;\n"
		"$OLLAMA_MODELS, ~/.ollama/models; its Modelfile's num_ctx and num_gpu are\n"
		"used), the Hugging Face cache (ORG/NAME, ORG/NAME-GGUF:Q4_K_M; $HF_HUB_CACHE,\n"
		"$HF_HOME/hub, ~/.cache/huggingface/hub), LM Studio (PUBLISHER/REPO[:QUANT];\n"
		"~/.lmstudio/models), the Hugging Face Hub (ORG/NAME: config.json and each\n"
		"safetensors header; ORG/NAME-GGUF:Q4_K_M: a GGUF header) or Ollama's registry\n"
		"(NAME:TAG: its manifest, then the GGUF header), read by HTTP Range without the\n"
		"weights and cached, then the catalog (llama3.1:8b, meta-llama/Llama-3.1-8B;\n"
		"offline, the catalog answers the Hub's and the registry's names it knows).\n"
		"The output says which answered.  A broken store entry (a manifest naming a\n"
		"missing blob, refs/main naming a missing snapshot) is an error (exit 1).\n\n"
		"Hardware:\n"
		"  --gpu ID[,ID...]   catalog GPUs (rtx-4090, 4060-laptop, h100-sxm; gpuwise list\n"
		"                     gpus); NxID repeats; default: this machine's GPUs with their\n"
		"                     free memory, naming the processes that hold the rest; with\n"
		"                     no GPU at all: the memory needed and the smallest cards\n"
		"  --vram SIZE        a GPU with SIZE of memory; with --gpu: memory per GPU.\n"
		"                     Sizes need a unit: 8G or 8GiB (GiB), 8GB (10^9 bytes), 512M\n"
		"  --ram SIZE         host RAM for offloaded layers (default on this machine:\n"
		"                     MemAvailable of /proc/meminfo less headroom for the OS\n"
		"                     and the engine)\n"
		"  --ram-bw GBS       host memory bandwidth in GB/s (default 51.2, DDR4-3200 x2;\n"
		"                     on this machine: what `gpuwise bench` measured, when it ran)\n"
		"  --host-bw GBS      the same (DDR5-5600 x2: 89.6; 12-channel DDR5-4800: 460.8)\n"
		"  --gpu none, --cpu  no GPU: llama.cpp on this host's CPU alone (--gpu cpu too);\n"
		"                     the verdict is whether it all fits host RAM, the speed is\n"
		"                     the host's memory bandwidth and threads\n"
		"  --host-mem M       host memory as DDR4-3200, DDR5-6000x4 or 8xDDR4-3200 (x\n"
		"                     channels of 64 bits, default 2): sets --host-bw to MT/s x\n"
		"                     8 B x channels; default on this machine: its SMBIOS\n"
		"                     tables (as root; cached for later runs), else gpuwise bench\n"
		"  --threads N        CPU threads (llama.cpp -t; default: this machine's cores)\n"
		"  --platform P       linux, windows or wsl2 (default: this machine's); on Windows\n"
		"                     and WSL 2 a forced -ngl beyond the VRAM spills into shared\n"
		"                     system memory (Sysmem Fallback) instead of failing\n"
		"Model:\n"
		"  --quant Q          q4_k_m, q8_0, f16, q3_k_m ... (GGUF); bf16, fp8, awq-int4, nf4;\n"
		"                     q4/int4/4bit, q8/int8/8bit, half are read as a named format\n"
		"                     (said on stderr); gpuwise list quants shows them all\n"
		"                     (default: a GGUF file's own type; else q4_k_m, bf16 for\n"
		"                     vllm/transformers)\n"
		"  --file NAME        the file of the Hub repository MODEL to read\n"
		"                     (Qwen3-14B-Q4_K_M.gguf, model-00001-of-00004.safetensors)\n"
		"  --params N --layers N --hidden N --heads N --kv-heads N --head-dim N --ffn N\n"
		"  --vocab N          describe a model by numbers, or override a catalog entry\n"
		"Run:\n"
		"  --ctx N            context tokens, 8192 or 32k/128K (k = 1024) (default 4096\n"
		"                     or the trained context if less;\n"
		"                     vllm: the trained context)\n"
		"  --batch N          physical batch (llama.cpp -ub, default 512); --ubatch N\n"
		"                     and -ub N are the same; weights in host RAM cross PCIe\n"
		"                     once per batch in prefill, so a larger one prefills faster\n"
		"  --parallel N       parallel sequences (ollama num_parallel, llama.cpp -np, vLLM\n"
		"                     concurrent requests): adds per-request and aggregate decode\n"
		"                     tok/s as N grows, where decode turns compute-bound and the\n"
		"                     most sequences the KV cache holds (--ctx: each one's context);\n"
		"                     llama.cpp gives each sequence a KV stream of its own (its\n"
		"                     default); auto: llama-server's -np auto, 4 slots, unified\n"
		"  --kv-unified       llama.cpp: one KV cache shared by the sequences (-kvu);\n"
		"                     --no-kv-unified: a stream per sequence (the default)\n"
		"  --per-user-tps T   how many users get T decode tok/s each (e.g. 20)\n"
		"  --kv-type T        KV cache type: f16 (default), q8_0, q4_0, f32, bf16 ...\n"
		"  --flash-attn MODE  on, off or auto (default: auto, what the engine does: on in\n"
		"                     llama.cpp since Aug 2025 where a kernel exists, off in\n"
		"                     llama.cpp@b2824, per model family in Ollama); bare: on\n"
		"  --engine E         llama.cpp (default), ollama, vllm, transformers;\n"
		"                     llama.cpp@BUILD plans an older build (b2824)\n"
		"  --backend B        llama.cpp backend the speed models: cuda, rocm, vulkan, metal,\n"
		"                     sycl, cpu (default: CUDA on NVIDIA, ROCm on AMD, Metal on\n"
		"                     Apple, SYCL on Intel; cpu keeps every layer in host RAM)\n"
		"  --gpu-layers N     fix the layers on the GPUs (llama.cpp -ngl) instead of searching\n"
		"  --gpu-util F       vllm gpu_memory_utilization (default 0.9)\n"
		"  --n-cpu-moe N      MoE: keep the experts of the first N layers in host RAM\n"
		"  --split-mode M, -sm M  llama.cpp with several GPUs: layer (default: whole\n"
		"                     layers per GPU, one GPU at a time) or row (every weight\n"
		"                     matrix split by rows over the GPUs, KV cache on GPU 0,\n"
		"                     a sync over PCIe at every matrix product)\n"
		"  --no-op-offload    llama.cpp -nopo: ops of weights in host RAM stay on the CPU\n"
		"                     (else GPU 0 runs the large-batch ones, copying the weight;\n"
		"                     llama.cpp RPC devices never take them)\n"
		"  --no-mmap          llama.cpp --no-mmap: read the host part into memory instead\n"
		"                     of mapping the whole file (which the host must then hold)\n"
		"Output:\n"
		"  --json             one JSON object (schema: docs/json-plan.md)\n"
		"  --help             this text\n\n"
		"Exit status: 0 fits on the GPUs (or no GPU: the need), 3 fits only with layers\n"
		"offloaded to host RAM, 4 does not fit, 1 runtime error (unreadable model file),\n"
		"2 usage error; a model on the Hub or Ollama's registry: 5 no such repository,\n"
		"revision, file or tag (HTTP 404), 6 gated or private (HTTP 401/403: accept the\n"
		"licence and set HF_TOKEN), 7 network failure (timeout, truncated reply,\n"
		"redirect loop, a host out of reach for a model the catalog lacks).\n"), f);
	fprintf(f, _("\n%s\nWith --train or --image: exit 0 fits (or no GPU given), 4 does not fit;\n"
		   "JSON schema: docs/json-plan-workloads.md.\n"), _(workload_help));
}

static int parse_u32(const char *opt, const char *arg, uint32_t min, uint32_t max, uint32_t *out)
{
	long long v;
	if (parse_int(arg, min, max, &v))
		return usage_error("plan", "invalid %s '%s' (a whole number from %u to %u)", opt, arg, min,
				   max);
	*out = (uint32_t)v;
	return 0;
}

/* Model shape and storage.  Returns 1 handled, 0 not ours, 2 usage error. */
static int opt_model(plan_cli *c, int opt, const char *arg)
{
	uint32_t *field = NULL;
	const char *name = NULL;
	switch (opt) {
	case OPT_PARAMS:
		if (parse_count(arg, &c->nums.params) || c->nums.params <= 0 || c->nums.params > 1e14)
			return usage_error("plan", "invalid --params '%s' (e.g. 13b, 70e9)", arg);
		return 1;
	case OPT_FILE:
		if (!*arg)
			return usage_error("plan", "invalid --file '' (a file of the repository, e.g. model-Q4_K_M.gguf)");
		c->file = arg;
		return 1;
	case OPT_QUANT:
		if (!*arg)
			return usage_error("plan", "invalid --quant '' (e.g. q4_k_m, q8_0, bf16)");
		c->rq.quant = arg;
		return 1;
	case OPT_LAYERS: field = &c->nums.layers; name = "--layers"; break;
	case OPT_HIDDEN: field = &c->nums.hidden; name = "--hidden"; break;
	case OPT_HEADS: field = &c->nums.heads; name = "--heads"; break;
	case OPT_KV_HEADS: field = &c->nums.kv_heads; name = "--kv-heads"; break;
	case OPT_HEAD_DIM: field = &c->nums.head_dim; name = "--head-dim"; break;
	case OPT_FFN: field = &c->nums.ffn; name = "--ffn"; break;
	case OPT_VOCAB: field = &c->nums.vocab; name = "--vocab"; break;
	default:
		return 0;
	}
	return parse_u32(name, arg, 1, 10000000, field) ? 2 : 1;
}

/*
 * --host-mem DDR5-5600[xN]: the peak of N 64-bit channels (default 2) at
 * that transfer rate, MT/s x 8 B x N [derived]; it sets rq.ram_bw_gbs as
 * --host-bw would.  Returns 0 or a usage exit status.
 */
static int parse_host_mem(plan_cli *c, const char *arg)
{
	char kind[8] = "";
	long long mts = 0, ch = 2;
	const char *p = arg;
	size_t k = 0;
	bool ok = true, lead = false;
	/* "8xDDR4-3200": the channels first, as server specs write them */
	size_t nd = strspn(p, "0123456789");
	if (nd && nd < 4 && (p[nd] == 'x' || p[nd] == 'X')) {
		char num[4];
		memcpy(num, p, nd);
		num[nd] = 0;
		ok = parse_int(num, 1, 24, &ch) == 0;
		p += nd + 1;
		lead = true;
	}
	while (*p && *p != '-' && k + 1 < sizeof kind)
		kind[k++] = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p), p++;
	kind[k] = 0;
	static const char *const kinds[] = {"DDR4", "DDR5", "LPDDR4", "LPDDR4X", "LPDDR5", "LPDDR5X"};
	bool known = false;
	for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
		known = known || !strcmp(kind, kinds[i]);
	ok = ok && known && *p == '-';
	if (ok && lead && strpbrk(p + 1, "xX"))
		ok = false; /* the channels said twice */
	if (ok) {
		char num[16];
		const char *x = strpbrk(p + 1, "xX");
		size_t n = x ? (size_t)(x - p - 1) : strlen(p + 1);
		ok = n > 0 && n < sizeof num;
		if (ok) {
			memcpy(num, p + 1, n);
			num[n] = 0;
			ok = parse_int(num, 800, 20000, &mts) == 0 && (!x || parse_int(x + 1, 1, 24, &ch) == 0);
		}
	}
	if (!ok)
		return usage_error("plan", "invalid --host-mem '%s' (DDR4-3200, DDR5-5600, DDR5-6400x12 or 12xDDR5-6400, "
				   "LPDDR5X-8000x4: type, MT/s, x 64-bit channels)", arg);
	c->rq.ram_bw_gbs = (double)mts * 8.0 * (double)ch / 1000.0;
	snprintf(c->host_mem, sizeof c->host_mem, "%s-%lld x%lld", kind, mts, ch);
	return 0;
}

/* Hardware: GPUs, VRAM, RAM. */
static int opt_hw(plan_cli *c, int opt, const char *arg)
{
	double d;
	switch (opt) {
	case OPT_GPU:
		if (str_ieq(arg, "none") || str_ieq(arg, "cpu"))
			c->cpu = true;
		else
			c->gpu_arg = arg;
		return 1;
	case OPT_CPU:
		c->cpu = true;
		return 1;
	case OPT_HOST_MEM:
		return parse_host_mem(c, arg) ? 2 : 1;
	case OPT_PLATFORM:
		if (str_ieq(arg, "linux"))
			c->platform_opt = "linux";
		else if (str_ieq(arg, "windows") || str_ieq(arg, "win"))
			c->platform_opt = "windows";
		else if (str_ieq(arg, "wsl2") || str_ieq(arg, "wsl"))
			c->platform_opt = "wsl2";
		else
			return usage_error("plan", "unknown --platform '%s' (linux, windows, wsl2)", arg);
		return 1;
	case OPT_THREADS: {
		long long v;
		if (parse_int(arg, 1, 4096, &v))
			return usage_error("plan", "invalid --threads '%s' (a whole number from 1 to 4096)", arg);
		c->rq.cpu_threads = (uint32_t)v;
		return 1;
	}
	case OPT_VRAM: {
		uint64_t b;
		if (*arg && strspn(arg, "0123456789. ") != strlen(arg) && parse_size(arg, &b) == 0 && b == 0)
			return usage_error("plan", "--vram %s is no GPU: to plan llama.cpp on the CPU, say --gpu none",
					   arg);
		return parse_size_opt("plan", "--vram", arg, &c->vram) ? 2 : 1;
	}
	case OPT_RAM:
		return parse_size_opt("plan", "--ram", arg, &c->rq.ram_bytes) ? 2 : 1;
	case OPT_RAM_BW:
		if (parse_double(arg, &d) || !(d > 0 && d < 100000))
			return usage_error("plan", "invalid --ram-bw '%s' (GB/s, e.g. 60)", arg);
		c->rq.ram_bw_gbs = d;
		return 1;
	default:
		return 0;
	}
}

/* The inference run: context, batch, KV cache, engine. */
static int opt_run(plan_cli *c, int opt, const char *arg)
{
	uint32_t v = 0;
	double d;
	switch (opt) {
	case OPT_CTX:
		return parse_ctx_opt("plan", "--ctx", arg, &c->rq.ctx) ? 2 : 1;
	case OPT_BATCH:
		return parse_u32("--batch", arg, 1, 1048576, &c->rq.batch) ? 2 : 1;
	case OPT_PARALLEL:
		/* llama-server's -np auto: 4 slots sharing one unified cache
		 * (tools/server/server.cpp); --no-kv-unified after it splits them */
		if (str_ieq(arg, "auto")) {
			c->rq.n_parallel = 4;
			c->rq.kv_unified = !c->no_kv_unified;
			return 1;
		}
		{
			long long np;
			if (parse_int(arg, 1, 4096, &np))
				return usage_error("plan", "invalid --parallel '%s' (a whole number from 1 to 4096, or auto)",
						   arg);
			c->rq.n_parallel = (uint32_t)np;
			return 1;
		}
	case OPT_KV_UNIFIED:
		c->rq.kv_unified = true;
		c->no_kv_unified = false;
		return 1;
	case OPT_NO_KV_UNIFIED:
		c->rq.kv_unified = false;
		c->no_kv_unified = true;
		return 1;
	case OPT_NO_OP_OFFLOAD:
		c->rq.no_op_offload = true;
		return 1;
	case OPT_NO_MMAP:
		c->rq.no_mmap = true;
		return 1;
	case OPT_PER_USER_TPS:
		if (parse_double(arg, &d) || !(d > 0 && d < 1e6))
			return usage_error("plan", "invalid --per-user-tps '%s' (tokens/s per user, e.g. 20)", arg);
		c->per_user_tps = d;
		return 1;
	case OPT_KV_TYPE:
		if (plan_kv_type_parse(arg, &c->rq.kv_type))
			return usage_error("plan", "unknown --kv-type '%s' (f16, q8_0, q4_0, f32, bf16, q5_0, "
					   "q5_1, q4_1, iq4_nl)", arg);
		return 1;
	case OPT_FLASH_ATTN:
		/* bare --flash-attn: on (as before -fa took a value) */
		if (!arg)
			c->rq.flash_attn = PLAN_FA_ON;
		else if (plan_fa_parse(arg, &c->rq.flash_attn))
			return usage_error("plan", "invalid --flash-attn '%s' (on, off, auto)", arg);
		c->fa_set = true;
		return 1;
	case OPT_ENGINE:
		if (plan_engine_spec_parse(arg, &c->rq.engine, &c->rq.engine_build))
			return usage_error("plan", "unknown --engine '%s' (llama.cpp, ollama, vllm, transformers; "
					   "llama.cpp@BUILD with BUILD one of %s)", arg,
					   plan_engine_builds(PLAN_ENGINE_LLAMACPP));
		c->engine_set = true;
		return 1;
	case OPT_BACKEND:
		if (plan_backend_parse(arg, &c->rq.backend))
			return usage_error("plan", "unknown --backend '%s' (cuda, rocm, vulkan, metal, sycl, cpu)", arg);
		return 1;
	case OPT_GPU_LAYERS:
		if (parse_u32("--gpu-layers", arg, 0, 100000, &v))
			return 2;
		c->rq.gpu_layers = (int)v;
		return 1;
	case OPT_SPLIT_MODE:
		if (!strcmp(arg, "row"))
			c->rq.split_row = true;
		else if (!strcmp(arg, "layer"))
			c->rq.split_row = false;
		else
			return usage_error("plan", "unknown --split-mode '%s' (layer, row)", arg);
		return 1;
	case OPT_N_CPU_MOE:
		return parse_u32("--n-cpu-moe", arg, 0, 100000, &c->rq.n_cpu_moe) ? 2 : 1;
	case OPT_GPU_UTIL:
		if (parse_double(arg, &d) || !(d > 0 && d <= 1))
			return usage_error("plan", "invalid --gpu-util '%s' (a fraction in (0, 1])", arg);
		c->rq.gpu_mem_util = d;
		return 1;
	default:
		return 0;
	}
}

static int opt_output(plan_cli *c, int opt, const char *arg)
{
	(void)arg;
	if (opt == OPT_JSON)
		c->json = true;
	else if (opt == OPT_HELP)
		c->help = true;
	else
		return 0;
	return 1;
}

/* Fine-tuning and image generation (cmd/workload.c). */
static int opt_workload(plan_cli *c, int opt, const char *arg)
{
	int rc = workload_option(&c->wl, opt, arg, "plan");
	return rc < 0 ? 0 : rc == 0 ? 1 : 2;
}

static int (*const option_groups[])(plan_cli *, int, const char *) = {opt_model, opt_hw, opt_run,
								       opt_output, opt_workload};

static int parse_opts(plan_cli *c, int argc, char **argv, const struct option *opts);

static int parse_args(plan_cli *c, int argc, char **argv)
{
	size_t n_own = sizeof long_opts / sizeof *long_opts - 1, n_wl = workload_option_count();
	struct option *opts = xcalloc(n_own + n_wl + 1, sizeof *opts);
	memcpy(opts, long_opts, n_own * sizeof *opts);
	memcpy(opts + n_own, workload_options, n_wl * sizeof *opts);
	int rc = parse_opts(c, argc, argv, opts);
	free(opts);
	return rc;
}

static int parse_opts(plan_cli *c, int argc, char **argv, const struct option *opts)
{
	int opt;
	opterr = 0;
	optind = 1;
	/* llama.cpp's spelling -ub N is --ubatch: getopt would read
	 * it as -u -b */
	static char ubatch[] = "--ubatch", split_mode[] = "--split-mode";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "-ub"))
			argv[i] = ubatch;
		else if (!strcmp(argv[i], "-sm"))
			argv[i] = split_mode;
	}
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (opt == 'h') {
			c->help = true;
			continue;
		}
		if (opt == '?' || opt == ':') {
			const char *bad = argv[optind - 1];
			if (optopt)
				return usage_error("plan", "option '%s' needs a value", bad);
			return usage_error("plan", "unknown option '%s'", bad);
		}
		/* --flash-attn on|off|auto as a separate word */
		const char *arg = optarg;
		plan_fa fa;
		if (opt == OPT_FLASH_ATTN && !arg && optind < argc && !plan_fa_parse(argv[optind], &fa))
			arg = argv[optind++];
		int handled = 0;
		for (size_t g = 0; g < sizeof option_groups / sizeof *option_groups && !handled; g++)
			handled = option_groups[g](c, opt, arg);
		if (handled == 2)
			return GW_EXIT_USAGE;
	}
	if (c->help)
		return 0;
	if (optind < argc)
		c->model = argv[optind++];
	if (c->model && !*c->model)
		return usage_error("plan", "the model name is empty");
	if (optind < argc)
		return usage_error("plan", "unexpected argument '%s'", argv[optind]);
	return 0;
}

/*
 * No --gpu or --vram: this machine's GPUs (hw snapshot), with their free
 * memory, and the catalog's bandwidth and TFLOPS when the card is known.
 */
static int machine_gpus(plan_cli *c, bool required)
{
	plan_request *rq = &c->rq;
	hw_opts o = {.no_procs = false};
	hw_snapshot snap;
	gw_error err = {0};
	if (hw_snapshot_take(&o, &snap, &err) == 0) {
		c->platform = snap.platform;
		for (size_t i = 0; i < snap.n_gpus && rq->n_gpus < PLAN_MAX_GPUS; i++) {
			const hw_gpu *h = &snap.gpus[i];
			if (!HW_VALID(h->mem_total_bytes) || h->mem_total_bytes.v <= 0)
				continue;
			plan_gpu *g = &rq->gpus[rq->n_gpus++];
			const gpu_spec *s = kb_gpu_find(h->name);
			if (s)
				plan_gpu_from_spec(g, s);
			else
				memset(g, 0, sizeof *g);
			snprintf(g->name, sizeof g->name, "%s", h->name);
			g->vram_bytes = (uint64_t)h->mem_total_bytes.v;
			double gbs;
			size_t gi = rq->n_gpus - 1;
			if (bench_cache_lookup("gpu", h->name, &gbs, c->bw_from[gi], sizeof c->bw_from[gi]) == 0) {
				g->bandwidth_gbs = gbs; /* what `gpuwise bench` measured here */
				g->bandwidth_from = c->bw_from[gi];
			}
			if (HW_VALID(h->mem_free_bytes) && h->mem_free_bytes.v > 0)
				g->free_bytes = (uint64_t)h->mem_free_bytes.v;
			c->on_machine = true;
			if (HW_VALID(h->mem_used_bytes) && h->mem_used_bytes.v > 0)
				c->gpu_used_bytes[rq->n_gpus - 1] = (uint64_t)h->mem_used_bytes.v;
			for (size_t k = 0; k < h->n_procs; k++) {
				const hw_proc *p = &h->procs[k];
				if (!HW_VALID(p->used_mem_bytes) || p->used_mem_bytes.v <= 0)
					continue;
				if (!p->windows_side)
					c->gpu_listed_bytes[rq->n_gpus - 1] += (uint64_t)p->used_mem_bytes.v;
				c->procs = xrealloc(c->procs, (c->n_procs + 1) * sizeof *c->procs);
				c->proc_gpu = xrealloc(c->proc_gpu, (c->n_procs + 1) * sizeof *c->proc_gpu);
				c->procs[c->n_procs] = *p;
				c->proc_gpu[c->n_procs++] = rq->n_gpus - 1;
			}
		}
		hw_snapshot_release(&snap);
	}
	if (rq->n_gpus == 0 && required)
		return usage_error("plan", "no GPU found on this machine; say which GPU: --gpu ID (e.g. rtx-4090, "
					   "2x3090) or --vram SIZE");
	return 0;
}

/* "2x3090,rtx-4090" -> rq->gpus.  Returns 0 or a usage exit status. */
static int resolve_gpus(plan_cli *c)
{
	plan_request *rq = &c->rq;
	if (c->gpu_arg) {
		char *copy = xstrdup(c->gpu_arg);
		char *parts[PLAN_MAX_GPUS + 1];
		size_t n = str_split(copy, ',', parts, PLAN_MAX_GPUS + 1);
		int rc = 0;
		for (size_t i = 0; i < n && rc == 0; i++) {
			char *p = str_trim(parts[i]);
			long long count = 1;
			char *x = strchr(p, 'x');
			if (x && x > p) {
				*x = 0;
				if (parse_int(p, 1, PLAN_MAX_GPUS, &count)) {
					bool digits = strspn(p, "0123456789") == strlen(p);
					*x = 'x';
					if (digits) {
						rc = usage_error("plan", "invalid count in --gpu '%s' (NxID, N from 1 to %d)",
								 p, PLAN_MAX_GPUS);
						break;
					}
					count = 1;
				} else {
					p = x + 1;
				}
			}
			if (!*p) {
				rc = usage_error("plan", "invalid --gpu '%s' (an empty GPU name)", c->gpu_arg);
				break;
			}
			const gpu_spec *s = kb_gpu_find(p);
			if (!s) {
				const gpu_spec *sug = kb_gpu_suggest(p);
				if (sug)
					rc = usage_error("plan", "unknown GPU '%s' (did you mean '%s'? gpuwise list gpus shows the "
								 "catalog)", p, sug->id);
				else
					rc = usage_error("plan", "unknown GPU '%s' (gpuwise list gpus shows the catalog)", p);
				break;
			}
			for (long long k = 0; k < count; k++) {
				if (rq->n_gpus >= PLAN_MAX_GPUS) {
					rc = usage_error("plan", "at most %d GPUs", PLAN_MAX_GPUS);
					break;
				}
				plan_gpu_from_spec(&rq->gpus[rq->n_gpus++], s);
			}
		}
		free(copy);
		if (rc)
			return rc;
		if (c->vram)
			for (size_t i = 0; i < rq->n_gpus; i++)
				rq->gpus[i].vram_bytes = c->vram;
		return 0;
	}
	if (c->vram) {
		plan_gpu *g = &rq->gpus[rq->n_gpus++];
		memset(g, 0, sizeof *g);
		char b[32];
		snprintf(g->name, sizeof g->name, _("GPU with %s"), fmt_bytes(b, sizeof b, c->vram));
		g->vram_bytes = c->vram;
		return 0;
	}
	return machine_gpus(c, false); /* none: plan_need() answers with the need */
}

/* ---- text output ------------------------------------------------------------ */
static const char *gib(char *b, size_t n, uint64_t v)
{
	return fmt_bytes(b, n, v);
}

/* Many users: the step at the N asked, the curve, the limits. */
static void serve_text(const plan_serve *s, const plan_result *r, FILE *f)
{
	if (!s->known) {
		fprintf(f, _("\nserving: - (one sequence does not fit, or no speed for this GPU)\n"));
		return;
	}
	const plan_serve_point *a = &s->asked;
	fprintf(f, _("\nserving %u sequence%s of %llu tokens (%s):\n"), s->n_asked, s->n_asked == 1 ? "" : "s",
		(unsigned long long)s->ctx, plan_engine_name(r->engine));
	if (!s->asked_fits)
		fprintf(f, _("  %u sequences do not fit: the KV cache holds %u\n"), s->n_asked, s->max_seqs);
	fprintf(f, _("  per request ~%.1f tok/s, aggregate ~%.0f tok/s (step %.2f ms%s)\n"), a->per_request_tok_s,
		a->aggregate_tok_s, a->step_ms, a->compute_bound ? _(", compute-bound") : _(", memory-bound"));
	fprintf(f, "  %-10s", "N");
	for (size_t i = 0; i < s->n_points; i++)
		fprintf(f, " %7u", s->points[i].n);
	fprintf(f, "\n  %-10s", "tok/s/req");
	for (size_t i = 0; i < s->n_points; i++)
		fprintf(f, " %7.1f", s->points[i].per_request_tok_s);
	fprintf(f, "\n  %-10s", _("aggregate"));
	for (size_t i = 0; i < s->n_points; i++)
		fprintf(f, " %7.0f", s->points[i].aggregate_tok_s);
	fputc('\n', f);
	if (s->compute_bound_from)
		fprintf(f, _("  decode turns compute-bound from %u sequences\n"), s->compute_bound_from);
	else
		fprintf(f, _("  decode stays memory-bound up to %u sequences\n"), s->max_seqs);
	if (s->engine_max_seqs && s->engine_max_seqs < s->kv_max_seqs)
		fprintf(f, _("  the KV cache holds %u sequences of %llu tokens; the engine runs at most %u at once "
			   "(max_num_seqs)\n"), s->kv_max_seqs, (unsigned long long)s->ctx, s->engine_max_seqs);
	else
		fprintf(f, _("  the KV cache holds %u sequence%s of %llu tokens%s\n"), s->kv_max_seqs,
			s->kv_max_seqs == 1 ? "" : "s", (unsigned long long)s->ctx,
			s->kv_max_seqs >= 4096 ? _(" (or more)") : "");
	if (s->per_user_tok_s > 0) {
		if (s->users_at_target)
			fprintf(f, _("  at %.4g tok/s each: %u user%s at once%s\n"), s->per_user_tok_s, s->users_at_target,
				s->users_at_target == 1 ? "" : "s",
				s->users_at_target == s->max_seqs ? _(" (all the KV cache and engine hold)") : "");
		else
			fprintf(f, _("  at %.4g tok/s each: none (one alone gets %.1f)\n"), s->per_user_tok_s,
				s->points[0].per_request_tok_s);
	}
}

static json_t *serve_point_json(const plan_serve_point *p)
{
	json_t *o = json_object();
	json_object_set_new(o, "n", json_integer(p->n));
	json_object_set_new(o, "step_ms", jreal_round(p->step_ms, 3));
	json_object_set_new(o, "per_request_tok_s", jreal_round(p->per_request_tok_s, 2));
	json_object_set_new(o, "aggregate_tok_s", jreal_round(p->aggregate_tok_s, 1));
	json_object_set_new(o, "compute_bound", json_boolean(p->compute_bound));
	return o;
}

static json_t *serve_json(const plan_serve *s)
{
	if (!s)
		return json_null();
	json_t *o = json_object();
	json_object_set_new(o, "known", json_boolean(s->known));
	json_object_set_new(o, "parallel", json_integer(s->n_asked));
	if (!s->known)
		return o;
	json_object_set_new(o, "ctx", json_integer((json_int_t)s->ctx));
	json_object_set_new(o, "at_parallel", serve_point_json(&s->asked));
	json_object_set_new(o, "parallel_fits", json_boolean(s->asked_fits));
	json_t *arr = json_array();
	for (size_t i = 0; i < s->n_points; i++)
		json_array_append_new(arr, serve_point_json(&s->points[i]));
	json_object_set_new(o, "curve", arr);
	json_object_set_new(o, "kv_max_seqs", json_integer(s->kv_max_seqs));
	json_object_set_new(o, "engine_max_seqs", jint_or_null(s->engine_max_seqs > 0, s->engine_max_seqs));
	json_object_set_new(o, "max_seqs", json_integer(s->max_seqs));
	json_object_set_new(o, "compute_bound_from", jint_or_null(s->compute_bound_from > 0, s->compute_bound_from));
	json_object_set_new(o, "per_user_tok_s", s->per_user_tok_s > 0 ? json_real(s->per_user_tok_s) : json_null());
	json_object_set_new(o, "users_at_target", s->per_user_tok_s > 0 ? json_integer(s->users_at_target) : json_null());
	json_t *parts = json_object();
	json_object_set_new(parts, "one_sequence_ms", jreal_round(s->t1_ms, 3));
	json_object_set_new(parts, "kv_ms_per_seq", jreal_round(s->kv_ms_per_seq, 4));
	json_object_set_new(parts, "compute_ms_per_seq", jreal_round(s->compute_ms_per_seq, 4));
	json_object_set_new(parts, "overhead_ms_per_seq", jreal_round(s->overhead_ms_per_seq, 3));
	json_object_set_new(parts, "kv_bytes_per_seq", json_integer((json_int_t)s->kv_bytes_per_seq));
	json_object_set_new(o, "step", parts);
	return o;
}

/* The host part fits the RAM but not beside the system's share (--ram) or
 * beside the rest of the mapped model file (engine_llamacpp.c mapped_bytes). */
static bool host_starved(const plan_cli *c, const plan_result *r)
{
	return r->ram_known && !r->ram_ok && r->host_bytes > 0 && r->host_bytes <= c->rq.ram_bytes &&
	       (c->rq.ram_reserve_bytes > 0 || r->mapped_bytes > 0);
}

static void print_text(const plan_cli *c, const model_desc *m, const plan_result *r, FILE *f)
{
	char b1[32], b2[32], b3[32], b4[32];
	const plan_request *rq = &c->rq;

	fprintf(f, _("%s%s%s: %u layers, %.2fB params, %s %s (%s)\n"), c_bold(f), m->name ? m->name : "model",
		c_reset(f), m->n_layers, (m->params_total > 0 ? m->params_total : 0) / 1e9, r->quant,
		gib(b1, sizeof b1, r->model_bytes), r->weights_exact ? _("exact") : _("estimated"));
	model_origin_print(f, m);
	fprintf(f, _("engine %s, context %llu"), plan_engine_name(r->engine), (unsigned long long)r->ctx);
	if (r->n_parallel > 1 && r->kv_streams > 1)
		fprintf(f, _(" x %u parallel (a KV stream each)"), r->n_parallel);
	else if (r->n_parallel > 1)
		fprintf(f, _(" x %u parallel (one unified KV cache)"), r->n_parallel);
	if (r->engine == PLAN_ENGINE_LLAMACPP || r->engine == PLAN_ENGINE_OLLAMA)
		fprintf(f, _(", batch %u"), r->batch);
	fprintf(f, _(", KV %s%s%s\n"), plan_kv_type_name(r->kv_type),
		r->flash_attn ? _(", flash attention") : _(", no flash attention"),
		r->flash_attn_assumed ? _(" (engine default, assumed)") : "");
	fputc('\n', f);

	size_t nd = r->n_devices;
	size_t ncols = nd + 2;
	const char **hdr = xcalloc(ncols, sizeof *hdr);
	char **owned = xcalloc(ncols * 6, sizeof *owned);
	size_t no = 0;
	hdr[0] = "";
	for (size_t d = 0; d < nd; d++)
		hdr[d + 1] = owned[no++] = xasprintf("GPU %zu", d);
	hdr[nd + 1] = _("host RAM");
	table *t = table_new(ncols, hdr);
	for (size_t k = 1; k < ncols; k++)
		table_set_align(t, k, true);
	const char *rows[] = {N_("weights"), N_("KV cache"), N_("compute"), N_("overhead"), N_("total"), N_("available")};
	for (size_t row = 0; row < 6; row++) {
		const char **cells = xcalloc(ncols, sizeof *cells);
		char **tmp = xcalloc(ncols, sizeof *tmp);
		cells[0] = _(rows[row]);
		for (size_t d = 0; d < nd; d++) {
			const plan_device *pd = &r->devices[d];
			uint64_t v = row == 0 ? pd->weights_bytes : row == 1 ? pd->kv_cache_bytes
					: row == 2 ? pd->compute_bytes : row == 3 ? pd->overhead_bytes
					: row == 4 ? pd->total_bytes : pd->usable_bytes;
			tmp[d + 1] = xstrdup(gib(b1, sizeof b1, v));
			cells[d + 1] = tmp[d + 1];
		}
		uint64_t h = row == 0 ? r->host_weights_bytes : row == 1 ? r->host_kv_bytes
			   : row == 2 ? r->host_compute_bytes : row == 3 ? 0
			   : row == 4 ? r->host_bytes : rq->ram_bytes;
		tmp[nd + 1] = xstrdup(row == 3 ? "-" : (row == 5 && !rq->ram_bytes) ? "?" : gib(b1, sizeof b1, h));
		cells[nd + 1] = tmp[nd + 1];
		table_addv(t, cells);
		for (size_t k = 0; k < ncols; k++)
			free(tmp[k]);
		free(tmp);
		free(cells);
	}
	table_print(t, f);
	table_free(t);
	for (size_t k = 0; k < no; k++)
		free(owned[k]);
	free(owned);
	free(hdr);
	for (size_t d = 0; d < nd; d++) {
		const plan_device *pd = &r->devices[d];
		fprintf(f, _("  GPU %zu: %s, %s"), d, pd->name, gib(b1, sizeof b1, pd->vram_total_bytes));
		if (pd->layers)
			fprintf(f, _(", layers %u-%u%s\n"), pd->first_layer, pd->first_layer + pd->layers - 1,
				pd->has_output ? _(" (incl. output)") : "");
		else
			fprintf(f, _(", no layers\n"));
	}
	fputc('\n', f);

	const char *col = r->verdict == PLAN_FITS ? c_green(f) : r->verdict == PLAN_OFFLOAD ? c_yellow(f) : c_red(f);
	if (rq->cpu_only && r->verdict == PLAN_FITS)
		fprintf(f, _("verdict: %sfits%s in host RAM: all %u layers on the CPU (%u threads), %s%s%s\n"), col,
			c_reset(f), r->total_layers, rq->cpu_threads ? rq->cpu_threads : 8,
			gib(b1, sizeof b1, r->host_bytes), rq->ram_bytes > 1 ? _(" of ") : "",
			rq->ram_bytes > 1 ? gib(b2, sizeof b2, rq->ram_bytes) : "");
	else if (rq->cpu_only && rq->ram_reserve_bytes)
		fprintf(f, _("verdict: %sdoes not fit%s: needs %s of host RAM, %s with the system's share (have %s)\n"),
			col, c_reset(f), gib(b1, sizeof b1, r->host_bytes), gib(b3, sizeof b3, r->ram_need_bytes),
			gib(b2, sizeof b2, rq->ram_bytes));
	else if (rq->cpu_only)
		fprintf(f, _("verdict: %sdoes not fit%s: needs %s of host RAM (have %s)\n"), col, c_reset(f),
			gib(b1, sizeof b1, r->host_bytes), gib(b2, sizeof b2, rq->ram_bytes));
	else if (r->verdict == PLAN_FITS)
		fprintf(f, _("verdict: %sfits%s: all %u layers on the GPU%s, %s of %s\n"), col, c_reset(f),
			r->total_layers, r->n_devices > 1 ? "s" : "", gib(b1, sizeof b1, r->vram_bytes),
			gib(b2, sizeof b2, r->n_devices ? r->devices[0].usable_bytes * r->n_devices : 0));
	else if (r->verdict == PLAN_OFFLOAD && r->spill_bytes)
		fprintf(f, _("verdict: %soffload%s: %u of %u layers on the GPU%s (-ngl %u), %s of them beyond the dedicated "
			   "VRAM: Windows' driver spills it into shared system memory (Sysmem Fallback) instead of failing\n"),
			col, c_reset(f), r->gpu_layers, r->total_layers, r->n_devices > 1 ? "s" : "", r->gpu_layers,
			gib(b1, sizeof b1, r->spill_bytes));
	else if (r->verdict == PLAN_OFFLOAD && r->n_cpu_moe && r->gpu_layers == r->total_layers)
		fprintf(f, _("verdict: %soffload%s: all %u layers on the GPU%s, the experts of %u layers in host RAM "
			   "(--n-cpu-moe %u; %s%s%s)\n"),
			col, c_reset(f), r->total_layers, r->n_devices > 1 ? "s" : "", r->n_cpu_moe, r->n_cpu_moe,
			gib(b1, sizeof b1, r->host_bytes), rq->ram_bytes ? _(" of ") : "",
			rq->ram_bytes ? gib(b3, sizeof b3, rq->ram_bytes) : "");
	else if (r->verdict == PLAN_OFFLOAD) {
		char how[48] = "";
		if (r->engine == PLAN_ENGINE_LLAMACPP || r->engine == PLAN_ENGINE_OLLAMA)
			snprintf(how, sizeof how, _(" (-ngl %u)"), r->gpu_layers);
		else
			snprintf(how, sizeof how, " (device_map=\"auto\")");
		fprintf(f, _("verdict: %soffload%s: %u of %u layers on the GPU%s%s, %u in host RAM (%s%s%s)\n"),
			col, c_reset(f), r->gpu_layers, r->total_layers, r->n_devices > 1 ? "s" : "", how,
			r->total_layers - r->gpu_layers, gib(b1, sizeof b1, r->host_bytes),
			rq->ram_bytes ? _(" of ") : "", rq->ram_bytes ? gib(b3, sizeof b3, rq->ram_bytes) : "");
	}
	else if (r->gpu_layers > 0 && host_starved(c, r) && r->mapped_bytes > 0)
		fprintf(f, _("verdict: %shost starved%s: the GPU part fits, but llama.cpp maps the whole model file (%s) and "
			   "the system keeps %s: more than the %s of RAM, so the part in host RAM (%s) would page from disk "
			   "every token\n"),
			col, c_reset(f), gib(b1, sizeof b1, r->mapped_bytes), gib(b3, sizeof b3, rq->ram_reserve_bytes),
			gib(b2, sizeof b2, rq->ram_bytes), gib(b4, sizeof b4, r->host_bytes));
	else if (r->gpu_layers > 0 && host_starved(c, r))
		fprintf(f, _("verdict: %shost starved%s: the GPU part fits, but the part in host RAM (%s) and the "
			   "system's share (%s) exceed the %s of RAM: the weights would page from disk every token\n"),
			col, c_reset(f), gib(b1, sizeof b1, r->host_bytes), gib(b3, sizeof b3, rq->ram_reserve_bytes),
			gib(b2, sizeof b2, rq->ram_bytes));
	else if (r->ram_known && !r->ram_ok && r->gpu_layers > 0)
		fprintf(f, _("verdict: %sdoes not fit%s: %u of %u layers fit the GPU, but the rest needs %s of host RAM (have %s)\n"),
			col, c_reset(f), r->gpu_layers, r->total_layers, gib(b1, sizeof b1, r->host_bytes),
			gib(b2, sizeof b2, rq->ram_bytes));
	else
		fprintf(f, _("verdict: %sdoes not fit%s: needs %s on the GPU%s\n"), col, c_reset(f),
			gib(b1, sizeof b1, r->vram_bytes), r->n_devices > 1 ? "s" : "");
	if (r->max_ctx)
		fprintf(f, _("max context: %llu%s\n"), (unsigned long long)r->max_ctx,
			r->verdict == PLAN_OFFLOAD ? _(" (keeping this many layers on the GPU)")
			: rq->cpu_only ? _(" (in host RAM)") : "");
	if (r->decode_tok_s > 0)
		fprintf(f, _("decode: ~%.1f tok/s"), r->decode_tok_s);
	else if (r->verdict == PLAN_NOFIT && host_starved(c, r))
		fprintf(f, _("decode: - (host starved: paging from disk, no speed given)"));
	else if (r->verdict == PLAN_NOFIT)
		fprintf(f, _("decode: - (does not fit)"));
	else
		fprintf(f, _("decode: unknown (no bandwidth for this GPU; give --gpu ID)"));
	if (r->prefill_tok_s > 0)
		fprintf(f, _("   prefill: ~%.0f tok/s"), r->prefill_tok_s);
	fprintf(f, "   (%s)\n", plan_engine_name(r->engine));
	if (c->serve)
		serve_text(c->serve, r, f);
	fprintf(f, _("\nassumptions:\n"));
	for (size_t i = 0; i < r->n_notes; i++)
		fprintf(f, "  - %s\n", r->notes[i]);
	char lc[CARDS_CAVEAT_LEN]; /* the card's lifecycle (data/lifecycle.tsv) */
	if (rq->n_gpus && rq->gpus[0].spec && cards_lifecycle_text(rq->gpus[0].spec, lc, sizeof lc))
		fprintf(f, "  - %s\n", lc);
	if (r->n_advice) {
		fprintf(f, _("\nadvice:\n"));
		for (size_t i = 0; i < r->n_advice; i++)
			fprintf(f, "  %zu. %s\n     -> %s\n", i + 1, r->advice[i].action, r->advice[i].effect);
	}
}

/* ---- JSON ------------------------------------------------------------------- */
static json_t *jbytes(uint64_t v)
{
	return json_integer((json_int_t)v);
}

static json_t *device_json(const plan_device *pd)
{
	json_t *o = json_object();
	json_object_set_new(o, "name", json_string(pd->name));
	json_object_set_new(o, "vram_total_bytes", jbytes(pd->vram_total_bytes));
	json_object_set_new(o, "usable_bytes", jbytes(pd->usable_bytes));
	json_object_set_new(o, "layers", json_integer(pd->layers));
	json_object_set_new(o, "first_layer", pd->layers ? json_integer(pd->first_layer) : json_null());
	json_object_set_new(o, "output_layer", json_boolean(pd->has_output));
	json_object_set_new(o, "weights_bytes", jbytes(pd->weights_bytes));
	json_object_set_new(o, "kv_cache_bytes", jbytes(pd->kv_cache_bytes));
	json_object_set_new(o, "compute_bytes", jbytes(pd->compute_bytes));
	json_object_set_new(o, "overhead_bytes", jbytes(pd->overhead_bytes));
	json_object_set_new(o, "total_bytes", jbytes(pd->total_bytes));
	return o;
}

static json_t *plan_json(const plan_cli *c, const model_desc *m, const plan_result *r)
{
	json_t *o = json_object();
	json_object_set_new(o, "model", json_string(m->name ? m->name : "model"));
	json_object_set_new(o, "model_source", json_string(model_source_name(m->source)));
	json_object_set_new(o, "source", model_origin_json(m));
	json_object_set_new(o, "engine", json_string(plan_engine_name(r->engine)));
	json_object_set_new(o, "quant", json_string(r->quant));
	json_object_set_new(o, "weights_exact", json_boolean(r->weights_exact));
	json_object_set_new(o, "ctx", json_integer((json_int_t)r->ctx));
	json_object_set_new(o, "kv_cells", json_integer((json_int_t)r->kv_cells));
	json_object_set_new(o, "batch", json_integer(r->batch));
	json_object_set_new(o, "parallel", json_integer(r->n_parallel));
	json_object_set_new(o, "kv_unified", json_boolean(r->kv_unified));
	json_object_set_new(o, "kv_streams", json_integer(r->kv_streams));
	json_object_set_new(o, "kv_stream_cells", json_integer((json_int_t)r->kv_stream_cells));
	json_object_set_new(o, "kv_swa_cells", json_integer((json_int_t)r->kv_swa_cells));
	json_object_set_new(o, "kv_type", json_string(plan_kv_type_name(r->kv_type)));
	json_object_set_new(o, "flash_attn", json_boolean(r->flash_attn));
	json_object_set_new(o, "flash_attn_assumed", json_boolean(r->flash_attn_assumed));
	json_object_set_new(o, "engine_build", r->engine_build[0] ? json_string(r->engine_build) : json_null());
	json_object_set_new(o, "backend", json_string(plan_backend_name(r->backend)));
	json_t *sm = json_object();
	json_object_set_new(sm, "build", r->speed_build[0] ? json_string(r->speed_build) : json_null());
	json_object_set_new(sm, "backend", json_string(plan_backend_name(r->backend)));
	json_object_set_new(sm, "family", r->speed_family[0] ? json_string(r->speed_family) : json_null());
	json_object_set_new(sm, "table", json_string(r->speed_build[0] ? "data/speed.tsv" : "engine constants"));
	json_object_set_new(o, "speed_model", sm);
	json_object_set_new(o, "verdict", json_string(plan_verdict_name(r->verdict)));
	json_object_set_new(o, "cpu_only", json_boolean(c->rq.cpu_only));
	if (c->rq.cpu_only) {
		json_t *cpu = json_object();
		json_object_set_new(cpu, "threads", json_integer(c->rq.cpu_threads ? c->rq.cpu_threads : 8));
		json_object_set_new(cpu, "threads_from", json_string(c->threads_from_machine ? "/proc/cpuinfo"
								     : c->rq.cpu_threads ? "--threads" : "assumed"));
		json_object_set_new(cpu, "host_bandwidth_gbs", jreal_round(plan_host_peak_gbs(&c->rq), 1));
		char from[64];
		snprintf(from, sizeof from, "--host-mem %s", c->host_mem);
		json_object_set_new(cpu, "host_bandwidth_from", json_string(c->host_mem[0] ? from
								     : c->host_bw_source ? c->host_bw_source : "assumed"));
		json_object_set_new(cpu, "decode_read_gbs", jreal_round(plan_host_read_gbs(&c->rq), 1));
		json_object_set_new(cpu, "prefill_gflops", jreal_round(plan_host_gflops(&c->rq), 0));
		json_object_set_new(cpu, "bytes_per_token", json_integer((json_int_t)r->host_bytes_per_token));
		json_object_set_new(o, "cpu", cpu);
	} else {
		json_object_set_new(o, "cpu", json_null());
	}
	json_object_set_new(o, "gpu_layers", json_integer(r->gpu_layers));
	json_object_set_new(o, "total_layers", json_integer(r->total_layers));
	json_object_set_new(o, "n_cpu_moe", json_integer(r->n_cpu_moe));
	json_object_set_new(o, "split_mode", json_string(r->split_row ? "row" : "layer"));
	json_object_set_new(o, "fit_moe", json_boolean(r->fit_moe));
	json_object_set_new(o, "vram_bytes", jbytes(r->vram_bytes));
	json_t *bd = json_object();
	json_object_set_new(bd, "weights_bytes", jbytes(r->weights_bytes));
	json_object_set_new(bd, "kv_cache_bytes", jbytes(r->kv_cache_bytes));
	json_object_set_new(bd, "compute_bytes", jbytes(r->compute_bytes));
	json_object_set_new(bd, "overhead_bytes", jbytes(r->overhead_bytes));
	json_object_set_new(o, "breakdown", bd);
	json_t *devs = json_array();
	for (size_t d = 0; d < r->n_devices; d++)
		json_array_append_new(devs, device_json(&r->devices[d]));
	json_object_set_new(o, "devices", devs);
	json_object_set_new(o, "host_bytes", jbytes(r->host_bytes));
	json_t *host = json_object();
	json_object_set_new(host, "weights_bytes", jbytes(r->host_weights_bytes));
	json_object_set_new(host, "kv_cache_bytes", jbytes(r->host_kv_bytes));
	json_object_set_new(host, "compute_bytes", jbytes(r->host_compute_bytes));
	json_object_set_new(host, "ram_bytes", jint_or_null(c->rq.ram_bytes > 0, (long long)c->rq.ram_bytes));
	json_object_set_new(host, "ram_ok", r->ram_known ? json_boolean(r->ram_ok) : json_null());
	json_object_set_new(host, "ram_reserve_bytes", jbytes(c->rq.ram_reserve_bytes));
	json_object_set_new(host, "ram_need_bytes", jbytes(r->ram_need_bytes));
	json_object_set_new(host, "starved", json_boolean(host_starved(c, r)));
	json_object_set_new(host, "mapped_bytes", jbytes(r->mapped_bytes));
	json_object_set_new(host, "memory_bandwidth_gbs", jreal_round(plan_host_peak_gbs(&c->rq), 1));
	json_object_set_new(host, "memory_bandwidth_source", json_string(c->host_bw_source ? c->host_bw_source : "assumed"));
	json_object_set_new(host, "memory_bandwidth_from", json_string(c->rq.host_mem_from ? c->rq.host_mem_from : "--ram-bw"));
	json_object_set_new(o, "host", host);
	json_object_set_new(o, "model_bytes", jbytes(r->model_bytes));
	json_object_set_new(o, "embd_bytes", jbytes(r->embd_bytes));
	json_object_set_new(o, "kv_total_bytes", jbytes(r->kv_total_bytes));
	json_object_set_new(o, "max_ctx", jint_or_null(r->max_ctx > 0, (long long)r->max_ctx));
	json_object_set_new(o, "decode_tok_s", r->decode_tok_s > 0 ? jreal_round(r->decode_tok_s, 2) : json_null());
	json_object_set_new(o, "prefill_tok_s", r->prefill_tok_s > 0 ? jreal_round(r->prefill_tok_s, 1) : json_null());
	json_object_set_new(o, "prefill_copy_bytes_per_ubatch", json_integer((json_int_t)r->prefill_copy_bytes));
	json_object_set_new(o, "spill_bytes", json_integer((json_int_t)r->spill_bytes));
	json_t *adv = json_array();
	for (size_t i = 0; i < r->n_advice; i++) {
		json_t *a = json_object();
		json_object_set_new(a, "action", json_string(r->advice[i].action));
		json_object_set_new(a, "effect", json_string(r->advice[i].effect));
		json_object_set_new(a, "verdict", json_string(plan_verdict_name(r->advice[i].verdict)));
		json_t *set = json_object();
		for (size_t k = 0; k < r->advice[i].n_set; k++) {
			const plan_advice_set *x = &r->advice[i].set[k];
			json_object_set_new(set, x->key, x->type == PLAN_SET_STR    ? json_string(x->str)
							 : x->type == PLAN_SET_BOOL ? json_boolean(x->num)
										    : json_integer((json_int_t)x->num));
		}
		json_object_set_new(a, "set", set);
		json_object_set_new(a, "vram_bytes", jbytes(r->advice[i].vram_bytes));
		json_object_set_new(a, "gpu_layers", json_integer(r->advice[i].gpu_layers));
		json_object_set_new(a, "placement", json_boolean(r->advice[i].placement));
		json_object_set_new(a, "decode_tok_s", r->advice[i].decode_tok_s > 0 ? jreal_round(r->advice[i].decode_tok_s, 2)
										     : json_null());
		json_array_append_new(adv, a);
	}
	json_object_set_new(o, "advice", adv);
	json_object_set_new(o, "serving", serve_json(c->serve));
	json_t *notes = json_array();
	for (size_t i = 0; i < r->n_notes; i++)
		json_array_append_new(notes, json_string(r->notes[i]));
	json_object_set_new(o, "assumptions", notes);
	return o;
}

/* The platform planned: --platform, else this machine's ("linux", "wsl2", "wsl1"). */
static const char *platform_of(const plan_cli *c)
{
	if (c->platform_opt)
		return c->platform_opt;
	return hw_platform_name(c->on_machine ? c->platform : hw_platform());
}

/* ---- this machine: other processes, host RAM ------------------------------ */
/* WSL 2: what bounds host RAM, and the Windows side's share of the VRAM in use */
static void wsl_text(const plan_cli *c, FILE *f)
{
	char b1[32], b2[32], b3[32];
	if (c->platform != HW_PLATFORM_WSL2)
		return;
	if (c->ram_from_machine && c->wsl_mem_read) {
		if (c->wsl_mem.limit_bytes)
			fprintf(f, _("WSL 2: host RAM is the WSL VM's, limited by %s; to give it more, raise memory= there, "
				   "then in PowerShell: wsl --shutdown\n"), c->wsl_mem.rule);
		else
			fprintf(f, _("WSL 2: host RAM is the WSL VM's (%s: Windows has about %s); a [wsl2] memory= line in "
				   "%%UserProfile%%\\.wslconfig raises it (then in PowerShell: wsl --shutdown)\n"), c->wsl_mem.rule,
				gib(b1, sizeof b1, c->wsl_mem.windows_ram_bytes_est));
	}
	for (size_t i = 0; i < c->rq.n_gpus; i++) {
		uint64_t used = c->gpu_used_bytes[i], listed = c->gpu_listed_bytes[i];
		if (!used)
			continue;
		fprintf(f, _("WSL 2: GPU %zu has %s in use, %s of it the Windows desktop's and Windows apps' (not listed by "
			   "WSL; counted as used; Task Manager > Performance > GPU shows it)\n"), i, gib(b2, sizeof b2, used),
			gib(b3, sizeof b3, used > listed ? used - listed : 0));
	}
}

static void machine_text(const plan_cli *c, const plan_result *r, const plan_result *wo, FILE *f)
{
	char b1[32], b2[32], b3[32], b4[32];
	if (c->platform == HW_PLATFORM_WSL2 && (c->ram_from_machine || c->on_machine)) {
		fputc('\n', f);
		wsl_text(c, f);
	}
	if (c->ram_from_machine)
		fprintf(f, _("\nhost RAM: %s total, %s available (/proc/meminfo); %s usable after %s of headroom for the OS "
			   "and the engine's own process%s\n"),
			gib(b1, sizeof b1, c->ram_total), gib(b2, sizeof b2, c->ram_avail),
			gib(b3, sizeof b3, c->rq.ram_bytes > 1 ? c->rq.ram_bytes : 0),
			gib(b4, sizeof b4, c->ram_headroom),
			r->host_bytes > 0 ? (r->ram_ok ? "" : _(": not enough for the part in host RAM")) : "");
	if (c->unified_host)
		fprintf(f, _("\nunified memory: the GPU may use %s of %s; offloaded layers stay in the same memory, so "
			   "the CPU side has only the rest less the OS's share (%s)\n"),
			gib(b3, sizeof b3, plan_unified_gpu_bytes(c->rq.gpus[0].spec, c->rq.gpus[0].vram_bytes)),
			gib(b1, sizeof b1, c->rq.gpus[0].vram_bytes), gib(b2, sizeof b2, c->rq.ram_bytes > 1 ? c->rq.ram_bytes : 0));
	if (!c->n_procs)
		return;
	fprintf(f, _("\nother processes hold memory on %s:\n"), c->rq.n_gpus > 1 ? _("these GPUs") : _("this GPU"));
	for (size_t i = 0; i < c->n_procs; i++) {
		const hw_proc *p = &c->procs[i];
		fprintf(f, _("  GPU %zu  PID %u  %-10s %9s  %s\n"), c->proc_gpu[i], p->pid, p->user[0] ? p->user : "?",
			gib(b1, sizeof b1, (uint64_t)p->used_mem_bytes.v),
			p->command[0] ? p->command : p->windows_side ? _("(a Windows-side process)") : "?");
	}
	if (!wo)
		return;
	fprintf(f, _("without them: %s"), plan_verdict_name(wo->verdict));
	if (wo->verdict == PLAN_FITS)
		fprintf(f, _(", all %u layers on the GPU%s, %s"), wo->total_layers, wo->n_devices > 1 ? "s" : "",
			gib(b1, sizeof b1, wo->vram_bytes));
	else if (wo->verdict == PLAN_OFFLOAD)
		fprintf(f, _(", %u of %u layers on the GPU%s"), wo->gpu_layers, wo->total_layers, wo->n_devices > 1 ? "s" : "");
	if (wo->decode_tok_s > 0)
		fprintf(f, _(", ~%.1f tok/s"), wo->decode_tok_s);
	fprintf(f, _(" (now: %s%s)\n"), plan_verdict_name(r->verdict),
		wo->verdict != r->verdict ? _("; ask their owners, or wait for them to finish") : "");
}

static void machine_json(const plan_cli *c, const plan_result *wo, json_t *o)
{
	json_t *host = json_object_get(o, "host");
	if (host) {
		json_object_set_new(host, "ram_total_bytes", jint_or_null(c->ram_from_machine, (long long)c->ram_total));
		json_object_set_new(host, "ram_available_bytes", jint_or_null(c->ram_from_machine, (long long)c->ram_avail));
		json_object_set_new(host, "ram_headroom_bytes", jint_or_null(c->ram_from_machine, (long long)c->ram_headroom));
		json_object_set_new(host, "ram_from", json_string(c->ram_from_machine ? "/proc/meminfo"
								  : c->unified_host ? "unified-memory"
								  : c->rq.ram_bytes ? "--ram" : "unknown"));
		bool wm = c->platform == HW_PLATFORM_WSL2 && c->wsl_mem_read && c->ram_from_machine;
		json_object_set_new(host, "wslconfig_memory_bytes",
				    jint_or_null(wm && c->wsl_mem.limit_bytes, (long long)c->wsl_mem.limit_bytes));
		json_object_set_new(host, "ram_limit_rule", wm ? json_string(c->wsl_mem.rule) : json_null());
	}
	json_object_set_new(o, "platform", json_string(platform_of(c)));
	if (c->platform == HW_PLATFORM_WSL2 && c->on_machine) {
		json_t *w = json_array();
		for (size_t i = 0; i < c->rq.n_gpus; i++) {
			json_t *x = json_object();
			uint64_t used = c->gpu_used_bytes[i], listed = c->gpu_listed_bytes[i];
			json_object_set_new(x, "gpu", json_integer((json_int_t)i));
			json_object_set_new(x, "used_bytes", jint_or_null(used > 0, (long long)used));
			json_object_set_new(x, "windows_side_bytes", jint_or_null(used > 0, (long long)(used > listed ? used - listed : 0)));
			json_array_append_new(w, x);
		}
		json_object_set_new(o, "wsl_vram", w);
	}
	json_t *arr = json_array();
	for (size_t i = 0; i < c->n_procs; i++) {
		const hw_proc *p = &c->procs[i];
		json_t *x = json_object();
		json_object_set_new(x, "gpu", json_integer((json_int_t)c->proc_gpu[i]));
		json_object_set_new(x, "pid", json_integer(p->pid));
		json_object_set_new(x, "user", jstr_or_null(p->user[0] ? p->user : NULL));
		json_object_set_new(x, "command", jstr_or_null(p->command[0] ? p->command : NULL));
		json_object_set_new(x, "used_bytes", json_integer((json_int_t)p->used_mem_bytes.v));
		json_array_append_new(arr, x);
	}
	json_object_set_new(o, "gpu_processes", arr);
	if (wo) {
		json_t *x = json_object();
		json_object_set_new(x, "verdict", json_string(plan_verdict_name(wo->verdict)));
		json_object_set_new(x, "gpu_layers", json_integer(wo->gpu_layers));
		json_object_set_new(x, "vram_bytes", jbytes(wo->vram_bytes));
		json_object_set_new(x, "decode_tok_s", wo->decode_tok_s > 0 ? jreal_round(wo->decode_tok_s, 2) : json_null());
		json_object_set_new(o, "without_processes", x);
	} else {
		json_object_set_new(o, "without_processes", json_null());
	}
}

/* ---- no GPU at hand: the need and the smallest common cards -------------- */
#define NEED_CARDS 3

typedef struct need_card {
	const gpu_spec *g;
	double tok_s;
} need_card;

/*
 * No --gpu, no --vram and no GPU on this machine: plan on one GPU with room
 * to spare to get the need at this context, then the smallest catalog cards
 * (desktop cards with a new or used price: the ones people buy) that hold
 * it all.  Exit 0: the question "how much does it need" has an answer.
 */
static int plan_need(plan_cli *c, const model_desc *m)
{
	plan_request rq = c->rq;
	rq.n_gpus = 1;
	memset(&rq.gpus[0], 0, sizeof rq.gpus[0]);
	snprintf(rq.gpus[0].name, sizeof rq.gpus[0].name, "any GPU");
	rq.gpus[0].vram_bytes = (uint64_t)1 << 42; /* 4 TiB: never the limit */
	rq.skip_advice = true;
	plan_result *r = xcalloc(1, sizeof *r);
	gw_error err = {0};
	if (plan_run(&rq, r, &err)) {
		gw_errorf(_("cannot plan '%s': %s"), c->model ? c->model : "model", gw_error_text(&err));
		free(r);
		return err.code == GW_EINVAL || err.code == GW_ERANGE ? GW_EXIT_USAGE : GW_EXIT_RUNTIME;
	}
	need_card cards[NEED_CARDS];
	size_t n = 0;
	time_t now = time(NULL);
	struct tm tmv;
	gmtime_r(&now, &tmv);
	for (size_t i = 0; i < kb_gpu_count(); i++) {
		const gpu_spec *g = kb_gpu_at(i);
		price_quote nq, uq;
		if (g->laptop || g->vram_bytes < r->vram_bytes ||
		    price_quote_get(g, false, false, tmv.tm_year + 1900, &nq, NULL) ||
		    price_quote_get(g, true, false, tmv.tm_year + 1900, &uq, NULL) || (!nq.known && !uq.known))
			continue;
		plan_request one = c->rq;
		one.n_gpus = 1;
		plan_gpu_from_spec(&one.gpus[0], g);
		one.skip_advice = true;
		plan_result *x = xcalloc(1, sizeof *x);
		bool fits = !plan_run(&one, x, NULL) && x->verdict == PLAN_FITS;
		double tok_s = x->decode_tok_s;
		free(x);
		if (!fits)
			continue;
		/* keep the NEED_CARDS smallest, faster first on equal memory */
		size_t k = n < NEED_CARDS ? n++ : NEED_CARDS;
		if (k == NEED_CARDS) {
			const gpu_spec *w = cards[NEED_CARDS - 1].g;
			if (g->vram_bytes > w->vram_bytes || (g->vram_bytes == w->vram_bytes && tok_s <= cards[NEED_CARDS - 1].tok_s))
				continue;
			k = NEED_CARDS - 1;
		}
		while (k > 0 && (cards[k - 1].g->vram_bytes > g->vram_bytes ||
				 (cards[k - 1].g->vram_bytes == g->vram_bytes && cards[k - 1].tok_s < tok_s))) {
			cards[k] = cards[k - 1];
			k--;
		}
		cards[k] = (need_card){g, tok_s};
	}
	char b[5][32];
	if (c->json) {
		json_t *o = json_object();
		json_object_set_new(o, "model", json_string(m->name ? m->name : "model"));
		json_object_set_new(o, "engine", json_string(plan_engine_name(r->engine)));
		json_object_set_new(o, "quant", json_string(r->quant));
		json_object_set_new(o, "ctx", json_integer((json_int_t)r->ctx));
		json_object_set_new(o, "gpu", json_null());
		json_t *need = json_object();
		json_object_set_new(need, "weights_bytes", jbytes(r->weights_bytes));
		json_object_set_new(need, "kv_cache_bytes", jbytes(r->kv_cache_bytes));
		json_object_set_new(need, "compute_bytes", jbytes(r->compute_bytes));
		json_object_set_new(need, "overhead_bytes", jbytes(r->overhead_bytes));
		json_object_set_new(need, "total_bytes", jbytes(r->vram_bytes));
		json_object_set_new(o, "need", need);
		json_t *arr = json_array();
		for (size_t i = 0; i < n; i++) {
			json_t *x = json_object();
			json_object_set_new(x, "gpu", json_string(cards[i].g->id));
			json_object_set_new(x, "name", json_string(cards[i].g->name));
			json_object_set_new(x, "vram_bytes", jbytes(cards[i].g->vram_bytes));
			json_object_set_new(x, "decode_tok_s", cards[i].tok_s > 0 ? jreal_round(cards[i].tok_s, 2) : json_null());
			json_array_append_new(arr, x);
		}
		json_object_set_new(o, "smallest_cards", arr);
		json_print(o, stdout);
		json_decref(o);
	} else {
		FILE *f = stdout;
		fprintf(f, _("%s%s%s %s, context %llu (%s): needs %s%s%s of GPU memory\n"), c_bold(f),
			m->name ? m->name : "model", c_reset(f), r->quant, (unsigned long long)r->ctx,
			plan_engine_name(r->engine), c_bold(f), gib(b[0], sizeof b[0], r->vram_bytes), c_reset(f));
		fprintf(f, _("  weights %s, KV cache %s, compute %s, runtime overhead %s\n"), gib(b[1], sizeof b[1], r->weights_bytes),
			gib(b[2], sizeof b[2], r->kv_cache_bytes), gib(b[3], sizeof b[3], r->compute_bytes),
			gib(b[4], sizeof b[4], r->overhead_bytes));
		fprintf(f, _("\nNo GPU given and none found on this machine."));
		if (n) {
			fprintf(f, _(" The smallest common cards that hold it all:\n"));
			for (size_t i = 0; i < n; i++) {
				fprintf(f, "  %-28s %s", cards[i].g->name, gib(b[0], sizeof b[0], cards[i].g->vram_bytes));
				if (cards[i].tok_s > 0)
					fprintf(f, _(", ~%.0f tok/s"), cards[i].tok_s);
				fputc('\n', f);
			}
		} else {
			fprintf(f, _(" No single common card holds it: see gpuwise cards MODEL for sets of cards.\n"));
		}
		fprintf(f, _("For the full plan on a card: --gpu ID (gpuwise list gpus) or --vram SIZE; to rank them by price: "
			   "gpuwise cards.\n"));
		fprintf(f, _("To run it on this machine's CPU with llama.cpp: --cpu.\n"));
	}
	free(r);
	return GW_EXIT_OK;
}

/* ---- fine-tuning and image generation (plan/train, plan/image) ------------ */
static int plan_train(plan_cli *c, const model_desc *m)
{
	uint64_t vram = 0;
	for (size_t i = 0; i < c->rq.n_gpus; i++) {
		/* this machine's GPUs count with what is free on them now */
		uint64_t v = c->rq.gpus[i].free_bytes ? c->rq.gpus[i].free_bytes : c->rq.gpus[i].vram_bytes;
		if (c->rq.gpus[i].unified_memory && !c->rq.gpus[i].free_bytes)
			v = plan_unified_gpu_bytes(c->rq.gpus[i].spec, v); /* the same rule as for LLMs */
		if (!vram || v < vram)
			vram = v;
	}
	/* --flash-attn on|off overrides the framework's attention kernel;
	 * auto keeps it (SDPA for transformers, the default) */
	if (c->rq.flash_attn == PLAN_FA_ON)
		c->wl.train.flash_attn = true;
	else if (c->rq.flash_attn == PLAN_FA_OFF)
		c->wl.train.flash_attn = false;
	return workload_plan_train(&c->wl, m, vram, c->rq.n_gpus ? (uint32_t)c->rq.n_gpus : 1,
				   c->rq.n_gpus ? c->rq.gpus[0].name : NULL, c->json);
}

static int plan_image(plan_cli *c)
{
	if (!c->model)
		return usage_error("plan", "--image needs a diffusion model (sd-1.5, sdxl, sd-3.5-medium, "
					   "sd-3.5-large, flux.1-dev, flux.1-schnell)");
	if (c->rq.batch)
		c->wl.image.batch = c->rq.batch;
	if (c->rq.quant)
		c->wl.image.quant = c->rq.quant;
	const plan_gpu *g = c->rq.n_gpus ? &c->rq.gpus[0] : NULL;
	uint64_t vram = g ? (g->free_bytes ? g->free_bytes : g->vram_bytes) : 0;
	if (g && g->unified_memory && !g->free_bytes)
		vram = plan_unified_gpu_bytes(g->spec, vram); /* the same rule as for LLMs */
	return workload_plan_image(&c->wl, c->model, vram, g ? g->name : NULL, g ? g->spec : NULL, c->json);
}

/*
 * Physical cores of this machine, llama.cpp's default thread count: the
 * distinct (physical id, core id) pairs of /proc/cpuinfo, else its
 * processors; 0 when it cannot be read.
 */
static uint32_t host_cores(void)
{
	char *info = NULL;
	size_t len = 0;
	if (gw_read_file("/proc/cpuinfo", true, 1 << 22, &info, &len, NULL))
		return 0;
	uint32_t procs = 0, ncores = 0;
	long phys = 0, core = -1;
	long seen[1024][2];
	for (char *line = info; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		const char *colon = strchr(line, ':');
		if (!strncmp(line, "processor", 9))
			procs++;
		else if (colon && !strncmp(line, "physical id", 11))
			phys = strtol(colon + 1, NULL, 10);
		else if (colon && !strncmp(line, "core id", 7)) {
			core = strtol(colon + 1, NULL, 10);
			bool dup = false;
			for (uint32_t i = 0; i < ncores && !dup; i++)
				dup = seen[i][0] == phys && seen[i][1] == core;
			if (!dup && ncores < 1024) {
				seen[ncores][0] = phys;
				seen[ncores][1] = core;
				ncores++;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	free(info);
	return ncores ? ncores : procs;
}

/*
 * --gpu none / --cpu: llama.cpp on the host alone.  Refuses what cannot
 * run there; takes host RAM from /proc/meminfo and the threads from
 * /proc/cpuinfo when the options do not say.  Returns 0 or an exit status.
 */
static int cpu_setup(plan_cli *c)
{
	if (c->gpu_arg || c->vram)
		return usage_error("plan", "--gpu none plans without a GPU; drop %s", c->gpu_arg ? "--gpu ID" : "--vram");
	if (c->wl.kind != WORKLOAD_LLM)
		return usage_error("plan", "--gpu none plans LLM inference on the CPU; --train and --image need a GPU");
	if (c->rq.engine != PLAN_ENGINE_LLAMACPP && c->rq.engine != PLAN_ENGINE_OLLAMA)
		return usage_error("plan", "--gpu none plans llama.cpp (or ollama) on the CPU; --engine %s needs a GPU",
				   plan_engine_name(c->rq.engine));
	c->rq.cpu_only = true;
	c->rq.n_gpus = 0;
	if (!c->rq.ram_bytes) {
		gw_error merr = {0};
		if (hw_meminfo(&c->ram_total, &c->ram_avail, &merr) == 0) {
			c->ram_headroom = ram_headroom(c->ram_total);
			c->ram_from_machine = true;
			c->rq.ram_bytes = c->ram_avail > c->ram_headroom ? c->ram_avail - c->ram_headroom : 1;
		}
	}
	if (!c->rq.cpu_threads) {
		c->rq.cpu_threads = host_cores();
		c->threads_from_machine = c->rq.cpu_threads > 0;
	}
	return 0;
}

/* Progress of a slow read of the Hub or the registry, on a terminal's stderr. */
static void show_progress(void *ctx, const char *what, uint64_t done, uint64_t total, bool end)
{
	char b1[32], b2[32];
	(void)ctx;
	if (end) {
		fputs("\r\033[K", stderr);
		return;
	}
	fputs("\r", stderr);
	if (total)
		fprintf(stderr, _("reading %s: %s of %s"), what, fmt_bytes(b1, sizeof b1, done),
			fmt_bytes(b2, sizeof b2, total));
	else
		fprintf(stderr, _("reading %s: %s"), what, fmt_bytes(b1, sizeof b1, done));
	fflush(stderr);
}

/*
 * model_load, with the Hub and Ollama's registry told about --file and a
 * terminal for progress; its error printed.  Returns 0 or the exit status.
 */
static int load_model(plan_cli *c, model_desc *m, gw_error *err)
{
	hub_name hn;
	if (c->file && (!c->model || !hub_parse(c->model, &hn) || hn.kind != HUB_HF))
		return usage_error("plan", "--file names a file of a Hugging Face repository: plan ORG/NAME --file FILE");
	model_remote_configure(c->file, isatty(STDERR_FILENO) ? show_progress : NULL, NULL);
	int rc = model_load(c->model, &c->nums, m, err);
	model_remote_configure(NULL, NULL, NULL);
	if (!rc && c->file && m->origin.store != MODEL_STORE_HUB) {
		/* a local store answered first: --file would be ignored in silence */
		rc = gw_fail(err, GW_EINVAL, "--file reads the Hub, but '%s' was found in %s (%s): plan that file by its path",
			     c->model, model_store_name(m->origin.store), m->path ? m->path : "?");
		model_release(m);
	}
	if (!rc)
		return 0;
	gw_errorf("%s", gw_error_text(err));
	switch (err->code) {
	case GW_EGONE:
		return GW_EXIT_REMOTE_NOTFOUND;
	case GW_EDENIED:
		return GW_EXIT_REMOTE_DENIED;
	case GW_EUNREACH:
	case GW_ETIMEOUT:
	case GW_ENET:
		return GW_EXIT_NETWORK;
	case GW_EINVAL: {
		/* a file that exists but cannot be read (a FIFO, a broken config.json) is a runtime error */
		struct stat st;
		if (c->model && stat(c->model, &st) == 0)
			return GW_EXIT_RUNTIME;
		return GW_EXIT_USAGE; /* incomplete --layers/--hidden/..., a name that picks no one file */
	}
	}
	return err->code == GW_ENOTFOUND && c->model && !strchr(c->model, '/') ? GW_EXIT_USAGE : GW_EXIT_RUNTIME;
}

/*
 * The host memory's bandwidth and where it comes from.  Given (--host-mem,
 * --ram-bw), else on this machine: its SMBIOS tables (root only; what a
 * root run read is cached for the others), else what `gpuwise bench`
 * measured, else the assumption of DDR4-3200 x2 with why.
 */
static void host_bandwidth(plan_cli *c, bool this_machine)
{
	plan_request *rq = &c->rq;
	if (c->host_mem[0]) {
		c->host_bw_source = "--host-mem";
		snprintf(c->host_mem_from, sizeof c->host_mem_from, _("%s channels, --host-mem"), c->host_mem);
		rq->host_mem_from = c->host_mem_from;
		return;
	}
	if (rq->ram_bw_gbs > 0) {
		c->host_bw_source = "--host-bw";
		return;
	}
	if (rq->n_gpus && rq->gpus[0].unified_memory && rq->gpus[0].bandwidth_gbs > 0) {
		/* one memory: the CPU side reads the same pool */
		rq->ram_bw_gbs = rq->gpus[0].bandwidth_gbs;
		c->host_bw_source = "unified";
		snprintf(c->host_mem_from, sizeof c->host_mem_from, _("the unified memory of the %s"), rq->gpus[0].name);
		rq->host_mem_from = c->host_mem_from;
		return;
	}
	c->host_bw_source = "assumed";
	if (!this_machine) {
		snprintf(c->host_mem_from, sizeof c->host_mem_from, "%s",
			 _("assumed DDR4-3200 x2; --host-mem DDR5-6000x2 plans another host"));
		rq->host_mem_from = c->host_mem_from;
		return;
	}
	hw_host_memory hm;
	gw_error err = {0};
	int rc = hw_dmi_memory_read(&hm, &err);
	double gbs;
	char desc[96], date[16];
	if (rc == 0) {
		snprintf(desc, sizeof desc, "%s-%u x%u", hm.type[0] ? hm.type : "RAM", hm.mts, hm.channels);
		bench_cache_host_write(desc, hm.bandwidth_gbs, NULL); /* for the runs that are not root */
		rq->ram_bw_gbs = hm.bandwidth_gbs;
		c->host_bw_source = "smbios";
		snprintf(c->host_mem_from, sizeof c->host_mem_from, _("%s channels, SMBIOS"), desc);
	} else if (bench_cache_host_lookup(desc, sizeof desc, &gbs, date, sizeof date) == 0) {
		rq->ram_bw_gbs = gbs;
		c->host_bw_source = "smbios-cache";
		snprintf(c->host_mem_from, sizeof c->host_mem_from, _("%s channels, SMBIOS read as root on %s"), desc,
			 date);
	} else if (bench_cache_lookup("cpu", "cpu", &gbs, c->ram_bw_from, sizeof c->ram_bw_from) == 0) {
		rq->ram_bw_gbs = gbs; /* this machine's host bandwidth as `gpuwise bench` measured it */
		rq->ram_bw_from = c->ram_bw_from;
		c->host_bw_source = "bench";
		snprintf(c->host_mem_from, sizeof c->host_mem_from, _("measured by %s"), c->ram_bw_from);
	} else if (rc == GW_EPERM || rc == GW_ENOENT) {
		snprintf(c->host_mem_from, sizeof c->host_mem_from, "%s",
			 _("assumed DDR4-3200 x2: SMBIOS unreadable, run as root or gpuwise bench"));
	} else {
		snprintf(c->host_mem_from, sizeof c->host_mem_from, _("assumed DDR4-3200 x2: %s"), gw_error_text(&err));
	}
	rq->host_mem_from = c->host_mem_from;
}

static int plan_main(plan_cli *c, int argc, char **argv)
{
	plan_request_init(&c->rq);
	workload_init(&c->wl);
	int rc = parse_args(c, argc, argv);
	if (rc)
		return rc;
	if (c->help) {
		usage(stdout);
		return GW_EXIT_OK;
	}
	if ((rc = workload_check(&c->wl, "plan")))
		return rc;
	/* the reader's currency for the advice's prices, as `cards` takes it:
	 * GPUWISE_CURRENCY, GPUWISE_REGION's, CNY under zh_CN (text only, as
	 * `cards`: --json keeps USD), else USD */
	{
		static char cur[4];
		const char *e = getenv("GPUWISE_CURRENCY"), *reg = getenv("GPUWISE_REGION");
		if (e && strlen(e) == 3) {
			for (int k = 0; k < 3; k++)
				cur[k] = (char)toupper((unsigned char)e[k]);
			c->rq.currency = cur;
		} else if (reg && *reg && money_region_currency(reg)) {
			c->rq.currency = money_region_currency(reg);
		} else if (!c->json && gw_i18n_zh()) {
			c->rq.currency = "CNY";
		}
	}
	bool numbers = c->nums.layers || c->nums.hidden || c->nums.params;
	if (!c->model && !numbers)
		return usage_error("plan", "name a model (a catalog name, a GGUF/safetensors file, a config.json) "
					   "or describe one with --layers --hidden --heads ...");
	gw_error err = {0};
	if (kb_load_all(&err)) { /* a broken --data-dir table is not an unknown GPU */
		gw_errorf("%s", gw_error_text(&err));
		return GW_EXIT_RUNTIME;
	}
	if (c->cpu) {
		if ((rc = cpu_setup(c)))
			return rc;
	} else if (c->wl.kind != WORKLOAD_LLM && !c->gpu_arg && !c->vram)
		machine_gpus(c, false); /* fine-tuning and images plan without a GPU too (no verdict) */
	else if ((rc = resolve_gpus(c)))
		return rc;
	if (c->on_machine && !c->rq.ram_bytes) {
		gw_error merr = {0};
		if (hw_meminfo(&c->ram_total, &c->ram_avail, &merr) == 0) {
			c->ram_headroom = ram_headroom(c->ram_total);
			c->ram_from_machine = true;
			if (c->platform == HW_PLATFORM_WSL2)
				c->wsl_mem_read = hw_wsl_memory_read(&c->wsl_mem, NULL) == 0;
			/* 1 byte, not 0: 0 means "not checked" to the planner */
			c->rq.ram_bytes = c->ram_avail > c->ram_headroom ? c->ram_avail - c->ram_headroom : 1;
		}
	}
	host_bandwidth(c, !c->gpu_arg && !c->vram);
	if (c->wl.kind == WORKLOAD_IMAGE) {
		return plan_image(c);
	}

	if (c->rq.backend != PLAN_BACKEND_AUTO) {
		if (c->rq.engine != PLAN_ENGINE_LLAMACPP && c->rq.engine != PLAN_ENGINE_OLLAMA)
			return usage_error("plan", "--backend applies to llama.cpp and ollama, not %s",
					   plan_engine_name(c->rq.engine));
		for (size_t i = 0; i < c->rq.n_gpus; i++)
			if (plan_backend_check(c->rq.backend, c->rq.gpus[i].spec, c->rq.gpus[i].unified_memory, &err))
				return usage_error("plan", "%s", gw_error_text(&err));
		if (c->rq.backend == PLAN_BACKEND_CPU && c->rq.gpu_layers < 0)
			c->rq.gpu_layers = 0; /* a CPU build offloads nothing */
	}
	model_desc m;
	if ((rc = load_model(c, &m, &err)))
		return rc;
	c->rq.model = &m;
	/* the user's own settings for this model in Ollama's store (its Modelfile) */
	if (!c->rq.ctx && m.origin.num_ctx)
		c->rq.ctx = m.origin.num_ctx;
	if (c->rq.gpu_layers < 0 && m.origin.has_num_gpu)
		c->rq.gpu_layers = (int)m.origin.num_gpu;
	if (c->wl.kind == WORKLOAD_TRAIN) {
		rc = plan_train(c, &m);
		model_release(&m);
		return rc;
	}
	if (c->rq.quant)
		c->rq.quant = quant_resolve("plan", c->rq.quant,
					   c->rq.engine != PLAN_ENGINE_VLLM && c->rq.engine != PLAN_ENGINE_TRANSFORMERS);
	if (c->rq.quant) {
		plan_weights w;
		gw_error qe;
		if (plan_weights_get(&m, c->rq.quant, &w, &qe)) {
			model_release(&m);
			char names[1024];
			quant_names(names, sizeof names);
			return usage_error("plan", "%s (valid: %s; gpuwise list quants)", gw_error_text(&qe), names);
		}
		plan_weights_release(&w);
	}
	if (!c->rq.quant && (c->rq.engine == PLAN_ENGINE_VLLM || c->rq.engine == PLAN_ENGINE_TRANSFORMERS) &&
	    !m.has_tensors)
		c->rq.quant = "bf16";
	bool quant_kv = c->rq.kv_type != PLAN_KV_F16 && c->rq.kv_type != PLAN_KV_F32 &&
			c->rq.kv_type != PLAN_KV_BF16;
	bool fa_forced = false;
	bool gguf_engine = c->rq.engine == PLAN_ENGINE_LLAMACPP || c->rq.engine == PLAN_ENGINE_OLLAMA;
	if (quant_kv && c->rq.flash_attn == PLAN_FA_OFF && gguf_engine) {
		model_release(&m);
		return usage_error("plan", "a quantized KV cache (--kv-type %s) needs flash attention; drop "
					   "--flash-attn off", plan_kv_type_name(c->rq.kv_type));
	}
	if (quant_kv && c->rq.flash_attn == PLAN_FA_AUTO && gguf_engine) {
		c->rq.flash_attn = PLAN_FA_ON; /* llama.cpp refuses a quantized V cache without -fa */
		fa_forced = true;
	}
	if (c->rq.n_gpus && c->rq.gpus[0].unified_memory && !c->ram_from_machine && !c->rq.ram_bytes) {
		/* offloading on unified memory frees nothing: the CPU side is what the GPU cannot wire */
		uint64_t h = plan_unified_host_bytes(c->rq.gpus[0].spec, c->rq.gpus[0].vram_bytes);
		c->rq.ram_bytes = h ? h : 1;
		c->unified_host = true;
	}
	if (c->rq.ram_bytes > 1 && !c->ram_from_machine && !c->unified_host)
		c->rq.ram_reserve_bytes = installed_ram_reserve(c->rq.ram_bytes); /* --ram: the installed RAM */
	if (c->rq.n_gpus == 0 && !c->rq.cpu_only) {
		rc = plan_need(c, &m);
		model_release(&m);
		return rc;
	}
	/* Windows and WSL 2 (the Windows driver underneath): Sysmem Fallback */
	c->rq.sysmem_fallback = !strcmp(platform_of(c), "windows") || !strcmp(platform_of(c), "wsl2");
	plan_result *r = xmalloc(sizeof *r);
	if (plan_run(&c->rq, r, &err)) {
		gw_errorf(_("cannot plan '%s': %s"), c->model ? c->model : m.name ? m.name : "model", gw_error_text(&err));
		free(r);
		model_release(&m);
		return err.code == GW_EINVAL || err.code == GW_ERANGE ? GW_EXIT_USAGE : GW_EXIT_RUNTIME;
	}
	plan_serve sv;
	if (c->rq.n_parallel > 1 || c->per_user_tps > 0) {
		if (plan_serve_run(&c->rq, c->per_user_tps, &sv, &err) == 0) {
			c->serve = &sv;
			if (sv.known && r->n_notes < PLAN_MAX_NOTES)
				snprintf(r->notes[r->n_notes++], sizeof r->notes[0], "%s",
					 /* xgettext:no-c-format */
					 _("serving: one batched step reads the weights once for all sequences, plus each "
					   "one's KV cache; compute at 50% of the fp16 tensor peak"));
		}
	}
	if (c->rq.n_gpus && c->rq.gpus[0].unified_memory && r->n_notes < PLAN_MAX_NOTES) {
		char b1[32], b2[32];
		const plan_gpu *g = &c->rq.gpus[0];
		snprintf(r->notes[r->n_notes++], sizeof r->notes[0],
			 _("unified memory: one pool of %s at %.0f GB/s; the GPU may use %s (%s); layers left to the CPU "
			   "stay in the same pool and cross no PCIe link"),
			 gib(b1, sizeof b1, g->vram_bytes), g->bandwidth_gbs,
			 gib(b2, sizeof b2, g->free_bytes ? g->free_bytes : plan_unified_gpu_bytes(g->spec, g->vram_bytes)),
			 plan_unified_knob(g->spec));
	}
	if (c->rq.ram_reserve_bytes && r->host_bytes > 0 && r->n_notes < PLAN_MAX_NOTES) {
		char b1[32], b2[32];
		snprintf(r->notes[r->n_notes++], sizeof r->notes[0],
			 _("host RAM: --ram %s is taken as installed RAM: the system keeps %s of it (the kernel's page map, "
			   "2 GiB for the kernel and a desktop, 5%% for the OS, 1 GiB for the engine)"),
			 gib(b1, sizeof b1, c->rq.ram_bytes), gib(b2, sizeof b2, c->rq.ram_reserve_bytes));
	}
	if (host_starved(c, r) && r->n_notes < PLAN_MAX_NOTES)
		snprintf(r->notes[r->n_notes++], sizeof r->notes[0], "%s",
			 _("host starved: llama.cpp maps the GGUF (mmap, its default) and reads all of it through the page "
			   "cache at load, so the weights in host RAM live there; without room for the file the kernel re-reads "
			   "them from disk every token (gpt-oss-120b, 59 GiB, in 64 GB of RAM ran 0.9-1.8 tok/s where 20-27 "
			   "were planned): no speed is given; --no-mmap reads the host part into memory of its own"));
	if (fa_forced && r->n_notes < PLAN_MAX_NOTES)
		snprintf(r->notes[r->n_notes++], sizeof r->notes[0], "%s",
			 _("a quantized KV cache needs flash attention (-fa); planned with it on"));
	/* other processes hold memory on this machine's GPUs: the plan without them too */
	plan_result *wo = NULL;
	if (c->on_machine && c->n_procs) {
		plan_request t = c->rq;
		for (size_t i = 0; i < t.n_gpus; i++)
			t.gpus[i].free_bytes = 0;
		t.skip_advice = true;
		wo = xcalloc(1, sizeof *wo);
		if (plan_run(&t, wo, NULL)) {
			free(wo);
			wo = NULL;
		}
	}
	if (c->json) {
		json_t *j = plan_json(c, &m, r);
		machine_json(c, wo, j);
		json_print(j, stdout);
		json_decref(j);
	} else {
		print_text(c, &m, r, stdout);
		machine_text(c, r, wo, stdout);
	}
	free(wo);
	rc = r->verdict == PLAN_FITS ? GW_EXIT_OK : r->verdict == PLAN_OFFLOAD ? GW_EXIT_VERDICT3 : GW_EXIT_VERDICT4;
	free(r);
	model_release(&m);
	return rc;
}

int cmd_plan(int argc, char **argv)
{
	plan_cli c;
	memset(&c, 0, sizeof c);
	int rc = plan_main(&c, argc, argv);
	free(c.procs);
	free(c.proc_gpu);
	return rc;
}

/*
 * The hardware `plan` would plan on, for other commands (fit): --gpu
 * (catalog ids, NxID), --vram, --ram, else this machine's GPUs with their
 * free memory and its available RAM less headroom.  Fills rq->gpus,
 * n_gpus and ram_bytes; *on_machine says whether the machine answered.
 * Returns 0, or a usage exit status (printed).
 */
int plan_hardware(plan_request *rq, const char *gpu_arg, uint64_t vram, uint64_t ram, bool *on_machine)
{
	plan_cli *c = xcalloc(1, sizeof *c);
	plan_request_init(&c->rq);
	c->gpu_arg = gpu_arg;
	c->vram = vram;
	c->rq.ram_bytes = ram;
	int rc = resolve_gpus(c);
	if (!rc && c->rq.n_gpus == 0)
		rc = usage_error("fit", "no GPU found on this machine; say which GPU: --gpu ID (e.g. rtx-4090, 2x3090) "
					"or --vram SIZE");
	if (!rc && c->on_machine && !c->rq.ram_bytes) {
		gw_error merr = {0};
		uint64_t total, avail;
		if (hw_meminfo(&total, &avail, &merr) == 0) {
			uint64_t h = ram_headroom(total);
			c->rq.ram_bytes = avail > h ? avail - h : 1;
		}
	}
	bool unified_host = false;
	if (!rc && c->rq.gpus[0].unified_memory && !c->rq.ram_bytes) {
		uint64_t h = plan_unified_host_bytes(c->rq.gpus[0].spec, c->rq.gpus[0].vram_bytes);
		c->rq.ram_bytes = h ? h : 1;
		unified_host = true;
	}
	/* as plan_main: a given --ram is the installed RAM, of which the system keeps a part */
	if (!rc && ram > 1 && !unified_host)
		c->rq.ram_reserve_bytes = installed_ram_reserve(ram);
	if (!rc) {
		memcpy(rq->gpus, c->rq.gpus, sizeof rq->gpus);
		rq->n_gpus = c->rq.n_gpus;
		rq->ram_bytes = c->rq.ram_bytes;
		rq->ram_reserve_bytes = c->rq.ram_reserve_bytes;
		if (on_machine)
			*on_machine = c->on_machine;
	}
	free(c->procs);
	free(c->proc_gpu);
	free(c);
	return rc;
}
