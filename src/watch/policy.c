/*
 * policy.c: how an attempt ended (exit classification) and whether to
 * start it again (restart policy with exponential back-off and a start
 * limit, modelled on systemd's Restart=, RestartSec=, RestartMaxDelaySec=,
 * StartLimitIntervalSec= and StartLimitBurst=, systemd.service(5) and
 * systemd.unit(5)).
 */
#include "watch/watch.h"

#include "doctor/doctor.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static const char *const class_names[] = {
#define WATCH_CLASS_STR(n, s) s,
	WATCH_CLASS_MAP(WATCH_CLASS_STR)
#undef WATCH_CLASS_STR
};

const char *watch_class_name(watch_class c)
{
	return (unsigned)c < WATCH_CLASS_COUNT ? class_names[c] : "unknown";
}

int watch_class_parse(const char *s)
{
	for (int i = 0; i < WATCH_CLASS_COUNT; i++)
		if (strcmp(s, class_names[i]) == 0)
			return i;
	if (strcmp(s, "stopped") == 0)
		return WATCH_STOPPED;
	return -1;
}

static const char *const event_names[WATCH_EV_COUNT] = {
	[WATCH_EV_START] = "start",
	[WATCH_EV_EXIT] = "exit",
	[WATCH_EV_RESTART] = "restart",
	[WATCH_EV_GIVE_UP] = "give-up",
	[WATCH_EV_NO_GPU] = "no-gpu",
	[WATCH_EV_LEAK] = "leak",
	[WATCH_EV_HEAT] = "heat",
	[WATCH_EV_HEAT_CLEAR] = "heat-clear",
	[WATCH_EV_PAUSE] = "pause",
	[WATCH_EV_RESUME] = "resume",
	[WATCH_EV_HANG] = "hang",
	[WATCH_EV_MEM_LIMIT] = "mem-limit",
	[WATCH_EV_XID] = "xid",
	[WATCH_EV_SIGNAL] = "signal",
	[WATCH_EV_OOM_HALVE] = "oom-halve",
	[WATCH_EV_HOOK_FAILED] = "hook-failed",
	[WATCH_EV_HOST_LEAK] = "host-leak",
};

const char *watch_event_name(watch_event_kind k)
{
	return (unsigned)k < WATCH_EV_COUNT ? event_names[k] : "unknown";
}

bool watch_event_is_alert(watch_event_kind k)
{
	return k == WATCH_EV_LEAK || k == WATCH_EV_HOST_LEAK || k == WATCH_EV_HEAT || k == WATCH_EV_HANG ||
	       k == WATCH_EV_MEM_LIMIT || k == WATCH_EV_XID || k == WATCH_EV_GIVE_UP;
}

/*
 * Signatures of CUDA running out of memory, checked besides explain's
 * (and alone when its table cannot be loaded): PyTorch's
 * torch.OutOfMemoryError ("CUDA out of memory. Tried to allocate ...", old
 * and new formats), the driver API's CUDA_ERROR_OUT_OF_MEMORY and the
 * runtime's cudaErrorMemoryAllocation ("CUDA error: out of memory").
 * Examples: murong-xu/CADS#4, pytorch/pytorch#16417, QwenLM/Qwen2.5-Omni#240.
 */
static bool fallback_is_oom(const char *tail)
{
	static const char *const sigs[] = {
		"CUDA out of memory",
		"OutOfMemoryError",
		"CUDA_ERROR_OUT_OF_MEMORY",
		"cudaErrorMemoryAllocation",
		"CUDA error: out of memory",
	};
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		if (strstr(tail, sigs[i]))
			return true;
	return false;
}

/* explain's diagnoses that mean the GPU itself failed (docs/diagnoses.md). */
static bool hardware_diagnosis(const char *id)
{
	return strcmp(id, "gpu-fell-off-bus") == 0 || strcmp(id, "ecc-error") == 0 ||
	       strcmp(id, "gsp-timeout") == 0;
}

watch_class watch_tail_class(const char *tail)
{
	if (!tail || !*tail)
		return WATCH_FAILURE;
	explain_match_t *m = NULL;
	size_t n = 0;
	gw_error err = {0};
	watch_class c = WATCH_FAILURE;
	if (fallback_is_oom(tail)) {
		c = WATCH_CUDA_OOM;
		goto out;
	}
	if (explain_match(tail, &m, &n, &err))
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(m[i].id, "cuda-oom") == 0) {
			c = WATCH_CUDA_OOM;
			break;
		}
		if (hardware_diagnosis(m[i].id))
			c = WATCH_HARDWARE;
	}
out:
	explain_matches_free(m, n);
	return c;
}

bool watch_tail_is_cuda_oom(const char *tail)
{
	return watch_tail_class(tail) == WATCH_CUDA_OOM;
}

/*
 * Xids DCGM's health watch treats as failures of the GPU itself
 * (NVIDIA/DCGM modules/health/DcgmHealthWatch.cpp BuildXidMappings): 48
 * double-bit ECC, 64 row-remap failure, 74 NVLink, 79 fallen off the bus,
 * 94/95 contained/uncontained ECC, 119/120 GSP, 140 unrecovered ECC.
 * Application Xids (13, 31, 43, 45, 68) are not hardware faults
 * (NVIDIA/k8s-device-plugin internal/rm/health.go).
 */
