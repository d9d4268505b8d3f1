/*
 * Unit tests for sched/place: each policy's choice on small clusters worked
 * out by hand, the fragmentation measure of Weng et al. (ATC'23), CPU, and
 * commit/uncommit; sched/trace's CSV errors; sched/sim on a tiny trace.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/place.h"
#include "sched/sim.h"
#include "sched/trace.h"
#include <unistd.h>

#define GIB (1024ULL * 1024 * 1024)

/* A GPU of 10 GiB with free_tenths tenths free, on node. */
static sched_gpu gpu(int node, int free_tenths, int n_jobs)
{
	sched_gpu g = {.node = node, .numa = -1, .nvlink_group = -1, .pcie_switch = -1,
		       .mem_total_bytes = 10 * GIB, .mem_free_bytes = (uint64_t)free_tenths * GIB, .n_jobs = n_jobs};
	return g;
}

static sched_req share(uint32_t milli)
{
	return (sched_req){.n_gpus = 1, .gpu_milli = milli};
}

static void test_names(void **state)
{
	(void)state;
	const char *names[] = {"exclusive", "first-fit", "best-fit", "fgd", "gpuwise"};
	for (size_t i = 0; i < 5; i++) {
		sched_policy p;
		assert_int_equal(sched_policy_parse(names[i], &p), 0);
		assert_string_equal(sched_policy_name(p), names[i]);
	}
	sched_policy p;
	assert_int_equal(sched_policy_parse("bestfit", &p), -1);
}

static void test_invalid(void **state)
{
	(void)state;
	sched_gpu g[2] = {gpu(0, 10, 0), gpu(0, 10, 0)};
	int idx[4];
	sched_req r = {.n_gpus = 0, .vram_bytes = GIB};
	assert_int_equal(sched_place(SCHED_POLICY_FIRST_FIT, g, 2, &r, NULL, idx), SCHED_EINVAL);
	r.n_gpus = 3;
	assert_int_equal(sched_place(SCHED_POLICY_FIRST_FIT, g, 2, &r, NULL, idx), SCHED_EINVAL);
	r.n_gpus = 1;
	r.vram_bytes = 11 * GIB;
	assert_int_equal(sched_place(SCHED_POLICY_BEST_FIT, g, 2, &r, NULL, idx), SCHED_ENOFIT);
}

static void test_first_and_best_fit(void **state)
{
	(void)state;
	/* free 6, 3, 4 tenths; a 3 GiB request */
	sched_gpu g[3] = {gpu(0, 6, 1), gpu(1, 3, 1), gpu(2, 4, 1)};
	sched_req r = {.n_gpus = 1, .vram_bytes = 3 * GIB};
	int idx[1];
	assert_int_equal(sched_place(SCHED_POLICY_FIRST_FIT, g, 3, &r, NULL, idx), 0);
	assert_int_equal(idx[0], 0);
	assert_int_equal(sched_place(SCHED_POLICY_BEST_FIT, g, 3, &r, NULL, idx), 0);
	assert_int_equal(idx[0], 1); /* leaves 0 */
	/* gpuwise without a demand is best-fit */
	assert_int_equal(sched_place(SCHED_POLICY_GPUWISE, g, 3, &r, NULL, idx), 0);
	assert_int_equal(idx[0], 1);
	/* a share is of each GPU's own memory: 300 milli of 10 GiB = 3 GiB */
	sched_req s = share(300);
	assert_int_equal(sched_need_bytes(&g[0], &s), 3 * GIB);
	assert_int_equal(sched_place(SCHED_POLICY_BEST_FIT, g, 3, &s, NULL, idx), 0);
	assert_int_equal(idx[0], 1);
}

