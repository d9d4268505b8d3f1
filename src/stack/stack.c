/*
 * stack.c: find CUDA toolkits, cuDNN/NCCL and Python environments with
 * their PyTorch build, reading files under the root prefix and running
 * interpreters (bounded by a timeout) only to ask for the arch list.
 */
#include "stack/stack.h"
#include "util/i18n.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define RUN_MAX_OUTPUT (1u << 20)

/* ---- helpers ------------------------------------------------------------- */

static void copy(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, "%s", src ? src : "");
}

static bool rooted_isdir(const char *abs)
{
	char *p = gw_path(abs);
	struct stat st;
	bool ok = stat(p, &st) == 0 && S_ISDIR(st.st_mode);
	free(p);
	return ok;
}

static bool rooted_isexec(const char *abs)
{
	char *p = gw_path(abs);
	struct stat st;
	bool ok = stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
	free(p);
	return ok;
}

/* The real path of a rooted file, for de-duplication ("" when absent). */
static void rooted_real(const char *abs, char *out, size_t n)
{
	char *p = gw_path(abs);
	char *r = realpath(p, NULL);
	copy(out, n, r ? r : "");
	free(r);
	free(p);
}

static char *dirname_of(const char *path)
{
	const char *s = strrchr(path, '/');
	if (!s)
		return xstrdup(".");
	if (s == path)
		return xstrdup("/");
	return xstrndup(path, (size_t)(s - path));
}

/* ---- running programs ------------------------------------------------------ */

int stack_run(char *const argv[], int timeout_ms, char **out, int *status, gw_error *err)
{
	int fds[2];
	*out = NULL;
	*status = -1;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return gw_fail(err, GW_ECHILD, "cannot run '%s': %s", argv[0], strerror(errno));
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return gw_fail(err, GW_ECHILD, "cannot run '%s': %s", argv[0], strerror(errno));
	}
	if (pid == 0) {
		setpgid(0, 0);
		int devnull = open("/dev/null", O_RDONLY);
		if (devnull >= 0)
			dup2(devnull, 0);
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	strbuf sb = STRBUF_INIT;
	uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
	bool timed_out = false;
	for (;;) {
		uint64_t now = now_ms();
		if (now >= deadline) {
			timed_out = true;
			break;
		}
		struct pollfd pfd = {fds[0], POLLIN, 0};
		int r = poll(&pfd, 1, (int)(deadline - now));
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0) {
			timed_out = true;
			break;
		}
		char buf[4096];
		ssize_t k = read(fds[0], buf, sizeof buf);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		if (sb.len + (size_t)k <= RUN_MAX_OUTPUT)
			sb_add(&sb, buf, (size_t)k);
	}
	close(fds[0]);
	if (timed_out)
		kill(-pid, SIGKILL);
	int ws = 0;
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	sb_puts(&sb, "");
	*out = sb_detach(&sb);
	if (timed_out)
		return gw_fail(err, GW_ETIMEOUT, "'%s' did not finish within %d s", argv[0], timeout_ms / 1000);
	if (WIFEXITED(ws)) {
		*status = WEXITSTATUS(ws);
		if (*status == 127 && !**out)
			return gw_fail(err, GW_ECHILD, "cannot run '%s'", argv[0]);
	}
	return 0;
}

/* ---- toolkits ----------------------------------------------------------- */

/* "release 12.4, V12.4.131" -> "12.4.131" */
static void nvcc_version(const char *text, char *out, size_t n)
{
	const char *v = strstr(text, ", V");
	if (v) {
		v += 3;
		size_t l = strspn(v, "0123456789.");
		snprintf(out, n, "%.*s", (int)l, v);
		return;
	}
	v = strstr(text, "release ");
	if (v) {
		v += 8;
		size_t l = strspn(v, "0123456789.");
		snprintf(out, n, "%.*s", (int)l, v);
	}
}

