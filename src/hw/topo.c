/*
 * hw/topo: how GPUs connect to one another: NVLink groups from a snapshot's
 * link peers, PCIe switches from the sysfs device path.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/hw.h"

/*
 * GPU i's NVLink group: the lowest index of the GPUs it reaches over NVLink,
 * directly (a link whose remote end is the other GPU) or through a shared
 * NVSwitch (both link to the same remote bus id), transitively; -1 without
 * NVLink.
 */
int hw_nvlink_group_of(const hw_snapshot *s, size_t i)
{
	if (!s->gpus[i].n_nvlinks)
		return -1;
	size_t n = s->n_gpus;
	bool *in = xcalloc(n, sizeof *in);
	in[i] = true;
	for (bool grew = true; grew;) {
		grew = false;
		for (size_t a = 0; a < n; a++) {
			if (!in[a])
				continue;
			const hw_gpu *ga = &s->gpus[a];
			for (size_t b = 0; b < n; b++) {
				if (in[b] || !s->gpus[b].n_nvlinks)
					continue;
				const hw_gpu *gb = &s->gpus[b];
				bool linked = false;
				for (int k = 0; k < ga->n_nvlinks && !linked; k++) {
					linked = strcmp(ga->nvlink_peer[k], gb->pci_bus_id) == 0;
					for (int m = 0; m < gb->n_nvlinks && !linked; m++)
						linked = strcmp(ga->nvlink_peer[k], gb->nvlink_peer[m]) == 0 ||
							 strcmp(gb->nvlink_peer[m], ga->pci_bus_id) == 0;
				}
				if (linked)
					in[b] = grew = true;
			}
		}
	}
	int group = (int)i;
	for (size_t a = 0; a < n; a++)
		if (in[a]) {
			group = (int)a;
			break;
		}
	free(in);
	return group;
}

/*
 * The PCIe switch above a GPU: in its sysfs path (root port / switch
 * upstream port / switch downstream port / GPU) the upstream port, the
 * third device from the end.  GPUs sharing it sit under one switch.
 * Returns an index into keys[] (grown as new switches appear), or -1.
 */
int hw_pcie_switch_of(const char *bdf, char keys[][32], size_t *n_keys, size_t max)
{
	char rel[128];
	snprintf(rel, sizeof rel, "/sys/bus/pci/devices/%s", bdf);
	char *p = gw_path(rel);
	char *real = realpath(p, NULL);
	free(p);
	if (!real)
		return -1;
	const char *chain[32];
	size_t n = 0;
	char *sp = NULL;
	for (char *c = strtok_r(real, "/", &sp); c && n < 32; c = strtok_r(NULL, "/", &sp))
		if (strlen(c) == 12 && c[4] == ':' && c[7] == ':' && c[10] == '.')
			chain[n++] = c;
	int idx = -1;
	if (n >= 4) {
		const char *up = chain[n - 3];
		for (size_t i = 0; i < *n_keys; i++)
			if (strcmp(keys[i], up) == 0)
				idx = (int)i;
		if (idx < 0 && *n_keys < max) {
			snprintf(keys[*n_keys], 32, "%s", up);
			idx = (int)(*n_keys)++;
		}
	}
	free(real);
	return idx;
}
