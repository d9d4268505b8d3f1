/*
 * engine_llamacpp.c: llama.cpp's placement of a model on GPUs and host
 * RAM: layers split over the GPUs by free memory (or filled from the back
 * by its automatic fit), the output layer last, token embedding in host
 * RAM, --n-cpu-moe experts in host RAM.
 */
#include "plan/engine.h"
#include "plan/lgraph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes of layer il that go where the layer goes (experts of the first
 * ncm blocks stay in host RAM, llama.cpp --n-cpu-moe). */
static uint64_t item_bytes(const work *wk, uint32_t il)
{
	if (il >= wk->n)
		return wk->w.output_bytes;
	if (il < wk->ncm)
		return wk->w.layer_bytes[il] - wk->w.layer_expert_bytes[il];
	return wk->w.layer_bytes[il];
}

/* The compute buffer of one GPU under the build planned. */
static uint64_t compute_bytes(const work *wk, bool multi)
{
	if (wk->build && wk->build->graph_phases)
		return plan_compute_graph_bytes(wk->m, &wk->kvs, wk->fa, wk->kv, multi);
	return plan_compute_bytes(wk->m, wk->cells, wk->batch, wk->fa, multi);
}

uint64_t plan_cpu_expert_bytes(const work *wk, uint32_t a, uint32_t b)
{
	uint64_t x = 0;
	for (uint32_t il = a; il < b && il < wk->ncm && il < wk->n; il++)
		x += wk->w.layer_expert_bytes[il];
	return x;
}

static uint64_t item_kv(const work *wk, uint32_t il)
{
	return il < wk->n ? wk->layer_kv[il] : 0;
}

/*
 * The compute buffers of a graph split over devices (layers on several
 * GPUs, layers in host RAM, --n-cpu-moe experts in host RAM), as
 * llama.cpp's scheduler splits the graph (lgraph.c, gsim.c
 * gs_sched_peaks): the GPUs in order, then the CPU (peak[n_gpus]).  dev:
 * the GPU of each layer from start on; the layers before it run on the
 * CPU.  Pipeline parallelism (4 copies of every split input) where
 * llama.cpp turns it on (src/llama-context.cpp: several devices, every
 * layer offloaded, no tensor overrides, devices with async compute and
 * events: CUDA, and RPC devices in this build); op offload unless -nopo.  Weight copies into a
 * GPU are counted at the file's average bytes per weight.  False where
 * the graph is not built (the phase model's rule applies).
 */
static bool split_compute(const work *wk, const int *dev, uint32_t start, uint64_t *peak)
{
	const plan_request *rq = wk->rq;
	if (!wk->build || !wk->build->graph_phases || !plan_lgraph_supported(wk->m) || rq->n_gpus > PLAN_MAX_GPUS)
		return false;
	int nd = (int)rq->n_gpus + 1;
	int8_t *ld = xcalloc(wk->total, 1);
	for (uint32_t il = 0; il < wk->total; il++)
		ld[il] = (int8_t)(il < start ? nd - 1 : dev[il]);
	lgraph_params p = {.cells = wk->kvs.cells, .n_ubatch = wk->kvs.ubatch, .n_seq = wk->kvs.n_seq,
			   .n_stream = wk->kvs.n_stream, .swa_cells = plan_kv_swa_cells(wk->m, &wk->kvs),
			   .flash_attn = wk->fa, .kv_k = wk->kv, .kv_v = wk->kv, .alignment = 128,
			   .layer_dev = ld, .n_dev = nd, .n_cpu_moe = wk->ncm};
	bool pp = rq->n_gpus > 1 && start == 0 && wk->ncm == 0;
	/* the graph's weights are f16 shapes; a copy into a GPU weighs what
	 * the file stores per weight on average [approximate: a recipe mixes
	 * types] */
	double scale = wk->w.params > 0 ? (double)wk->w.total_bytes / wk->w.params / 2.0 : 0;
	bool ok = plan_lgraph_device_bytes(wk->m, &p, pp ? 4 : 1, !rq->no_op_offload, scale, peak);
	free(ld);
	return ok;
}