static void toolkit_version(stack_toolkit *t, bool no_exec)
{
	char *path = xasprintf("%s/version.json", t->root), *text = NULL;
	if (gw_read_file(path, true, 1 << 20, &text, NULL, NULL) == 0) {
		/* {"cuda" : {"name" : "CUDA SDK", "version" : "12.4.131"}, ...} */
		const char *c = strstr(text, "\"cuda\"");
		const char *v = c ? strstr(c, "\"version\"") : NULL;
		if (v && (v = strchr(v + 9, '"'))) {
			v++;
			size_t l = strspn(v, "0123456789.");
			snprintf(t->version, sizeof t->version, "%.*s", (int)l, v);
			copy(t->version_from, sizeof t->version_from, "version.json");
		}
	}
	free(text);
	text = NULL;
	free(path);
	if (!*t->version) {
		path = xasprintf("%s/version.txt", t->root);
		if (gw_read_file(path, true, 1 << 16, &text, NULL, NULL) == 0) {
			/* "CUDA Version 11.0.228" */
			const char *v = strstr(text, "Version ");
			if (v) {
				v += 8;
				size_t l = strspn(v, "0123456789.");
				snprintf(t->version, sizeof t->version, "%.*s", (int)l, v);
				copy(t->version_from, sizeof t->version_from, "version.txt");
			}
		}
		free(text);
		text = NULL;
		free(path);
	}
	if (!*t->version && *t->nvcc && !no_exec) {
		char *exe = gw_path(t->nvcc);
		char *argv[] = {exe, "--version", NULL};
		char *o = NULL;
		int st;
		if (stack_run(argv, 10000, &o, &st, NULL) == 0 && st == 0) {
			nvcc_version(o, t->version, sizeof t->version);
			if (*t->version)
				copy(t->version_from, sizeof t->version_from, "nvcc --version");
		}
		free(o);
		free(exe);
	}
}

/*
 * A wrapper script on PATH (`#!/bin/sh` + `exec /usr/local/cuda-13.0/bin/nvcc
 * "$@"`) belongs to the toolkit it runs.  Returns the malloc'd absolute
 * path of that nvcc (as seen by the user), or NULL when nvcc is not such a
 * wrapper.
 */
static char *wrapper_target(const char *nvcc)
{
	char *text = NULL, *found = NULL;
	size_t len;
	if (gw_read_file(nvcc, true, 64 * 1024, &text, &len, NULL) || len < 2 || !str_starts(text, "#!"))
		goto out;
	for (char *p = strstr(text, "/bin/nvcc"); p && !found; p = strstr(p + 1, "/bin/nvcc")) {
		char *end = p + strlen("/bin/nvcc");
		if (*end && !strchr(" \t\n\"';", *end))
			continue;
		char *start = p;
		while (start > text && !strchr(" \t\n\"'=", start[-1]))
			start--;
		if (*start != '/')
			continue;
		char *target = xstrndup(start, (size_t)(end - start));
		if (strcmp(target, nvcc) != 0 && rooted_isexec(target))
			found = target;
		else
			free(target);
	}
out:
	free(text);
	return found;
}

static stack_toolkit *add_toolkit(stack_info *s, const char *root, const char *how)
{
	char real[1024];
	rooted_real(root, real, sizeof real);
	if (!*real)
		return NULL;
	for (size_t i = 0; i < s->n_toolkits; i++) {
		char other[1024];
		rooted_real(s->toolkits[i].root, other, sizeof other);
		if (strcmp(other, real) == 0)
			return &s->toolkits[i];
	}
	char *nvcc = xasprintf("%s/bin/nvcc", root);
	bool has_nvcc = rooted_isexec(nvcc);
	char *vj = xasprintf("%s/version.json", root), *vt = xasprintf("%s/version.txt", root);
	bool looks = has_nvcc || gw_exists(vj) || gw_exists(vt);
	free(vj);
	free(vt);
	if (!looks) {
		free(nvcc);
		return NULL;
	}
	s->toolkits = xrealloc(s->toolkits, (s->n_toolkits + 1) * sizeof *s->toolkits);
	stack_toolkit *t = &s->toolkits[s->n_toolkits++];
	memset(t, 0, sizeof *t);
	copy(t->root, sizeof t->root, root);
	copy(t->how, sizeof t->how, how);
	if (has_nvcc)
		copy(t->nvcc, sizeof t->nvcc, nvcc);
	t->path_rank = -1;
	free(nvcc);
	return t;
}

