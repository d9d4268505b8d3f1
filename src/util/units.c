/*
 * units.c: parse and format sizes, durations and counts.
 */
#include "util/util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Split "7.5GiB" into a finite non-negative number and its suffix. */
static int split_number(const char *s, double *v, const char **suffix)
{
	if (!s || !*s)
		return GW_EINVAL;
	while (isspace((unsigned char)*s))
		s++;
	if (*s == '-' || *s == '+')
		return GW_EINVAL;
	char *end;
	errno = 0;
	double d = strtod(s, &end);
	if (end == s || errno == ERANGE || !isfinite(d) || d < 0)
		return GW_EINVAL;
	if (strchr("xXpPnN", s[1]) && s[0] == '0')
		return GW_EINVAL; /* no hex floats, "nan", "inf" */
	while (isspace((unsigned char)*end))
		end++;
	*v = d;
	*suffix = end;
	return 0;
}

int parse_size(const char *s, uint64_t *bytes)
{
	static const struct {
		const char *suffix;
		double mult;
	} units[] = {
		{"", 1}, {"b", 1},
		{"k", 1024.0}, {"kib", 1024.0}, {"kb", 1e3},
		{"m", 1048576.0}, {"mib", 1048576.0}, {"mb", 1e6},
		{"g", 1073741824.0}, {"gib", 1073741824.0}, {"gb", 1e9},
		{"t", 1099511627776.0}, {"tib", 1099511627776.0}, {"tb", 1e12},
	};
	double v;
	const char *suf;
	if (split_number(s, &v, &suf))
		return GW_EINVAL;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		if (strcasecmp(suf, units[i].suffix) == 0) {
			double b = v * units[i].mult;
			if (b >= 18446744073709551615.0)
				return GW_ERANGE;
			*bytes = (uint64_t)llround(b);
			return 0;
		}
	}
	return GW_EINVAL;
}

int parse_duration_ms(const char *s, uint64_t *ms)
{
	static const struct {
		const char *suffix;
		double mult;
	} units[] = {
		{"", 1000}, {"ms", 1}, {"s", 1000}, {"m", 60000}, {"min", 60000}, {"h", 3600000},
	};
	double v;
	const char *suf;
	if (split_number(s, &v, &suf))
		return GW_EINVAL;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		if (strcmp(suf, units[i].suffix) == 0) {
			double b = v * units[i].mult;
			if (b >= 9.2e18)
				return GW_ERANGE;
			*ms = (uint64_t)llround(b);
			return 0;
		}
	}
	return GW_EINVAL;
}

int parse_count(const char *s, double *out)
{
	double v;
	const char *suf;
	if (split_number(s, &v, &suf))
		return GW_EINVAL;
	double mult;
	if (!*suf)
		mult = 1;
	else if (strcasecmp(suf, "k") == 0)
		mult = 1e3;
	else if (strcasecmp(suf, "m") == 0)
		mult = 1e6;
	else if (strcasecmp(suf, "b") == 0 || strcasecmp(suf, "g") == 0)
		mult = 1e9;
	else if (strcasecmp(suf, "t") == 0)
		mult = 1e12;
	else
		return GW_EINVAL;
	*out = v * mult;
	return 0;
}

int parse_int(const char *s, long long min, long long max, long long *out)
{
	if (!s || !*s)
		return GW_EINVAL;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (*end || errno == ERANGE)
		return GW_EINVAL;
	if (v < min || v > max)
		return GW_ERANGE;
	*out = v;
	return 0;
}

int parse_double(const char *s, double *out)
{
	if (!s || !*s || isspace((unsigned char)*s) || strpbrk(s, "xX"))
		return GW_EINVAL; /* strtod would skip the space and read hex */
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (*end || errno == ERANGE || !isfinite(v))
		return GW_EINVAL;
	*out = v;
	return 0;
}

const char *fmt_bytes(char *buf, size_t n, uint64_t bytes)
{
	static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	double v = (double)bytes;
	size_t i = 0;
	while (v >= 1024.0 && i + 1 < sizeof u / sizeof u[0]) {
		v /= 1024.0;
		i++;
	}
	if (i == 0)
		snprintf(buf, n, "%llu B", (unsigned long long)bytes);
	else if (v >= 100)
		snprintf(buf, n, "%.0f %s", v, u[i]);
	else
		snprintf(buf, n, "%.2f %s", v, u[i]);
	return buf;
}

const char *fmt_duration(char *buf, size_t n, uint64_t ms)
{
	if (ms < 1000)
		snprintf(buf, n, "%llums", (unsigned long long)ms);
	else if (ms < 60000)
		snprintf(buf, n, "%.1fs", (double)ms / 1000.0);
	else if (ms < 3600000)
		snprintf(buf, n, "%llum %02llus", (unsigned long long)(ms / 60000),
			 (unsigned long long)(ms / 1000 % 60));
	else
		snprintf(buf, n, "%lluh %02llum", (unsigned long long)(ms / 3600000),
			 (unsigned long long)(ms / 60000 % 60));
	return buf;
}
