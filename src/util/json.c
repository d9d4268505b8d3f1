/*
 * json.c: small helpers over jansson.
 */
#include "util/json.h"

#include <math.h>
#include <string.h>

json_t *jint_or_null(bool valid, long long v)
{
	return valid ? json_integer(v) : json_null();
}

json_t *jreal_or_null(bool valid, double v)
{
	return valid && isfinite(v) ? json_real(v) : json_null();
}

json_t *jstr_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

json_t *jreal_round(double v, int digits)
{
	if (!isfinite(v))
		return json_null();
	double p = pow(10, digits);
	return json_real(round(v * p) / p);
}

int json_print(json_t *j, FILE *f)
{
	int rc = json_dumpf(j, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	fputc('\n', f);
	return rc;
}

json_t *json_parse_limited(const char *text, size_t len, char *errbuf, size_t errlen)
{
	json_error_t je;
	json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!j && errbuf)
		snprintf(errbuf, errlen, "line %d: %s", je.line, je.text);
	return j;
}