static void find_toolkits(stack_info *s, const stack_opts *o)
{
	const char *home = getenv("CUDA_HOME");
	if (!home || !*home)
		home = getenv("CUDA_PATH");
	copy(s->cuda_home, sizeof s->cuda_home, home);
	/* every nvcc on PATH, in PATH order */
	const char *path = getenv("PATH");
	if (path) {
		char *copyp = xstrdup(path), *save = NULL;
		int rank = 0;
		for (char *d = strtok_r(copyp, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
			char *nvcc = xasprintf("%s/nvcc", d);
			if (rooted_isexec(nvcc)) {
				char *bin = xstrdup(d);
				size_t l = strlen(bin);
				while (l > 1 && bin[l - 1] == '/')
					bin[--l] = '\0';
				char *root = dirname_of(bin);
				/* a symlinked nvcc (/usr/bin/nvcc -> /usr/local/cuda-12.4/bin/nvcc) belongs to its toolkit */
				char real[1024];
				rooted_real(nvcc, real, sizeof real);
				size_t rl = strlen(gw_root());
				if (*real && strncmp(real, gw_root(), rl) == 0 && str_ends(real, "/bin/nvcc")) {
					char *rbin = dirname_of(real + rl);
					free(root);
					root = dirname_of(rbin);
					free(rbin);
				}
				char *target = wrapper_target(nvcc);
				if (target) {
					char *tbin = dirname_of(target);
					free(root);
					root = dirname_of(tbin);
					free(tbin);
					free(target);
				}
				char *inc = xasprintf("%s/include/cuda.h", root), *vj = xasprintf("%s/version.json", root),
				     *vt = xasprintf("%s/version.txt", root);
				bool toolkit = gw_exists(inc) || gw_exists(vj) || gw_exists(vt);
				free(inc);
				free(vj);
				free(vt);
				char how[64];
				snprintf(how, sizeof how, "PATH (nvcc #%d%s)", rank + 1, toolkit ? "" : _(", outside a toolkit tree"));
				stack_toolkit *t = add_toolkit(s, root, how);
				if (t && t->path_rank < 0)
					t->path_rank = rank;
				rank++;
				free(root);
				free(bin);
			}
			free(nvcc);
		}
		free(copyp);
	}
	if (*s->cuda_home) {
		stack_toolkit *t = add_toolkit(s, s->cuda_home, getenv("CUDA_HOME") ? "CUDA_HOME" : "CUDA_PATH");
		if (t)
			t->is_cuda_home = true;
	}
	char **l;
	size_t n = gw_glob("/usr/local/cuda*", &l);
	for (size_t i = 0; i < n; i++)
		if (rooted_isdir(l[i]))
			add_toolkit(s, l[i], "/usr/local/cuda*");
	gw_list_free(l, n);
	n = gw_glob("/opt/cuda*", &l);
	for (size_t i = 0; i < n; i++)
		if (rooted_isdir(l[i]))
			add_toolkit(s, l[i], "/opt/cuda*");
	gw_list_free(l, n);
	/* conda environments */
	const char *cp = getenv("CONDA_PREFIX");
	if (cp && *cp)
		add_toolkit(s, cp, "CONDA_PREFIX");
	const char *h = getenv("HOME");
	const char *pats[] = {"/.conda/envs/*", "/miniconda3/envs/*", "/anaconda3/envs/*",
			      "/miniforge3/envs/*", "/miniconda3", "/anaconda3", "/miniforge3"};
	for (size_t k = 0; h && *h && k < sizeof pats / sizeof pats[0]; k++) {
		char *pat = xasprintf("%s%s", h, pats[k]);
		n = gw_glob(pat, &l);
		for (size_t i = 0; i < n; i++)
			add_toolkit(s, l[i], "conda env");
		gw_list_free(l, n);
		free(pat);
	}
	n = gw_glob("/opt/conda/envs/*", &l);
	for (size_t i = 0; i < n; i++)
		add_toolkit(s, l[i], "conda env");
	gw_list_free(l, n);
	for (size_t i = 0; i < s->n_toolkits; i++) {
		if (*s->cuda_home && !s->toolkits[i].is_cuda_home) {
			char a[1024], b[1024];
			rooted_real(s->toolkits[i].root, a, sizeof a);
			rooted_real(s->cuda_home, b, sizeof b);
			s->toolkits[i].is_cuda_home = *a && strcmp(a, b) == 0;
		}
		toolkit_version(&s->toolkits[i], o->no_exec);
	}
}

/* ---- libraries (cuDNN, NCCL) ---------------------------------------------- */

/* Best "libNAME.so.X.Y.Z" in dir: the longest version; "" none. */
static bool lib_in_dir(const char *dir, const char *lib, char *path, size_t pn, char *ver, size_t vn)
{
	char *pat = xasprintf("%s/%s.so*", dir, lib);
	char **l;
	size_t n = gw_glob(pat, &l);
	free(pat);
	const char *best = NULL;
	size_t prefix = strlen(dir) + 1 + strlen(lib) + 3; /* ".so" */
	for (size_t i = 0; i < n; i++) {
		const char *v = l[i] + prefix;
		if (*v && *v != '.')
			continue; /* libcudnn_ops.so etc. */
		if (!best || strlen(v) > strlen(best + prefix))
			best = l[i];
	}
	if (best) {
		copy(path, pn, best);
		const char *v = best + prefix;
		copy(ver, vn, *v == '.' ? v + 1 : "");
		if (!*ver || !strchr(ver, '.')) {
			/* libcudnn.so.9 -> libcudnn.so.9.1.0 */
			char *full = gw_path(best), tgt[512];
			ssize_t k = readlink(full, tgt, sizeof tgt - 1);
			free(full);
			if (k > 0) {
				tgt[k] = '\0';
				const char *t = strstr(tgt, ".so.");
				if (t && strlen(t + 4) > strlen(ver))
					copy(ver, vn, t + 4);
			}
		}
	}
	gw_list_free(l, n);
	return best != NULL;
}

static void add_lib(stack_info *s, const char *name, const char *path, const char *ver, const char *how)
{
	for (size_t i = 0; i < s->n_libs; i++)
		if (strcmp(s->libs[i].path, path) == 0)
			return;
	s->libs = xrealloc(s->libs, (s->n_libs + 1) * sizeof *s->libs);
	stack_lib *l = &s->libs[s->n_libs++];
	memset(l, 0, sizeof *l);
	copy(l->name, sizeof l->name, name);
	copy(l->path, sizeof l->path, path);
	copy(l->version, sizeof l->version, ver);
	copy(l->how, sizeof l->how, how);
}

/*
 * The full version from the headers installed beside a library
 * (DIR/../include/cudnn_version.h or nccl.h), for a library whose file
 * name carries only its major ("libcudnn.so.9").  ver is left as it is
 * when no header says more.
 */
static void header_version(const char *libdir, const char *name, char *ver, size_t vn)
{
	static const struct {
		const char *name, *header, *macros[3];
	} h[] = {
		{"cudnn", "cudnn_version.h", {"CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL"}},
		{"nccl", "nccl.h", {"NCCL_MAJOR", "NCCL_MINOR", "NCCL_PATCH"}},
	};
	for (size_t i = 0; i < sizeof h / sizeof h[0]; i++) {
		if (strcmp(h[i].name, name) != 0)
			continue;
		char *up = dirname_of(libdir);
		char *file = xasprintf("%s/include/%s", up, h[i].header);
		char *text;
		free(up);
		if (gw_read_file(file, true, 1 << 20, &text, NULL, NULL) == 0) {
			long v[3];
			int got = 0;
			for (int k = 0; k < 3; k++) {
				char *key = xasprintf("#define %s ", h[i].macros[k]);
				const char *p = strstr(text, key);
				if (p && sscanf(p + strlen(key), "%ld", &v[k]) == 1)
					got++;
				free(key);
			}
			if (got == 3)
				snprintf(ver, vn, "%ld.%ld.%ld", v[0], v[1], v[2]);
			free(text);
		}
		free(file);
	}
}

static void scan_dir_libs(stack_info *s, const char *dir, const char *how)
{
	static const char *const names[][2] = {{"cudnn", "libcudnn"}, {"nccl", "libnccl"}};
	for (size_t k = 0; k < 2; k++) {
		char path[512], ver[32];
		if (lib_in_dir(dir, names[k][1], path, sizeof path, ver, sizeof ver)) {
			if (!strchr(ver, '.'))
				header_version(dir, names[k][0], ver, sizeof ver);
			add_lib(s, names[k][0], path, ver, how);
		}
	}
}

/* Directories of /etc/ld.so.conf, following "include" globs (one level). */
static void ld_conf_dirs(const char *file, strbuf *dirs, int depth)
{
	char *text;
	if (depth > 3 || gw_read_file(file, true, 1 << 20, &text, NULL, NULL))
		return;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *t = str_trim(line);
		char *hash = strchr(t, '#');
		if (hash)
			*hash = '\0';
		t = str_trim(t);
		if (!*t)
			continue;
		if (str_starts(t, "include")) {
			char *pat = str_trim(t + 7);
			char **l;
			char *full = *pat == '/' ? xstrdup(pat) : xasprintf("/etc/%s", pat);
			size_t n = gw_glob(full, &l);
			for (size_t i = 0; i < n; i++)
				ld_conf_dirs(l[i], dirs, depth + 1);
			gw_list_free(l, n);
			free(full);
		} else if (*t == '/') {
			sb_printf(dirs, "%s\n", t);
		}
	}
	free(text);
}