/*
 * -sm row (llama.cpp LLAMA_SPLIT_MODE_ROW): every offloaded layer is
 * assigned to the main GPU (device 0), but its weight matrices live in
 * ggml-cuda's split buffer type, which cuts each matrix by rows over the
 * GPUs in proportion to the tensor split (by default each GPU's free
 * memory, as for the layer split) [ggml/src/ggml-cuda/ggml-cuda.cu:
 * ggml_backend_cuda_split_buffer_type, get_row_split].  The KV cache, the
 * output layer and the compute graph stay on the main GPU; the others keep
 * their row slices plus a scratch for the activations each product sends
 * them (src1 in, their dst rows out: 4 bytes x ubatch x (hidden + ffn)).
 */
static bool place_row(const work *wk, uint32_t ngl, const uint64_t *avail, const uint64_t *ovh, double sum,
		      plan_result *r)
{
	size_t nd = wk->rq->n_gpus;
	uint32_t start = wk->total - ngl;
	double share[PLAN_MAX_GPUS];
	uint64_t split = 0, main_only = 0, kv = 0;
	for (uint32_t il = start; il < wk->total; il++) {
		if (il == wk->n)
			main_only += item_bytes(wk, il);
		else
			split += item_bytes(wk, il);
		kv += item_kv(wk, il);
	}
	uint64_t given = 0;
	for (size_t d = 0; d < nd; d++) {
		share[d] = sum > 0 ? (double)avail[d] / sum : 1.0 / (double)nd;
		plan_device *pd = &r->devices[d];
		pd->layers = ngl;
		pd->first_layer = start;
		pd->weights_bytes = d + 1 < nd ? (uint64_t)((double)split * share[d]) : split - given;
		given += pd->weights_bytes;
	}
	bool ok = true;
	for (size_t d = 0; d < nd; d++) {
		plan_device *pd = &r->devices[d];
		if (d == 0) {
			pd->weights_bytes += main_only;
			pd->kv_cache_bytes = kv;
			pd->has_output = main_only > 0;
			pd->compute_bytes = compute_bytes(wk, false) +
					    (ngl < wk->total || wk->ncm ? wk->largest_tensor : 0);
		} else {
			pd->compute_bytes = 4ULL * wk->batch * ((uint64_t)wk->m->hidden + wk->m->ffn);
		}
		pd->overhead_bytes = ovh[d];
		pd->total_bytes = pd->weights_bytes + pd->kv_cache_bytes + pd->compute_bytes + pd->overhead_bytes;
		if (pd->total_bytes + wk->margin > pd->usable_bytes)
			ok = false;
	}
	r->split_row = true;
	return ok;
}

/*
 * Assign the last ngl layers to the GPUs.  split: llama.cpp's default
 * tensor split, proportional to each GPU's free memory
 * (src/llama-model.cpp: layer il goes to the first device whose
 * cumulative share exceeds (il - i_gpu_start) / ngl); otherwise fill from
 * the last layer backwards onto the last GPU and spill to earlier ones
 * (llama.cpp --fit and Ollama's greedyFit).  Returns true when every GPU
 * holds its part.
 */
