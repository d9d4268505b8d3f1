/*
 * doctor: error-message diagnosis (explain), the compatibility rules
 * between driver, CUDA, compute capability and PyTorch builds, and the
 * doctor checks.  Pure logic over plain structs: nothing here prints.
 */
#ifndef GW_DOCTOR_H
#define GW_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

/* ---- explain: error signatures (data/errors.tsv) ------------------------ */

typedef struct explain_capture {
	char *name;
	char *value;
} explain_capture;

/* One row of a vendor's status-code catalog that a message names. */
typedef struct explain_catalog_row {
	char *family;   /* "cuda-runtime", "cuda-driver", "cublas", "cudnn", "cufft", "cusolver", "nccl", "hip", "xid" */
	char *name;     /* "cudaErrorUnknown", "CUBLAS_STATUS_EXECUTION_FAILED", "Xid 79" */
	long code;      /* its number */
	char *message;  /* what the library prints for it ("" when nothing) */
	char *meaning;
	char *source;
} explain_catalog_row;

typedef struct explain_match {
	char *id;          /* stable diagnosis id: "cuda-oom", "arch-unsupported" ... */
	char *title;       /* one line: what happened */
	char **causes;     /* most likely first */
	size_t n_causes;
	char **fixes;      /* commands and steps, the most specific first */
	size_t n_fixes;
	explain_capture *caps; /* named captures plus derived values */
	size_t n_caps;
	explain_catalog_row *catalog; /* status codes the message names (data/error-catalog.tsv,
	                               * data/xid.tsv), the innermost first */
	size_t n_catalog;
	int priority;      /* the signature's rank weight */
	size_t offset;     /* where the signature matched in the text */
	size_t length;
	const char *via;   /* "signature", "catalog" or "retrieval": what found it (static) */
	double confidence; /* retrieval: 0..1 similarity to the nearest example; -1 none */
	char *example_source;  /* the nearest labelled corpus message of this id (NULL none) */
	char *example_message;
	char *example_resolution;
} explain_match_t;

/*
 * Match every signature against text and return one match per diagnosis
 * id, best first (higher priority, then earlier in the text).  *out is
 * malloc'd (NULL when *n is 0); free it with explain_matches_free().
 * Fails only when the signature table is unreadable or a regex is bad.
 * Safe to call from several threads.
 */
int explain_match(const char *text, explain_match_t **out, size_t *n, gw_error *err);
void explain_matches_free(explain_match_t *m, size_t n);
/* The value of a named capture, NULL when absent. */
const char *explain_cap(const explain_match_t *m, const char *name);
/* Free the compiled signatures (valgrind-clean exits, tests). */
void explain_release(void);

/* ---- explain: retrieval over the labelled corpus (data/explain-corpus-*.tsv) ---- */

/*
 * The nearest labelled corpus message to a text: the text's identifying
 * tokens (error enums, library, symbol, function and option names, arch
 * codes; numbers as placeholders; CJK bigrams) scored with BM25 against
 * every message of the embedded tables named explain-corpus-*.  The index
 * is built on the first call (never at start-up).  Strings point into the
 * index: valid until explain_release().
 */
typedef struct explain_hit {
	const char *diagnosis, *family, *lang, *message, *source, *resolution;
	double score;       /* BM25 */
	double confidence;  /* score over the example's own score: 0..1 */
	double rank;        /* the diagnosis's vote: its best examples' score x confidence, summed */
	bool accepted;      /* confident enough to name a diagnosis */
} explain_hit;

/* Minimum confidence for retrieval to name a diagnosis on its own. */
#define EXPLAIN_RETRIEVE_MIN_CONFIDENCE 0.35
/*
 * The best hit of each diagnosis, best first (at most max).  Only the last
 * EXPLAIN_RETRIEVE_TAIL bytes of text are read.  Returns how many; 0 when
 * the corpus is empty or nothing shares a token.  want_id, when set,
 * restricts the answer to that diagnosis.
 */
