/*
 * JSON helpers over jansson: null for unknown values, stable printing.
 */
#ifndef GW_JSON_H
#define GW_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

json_t *jint_or_null(bool valid, long long v);
json_t *jreal_or_null(bool valid, double v);
json_t *jstr_or_null(const char *s);
/* Round a real to `digits` decimals before storing (stable output). */
json_t *jreal_round(double v, int digits);
/* Print with two-space indent, keys in insertion order, then a newline. */
int json_print(json_t *j, FILE *f);
/* Parse text with a size limit; error text goes to err. */
json_t *json_parse_limited(const char *text, size_t len, char *errbuf, size_t errlen);

#endif