static bool place(const work *wk, uint32_t ngl, bool split, plan_result *r)
{
	const plan_request *rq = wk->rq;
	size_t nd = rq->n_gpus;
	uint32_t start = wk->total - ngl;
	uint64_t avail[PLAN_MAX_GPUS], ovh[PLAN_MAX_GPUS];
	double share[PLAN_MAX_GPUS], sum = 0;

	memset(r->devices, 0, sizeof r->devices);
	r->split_row = false;
	r->n_devices = nd;
	r->host_split_compute_bytes = 0;
	for (size_t d = 0; d < nd; d++) {
		plan_device *pd = &r->devices[d];
		snprintf(pd->name, sizeof pd->name, "%s", rq->gpus[d].name);
		pd->vram_total_bytes = rq->gpus[d].vram_bytes;
		pd->usable_bytes = plan_usable_bytes(&rq->gpus[d]);
		ovh[d] = plan_overhead_bytes(rq->engine, &rq->gpus[d], nd);
		avail[d] = pd->usable_bytes > ovh[d] + wk->margin ? pd->usable_bytes - ovh[d] - wk->margin : 0;
		sum += (double)avail[d];
	}
	if (ngl == 0)
		return true;
	if (rq->split_row && nd > 1)
		return place_row(wk, ngl, avail, ovh, sum, r);
	/* which device holds each layer */
	int *dev = xcalloc(wk->total, sizeof *dev);
	if (split) {
		double cum = 0;
		for (size_t d = 0; d < nd; d++) {
			cum += sum > 0 ? (double)avail[d] / sum : 1.0 / (double)nd;
			share[d] = cum;
		}
		share[nd - 1] = 1.0 + 1e-9;
		for (uint32_t il = start; il < wk->total; il++) {
			double f = (double)(il - start) / (double)ngl;
			size_t d = 0;
			while (d + 1 < nd && f >= share[d])
				d++;
			dev[il] = (int)d;
		}
	} else {
		/* greedy from the back; the compute buffer is reserved up front */
		uint64_t comp = compute_bytes(wk, nd > 1) +
				(ngl < wk->total || wk->ncm ? wk->largest_tensor : 0);
		size_t d = nd - 1;
		uint64_t used = comp;
		for (uint32_t il = wk->total; il-- > start;) {
			uint64_t need = item_bytes(wk, il) + item_kv(wk, il);
			while (used + need > avail[d] && d > 0) {
				d--;
				used = comp;
			}
			used += need;
			dev[il] = (int)d;
		}
	}
	size_t nused = 0;
	for (uint32_t il = start; il < wk->total; il++) {
		plan_device *pd = &r->devices[dev[il]];
		if (pd->layers == 0) {
			pd->first_layer = il;
			nused++;
		}
		pd->layers++;
		pd->weights_bytes += item_bytes(wk, il);
		pd->kv_cache_bytes += item_kv(wk, il);
		if (il == wk->n)
			pd->has_output = true;
	}
	uint64_t peak[PLAN_MAX_GPUS + 1];
	bool split_graph = wk->exact_split && (nused > 1 || ngl < wk->total || wk->ncm) &&
			   split_compute(wk, dev, start, peak);
	free(dev);
	r->host_split_compute_bytes = split_graph ? peak[nd] : 0;
	bool ok = true;
	for (size_t d = 0; d < nd; d++) {
		plan_device *pd = &r->devices[d];
		if (pd->layers == 0)
			continue;
		if (split_graph) {
			pd->compute_bytes = peak[d];
		} else {
			pd->compute_bytes = compute_bytes(wk, nused > 1);
			/* Partial offload: the GPU also receives copies of host weights
			 * for large-batch matrix products (ggml-backend offload_op). */
			if (ngl < wk->total || wk->ncm)
				pd->compute_bytes += wk->largest_tensor;
		}
		pd->overhead_bytes = ovh[d];
		pd->total_bytes = pd->weights_bytes + pd->kv_cache_bytes + pd->compute_bytes +
				  pd->overhead_bytes;
		if (pd->total_bytes + wk->margin > pd->usable_bytes)
			ok = false;
	}
	return ok;
}

/* Host side of a llama.cpp-style placement with ngl layers on the GPUs. */
static void host_part(const work *wk, uint32_t ngl, plan_result *r)
{
	uint32_t start = wk->total - ngl;
	uint64_t hw = wk->w.embd_bytes + wk->w.other_bytes, hk = 0;
	for (uint32_t il = 0; il < start; il++) {
		hw += item_bytes(wk, il);
		hk += item_kv(wk, il);
	}
	hw += plan_cpu_expert_bytes(wk, 0, wk->n);
	r->host_weights_bytes = hw;
	r->host_kv_bytes = hk;
	/* Host compute buffer: with everything on the GPUs llama.cpp keeps the
	 * f32 input embeddings and KQ mask there (CUDA_Host compute 24.01 MiB =
	 * 4b(e + c) for Llama-3-8B at 8192, 4090_v3.ipynb); with CPU layers the
	 * whole graph can run there. */
	uint64_t b = wk->batch, e = wk->m->hidden;
	if (r->host_split_compute_bytes)
		r->host_compute_bytes = r->host_split_compute_bytes; /* what the CPU computes of the split graph */
	else if (ngl == wk->total && wk->rq->n_gpus > 0)
		r->host_compute_bytes = 4 * b * (e + wk->kvs.cells);
	else
		r->host_compute_bytes = compute_bytes(wk, false);
	/* logits output buffer: n_vocab f32 per sequence */
	r->host_compute_bytes += 4ULL * wk->m->vocab * wk->nseq;
	r->host_bytes = r->host_weights_bytes + r->host_kv_bytes + r->host_compute_bytes;
}