static void find_libs(stack_info *s)
{
	const char *llp = getenv("LD_LIBRARY_PATH");
	if (llp) {
		char *c = xstrdup(llp), *save = NULL;
		for (char *d = strtok_r(c, ":", &save); d; d = strtok_r(NULL, ":", &save))
			scan_dir_libs(s, d, "LD_LIBRARY_PATH");
		free(c);
	}
	strbuf dirs = STRBUF_INIT;
	ld_conf_dirs("/etc/ld.so.conf", &dirs, 0);
	sb_puts(&dirs, "");
	char *save = NULL;
	for (char *d = strtok_r(dirs.buf, "\n", &save); d; d = strtok_r(NULL, "\n", &save))
		scan_dir_libs(s, d, "ld.so.conf");
	sb_release(&dirs);
	/* the loader's trusted directories (ld.so(8)) */
	static const char *const sys[] = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
					  "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
					  "/lib64", "/usr/lib64", "/lib", "/usr/lib"};
	for (size_t i = 0; i < sizeof sys / sizeof sys[0]; i++)
		scan_dir_libs(s, sys[i], _("system library directory"));
}

const stack_lib *stack_find_lib(const stack_info *s, const char *name)
{
	for (size_t i = 0; i < s->n_libs; i++)
		if (strcmp(s->libs[i].name, name) == 0)
			return &s->libs[i];
	return NULL;
}

