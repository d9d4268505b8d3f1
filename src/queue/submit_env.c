/*
 * queue/submit_env: what `gpuwise submit` takes from the submitter's side:
 * the environment the job inherits (--export, spelled as sbatch spells it)
 * and the command resolved with the submitter's PATH.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "queue/queue.h"

static void add(json_t *out, const char *entry)
{
	json_array_append_new(out, json_string(entry));
}

int queue_export_env(const char *spec, char *const *envp, json_t *out, gw_error *err)
{
	if (!spec || strcmp(spec, "ALL") == 0) {
		for (size_t i = 0; envp && envp[i]; i++)
			if (strchr(envp[i], '=') && envp[i][0] != '=')
				add(out, envp[i]);
		return 0;
	}
	if (strcmp(spec, "NONE") == 0)
		return 0;
	/* "[ALL,]NAME[=VALUE],...": the named variables (ALL: every one), NAME=VALUE as given */
	char *copy = xstrdup(spec), *sp = NULL;
	int rc = 0;
	for (char *w = strtok_r(copy, ",", &sp); w; w = strtok_r(NULL, ",", &sp)) {
		if (strcmp(w, "ALL") == 0) {
			rc = queue_export_env("ALL", envp, out, err);
			continue;
		}
		if (strcmp(w, "NONE") == 0 || *w == '=' || strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
							     "0123456789_") != strcspn(w, "=")) {
			rc = gw_fail(err, GW_EINVAL, "--export '%s': '%s' is not a variable name (ALL, NONE or NAME[=VALUE],...)",
				     spec, w);
			break;
		}
		if (strchr(w, '=')) {
			add(out, w);
			continue;
		}
		const char *v = getenv(w);
		if (v) {
			char *e = xasprintf("%s=%s", w, v);
			add(out, e);
			free(e);
		}
	}
	free(copy);
	return rc;
}

static bool runnable(const char *p)
{
	struct stat sb;
	return stat(p, &sb) == 0 && S_ISREG(sb.st_mode) && access(p, X_OK) == 0;
}

int queue_resolve_command(const char *cmd, const char *path, char **out, gw_error *err)
{
	*out = NULL;
	if (!*cmd)
		return gw_fail(err, GW_EINVAL, "an empty command");
	if (strchr(cmd, '/')) {
		if (!runnable(cmd))
			return gw_fail(err, GW_ENOENT, "cannot run '%s': %s", cmd,
				       access(cmd, F_OK) ? "no such file" : "not an executable file");
		*out = xstrdup(cmd);
		return 0;
	}
	const char *p = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
	while (*p) {
		size_t l = strcspn(p, ":");
		char *cand = l ? xasprintf("%.*s/%s", (int)l, p, cmd) : xasprintf("./%s", cmd);
		if (runnable(cand)) {
			if (cand[0] != '/') {
				char *cwd = getcwd(NULL, 0);
				char *abs = xasprintf("%s/%s", cwd ? cwd : ".", cmd);
				free(cwd);
				free(cand);
				cand = abs;
			}
			*out = cand;
			return 0;
		}
		free(cand);
		p += l + (p[l] == ':');
	}
	return gw_fail(err, GW_ENOENT, "cannot find '%s' on PATH (%s)", cmd, path && *path ? path : "unset");
}