#define EXPLAIN_RETRIEVE_TAIL 8192
size_t explain_retrieve(const char *text, size_t len, const char *want_id, explain_hit *out, size_t max);
/*
 * Leave the corpus rows of one thread URL out of every later lookup (NULL:
 * none; the environment's GPUWISE_EXPLAIN_EXCLUDE_SOURCE otherwise), as if
 * the corpus did not hold them: leave-one-source-out evaluation.  The
 * string is copied.
 */
void explain_retrieve_exclude(const char *source);
/* Rows in the corpus index (building it), and the number of distinct diagnoses. */
size_t explain_corpus_size(size_t *n_diagnoses);
/* Tokens of text as the matcher sees them, space-separated (tests, debugging). */
char *explain_tokens(const char *text, size_t len);
void explain_retrieve_release(void);

/*
 * The qualified name in an Itanium-mangled C++ symbol ("_ZN3c104cuda9SetDeviceEi"
 * -> "c10::cuda::SetDevice"), malloc'd; NULL when sym is not one it can read.
 * Parameter types are not decoded.
 */
char *explain_demangle(const char *sym);
/* Which library a demangled name belongs to ("PyTorch (libc10)"); NULL unknown. */
const char *explain_symbol_library(const char *demangled);

/*
 * Is this machine WSL (hw_platform(): the kernel, /dev/dxg and
 * /usr/lib/wsl/lib read through the root prefix), so that explain and
 * doctor agree on the platform?
 */
bool explain_platform_is_wsl(void);

/* The platform an error message comes from, by the paths and names it holds. */
typedef enum {
	EXPLAIN_PLATFORM_UNKNOWN,
	EXPLAIN_PLATFORM_WSL,
	EXPLAIN_PLATFORM_WINDOWS,
	EXPLAIN_PLATFORM_MACOS,
} explain_platform;
explain_platform explain_message_platform(const char *text, size_t len);

/* PyTorch's CUDA out-of-memory message, both formats. */
typedef enum {
	OOM_UNKNOWN = 0,
	OOM_TOO_BIG,       /* the request exceeds the whole GPU */
	OOM_NOT_SHORTAGE,  /* free memory covered the request: not a plain shortage */
	OOM_FRAGMENTATION, /* free + reserved-but-unallocated covers it: fragmentation */
	OOM_SHORTAGE,      /* really not enough memory */
} oom_verdict;

#define OOM_MAX_PROCS 32
/* a CUDA context with cuBLAS/cuDNN workspaces: a few hundred MiB, 2 GiB at most */
#define OOM_CONTEXT_MAX_BYTES (2LL << 30)
typedef struct oom_info {
	bool old_format;       /* "(GPU 0; X total capacity; ...)" before PyTorch 2.x */
	int gpu;               /* -1 unknown */
	/* bytes, -1 when the message does not say */
	int64_t requested, total, free, process, allocated, reserved, reserved_unalloc;
	struct {
		uint32_t pid;
		int64_t bytes;
	} others[OOM_MAX_PROCS];   /* "Process N has X memory in use" */
	size_t n_others;
	/*
	 * Index in others[] of the job itself seen from outside its PID
	 * namespace (a container: NVML gives host PIDs, so PyTorch does not
	 * recognise its own and prints no "this process has" sentence); -1
	 * none.  It is the entry whose size is the job's reserved memory plus
	 * at most OOM_CONTEXT_MAX_BYTES of CUDA context.
	 */
	int self_index;
	int64_t others_bytes;  /* the sum over others[] without self_index */
	oom_verdict verdict;
	int64_t shortfall;     /* bytes missing even reusing reserved memory; -1 n/a */
	bool expandable_helps; /* PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True */
} oom_info;

/* Parse an OOM message; 0 when found, GW_ENOTFOUND otherwise. */
int explain_parse_oom(const char *text, oom_info *o);
const char *oom_verdict_name(oom_verdict v);

/* cuDriverGetVersion encoding: 11040 -> "11.4", 12080 -> "12.8". */
const char *cuda_version_decode(long v, char *buf, size_t n);