/* ---- Python and PyTorch ------------------------------------------------------ */

/* The quoted value after `key` in version.py ("__version__ = '2.5.1+cu124'"). */
static void py_assign(const char *text, const char *key, char *out, size_t n)
{
	out[0] = '\0';
	for (const char *p = text; (p = strstr(p, key)); p += strlen(key)) {
		if (p != text && p[-1] != '\n')
			continue;
		const char *e = strchr(p, '=');
		const char *nl = strchr(p, '\n');
		if (!e || (nl && e > nl))
			continue;
		e++;
		while (*e == ' ')
			e++;
		if (*e == '\'' || *e == '"') {
			char q = *e++;
			const char *end = strchr(e, q);
			if (end)
				snprintf(out, n, "%.*s", (int)(end - e), e);
		}
		return; /* None or anything else: no value */
	}
}

void stack_parse_torch_version(const char *text, stack_python *py)
{
	/* torch/version.py: __version__ = '2.7.1+cu126'; cuda: Optional[str] = '12.6'; hip ... */
	py_assign(text, "__version__", py->torch_version, sizeof py->torch_version);
	py_assign(text, "cuda", py->torch_cuda, sizeof py->torch_cuda);
	py_assign(text, "hip", py->torch_hip, sizeof py->torch_hip);
}

static int arch_cmp(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	bool px = str_starts(x, "compute_"), py = str_starts(y, "compute_");
	if (px != py)
		return px - py;
	long nx = strtol(x + (px ? 8 : 3), NULL, 10), ny = strtol(y + (py ? 8 : 3), NULL, 10);
	if (nx != ny)
		return nx < ny ? -1 : 1;
	return strcmp(x, y);
}

