/*
 * stack: the software between the driver and the user's code: CUDA
 * toolkits, cuDNN and NCCL as the loader would find them, and Python
 * environments with their PyTorch build.  Every file is read through the
 * root prefix (GPUWISE_ROOT); paths found in environment variables are
 * taken as they are, inside that root.
 */
#ifndef GW_STACK_H
#define GW_STACK_H

#include <stdbool.h>
#include <stddef.h>

#include "util/util.h"

typedef struct stack_toolkit {
	char root[512];       /* "/usr/local/cuda-12.4" (as seen by the user) */
	char version[32];     /* "12.4.131"; "" unknown */
	char version_from[32];/* "version.json", "version.txt", "nvcc --version" */
	char nvcc[512];       /* "" when the toolkit has no nvcc */
	char how[64];         /* how it was found: "/usr/local/cuda*", "CUDA_HOME" ... */
	int path_rank;        /* position of its nvcc among the nvcc on PATH; -1 none */
	bool is_cuda_home;    /* CUDA_HOME or CUDA_PATH names it */
} stack_toolkit;

typedef struct stack_lib {
	char name[16];        /* "cudnn", "nccl" */
	char path[512];
	char version[32];     /* "9.1.0", "" unknown */
	char how[96];         /* "LD_LIBRARY_PATH", "ld.so.conf", "system dir", "pip nvidia-cudnn-cu12" */
} stack_lib;

typedef struct stack_pkg {
	char name[32];        /* "bitsandbytes", "xformers", "flash-attn", "vllm", "triton" */
	char version[48];
} stack_pkg;

#define STACK_MAX_PKGS 16
typedef struct stack_python {
	char exe[512];        /* the interpreter */
	char how[64];         /* "PATH python3", "VIRTUAL_ENV", "CONDA_PREFIX", "--python" */
	char site[512];       /* site-packages holding torch; "" none */
	bool has_torch;
	char torch_version[64];  /* "2.5.1+cu124" */
	char torch_cuda[16];     /* "12.4"; "" for CPU-only builds */
	char torch_hip[32];      /* ROCm builds */
	char arch_list[512];     /* "sm_50 ... compute_90"; "" unknown */
	char arch_from[32];      /* "python", "libtorch_cuda.so" */
	char run_error[1024];    /* why running the interpreter failed (a traceback's tail); "" fine */
	stack_pkg pkgs[STACK_MAX_PKGS];
	size_t n_pkgs;
} stack_python;

typedef struct stack_info {
	stack_toolkit *toolkits;
	size_t n_toolkits;
	stack_lib *libs;      /* loader order: the first of each name wins */
	size_t n_libs;
	stack_python *pythons;
	size_t n_pythons;
	char cuda_home[512];  /* CUDA_HOME or CUDA_PATH, "" unset */
} stack_info;

typedef struct stack_opts {
	const char *const *pythons;  /* --python PATH (repeatable) */
	size_t n_pythons;
	bool no_exec;                /* never run interpreters or nvcc */
	int timeout_ms;              /* per interpreter run; 0 = 10 s */
} stack_opts;

/* Discover everything; a missing piece is not an error.  Release with stack_release. */
int stack_discover(const stack_opts *o, stack_info *out, gw_error *err);
void stack_release(stack_info *s);

/* The first library of that name the loader would use; NULL none. */
const stack_lib *stack_find_lib(const stack_info *s, const char *name);

/*
 * Run argv (argv[0] a path, not searched) with stdin from /dev/null,
 * capturing stdout and stderr together (at most 1 MiB); kill it after
 * timeout_ms.  *status is the exit status, or -1 on timeout or signal.
 * Returns 0 when it ran, or GW_ECHILD / GW_ETIMEOUT with err set.
 */
int stack_run(char *const argv[], int timeout_ms, char **out, int *status, gw_error *err);
/*
 * The last max_lines non-blank lines of a program's output (a Python
 * traceback's tail: the failing frames and the exception), newline-joined
 * and cut to its last max_bytes; "" for none.  Caller frees.
 */
char *stack_output_tail(const char *out, size_t max_lines, size_t max_bytes);

/* Parse torch/version.py text into py (version, cuda, hip). */
void stack_parse_torch_version(const char *text, stack_python *py);
/* Collect sm_XX / compute_XX names from a binary image into out ("" none). */
void stack_scan_arch(const char *data, size_t len, char *out, size_t n);

#endif