static void test_exclusive_and_nodes(void **state)
{
	(void)state;
	/* node 0: busy + idle; node 1: idle + idle */
	sched_gpu g[4] = {gpu(0, 5, 1), gpu(0, 10, 0), gpu(1, 10, 0), gpu(1, 10, 0)};
	int idx[2];
	sched_req one = {.n_gpus = 1, .vram_bytes = GIB};
	/* the exclusive policy takes an idle GPU even for a small request */
	assert_int_equal(sched_place(SCHED_POLICY_EXCLUSIVE, g, 4, &one, NULL, idx), 0);
	assert_int_equal(idx[0], 1);
	/* two GPUs must share a node: only node 1 has two idle ones */
	sched_req two = {.n_gpus = 2, .exclusive = true};
	assert_int_equal(sched_place(SCHED_POLICY_FIRST_FIT, g, 4, &two, NULL, idx), 0);
	assert_int_equal(idx[0], 2);
	assert_int_equal(idx[1], 3);
	sched_commit(g, &two, idx);
	assert_true(g[2].exclusive && g[3].exclusive);
	assert_int_equal(sched_place(SCHED_POLICY_FIRST_FIT, g, 4, &two, NULL, idx), SCHED_ENOFIT);
	/* a whole GPU on best-fit goes to the node with the fewest idle GPUs left */
	sched_uncommit(g, &two, (int[]){2, 3});
	assert_false(g[2].exclusive || g[3].exclusive);
	assert_int_equal(g[2].n_jobs, 0);
	sched_req whole = {.n_gpus = 1, .exclusive = true};
	assert_int_equal(sched_place(SCHED_POLICY_BEST_FIT, g, 4, &whole, NULL, idx), 0);
	assert_int_equal(idx[0], 1);
}

static void test_commit_roundtrip(void **state)
{
	(void)state;
	sched_gpu g[1] = {gpu(0, 10, 0)};
	uint64_t cpu = 8000;
	g[0].node_cpu_free_milli = &cpu;
	sched_req r = {.n_gpus = 1, .gpu_milli = 250, .cpu_milli = 3000};
	int idx[1] = {0};
	sched_commit(g, &r, idx);
	assert_int_equal(g[0].mem_free_bytes, 10 * GIB - (10 * GIB / 4));
	assert_int_equal(cpu, 5000);
	assert_int_equal(g[0].n_jobs, 1);
	sched_uncommit(g, &r, idx);
	assert_int_equal(g[0].mem_free_bytes, 10 * GIB);
	assert_int_equal(cpu, 8000);
	assert_int_equal(g[0].n_jobs, 0);
}

static void test_fragmentation_measure(void **state)
{
	(void)state;
	/* One expected request: half a GPU.  GPU 0 has 0.3 free: it cannot
	 * hold it, 0.3 GPU is fragment; GPU 1 (idle, 1.0) can: none. */
	sched_req half = share(500);
	double w = 1;
	sched_demand d = {.reqs = &half, .weight = &w, .n = 1};
	sched_gpu g[2] = {gpu(0, 3, 1), gpu(0, 10, 0)};
	assert_true(fabs(sched_fragmentation(g, 2, &d) - 0.3) < 1e-9);
	/* the same with the tables prepared once */
	sched_demand_prepare(&d);
	assert_true(fabs(sched_fragmentation(g, 2, &d) - 0.3) < 1e-9);
	sched_demand_release(&d);
	/* Half whole-GPU requests, half 0.5: the whole ones can use the idle GPU
	 * (node has one idle), not the 0.3 one: F = 0.5*0.3 + 0.5*0.3 = 0.3. */
	sched_req two[2] = {share(500), {.n_gpus = 1, .exclusive = true}};
	double w2[2] = {0.5, 0.5};
	sched_demand d2 = {.reqs = two, .weight = w2, .n = 2};
	assert_true(fabs(sched_fragmentation(g, 2, &d2) - 0.3) < 1e-9);
	/* a request for 2 whole GPUs cannot run on this node: all free GPU
	 * (1.3) is fragment for it: F = 0.5*0.3 + 0.5*1.3 = 0.8 */
	two[1].n_gpus = 2;
	assert_true(fabs(sched_fragmentation(g, 2, &d2) - 0.8) < 1e-9);
	/* CPU: a 0.5 request that needs 4 cores cannot run on a node with 2
	 * free: the whole 1.3 GPUs are fragments */
	uint64_t cpu = 2000;
	g[0].node_cpu_free_milli = g[1].node_cpu_free_milli = &cpu;
	half.cpu_milli = 4000;
	assert_true(fabs(sched_fragmentation(g, 2, &d) - 1.3) < 1e-9);
	sched_demand_prepare(&d); /* the tables agree with the request-by-request sums */
	assert_true(fabs(sched_fragmentation(g, 2, &d) - 1.3) < 1e-9);
	cpu = 4000;
	assert_true(fabs(sched_fragmentation(g, 2, &d) - 0.3) < 1e-9);
	sched_demand_release(&d);
	assert_true(fabs(sched_fragmentation(g, 2, &d) - 0.3) < 1e-9);
	/* unknown demand: 0 */
	assert_true(sched_fragmentation(g, 2, NULL) == 0);
}