void plan_llamacpp_place(const work *wk, plan_result *r)
{
	const plan_request *rq = wk->rq;
	uint32_t ngl = 0;
	bool found = false;
	if (rq->n_gpus == 0) {
		place(wk, 0, true, r);
	} else if (rq->gpu_layers >= 0) {
		ngl = (uint32_t)rq->gpu_layers > wk->total ? wk->total : (uint32_t)rq->gpu_layers;
		found = place(wk, ngl, true, r) || place(wk, ngl, false, r);
	} else {
		/* most layers that fit; usage grows with ngl, so bisect */
		uint32_t lo = 0, hi = wk->total;
		if (place(wk, hi, true, r) || place(wk, hi, false, r)) {
			ngl = hi;
			found = true;
		} else {
			while (hi - lo > 1) {
				uint32_t mid = lo + (hi - lo) / 2;
				if (place(wk, mid, true, r) || place(wk, mid, false, r))
					lo = mid;
				else
					hi = mid;
			}
			ngl = lo;
			found = lo > 0;
			if (!(place(wk, ngl, true, r)))
				place(wk, ngl, false, r);
		}
	}
	/* The plan shown (not the searches of advice and largest context):
	 * its split graph replayed device by device; the layers found with
	 * the rule are kept unless the exact buffers no longer fit */
	if (rq->n_gpus && (!rq->skip_advice || rq->exact_split) && (found || rq->gpu_layers >= 0)) {
		work ex = *wk;
		ex.exact_split = true;
		bool ok = place(&ex, ngl, true, r) || place(&ex, ngl, false, r);
		while (!ok && rq->gpu_layers < 0 && ngl > 1) {
			ngl--;
			ok = place(&ex, ngl, true, r) || place(&ex, ngl, false, r);
		}
		found = ok;
	}
	r->gpu_layers = ngl;
	plan_sum_devices(r);
	host_part(wk, ngl, r);
	/* Windows' Sysmem Fallback: a forced placement that overflows a GPU
	 * runs, its overflow in shared system memory (speed.c prices it) */
	r->spill_bytes = 0;
	if (!found && rq->sysmem_fallback && rq->gpu_layers >= 0 && ngl > 0) {
		for (size_t d = 0; d < r->n_devices; d++) {
			const plan_device *pd = &r->devices[d];
			if (pd->layers && pd->total_bytes + wk->margin > pd->usable_bytes)
				r->spill_bytes += pd->total_bytes + wk->margin - pd->usable_bytes;
		}
		found = r->spill_bytes > 0;
	}
	r->ram_known = rq->ram_bytes > 0;
	r->gpus_ok = found && ngl > 0;
	/*
	 * What the host holds of the model file.  llama.cpp maps the whole GGUF
	 * (llama-mmap.cpp: mmap with MAP_POPULATE, prefetch on by default), so
	 * loading reads every page of the file into the page cache, the GPU
	 * tensors included: they are copied out of the mapping.  After the load
	 * it unmaps only what lies before the first and after the last byte a
	 * host buffer uses (llama-model-loader.cpp load_all_data,
	 * unmap_fragment), and with mmap the host weights are those mapped pages
	 * themselves (llama-model.cpp load_tensors: no pinned host buffer when
	 * mmap is on, "CPU_Mapped").  The host tensors of a partial offload are
	 * the first layers (-ngl keeps the last ones on the GPUs, --n-cpu-moe
	 * the experts of the first ones in RAM) and the token embedding: the
	 * file's first pages, the ones the populate pass evicts first when the
	 * file and the system do not fit the RAM together.  The host part then
	 * returns from disk page by page as tokens touch it (a MoE's experts at
	 * random) while the populated GPU pages of the span compete with it.
	 * So the planner counts the whole file, not only the host part, beside
	 * the system's share when weights stay in host RAM [derived from the
	 * source; measured: gpt-oss-120b, 59 GiB, on an RTX 3090 with 64 GB of
	 * DDR4: -ngl 13 and --n-cpu-moe 27 ran 0.9-1.8 tok/s where the host part
	 * alone, 38-44 GiB, fits (hardware-corner.net, speed-field.tsv)].
	 * With --no-mmap the host part is read into memory of its own and the
	 * page cache may drop the file: only the host part counts.  Everything
	 * on the GPUs (the embedding alone in RAM) or the CPU alone: the file's
	 * pages are not needed again, or are the host part.
	 */
	r->mapped_bytes = 0;
	if (!rq->no_mmap && rq->n_gpus > 0 && ngl > 0 && (ngl < wk->total || wk->ncm > 0))
		r->mapped_bytes = r->model_bytes;
	uint64_t held = r->host_bytes;
	if (r->mapped_bytes > r->host_weights_bytes)
		held += r->mapped_bytes - r->host_weights_bytes;
	r->ram_need_bytes = held + r->spill_bytes + rq->ram_reserve_bytes;
	r->ram_ok = !r->ram_known || r->ram_need_bytes <= rq->ram_bytes;
	r->n_cpu_moe = wk->ncm;
	if (r->spill_bytes)
		r->verdict = found && r->ram_ok ? PLAN_OFFLOAD : PLAN_NOFIT;
	else if (found && ngl == wk->total && wk->ncm == 0)
		r->verdict = PLAN_FITS;
	else if (found && ngl > 0 && r->ram_ok)
		r->verdict = PLAN_OFFLOAD;
	else
		r->verdict = PLAN_NOFIT;
}


