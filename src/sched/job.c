/*
 * sched/job: names and ownership helpers for the job spec.
 */
#include <stdlib.h>
#include <string.h>

#include "sched/job.h"
#include "util/util.h"

static void free_strv(char **v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void job_spec_release(job_spec *s)
{
	free_strv(s->argv, s->argc);
	free_strv(s->env, s->n_env);
	free_strv(s->env_inherited, s->n_env_inherited);
	free_strv(s->run_args, s->n_run_args);
	free(s->cwd);
	free(s->user);
	free(s->project);
	free(s->name);
	free(s->vram_plan);
	free(s->mig_profile);
	memset(s, 0, sizeof *s);
}

void job_release(job *j)
{
	job_spec_release(&j->spec);
	free(j->reason);
	memset(j, 0, sizeof *j);
}

static const char *const state_names[] = {
	[JOB_QUEUED] = "queued", [JOB_HELD] = "held", [JOB_RUNNING] = "running",
	[JOB_DONE] = "done", [JOB_FAILED] = "failed", [JOB_CANCELLED] = "cancelled",
};

const char *job_state_name(job_state s)
{
	return (unsigned)s < sizeof state_names / sizeof *state_names ? state_names[s] : "?";
}

int job_state_parse(const char *s, job_state *out)
{
	for (size_t i = 0; i < sizeof state_names / sizeof *state_names; i++)
		if (strcmp(s, state_names[i]) == 0) {
			*out = (job_state)i;
			return 0;
		}
	return -1;
}

bool job_state_ended(job_state s)
{
	return s == JOB_DONE || s == JOB_FAILED || s == JOB_CANCELLED;
}

const char *job_mode_name(job_mode m)
{
	switch (m) {
	case JOB_MODE_SHARED: return "shared";
	case JOB_MODE_EXCLUSIVE: return "exclusive";
	case JOB_MODE_MIG: return "mig";
	}
	return "?";
}

int job_mode_parse(const char *s, job_mode *out, char **profile)
{
	*profile = NULL;
	if (strcmp(s, "shared") == 0)
		*out = JOB_MODE_SHARED;
	else if (strcmp(s, "exclusive") == 0)
		*out = JOB_MODE_EXCLUSIVE;
	else if (str_starts(s, "mig:") && s[4]) {
		/* profiles look like 1g.10gb, 3g.40gb, 1c.2g.20gb, 1g.10gb+me */
		for (const char *p = s + 4; *p; p++)
			if (!(*p >= '0' && *p <= '9') && !(*p >= 'a' && *p <= 'z') && *p != '.' && *p != '+')
				return -1;
		if (strlen(s + 4) > 32)
			return -1;
		*out = JOB_MODE_MIG;
		*profile = xstrdup(s + 4);
	} else
		return -1;
	return 0;
}

static const char *const restart_names[] = {
	[JOB_RESTART_NEVER] = "never", [JOB_RESTART_ON_FAILURE] = "on-failure",
	[JOB_RESTART_ALWAYS] = "always",
};

const char *job_restart_name(job_restart r)
{
	return (unsigned)r < 3 ? restart_names[r] : "?";
}

int job_restart_parse(const char *s, job_restart *out)
{
	for (size_t i = 0; i < 3; i++)
		if (strcmp(s, restart_names[i]) == 0) {
			*out = (job_restart)i;
			return 0;
		}
	return -1;
}