static void test_fgd_differs_from_best_fit(void **state)
{
	(void)state;
	/* Expected requests: 0.5 GPU.  A 0.2 request: best-fit puts it on GPU 0
	 * (0.6 free -> 0.4, now too small for a 0.5: +0.4 fragment); FGD puts it on
	 * the idle GPU 1 (1.0 -> 0.8, still holds a 0.5: no new fragment). */
	sched_req half = share(500);
	double w = 1;
	sched_demand d = {.reqs = &half, .weight = &w, .n = 1};
	sched_gpu g[2] = {gpu(0, 6, 1), gpu(1, 10, 0)};
	sched_req r = share(200);
	int idx[1];
	assert_int_equal(sched_place(SCHED_POLICY_BEST_FIT, g, 2, &r, &d, idx), 0);
	assert_int_equal(idx[0], 0);
	assert_int_equal(sched_place(SCHED_POLICY_FGD, g, 2, &r, &d, idx), 0);
	assert_int_equal(idx[0], 1);
	assert_int_equal(sched_place(SCHED_POLICY_GPUWISE, g, 2, &r, &d, idx), 0);
	assert_int_equal(idx[0], 1);
	/* A 0.1 request on GPU 0 leaves 0.5, which still fits: FGD sees no
	 * growth on either GPU and takes the first; gpuwise breaks the tie by
	 * best-fit, which is also GPU 0 */
	r = share(100);
	assert_int_equal(sched_place(SCHED_POLICY_FGD, g, 2, &r, &d, idx), 0);
	assert_int_equal(idx[0], 0);
	/* with g reversed FGD keeps the first (idle) one, gpuwise the fuller */
	sched_gpu h[2] = {gpu(0, 10, 0), gpu(1, 6, 1)};
	assert_int_equal(sched_place(SCHED_POLICY_FGD, h, 2, &r, &d, idx), 0);
	assert_int_equal(idx[0], 0);
	assert_int_equal(sched_place(SCHED_POLICY_GPUWISE, h, 2, &r, &d, idx), 0);
	assert_int_equal(idx[0], 1);
}

