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
/* Call fn on each key kb_names_match compares with (id, name, every alias,
 * empty ones included), in that order, until it returns true. */
void kb_names_each(const char *id, const char *name, const char *aliases, bool (*fn)(const char *k, void *arg),
		   void *arg);
/* Smallest edit distance between key and the keys of id, name, aliases. */
size_t kb_names_distance(const char *key, const char *id, const char *name, const char *aliases);

#define KB_KEY_MAX 256

/*
 * One typed table: its rows parsed once into an array of records, cached
 * until kb_release_all().  Each reader (gpus.c, models.c, quants.c) fills
 * the description; kb_records_load() does the rest: find the columns, read
 * every row, refuse duplicate ids, run the whole-table checks, and keep
 * the first error so later calls report it again.
 */
typedef struct kb_records {
	const char *table;         /* "gpus" for data/gpus.tsv */
	const char *const *cols;   /* required columns, in the reader's order */
	size_t ncols;
	size_t rec_size;
	/* Fill rec from row r; c[i] is the index of cols[i]. */
	int (*read_row)(const kb_table *t, size_t r, const long *c, void *rec, gw_error *err);
	/* Id of a record and whether two records may not share it (NULL: always). */
	const char *(*id_of)(const void *rec);
	bool (*clash)(const void *a, const void *b);
	/* Checks needing every row (NULL: none); recs[0..n-1] are read. */
	int (*finish)(const kb_table *t, void *recs, size_t n, gw_error *err);
	/* state */
	void *recs;
	size_t n;
	bool loaded;
	int rc;
	gw_error err;
} kb_records;

/* Load R once; 0 or the first error (copied to err when non-NULL). */
int kb_records_load(kb_records *R, gw_error *err);
void kb_records_release(kb_records *R);

#endif
