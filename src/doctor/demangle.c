/*
 * demangle.c: enough of the Itanium C++ ABI name mangling to say which
 * library an undefined symbol belongs to ("_ZN3c104cuda9SetDeviceEi" ->
 * "c10::cuda::SetDevice").  Only the qualified name is decoded; the
 * parameter types are left out.  The binary stays glibc-only, so no
 * libstdc++ __cxa_demangle.
 *
 * Grammar followed (https://itanium-cxx-abi.github.io/cxx-abi/abi.html#mangling):
 *   _Z <encoding>;  <name> ::= N [<CV-qualifiers>] <prefix> <unqualified-name> E
 *                          |  St <unqualified-name> | <unqualified-name>
 *   <source-name> ::= <length> <identifier>; C1-C5 constructors, D0-D5 destructors;
 *   S_ / S<seq-id>_ substitutions and St/Sa/Ss... abbreviations; I...E template args.
 */
#include "doctor/doctor.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define DM_MAX_PARTS 16

typedef struct dm {
	const char *p;
	char *parts[DM_MAX_PARTS]; /* components of the name, owned */
	size_t n;
	char *subs[DM_MAX_PARTS];  /* prefixes that can be substituted, owned */
	size_t nsubs;
} dm;

static void dm_release(dm *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->parts[i]);
	for (size_t i = 0; i < d->nsubs; i++)
		free(d->subs[i]);
}

static char *join(char *const *v, size_t n)
{
	strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < n; i++)
		sb_printf(&sb, "%s%s", i ? "::" : "", v[i]);
	sb_puts(&sb, "");
	return sb_detach(&sb);
}

static bool add_part(dm *d, char *s)
{
	if (d->n >= DM_MAX_PARTS) {
		free(s);
		return false;
	}
	d->parts[d->n++] = s;
	if (d->nsubs < DM_MAX_PARTS)
		d->subs[d->nsubs++] = join(d->parts, d->n);
	return true;
}

/* <length><identifier>; false when malformed. */
static bool source_name(dm *d)
{
	if (!isdigit((unsigned char)*d->p))
		return false;
	char *end;
	unsigned long len = strtoul(d->p, &end, 10);
	if (len == 0 || len > 4096 || strnlen(end, len) < len)
		return false;
	d->p = end + len;
	return add_part(d, xstrndup(end, len));
}

/* Skip a balanced I ... E template argument list. */
static bool skip_template(dm *d)
{
	int depth = 0;
	do {
		if (!*d->p)
			return false;
		if (*d->p == 'I')
			depth++;
		else if (*d->p == 'E')
			depth--;
		else if (isdigit((unsigned char)*d->p)) {
			/* a source name inside may hold I or E letters */
			char *end;
			unsigned long len = strtoul(d->p, &end, 10);
			if (strnlen(end, len) < len)
				return false;
			d->p = end + len;
			continue;
		}
		d->p++;
	} while (depth > 0);
	return true;
}

/* S_, S<base36>_, St, Sa, Sb, Ss, Si, So, Sd: a prefix seen before or a std name. */
static bool substitution(dm *d)
{
	static const struct {
		char c;
		const char *name;
	} abbr[] = {{'t', "std"}, {'a', "std::allocator"}, {'b', "std::basic_string"}, {'s', "std::string"},
		    {'i', "std::istream"}, {'o', "std::ostream"}, {'d', "std::iostream"}};
	const char *q = d->p + 1;
	for (size_t i = 0; i < sizeof abbr / sizeof abbr[0]; i++)
		if (*q == abbr[i].c) {
			d->p = q + 1;
			return add_part(d, xstrdup(abbr[i].name));
		}
	size_t idx = 0;
	if (*q != '_') {
		size_t v = 0;
		while (isdigit((unsigned char)*q) || isupper((unsigned char)*q)) {
			v = v * 36 + (size_t)(isdigit((unsigned char)*q) ? *q - '0' : *q - 'A' + 10);
			q++;
		}
		idx = v + 1;
	}
	if (*q != '_' || idx >= d->nsubs)
		return false;
	d->p = q + 1;
	/* a substituted prefix replaces what was read so far */
	char *s = xstrdup(d->subs[idx]);
	for (size_t i = 0; i < d->n; i++)
		free(d->parts[i]);
	d->n = 0;
	d->parts[d->n++] = s;
	return true;
}

char *explain_demangle(const char *sym)
{
	if (!sym || strncmp(sym, "_Z", 2) != 0)
		return NULL;
	dm d = {.p = sym + 2};
	const char *special = NULL;
	if (d.p[0] == 'T' && strchr("VIS", d.p[1]) && d.p[1]) {
		special = d.p[1] == 'V' ? "vtable for " : d.p[1] == 'I' ? "typeinfo for " : "typeinfo name for ";
		d.p += 2;
	}
	char *out = NULL;
	bool nested = *d.p == 'N';
	if (nested) {
		d.p++;
		while (*d.p == 'r' || *d.p == 'V' || *d.p == 'K' || *d.p == 'R' || *d.p == 'O')
			d.p++;
	}
	for (;;) {
		char c = *d.p;
		if (c == 'E' || c == '\0')
			break;
		if (isdigit((unsigned char)c)) {
			if (!source_name(&d))
				goto out;
		} else if (c == 'S') {
			if (!substitution(&d))
				goto out;
		} else if (c == 'I') {
			if (!skip_template(&d))
				goto out;
		} else if ((c == 'C' || c == 'D') && isdigit((unsigned char)d.p[1]) && d.n) {
			const char *last = d.parts[d.n - 1];
			const char *base = strrchr(last, ':');
			base = base ? base + 1 : last;
			if (!add_part(&d, c == 'C' ? xstrdup(base) : xasprintf("~%s", base)))
				goto out;
			d.p += 2;
		} else if (c == 'L') {
			d.p++; /* internal linkage marker */
		} else {
			break;
		}
		if (!nested && d.n && *d.p != 'I')
			break;
	}
	if (!d.n)
		goto out;
	char *name = join(d.parts, d.n);
	out = special ? xasprintf("%s%s", special, name) : xstrdup(name);
	free(name);
out:
	dm_release(&d);
	return out;
}

const char *explain_symbol_library(const char *demangled)
{
	static const struct {
		const char *ns, *lib;
	} map[] = {
		{"c10::", "PyTorch (libc10)"},       {"at::", "PyTorch (ATen, libtorch_cpu/libtorch_cuda)"},
		{"torch::", "PyTorch (libtorch)"},   {"caffe2::", "PyTorch (caffe2)"},
		{"pybind11::", "pybind11"},          {"std::", "the C++ standard library (libstdc++)"},
		{"tensorflow::", "TensorFlow"},      {"cudnn_frontend::", "cuDNN frontend"},
		{"nvinfer1::", "TensorRT"},          {"transformer_engine::", "Transformer Engine"},
	};
	if (!demangled)
		return NULL;
	const char *s = demangled;
	if (strncmp(s, "vtable for ", 11) == 0)
		s += 11;
	else if (strncmp(s, "typeinfo for ", 13) == 0)
		s += 13;
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (strncmp(s, map[i].ns, strlen(map[i].ns)) == 0)
			return map[i].lib;
	return NULL;
}