/* What this machine says, to make fixes specific (all optional). */
typedef struct explain_context {
	const char *driver_version;  /* "570.133.07", NULL unknown */
	const char *gpu_name;        /* first NVIDIA GPU */
	int cc_major, cc_minor;      /* -1 unknown */
	const char *torch_version;   /* "2.5.1+cu124" of the first Python found */
	const char *torch_cuda;      /* "12.4", NULL for CPU-only or unknown */
	const char *python;          /* that interpreter */
	int temp_c;                  /* that GPU now, -1 unknown */
	int power_w, power_limit_w;  /* its board power now and its limit, -1 unknown */
} explain_context;

/*
 * Rewrite the matches' fixes with what ctx says (the pip line for this
 * GPU and driver, the installed torch, the users of the processes an OOM
 * message names).  Reads /proc through the root prefix.
 */
void explain_contextualize(explain_match_t *m, size_t n, const char *text, const explain_context *ctx);

/* ---- compatibility rules (data/torch-builds.tsv, cuda-*.tsv) ----------- */

/* Compare dotted versions numerically ("570.26" < "570.124.06"). */
int version_cmp(const char *a, const char *b);

/*
 * Minimum Linux driver for CUDA "X.Y" (its GA release; a version not in
 * the table takes the nearest older one).  Writes "" when unknown.
 */
void compat_driver_min(const char *cuda, char *out, size_t n);
/* The same for the Windows driver (WSL 2 sees the Windows driver's number);
 * the Linux minimum where the table has no Windows one (CUDA >= 13.1). */
void compat_driver_min_windows(const char *cuda, char *out, size_t n);
/* Minor-version compatibility floor for CUDA major X ("525" for 12); "" unknown. */
void compat_minor_floor(int cuda_major, char *out, size_t n);

/*
 * Can code from arch_list ("sm_50 sm_86 compute_86") run on CC major.minor?
 * Cubins run on the same major with an equal or higher minor (except the
 * Tegra parts 5.3, 6.2, 7.2, 8.7, 10.1 and 'a' targets, which need an exact
 * match); PTX runs on any equal or newer CC.  *ptx_only tells the PTX case.
 */
bool compat_arch_covers(const char *arch_list, int major, int minor, bool *ptx_only);

typedef struct torch_pick {
	bool found;            /* a build covers the GPU (and the driver, if given) */
	char torch[16];        /* "2.11" */
	char variant[16];      /* "cu128" */
	char cuda[16];         /* "12.8" */
	char index_url[128];
	char pip_line[256];    /* "pip install --force-reinstall torch~=2.11.0 torchvision~=0.26.0 ..." */
	char min_driver[32];   /* the Linux driver that build needs */
	bool driver_too_old;   /* builds cover the GPU, none this driver */
	char need_driver[32];  /* then: the driver to upgrade to */
} torch_pick;

/*
 * The pip command that replaces whatever torch is installed by torch
 * `torch` ("2.11") from index_url, with torchvision and torchaudio pinned
 * to the releases built with it (data/torch-domains.tsv).
 */
void compat_pip_line(const char *torch, const char *index_url, char *out, size_t n);

/*
 * Pick a PyTorch build for CC major.minor.  With a driver version: the
 * newest build whose CUDA that driver fully supports; without: the build
 * needing the oldest driver.  Returns 0, or an error when the table is bad.
 */
int compat_pick_torch(int major, int minor, const char *driver, torch_pick *out, gw_error *err);

/* Look an Xid up in data/xid.tsv; false when unknown. */
bool xid_lookup(int xid, const char **meaning, const char **severity, const char **action);

/* ---- doctor checks ------------------------------------------------------ */

struct hw_snapshot;
struct hw_xid;
struct stack_info;
struct hw_platform_info;

/*
 * ok: a check ran and passed; info: a fact worth knowing, not a verdict;
 * skip: a check could not run (the evidence says why); warn; fail.  Ordered
 * from best to worst (doctor_worst).
 */
typedef enum { DOC_OK = 0, DOC_INFO, DOC_SKIP, DOC_WARN, DOC_FAIL, DOC_NSEV } doctor_severity;
typedef enum { DG_HARDWARE = 0, DG_DRIVER, DG_CUDA, DG_PYTHON, DG_HEALTH, DG_DESKTOP, DG_COUNT } doctor_group;