/*
 * Does llama.cpp's CUDA backend have a flash-attention kernel for these
 * head sizes?  -fa auto keeps FA off where supports_op says no
 * (ggml/src/ggml-cuda/fattn.cu, ggml_cuda_get_best_fattn_kernel at
 * 0c1e570: K = V in {40, 64, 72, 80, 96, 112, 128, 256, 512}, K 576 with
 * V 512 (MLA), K 192 with V 128, K 320 with V 256 under grouped-query
 * attention).  Metal and the CPU run every size.
 */
static bool fa_kernel_exists(const work *wk)
{
	const model_desc *m = wk->m;
	uint32_t k = m->head_dim_k, v = m->head_dim_v;
	if (wk->rq->n_gpus == 0 || wk->rq->gpus[0].unified_memory)
		return true;
	switch (k) {
	case 40: case 64: case 72: case 80: case 96: case 112: case 128: case 256: case 512:
		return v == k;
	case 576:
		return v == 512;
	case 192:
		return v == 128;
	case 320:
		return v == 256;
	default:
		return k == 0; /* attention-free: nothing to decide */
	}
}

/* Flash attention as the engine resolves it: on/off as asked; auto is the
 * build's default (on where a kernel exists since pull 15434, off
 * before); a quantized V cache needs it, so auto turns it on. */
void plan_llamacpp_resolve_fa(work *wk, bool auto_on)
{
	const plan_request *rq = wk->rq;
	bool quant_v = wk->kv != PLAN_KV_F16 && wk->kv != PLAN_KV_BF16 && wk->kv != PLAN_KV_F32;
	if (rq->flash_attn == PLAN_FA_ON) {
		wk->fa = true;
	} else if (rq->flash_attn == PLAN_FA_OFF) {
		wk->fa = false;
	} else {
		wk->fa = (auto_on && fa_kernel_exists(wk)) || quant_v;
		wk->fa_assumed = true;
	}
}

/*
 * llama.cpp's defaults on the working state: the context padded to 256
 * cells per sequence set; flash attention by the build's default; its
 * automatic fit (on by default since it exists, common/common.h
 * fit_params_target = 1 GiB) keeps 1 GiB free on every device, an
 * explicit -ngl does not; --n-cpu-moe applies to MoE models.
 */
void plan_llamacpp_setup(work *wk)
{
	const plan_request *rq = wk->rq;
	wk->build = plan_llamacpp_build_find(rq->engine_build);
	if (!wk->build)
		wk->build = plan_llamacpp_build_find(NULL);
	/* -np N: a stream per sequence unless --kv-unified (llama.cpp's
	 * default kv_unified = false; llama-server's -np auto sets it) */
	plan_kv_shape_llamacpp(&wk->kvs, wk->ctx, wk->nseq, rq->kv_unified, wk->batch);
	wk->cells = wk->kvs.cells * wk->kvs.n_stream;
	plan_llamacpp_resolve_fa(wk, wk->build->fa_auto);
	if (rq->gpu_layers < 0 && wk->build->fit_margin)
		wk->margin = GiB;
	if (wk->m->n_experts)
		wk->ncm = rq->n_cpu_moe > wk->m->n_layers ? wk->m->n_layers : rq->n_cpu_moe;
}