void stack_scan_arch(const char *data, size_t len, char *out, size_t n)
{
	char *found[64];
	size_t nf = 0;
	out[0] = '\0';
	for (size_t i = 0; i + 5 < len && nf < 64; i++) {
		size_t plen;
		if (data[i] == 's' && memcmp(data + i, "sm_", 3) == 0)
			plen = 3;
		else if (data[i] == 'c' && i + 10 < len && memcmp(data + i, "compute_", 8) == 0)
			plen = 8;
		else
			continue;
		if (i > 0 && (isalnum((unsigned char)data[i - 1]) || data[i - 1] == '_'))
			continue;
		size_t d = 0;
		while (i + plen + d < len && d < 4 && isdigit((unsigned char)data[i + plen + d]))
			d++;
		if (d < 2 || d > 3)
			continue;
		size_t e = i + plen + d;
		if (e < len && (data[e] == 'a' || data[e] == 'f'))
			e++;
		if (e < len && (isalnum((unsigned char)data[e]) || data[e] == '_'))
			continue;
		char *tok = xstrndup(data + i, e - i);
		bool dup = false;
		for (size_t k = 0; k < nf && !dup; k++)
			dup = strcmp(found[k], tok) == 0;
		if (dup)
			free(tok);
		else
			found[nf++] = tok;
		i = e - 1;
	}
	qsort(found, nf, sizeof *found, arch_cmp);
	size_t used = 0;
	for (size_t k = 0; k < nf; k++) {
		int w = snprintf(out + used, n - used, "%s%s", k ? " " : "", found[k]);
		if (w > 0 && (size_t)w < n - used)
			used += (size_t)w;
		free(found[k]);
	}
}

/* Map a rooted file and scan it for architecture names. */
static bool scan_file_arch(const char *abs, char *out, size_t n)
{
	char *p = gw_path(abs);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	free(p);
	if (fd < 0)
		return false;
	struct stat st;
	bool ok = false;
	if (fstat(fd, &st) == 0 && st.st_size > 0) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m != MAP_FAILED) {
			stack_scan_arch(m, (size_t)st.st_size, out, n);
			munmap(m, (size_t)st.st_size);
			ok = *out != '\0';
		}
	}
	close(fd);
	return ok;
}

static const char *const pkg_names[][2] = {
	{"bitsandbytes", "bitsandbytes"}, {"xformers", "xformers"}, {"flash_attn", "flash-attn"},
	{"vllm", "vllm"}, {"triton", "triton"},
};

static void py_add_pkg(stack_python *py, const char *name, const char *ver)
{
	for (size_t i = 0; i < py->n_pkgs; i++)
		if (strcmp(py->pkgs[i].name, name) == 0)
			return;
	if (py->n_pkgs == STACK_MAX_PKGS)
		return;
	copy(py->pkgs[py->n_pkgs].name, sizeof py->pkgs[0].name, name);
	copy(py->pkgs[py->n_pkgs].version, sizeof py->pkgs[0].version, ver);
	py->n_pkgs++;
}

/* Packages from NAME-VERSION.dist-info directories; pip nvidia-* wheels become libraries. */
static void scan_site(stack_info *s, stack_python *py, const char *site)
{
	char *dpath = gw_path(site);
	DIR *d = opendir(dpath);
	free(dpath);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		const char *nm = e->d_name;
		if (!str_ends(nm, ".dist-info"))
			continue;
		const char *dash = strchr(nm, '-');
		if (!dash)
			continue;
		char name[64], ver[48];
		snprintf(name, sizeof name, "%.*s", (int)(dash - nm), nm);
		snprintf(ver, sizeof ver, "%.*s", (int)(strlen(dash + 1) - strlen(".dist-info")), dash + 1);
		for (size_t k = 0; k < sizeof pkg_names / sizeof pkg_names[0]; k++)
			if (str_ieq(name, pkg_names[k][0]))
				py_add_pkg(py, pkg_names[k][1], ver);
		if (str_starts(name, "nvidia_cudnn_cu") || str_starts(name, "nvidia_nccl_cu")) {
			bool cudnn = str_starts(name, "nvidia_cudnn");
			char *dir = xasprintf("%s/nvidia/%s/lib", site, cudnn ? "cudnn" : "nccl");
			char path[512], v2[32], how[96];
			char pip[64];
			copy(pip, sizeof pip, name);
			for (char *c = pip; *c; c++)
				if (*c == '_')
					*c = '-';
			snprintf(how, sizeof how, "pip %s", pip);
			if (lib_in_dir(dir, cudnn ? "libcudnn" : "libnccl", path, sizeof path, v2, sizeof v2))
				add_lib(s, cudnn ? "cudnn" : "nccl", path, ver, how);
			free(dir);
		}
	}
	closedir(d);
}