bool watch_xid_is_hardware(int xid)
{
	static const int hw_xids[] = {48, 64, 74, 79, 94, 95, 119, 120, 140};
	for (size_t i = 0; i < sizeof hw_xids / sizeof hw_xids[0]; i++)
		if (hw_xids[i] == xid)
			return true;
	return false;
}

watch_class watch_classify(const watch_exit_facts *f)
{
	int ws = f->wait_status;
	if (f->exec_failed)
		return WATCH_NOT_STARTED;
	if (f->stop_reason)
		return WATCH_STOPPED;
	if (WIFEXITED(ws) && WEXITSTATUS(ws) == 0)
		return WATCH_SUCCESS;
	if (f->interrupted)
		return WATCH_INTERRUPTED;
	if (f->hardware_xid)
		return WATCH_HARDWARE;
	watch_class t = watch_tail_class(f->stderr_tail);
	if (t != WATCH_FAILURE)
		return t;
	/* The kernel OOM killer sends SIGKILL and counts it in memory.events. */
	if (WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL && f->oom_kills_before >= 0 &&
	    f->oom_kills_after > f->oom_kills_before)
		return WATCH_HOST_OOM;
	return WATCH_FAILURE;
}

int watch_exit_status(int wait_status)
{
	if (WIFEXITED(wait_status))
		return WEXITSTATUS(wait_status);
	if (WIFSIGNALED(wait_status))
		return 128 + WTERMSIG(wait_status);
	return 1;
}

void watch_policy_defaults(watch_policy *p)
{
	memset(p, 0, sizeof *p);
	p->restart = WATCH_RESTART_NEVER;
	p->max_restarts = 3;    /* supervisord's startretries default */
	p->backoff_min_ms = 5000;
	p->backoff_max_ms = 300000;
	p->start_limit_interval_ms = 10000;
	p->start_limit_burst = 5;
}

void watch_policy_note_start(watch_policy_state *st, uint64_t now)
{
	size_t max = sizeof st->starts_ms / sizeof st->starts_ms[0];
	if (st->n_starts == max) {
		memmove(st->starts_ms, st->starts_ms + 1, (max - 1) * sizeof st->starts_ms[0]);
		st->n_starts--;
	}
	st->starts_ms[st->n_starts++] = now;
}

bool watch_policy_next(const watch_policy *p, watch_policy_state *st, watch_class c,
		       int status, uint64_t ran_ms, bool force, uint64_t now,
		       uint64_t *delay_ms, char *why, size_t why_n)
{
	*delay_ms = 0;
	if (c == WATCH_NOT_STARTED) {
		snprintf(why, why_n, N_("the command could not be started"));
		return false;
	}
	if (c == WATCH_INTERRUPTED) {
		snprintf(why, why_n, N_("it was interrupted"));
		return false;
	}
	if (!force) {
		if (p->restart == WATCH_RESTART_NEVER) {
			snprintf(why, why_n, N_("--restart is never"));
			return false;
		}
		if (c == WATCH_SUCCESS && p->restart != WATCH_RESTART_ALWAYS) {
			snprintf(why, why_n, N_("it succeeded"));
			return false;
		}
		for (size_t i = 0; i < p->n_no_restart_codes; i++)
			if (p->no_restart_codes[i] == status) {
				snprintf(why, why_n, N_("exit status %d is in --no-restart-on"), status);
				return false;
			}
		if (p->no_restart_class[c]) {
			snprintf(why, why_n, N_("%s is in --no-restart-on"), watch_class_name(c));
			return false;
		}
	}
	if (p->max_restarts >= 0 && st->restarts >= p->max_restarts) {
		/* English (the event log's detail); run shows it translated (gw_translate_text) */
		snprintf(why, why_n, st->restarts == 1 ? N_("%d restart done (--max-restarts)")
						       : N_("%d restarts done (--max-restarts)"), st->restarts);
		return false;
	}
	/* An attempt that ran longer than the longest back-off was healthy. */
	if (c == WATCH_SUCCESS || ran_ms >= p->backoff_max_ms)
		st->failures_in_row = 0;
	uint64_t delay = p->backoff_min_ms;
	if (c != WATCH_SUCCESS) {
		for (int k = 0; k < st->failures_in_row && delay < p->backoff_max_ms; k++)
			delay *= 2;
		st->failures_in_row++;
	}
	if (delay > p->backoff_max_ms)
		delay = p->backoff_max_ms;
	if (p->start_limit_interval_ms && p->start_limit_burst > 0) {
		uint64_t next = now + delay;
		int recent = 0;
		for (size_t i = 0; i < st->n_starts; i++)
			if (st->starts_ms[i] + p->start_limit_interval_ms > next)
				recent++;
		if (recent >= p->start_limit_burst) {
			snprintf(why, why_n, N_("started %d times within %llu ms (start limit)"), recent,
				 (unsigned long long)p->start_limit_interval_ms);
			return false;
		}
	}
	st->restarts++;
	*delay_ms = delay;
	why[0] = '\0';
	return true;
}

bool watch_halve(const char *value, long long *next)
{
	long long v;
	if (!value || parse_int(value, 1, (long long)1 << 62, &v) || v <= 1)
		return false;
	*next = v / 2;
	return true;
}