/* The notes both llama.cpp and Ollama state. */
void plan_llamacpp_notes(const plan_request *rq, plan_result *r)
{
	if (rq->n_gpus) /* on the CPU alone everything is host RAM */
		plan_note(r, "token embedding (%.2f GiB) stays in host RAM, as llama.cpp keeps it",
			  (double)r->embd_bytes / (double)GiB);
	plan_note(r, "KV cache %s, %llu cells (context padded to 256)%s%s", plan_kv_type_name(r->kv_type),
		  (unsigned long long)r->kv_cells,
		  r->flash_attn ? _(", flash attention") : _(", no flash attention (f32 KQ in the compute buffer)"),
		  !r->flash_attn_assumed ? ""
		  : rq->engine == PLAN_ENGINE_OLLAMA
			  ? _(" (assumed: Ollama's default for this model; OLLAMA_FLASH_ATTENTION=0/1 overrides)")
		  : r->flash_attn ? _(" (assumed: -fa auto, the default since llama.cpp pull 15434; --flash-attn off "
				      "for builds before it)")
				  : _(" (assumed: this build's default; --flash-attn on overrides)"));
	const model_desc *m = rq->model;
	if (m && (m->layer_rule || m->recurrent || m->kv_from_start)) {
		uint32_t nkv = 0, nrs = 0;
		for (uint32_t il = 0; il < m->n_layers; il++) {
			nkv += model_layer_has_kv(m, il);
			nrs += model_layer_recurrent(m, il);
		}
		plan_note(r, "layers: KV cache on %u of %u, recurrent state on %u%s%s%s", nkv, m->n_layers, nrs,
			  m->layer_rule ? " (llama.cpp " : "", m->layer_rule ? m->layer_rule : "", m->layer_rule ? ")" : "");
	}
	const plan_llamacpp_build *bd = plan_llamacpp_build_find(r->engine_build);
	if (m && rq->engine == PLAN_ENGINE_LLAMACPP && bd && bd->graph_phases && !plan_lgraph_supported(m))
		plan_note(r, "compute buffer from the phase model, not llama.cpp's graph node for node ('%s' is not among "
			     "the graphs src/plan/lgraph.c builds; a few %% off)", m->arch ? m->arch : "?");
	if (!rq->n_gpus)
		return;
	plan_note(r, "runtime overhead %s per GPU (CUDA context; Ollama's reserve, ml/device.go)",
		  rq->n_gpus && rq->gpus[0].unified_memory ? "512 MiB" : "457 MiB");
	if (rq->engine == PLAN_ENGINE_LLAMACPP && rq->gpu_layers < 0 && !strcmp(r->engine_build, "b2824"))
		plan_note(r, "llama.cpp b2824 had no automatic fit: give -ngl; planned with the layers that leave 1 GiB "
			     "free per GPU");
	else if (rq->engine == PLAN_ENGINE_LLAMACPP && rq->gpu_layers < 0)
		plan_note(r, "llama.cpp's automatic fit leaves 1 GiB free per GPU (common/common.h "
			     "fit_params_target); --gpu-layers N overrides");
}

/* Decode constants fitted to llama.cpp b2824 llama-bench (speed.c). */
const plan_engine_ops plan_engine_llamacpp_ops = {
	.id = PLAN_ENGINE_LLAMACPP,
	.name = "llama.cpp",
	.gguf = true,
	.setup = plan_llamacpp_setup,
	.place = plan_llamacpp_place,
	.notes = plan_llamacpp_notes,
	.dec_lat_ms = 0.10,
	.dec_lat_metal_ms = 0.40,
	.dec_bw_fraction = 0.92,
	.dec_bw_ceil_gbs = 1200.0,
	.calibrated = true,
	.knob_ctx = "-c",
	.knob_gpu_layers = "-ngl",
	.knob_fa = "-fa on",
	.knob_kv = "-ctk %s -ctv %s",
};