char *stack_output_tail(const char *out, size_t max_lines, size_t max_bytes)
{
	if (!out)
		return xstrdup("");
	size_t end = strlen(out);
	while (end > 0 && strchr("\n\r\t ", out[end - 1]))
		end--;
	size_t start = end, pos = end, lines = 0;
	while (pos > 0 && lines < max_lines) {
		size_t ls = pos;
		while (ls > 0 && out[ls - 1] != '\n')
			ls--;
		bool blank = true;
		for (size_t i = ls; i < pos; i++)
			blank &= out[i] == ' ' || out[i] == '\t' || out[i] == '\r';
		lines += !blank;
		start = ls;
		if (ls == 0)
			break;
		pos = ls - 1;
	}
	if (end - start > max_bytes)
		start = end - max_bytes;
	return xstrndup(out + start, end - start);
}

static const char arch_script[] =
	"import sys\n"
	"try:\n"
	"    import torch\n"
	"except Exception as e:\n"
	"    print('ERR %s: %s' % (type(e).__name__, e)); sys.exit(3)\n"
	"f = getattr(torch._C, '_cuda_getArchFlags', None)\n"
	"print('VERSION ' + str(torch.__version__))\n"
	"print('ARCH ' + (f() if f else ''))\n";

static void py_probe(stack_info *s, stack_python *py, const stack_opts *o)
{
	char *exe_dir = dirname_of(py->exe);
	char *prefix = dirname_of(exe_dir);
	free(exe_dir);
	const char *pats[] = {"/lib/python3*/site-packages", "/lib/python3*/dist-packages",
			      "/local/lib/python3*/dist-packages", "/lib/python3/dist-packages",
			      "/lib64/python3*/site-packages"};
	char *cfg = xasprintf("%s/pyvenv.cfg", prefix);
	bool venv = gw_exists(cfg);
	free(cfg);
	strbuf sites = STRBUF_INIT;
	for (size_t k = 0; k < sizeof pats / sizeof pats[0]; k++) {
		char *pat = xasprintf("%s%s", strcmp(prefix, "/") == 0 ? "" : prefix, pats[k]);
		char **l;
		size_t n = gw_glob(pat, &l);
		for (size_t i = 0; i < n; i++)
			sb_printf(&sites, "%s\n", l[i]);
		gw_list_free(l, n);
		free(pat);
	}
	const char *home = getenv("HOME");
	if (!venv && home && *home) {
		char *pat = xasprintf("%s/.local/lib/python3*/site-packages", home);
		char **l;
		size_t n = gw_glob(pat, &l);
		for (size_t i = 0; i < n; i++)
			sb_printf(&sites, "%s\n", l[i]);
		gw_list_free(l, n);
		free(pat);
	}
	free(prefix);
	sb_puts(&sites, "");
	char *save = NULL;
	for (char *site = strtok_r(sites.buf, "\n", &save); site; site = strtok_r(NULL, "\n", &save)) {
		if (!py->has_torch) {
			char *vp = xasprintf("%s/torch/version.py", site), *text;
			if (gw_read_file(vp, true, 1 << 16, &text, NULL, NULL) == 0) {
				py->has_torch = true;
				copy(py->site, sizeof py->site, site);
				stack_parse_torch_version(text, py);
				free(text);
			}
			free(vp);
		}
		scan_site(s, py, site);
	}
	sb_release(&sites);
	if (!py->has_torch || !*py->torch_cuda)
		return;
	if (!o->no_exec) {
		char *exe = gw_path(py->exe);
		char *argv[] = {exe, "-c", (char *)arch_script, NULL};
		char *out = NULL;
		int st;
		gw_error err = {0};
		int rc = stack_run(argv, o->timeout_ms > 0 ? o->timeout_ms : 10000, &out, &st, &err);
		if (rc) {
			copy(py->run_error, sizeof py->run_error, err.msg);
		} else {
			const char *a = strstr(out, "ARCH ");
			if (st == 0 && a && (a == out || a[-1] == '\n')) {
				a += 5;
				size_t l = strcspn(a, "\n");
				snprintf(py->arch_list, sizeof py->arch_list, "%.*s", (int)l, a);
				copy(py->arch_from, sizeof py->arch_from, "python");
			} else {
				/* our own "ERR Type: message", else the tail of whatever
				 * it printed (a traceback from a crash past the import) */
				const char *er = strstr(out, "ERR ");
				if (er && (er == out || er[-1] == '\n')) {
					size_t l = strcspn(er + 4, "\n");
					snprintf(py->run_error, sizeof py->run_error, "import torch failed: %.*s",
						 (int)(l > 800 ? 800 : l), er + 4);
				} else {
					char *tail = stack_output_tail(out, 8, 900);
					snprintf(py->run_error, sizeof py->run_error, "exit %d: %s", st,
						 *tail ? tail : "no output");
					free(tail);
				}
			}
		}
		free(out);
		free(exe);
	}
	if (!*py->arch_list) {
		char *lib = xasprintf("%s/torch/lib/libtorch_cuda.so", py->site);
		if (scan_file_arch(lib, py->arch_list, sizeof py->arch_list))
			copy(py->arch_from, sizeof py->arch_from, "libtorch_cuda.so");
		free(lib);
	}
}