static void test_cpu(void **state)
{
	(void)state;
	/* node 0 has the best-fitting GPU but too little CPU */
	sched_gpu g[2] = {gpu(0, 3, 1), gpu(1, 10, 0)};
	uint64_t cpu[2] = {1000, 64000};
	g[0].node_cpu_free_milli = &cpu[0];
	g[1].node_cpu_free_milli = &cpu[1];
	sched_req r = {.n_gpus = 1, .gpu_milli = 300, .cpu_milli = 2000};
	int idx[1];
	for (int p = 0; p <= SCHED_POLICY_GPUWISE; p++) {
		assert_int_equal(sched_place((sched_policy)p, g, 2, &r, NULL, idx), 0);
		assert_int_equal(idx[0], 1);
	}
	cpu[1] = 1500;
	assert_int_equal(sched_place(SCHED_POLICY_BEST_FIT, g, 2, &r, NULL, idx), SCHED_ENOFIT);
	/* FGD counts a node whose CPU a placement would exhaust: two idle
	 * nodes, one with 4 cores, one with 64; expected requests need 3 cores.
	 * A 2-core request on the 4-core node leaves 2: its idle GPU becomes a
	 * fragment (Delta +0.8); on the 64-core node nothing (Delta 0). */
	sched_gpu h[2] = {gpu(0, 10, 0), gpu(1, 10, 0)};
	uint64_t c2[2] = {4000, 64000};
	h[0].node_cpu_free_milli = &c2[0];
	h[1].node_cpu_free_milli = &c2[1];
	sched_req exp = {.n_gpus = 1, .gpu_milli = 500, .cpu_milli = 3000};
	double w = 1;
	sched_demand d = {.reqs = &exp, .weight = &w, .n = 1};
	sched_req small = {.n_gpus = 1, .gpu_milli = 200, .cpu_milli = 2000};
	assert_int_equal(sched_place(SCHED_POLICY_FGD, h, 2, &small, &d, idx), 0);
	assert_int_equal(idx[0], 1);
	assert_int_equal(sched_place(SCHED_POLICY_FIRST_FIT, h, 2, &small, &d, idx), 0);
	assert_int_equal(idx[0], 0);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Multi-GPU jobs prefer close GPUs: one NVLink group, else one PCIe switch, else one NUMA node. */
static void test_topology(void **state)
{
	(void)state;
	int idx[2];
	sched_req r = {.n_gpus = 2, .vram_bytes = 4 * GIB};
	/* NVLink: pairs (0,2) and (1,3); without topology gpuwise/best-fit take 0 and 1 */
	sched_gpu g[4] = {gpu(0, 10, 0), gpu(0, 10, 0), gpu(0, 10, 0), gpu(0, 10, 0)};
	assert_int_equal(sched_place(SCHED_POLICY_GPUWISE, g, 4, &r, NULL, idx), 0);
	assert_int_equal(idx[0], 0);
	assert_int_equal(idx[1], 1);
	g[0].nvlink_group = 0, g[1].nvlink_group = 1, g[2].nvlink_group = 0, g[3].nvlink_group = 1;
	assert_int_equal(sched_place(SCHED_POLICY_GPUWISE, g, 4, &r, NULL, idx), 0);
	assert_int_equal(idx[0], 0);
	assert_int_equal(idx[1], 2);
	/* NVLink outranks a shared switch */
	g[0].pcie_switch = g[1].pcie_switch = 7;
	assert_int_equal(sched_place(SCHED_POLICY_BEST_FIT, g, 4, &r, NULL, idx), 0);
	assert_int_equal(idx[1], 2);

	/* PCIe switch when no NVLink: free 5, 6, 10, 7 GiB; best-fit order 0, 1, 3, 2;
	 * switch 0 holds (0, 3), switch 1 holds (1, 2): (0, 3) comes earlier */
	sched_gpu h[4] = {gpu(0, 5, 1), gpu(0, 6, 1), gpu(0, 10, 0), gpu(0, 7, 1)};
	assert_int_equal(sched_place(SCHED_POLICY_BEST_FIT, h, 4, &r, NULL, idx), 0);
	assert_int_equal(idx[0], 0);
	assert_int_equal(idx[1], 1);
	h[0].pcie_switch = 0, h[1].pcie_switch = 1, h[2].pcie_switch = 1, h[3].pcie_switch = 0;
	assert_int_equal(sched_place(SCHED_POLICY_BEST_FIT, h, 4, &r, NULL, idx), 0);
	assert_int_equal(idx[0], 0);
	assert_int_equal(idx[1], 3);

	/* NUMA when neither is known */
	for (int i = 0; i < 4; i++)
		h[i].pcie_switch = -1;
	h[0].numa = 0, h[1].numa = 1, h[2].numa = 0, h[3].numa = 1;
	assert_int_equal(sched_place(SCHED_POLICY_GPUWISE, h, 4, &r, NULL, idx), 0);
	assert_int_equal(idx[0], 0);
	assert_int_equal(idx[1], 2);

	/* no group holds two usable GPUs: the policy's own order */
	h[0].numa = 0, h[1].numa = 1, h[2].numa = 2, h[3].numa = 3;
	assert_int_equal(sched_place(SCHED_POLICY_GPUWISE, h, 4, &r, NULL, idx), 0);
	assert_int_equal(idx[0], 0);
	assert_int_equal(idx[1], 1);
}

static void test_trace_errors(void **state)
{
	(void)state;
	char dir[] = "/tmp/gw-place-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[256];
	snprintf(path, sizeof path, "%s/pods.csv", dir);
	trace_pod *pods;
	size_t n;
	gw_error err = {0};
	const char *hdr = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n";
	char text[1024];
	snprintf(text, sizeof text, "%sp0,1000,10,1,500,,LS,Running,0,10,0\np1,1000,10,2,x,,LS,Running,0,10,0\n", hdr);
	write_file(path, text);
	assert_int_equal(trace_read_pods(path, &pods, &n, &err), GW_EFORMAT);
	assert_non_null(strstr(err.msg, "pods.csv:3: gpu_milli 'x' is not an integer"));
	assert_null(pods);
	snprintf(text, sizeof text, "%sp0,1000,10,1,500,,LS,Running,0,10\n", hdr);
	write_file(path, text);
	assert_int_equal(trace_read_pods(path, &pods, &n, &err), GW_EFORMAT);
	assert_non_null(strstr(err.msg, ":2: 10 fields, the header has 11"));
	write_file(path, "name,cpu_milli,num_gpu,creation_time,deletion_time,scheduled_time\n");
	assert_int_equal(trace_read_pods(path, &pods, &n, &err), GW_EFORMAT);
	assert_non_null(strstr(err.msg, ":1: missing column 'gpu_milli'"));
	snprintf(text, sizeof text, "%sp0,1000,10,1,500,,LS,Pending,5,,\np1,0,0,0,0,,BE,Running,7,9,8\n", hdr);
	write_file(path, text);
	assert_int_equal(trace_read_pods(path, &pods, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(pods[0].gpu_milli, 500);
	assert_true(pods[0].delete_s < 0 && pods[0].sched_s < 0);
	assert_int_equal(pods[1].n_gpus, 0);
	assert_true(pods[1].sched_s == 8);
	free(pods);
	snprintf(path, sizeof path, "%s/nodes.csv", dir);
	write_file(path, "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,1,2,T4\nn1,64000,1,8,H999\n");
	trace_node *nodes;
	assert_int_equal(trace_read_nodes(path, &nodes, &n, &err), GW_EFORMAT);
	assert_non_null(strstr(err.msg, "nodes.csv:3: unknown GPU model 'H999'"));
	unlink(path);
	snprintf(path, sizeof path, "%s/pods.csv", dir);
	unlink(path);
	rmdir(dir);
}

static void test_sim_tiny(void **state)
{
	(void)state;
	/* Two nodes of two T4s; pods: half a GPU (x3 in the list) and one whole.
	 * Inflating to 100%: 4 GPUs' worth arrive; every policy but exclusive
	 * places everything until the GPUs run out. */
	trace_node nodes[2] = {{.n_gpus = 2, .cpu_milli = 64000, .gpu_mem_bytes = 16 * GIB},
			       {.n_gpus = 2, .cpu_milli = 64000, .gpu_mem_bytes = 16 * GIB}};
	trace_pod pods[4] = {{.n_gpus = 1, .gpu_milli = 500, .cpu_milli = 1000},
			     {.n_gpus = 1, .gpu_milli = 500, .cpu_milli = 1000},
			     {.n_gpus = 1, .gpu_milli = 500, .cpu_milli = 1000},
			     {.n_gpus = 1, .gpu_milli = 1000, .cpu_milli = 1000}};
	sim_cluster c;
	sim_cluster_init(&c, pods, 4, nodes, 2, true);
	assert_int_equal(c.n_gpus, 4);
	assert_int_equal(c.n_types, 2);
	assert_true(fabs(c.weight[0] - 0.75) < 1e-12);
	assert_true(fabs(c.demand_gpus - 2.5) < 1e-12);
	sim_result r;
	sim_inflate(&c, SCHED_POLICY_BEST_FIT, 7, 100, &r);
	/* pods of 0.5 and 1 GPU only pack perfectly: at 50% arrived, 50% allocated */
	assert_true(fabs(r.alloc_pct[0] - 50) < 12.5 + 1e-9);
	assert_true(r.final_alloc_pct <= r.final_arrived_pct + 1e-9);
	assert_true(r.final_arrived_pct >= 100);
	sim_result e;
	sim_inflate(&c, SCHED_POLICY_EXCLUSIVE, 7, 100, &e);
	/* exclusive: each half-GPU pod holds a whole GPU, so fewer GPUs' worth fit */
	assert_true(e.final_alloc_pct <= r.final_alloc_pct);
	/* the same seed gives the same run */
	sim_result r2;
	sim_inflate(&c, SCHED_POLICY_BEST_FIT, 7, 100, &r2);
	assert_int_equal(r.n_arrived, r2.n_arrived);
	assert_true(r.final_alloc_pct == r2.final_alloc_pct);
	sim_cluster_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_first_and_best_fit),
		cmocka_unit_test(test_exclusive_and_nodes),
		cmocka_unit_test(test_commit_roundtrip),
		cmocka_unit_test(test_fragmentation_measure),
		cmocka_unit_test(test_fgd_differs_from_best_fit),
		cmocka_unit_test(test_cpu),
		cmocka_unit_test(test_topology),
		cmocka_unit_test(test_trace_errors),
		cmocka_unit_test(test_sim_tiny),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
