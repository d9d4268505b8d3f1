/*
 * kb_int.h: helpers shared by the typed-table readers inside kb/ (not part
 * of the kb contract).
 */
#ifndef GW_KB_INT_H
#define GW_KB_INT_H

#include "kb/kb.h"

void kb_gpus_release(void);
void kb_models_release(void);
void kb_quants_release(void);

/* Column indexes of t for names[0..n-1]; error naming the first missing one. */
int kb_need_cols(const kb_table *t, const char *const *names, size_t n, long *idx, gw_error *err);

/* Validated cells: the error names table, line, column and the bad text. */
int kb_cell_double(const kb_table *t, size_t row, long col, double min, double max,
		   bool empty_ok, double *out, gw_error *err);
int kb_cell_int(const kb_table *t, size_t row, long col, long long min, long long max,
		bool empty_ok, int *out, gw_error *err);
int kb_cell_bool(const kb_table *t, size_t row, long col, bool *out, gw_error *err);
int kb_cell_required(const kb_table *t, size_t row, long col, gw_error *err);

/* True when key (from kb_name_key) equals the key of id, name or any alias. */
bool kb_names_match(const char *key, const char *id, const char *name, const char *aliases);
/* Smallest edit distance between key and the keys of id, name, aliases. */
size_t kb_names_distance(const char *key, const char *id, const char *name, const char *aliases);

#define KB_KEY_MAX 256

#endif
