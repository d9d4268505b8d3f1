/*
 * cmd/page: the lab's page and the queue's series for `gpuwise status
 * --serve` (and the daemon's `http` setting, which runs it).  What the
 * queue daemon tells every user (`queue`, `quota`) and what NVML reads,
 * rendered as one auto-refreshing, read-only HTML page and as Prometheus
 * series; never a job's argv, environment or working directory.
 */
#ifndef GW_CMD_PAGE_H
#define GW_CMD_PAGE_H

#include <jansson.h>

#include "hw/hw.h"
#include "util/util.h"

typedef struct page_queue {
	char *socket;        /* the daemon asked */
	json_t *jobs;        /* array of queue rows (docs/json-queue.md); NULL when not answered */
	json_t *quota;       /* the quota reply (docs/json-quota.md); NULL when not answered */
	char err[256];       /* why not, "" when answered */
} page_queue;

/* Ask the daemon at socket (NULL = the default one) for its queue and quotas, at most timeout_ms. */
void page_queue_fetch(const char *socket, uint64_t timeout_ms, page_queue *q);
void page_queue_release(page_queue *q);

/* The page: GPUs (s may be NULL when NVML failed), the queue, the projects. */
void page_html(const hw_snapshot *s, const char *hw_err, const page_queue *q, unsigned refresh_s, strbuf *out);
/* gpuwise_queue_* and gpuwise_project_* series (docs/prometheus.md). */
void page_prometheus(const page_queue *q, strbuf *out);

#endif