typedef struct doctor_finding {
	char *id;          /* stable: "arch-unsupported", "nvcc-path-order" ... (docs/json-doctor.md) */
	doctor_severity severity;
	doctor_group group;
	char *title;       /* one line */
	char *evidence;    /* what was seen, with the values */
	char *fix;         /* the exact command or step; "" when nothing to do */
	int gpu;           /* gpuwise GPU index it concerns (the first, when merged), -1 none */
	uint64_t gpu_mask; /* every GPU index (< 64) a merged finding concerns */
} doctor_finding;

typedef struct doctor_report {
	doctor_finding *findings;
	size_t n;
} doctor_report;

typedef struct doctor_input {
	const struct hw_snapshot *hw;     /* NULL: no hardware layer */
	const struct stack_info *stack;   /* NULL: not discovered */
	const struct hw_xid *xids;        /* kernel-log Xid events of the last 24 h */
	size_t n_xids;
	bool xids_read;                   /* false: the kernel log could not be read */
	const char *xid_error;            /* why not */
	/* added after the first version of this contract */
	const struct hw_platform_info *platform; /* NULL: doctor_check detects it */
} doctor_input;

/*
 * Run every check over what was discovered and append findings to rep
 * (release with doctor_report_release).  Reads the environment (PATH-like
 * variables, CUDA_VISIBLE_DEVICES, PRIME offload variables, the variables of
 * data/bad-env.tsv) and a few files under the root prefix (Secure Boot
 * state, /proc/modules, process start times).
 */
void doctor_check(const doctor_input *in, doctor_report *rep);
/* The per-job VRAM cap (GPUWISE_CAP_REGION, LD_PRELOAD): finding "vram-cap". */
void doctor_check_vram_cap(doctor_report *rep);
void doctor_report_release(doctor_report *rep);
/*
 * Merge findings that say the same thing (same id, severity, title,
 * evidence and fix) about several GPUs into one, keeping the first's place
 * and every GPU in gpu_mask.  doctor_check calls it; call it again after
 * adding findings of your own.
 */
void doctor_merge_duplicates(doctor_report *rep);
/*
 * The desktop/browser GPU check (Linux): which GPU drives the session's
 * displays (/sys/class/drm), PRIME render offload variables, software
 * rendering, and Chrome/Chromium's GPU settings and flags under $HOME.
 * Part of doctor_check.
 */
void doctor_check_desktop(doctor_report *rep);
/*
 * WSL (wsl.c): the platform finding, GPU-PV (/dev/dxg), the Windows
 * driver's libraries, a Linux driver installed inside WSL (files and dpkg
 * packages, with the purge command), which libcuda the loader takes, the
 * harmless ldconfig warning, the toolkit's origin, dxgkrnl errors.  Part
 * of doctor_check when the platform is WSL.
 */
void doctor_check_wsl(const doctor_input *in, const struct hw_platform_info *pl, doctor_report *rep);
/* The Desktop group on WSL: where Windows picks an app's GPU, Task Manager's memory. */
void doctor_check_wsl_desktop(const doctor_input *in, doctor_report *rep);
/* "install the NVIDIA driver for Windows >= MIN, then wsl --shutdown ..." (malloc'd). */
char *doctor_wsl_driver_fix(const char *min_version);
/* Add a finding (used by the checks and by cmd/ for --deep results). */
doctor_finding *doctor_add(doctor_report *rep, const char *id, doctor_severity sev, doctor_group g, int gpu);
const char *doctor_severity_name(doctor_severity s);
const char *doctor_group_name(doctor_group g);
doctor_severity doctor_worst(const doctor_report *rep);

/*
 * --deep: on each CUDA device, through libcuda.so.1 (GPUWISE_CUDA_LIB
 * overrides): a context, an allocation, copies both ways with a checksum,
 * a PTX kernel, host-device bandwidth.  A library without these functions
 * gives one "not available" finding.
 */
void doctor_deep_cuda(doctor_report *rep);
/* --deep: each Python with a CUDA torch runs is_available() and a matmul (bounded). */
void doctor_deep_python(const struct stack_info *st, int timeout_ms, doctor_report *rep);

#endif
