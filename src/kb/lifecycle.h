/*
 * lifecycle: the software lifecycle of NVIDIA GPU generations
 * (data/lifecycle.tsv) and what it takes to install a card in a desktop
 * (data/install.tsv).  Rows are kb-owned until kb_release_all().
 */
#ifndef GW_KB_LIFECYCLE_H
#define GW_KB_LIFECYCLE_H

#include <stdbool.h>

#include "kb/kb.h"

typedef struct kb_lifecycle {
	const char *arch;        /* "Pascal (GP10x)" */
	const char *last_torch;  /* "2.14"; "" when current */
	const char *torch_wheel; /* "cu126 (legacy; ...)" */
	const char *last_driver; /* "R580"; "" when current */
	const char *cuda_build;  /* toolkits that can compile for it */
	const char *prebuilt;    /* engines' prebuilt CUDA builds */
	const char *hardware;    /* missing features that matter */
	const char *as_of;       /* "2026-12" */
	const char *source;
} kb_lifecycle;

typedef enum { KB_FORM_PCIE, KB_FORM_SXM2, KB_FORM_SXM4, KB_FORM_SXM5 } kb_form_factor;

typedef struct kb_install {
	const char *gpu;             /* gpus.tsv id */
	kb_form_factor form;
	bool passive;                /* no fans of its own */
	bool display;                /* has display outputs */
	const char *power_connector; /* "1x 8-pin EPS (CPU) plug" */
	int slots;                   /* slot widths it occupies */
	bool rebar;                  /* Resizable BAR required */
	const char *source;
} kb_install;

/* Parse and check both tables (kb_load_all calls it); 0 or the error. */
int kb_lifecycle_load(gw_error *err);
/* The lifecycle row for g's compute capability; NULL when none (or not CUDA). */
const kb_lifecycle *kb_lifecycle_for(const gpu_spec *g);
/* The same by compute capability ("6.1"), for a GPU the hardware reports. */
const kb_lifecycle *kb_lifecycle_for_cc(const char *cc);
/* The install row of g; NULL when the card is an ordinary desktop card. */
const kb_install *kb_install_for(const gpu_spec *g);
const char *kb_form_name(kb_form_factor f); /* "PCIe", "SXM2" ... */
void kb_lifecycle_release(void); /* kb_release_all calls it */
/* Row counts, for tests and `list`. */
size_t kb_lifecycle_count(void);
const kb_lifecycle *kb_lifecycle_at(size_t i);
size_t kb_install_count(void);

#endif
