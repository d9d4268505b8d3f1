/*
 * remote.c: models by name on the Hugging Face Hub and Ollama's registry,
 * read header-only.  Not built yet: nothing answers, and model_load goes
 * on to the catalog.
 */
#include "model/model.h"

int model_remote_resolve(const char *name, model_desc *m, char **note, gw_error *err)
{
	(void)name;
	(void)m;
	(void)note;
	(void)err;
	return 1;
}