static void add_python(stack_info *s, const char *exe, const char *how)
{
	if (!rooted_isexec(exe))
		return;
	char real[1024];
	rooted_real(exe, real, sizeof real);
	/* the same interpreter in the same directory (after symlinks: /bin -> /usr/bin)
	 * is one environment; a venv's bin/python links to the system one but is not */
	char *dir = dirname_of(exe), rdir[1024];
	rooted_real(dir, rdir, sizeof rdir);
	free(dir);
	for (size_t i = 0; i < s->n_pythons; i++) {
		char other[1024], odir_real[1024];
		rooted_real(s->pythons[i].exe, other, sizeof other);
		char *odir = dirname_of(s->pythons[i].exe);
		rooted_real(odir, odir_real, sizeof odir_real);
		free(odir);
		if (strcmp(other, real) == 0 && strcmp(odir_real, rdir) == 0)
			return;
	}
	s->pythons = xrealloc(s->pythons, (s->n_pythons + 1) * sizeof *s->pythons);
	stack_python *p = &s->pythons[s->n_pythons++];
	memset(p, 0, sizeof *p);
	copy(p->exe, sizeof p->exe, exe);
	copy(p->how, sizeof p->how, how);
}

static void find_pythons(stack_info *s, const stack_opts *o)
{
	const char *path = getenv("PATH");
	if (path) {
		char *c = xstrdup(path), *save = NULL;
		for (char *d = strtok_r(c, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
			char *a = xasprintf("%s/python3", d), *b = xasprintf("%s/python", d);
			add_python(s, a, "PATH python3");
			add_python(s, b, "PATH python");
			free(a);
			free(b);
		}
		free(c);
	}
	const char *env[][2] = {{"VIRTUAL_ENV", "VIRTUAL_ENV"}, {"CONDA_PREFIX", "CONDA_PREFIX"}};
	for (size_t k = 0; k < 2; k++) {
		const char *v = getenv(env[k][0]);
		if (v && *v) {
			char *a = xasprintf("%s/bin/python", v), *b = xasprintf("%s/bin/python3", v);
			add_python(s, a, env[k][1]);
			add_python(s, b, env[k][1]);
			free(a);
			free(b);
		}
	}
	for (size_t i = 0; i < o->n_pythons; i++) {
		const char *p = o->pythons[i];
		if (rooted_isdir(p)) {
			char *a = xasprintf("%s/bin/python", p), *b = xasprintf("%s/bin/python3", p);
			add_python(s, rooted_isexec(a) ? a : b, "--python");
			free(a);
			free(b);
		} else {
			add_python(s, p, "--python");
		}
	}
	for (size_t i = 0; i < s->n_pythons; i++)
		py_probe(s, &s->pythons[i], o);
}

int stack_discover(const stack_opts *o, stack_info *out, gw_error *err)
{
	stack_opts def = {0};
	if (!o)
		o = &def;
	memset(out, 0, sizeof *out);
	find_toolkits(out, o);
	find_libs(out);
	find_pythons(out, o);
	return 0;
}

void stack_release(stack_info *s)
{
	free(s->toolkits);
	free(s->libs);
	free(s->pythons);
	memset(s, 0, sizeof *s);
}
