/*
 * image.c: diffusion memory by stage (text encoding, denoising, VAE
 * decode) and a compute-bound speed estimate.  The per-model constants
 * and their calibrations live in data/diffusion.tsv.
 */
#include "plan/image.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kb/kb.h"

/* ---- the table -------------------------------------------------------- */

static bool name_matches(const kb_table *t, size_t row, const char *name)
{
	char want[128], got[128];
	str_squash(name, want, sizeof want);
	str_squash(kb_cell(t, row, kb_col(t, "id")), got, sizeof got);
	if (!strcmp(want, got))
		return true;
	str_squash(kb_cell(t, row, kb_col(t, "name")), got, sizeof got);
	if (!strcmp(want, got))
		return true;
	char *aliases = xstrdup(kb_cell(t, row, kb_col(t, "aliases")));
	char *parts[32];
	size_t n = str_split(aliases, ',', parts, 32);
	bool hit = false;
	for (size_t i = 0; i < n && i < 32 && !hit; i++) {
		str_squash(parts[i], got, sizeof got);
		hit = !strcmp(want, got);
	}
	free(aliases);
	return hit;
}

static double num(const kb_table *t, size_t row, const char *col)
{
	double v = 0;
	if (parse_double(kb_cell(t, row, kb_col(t, col)), &v))
		return 0;
	return v;
}

static void fill(const kb_table *t, size_t r, image_model *m)
{
	memset(m, 0, sizeof *m);
	m->id = kb_cell(t, r, kb_col(t, "id"));
	m->name = kb_cell(t, r, kb_col(t, "name"));
	m->denoiser = kb_cell(t, r, kb_col(t, "denoiser"));
	m->source = kb_cell(t, r, kb_col(t, "source"));
	m->dit = !strcmp(m->denoiser, "dit");
	m->denoiser_params = num(t, r, "denoiser_params");
	m->width = num(t, r, "width");
	m->patch = num(t, r, "patch");
	m->text_tokens = num(t, r, "text_tokens");
	m->vae_params = num(t, r, "vae_params");
	m->vae_fp32 = !strcmp(kb_cell(t, r, kb_col(t, "vae_fp32")), "yes");
	m->native_px = num(t, r, "native_px");
	m->default_steps = (uint32_t)num(t, r, "default_steps");
	m->cfg = (uint32_t)num(t, r, "cfg");
	m->gflops_native = num(t, r, "gflops_native");
	m->attn_gflops_native = num(t, r, "attn_gflops_native");
	m->act_bytes_per_token = num(t, r, "act_bytes_per_token");
	m->vae_bytes_per_px = num(t, r, "vae_bytes_per_px");
	char *enc = xstrdup(kb_cell(t, r, kb_col(t, "encoders")));
	char *parts[8];
	size_t n = str_split(enc, ',', parts, 8);
	for (size_t i = 0; i < n && i < 8; i++) {
		char *colon = strchr(parts[i], ':');
		double p = 0;
		if (!colon || parse_double(colon + 1, &p))
			continue;
		if (str_starts(parts[i], "t5"))
			m->t5_params += p;
		else
			m->clip_params += p;
	}
	free(enc);
	if (!m->patch)
		m->patch = 1;
	if (!m->cfg)
		m->cfg = 1;
}

int image_model_find(const char *name, image_model *m, gw_error *err)
{
	const kb_table *t = kb_get_table("diffusion", err);
	if (!t)
		return err ? err->code : GW_ENOENT;
	if (kb_col(t, "id") < 0 || kb_col(t, "denoiser_params") < 0)
		return gw_fail(err, GW_EFORMAT, "table 'diffusion': needs columns id and denoiser_params");
	size_t best = 0, best_d = (size_t)-1;
	for (size_t r = 0; r < t->nrows; r++) {
		if (name_matches(t, r, name)) {
			fill(t, r, m);
			if (!(m->denoiser_params > 0) || !(m->native_px > 0))
				return gw_fail(err, GW_EFORMAT, "table 'diffusion': row '%s' lacks its numbers", m->id);
			return 0;
		}
		size_t d = str_distance(name, kb_cell(t, r, kb_col(t, "id")));
		if (d < best_d) {
			best_d = d;
			best = r;
		}
	}
	if (t->nrows)
		return gw_fail(err, GW_ENOTFOUND, "unknown image model '%s' (did you mean '%s'?)", name,
			       kb_cell(t, best, kb_col(t, "id")));
	return gw_fail(err, GW_ENOTFOUND, "unknown image model '%s'", name);
}

bool image_model_known(const char *name)
{
	image_model m;
	return image_model_find(name, &m, NULL) == 0;
}

/* ---- options ---------------------------------------------------------- */

static const char *const offload_names[] = {"none", "text-encoders", "sequential"};
static const char *const ui_names[] = {"comfyui", "diffusers", "a1111"};

void image_opts_init(image_opts *o)
{
	memset(o, 0, sizeof *o);
	o->width = o->height = 0; /* 0: the model's native size */
	o->batch = 1;
	o->quant = "fp16";
	o->offload = IMAGE_OFFLOAD_NONE;
	o->ui = IMAGE_UI_COMFYUI;
}

int image_parse_ui(const char *s, image_ui *out)
{
	for (size_t i = 0; i < 3; i++)
		if (s && str_ieq(s, ui_names[i])) {
			*out = (image_ui)i;
			return 0;
		}
	return GW_EINVAL;
}

const char *image_ui_name(image_ui u) { return ui_names[u]; }

/* ComfyUI's VAE dtype choice (comfy/model_management.py vae_dtype): bf16
 * where the device supports it; NVIDIA from Ampere (cc 8.0), AMD RDNA 3/4
 * and CDNA 2/3, Intel XPU; the MPS log shows "VAE dtype: torch.float32"
 * (ComfyUI#1905). */
bool image_bf16_vae(const gpu_spec *g)
{
	if (!g)
		return true;
	if (str_ieq(g->vendor, "NVIDIA"))
		return g->cc_major >= 8;
	if (str_ieq(g->vendor, "AMD"))
		return strstr(g->arch, "RDNA 3") || strstr(g->arch, "RDNA 4") || strstr(g->arch, "CDNA 2") ||
		       strstr(g->arch, "CDNA 3");
	if (str_ieq(g->vendor, "Intel"))
		return true;
	return false;
}

int image_parse_offload(const char *s, image_offload *out)
{
	for (size_t i = 0; i < 3; i++)
		if (s && str_ieq(s, offload_names[i])) {
			*out = (image_offload)i;
			return 0;
		}
	return GW_EINVAL;
}

const char *image_offload_name(image_offload o) { return offload_names[o]; }

/* Bytes per weight: GGUF block sizes from ggml-common.h (block_q8_0 34 B
 * per 32, q6_K 210 per 256, q5_K 176/256, q5_0 22/32, q4_K 144/256, q4_0
 * 18/32, q4_1 20/32, q3_K 110/256, q2_K 84/256; reference/vram-planner.md
 * sec. 2.5).  The _S recipes of FLUX GGUF files keep most weights in
 * their base type, so they are counted at it. */
static const struct {
	const char *name;
	double bytes;
} quants[] = {
	{"fp32", 4}, {"f32", 4}, {"fp16", 2}, {"f16", 2}, {"bf16", 2}, {"fp8", 1}, {"fp8_e4m3fn", 1},
	{"q8_0", 34.0 / 32}, {"q6_k", 210.0 / 256}, {"q5_k_s", 176.0 / 256}, {"q5_k_m", 176.0 / 256},
	{"q5_0", 22.0 / 32}, {"q5_1", 24.0 / 32}, {"q4_k_s", 144.0 / 256}, {"q4_k_m", 144.0 / 256},
	{"q4_0", 18.0 / 32}, {"q4_1", 20.0 / 32}, {"q3_k_s", 110.0 / 256}, {"q2_k", 84.0 / 256},
};

int image_quant_bytes(const char *quant, double *bpp)
{
	for (size_t i = 0; quant && i < sizeof quants / sizeof quants[0]; i++)
		if (str_ieq(quant, quants[i].name)) {
			*bpp = quants[i].bytes;
			return 0;
		}
	*bpp = 0;
	return GW_EINVAL;
}

/* ---- memory ----------------------------------------------------------- */

/* CUDA context and library handles: Ollama's 457 MiB per CUDA GPU
 * (reference/vram-planner.md sec. 1.3), as for training. */
#define IMAGE_CUDA_CONTEXT_BYTES (457ULL * MiB)
/* diffusers' tiled VAE decode works on 512x512 pixel tiles
 * (AutoencoderKL tile_sample_min_size for SDXL-class VAEs). */
#define IMAGE_VAE_TILE_PX (512.0 * 512.0)
/* Sequential offload keeps one block of a model on the GPU at a time;
 * taken as 5% of the largest model [assumption]. */
#define IMAGE_SEQUENTIAL_RESIDENT 0.05

static double tokens_of(const image_model *m, const image_opts *o)
{
	double w = o->width ? o->width : m->native_px, h = o->height ? o->height : m->native_px;
	double lat = (w / 8) * (h / 8);
	if (m->dit)
		return lat / (m->patch * m->patch) + m->text_tokens;
	return lat;
}

static uint64_t u64(double x)
{
	return x <= 0 ? 0 : x >= 1.8e19 ? UINT64_MAX / 4 : (uint64_t)llround(x);
}

int image_memory(const image_model *m, const image_opts *o, image_breakdown *bd, gw_error *err)
{
	memset(bd, 0, sizeof *bd);
	double bpp;
	if (image_quant_bytes(o->quant, &bpp))
		return gw_fail(err, GW_EINVAL, "unknown image precision '%s' (fp32 fp16 bf16 fp8 q8_0 q6_k q5_k_s q5_0 q4_k_s q4_0 ...)",
			       o->quant ? o->quant : "");
	if (!o->batch)
		return gw_fail(err, GW_EINVAL, "batch must be at least 1");
	double w = o->width ? o->width : m->native_px, h = o->height ? o->height : m->native_px;
	if (w < 64 || h < 64 || w > 16384 || h > 16384)
		return gw_fail(err, GW_EINVAL, "image size %gx%g out of range (64 to 16384 pixels a side)", w, h);

	bool fp32 = bpp >= 4;
	/* Text encoders run in 16 bits; with 8-bit or smaller weights T5-XXL
	 * is taken in fp8, as ComfyUI's FLUX workflows ship it. */
	double te = m->clip_params * (fp32 ? 4 : 2) + m->t5_params * (fp32 ? 4 : bpp <= 1.1 ? 1 : 2);
	double den = m->denoiser_params * bpp;
	double vae = m->vae_params * (fp32 ? 4 : 2);
	/* SDXL's VAE overflows in fp16: diffusers and A1111 decode it in fp32;
	 * ComfyUI in bf16 where the card has it (image_bf16_vae) */
	bool comfy = o->ui == IMAGE_UI_COMFYUI;
	bool dec_fp32 = fp32 || (m->vae_fp32 && !(comfy && image_bf16_vae(o->gpu)));
	double vae_decode_w = dec_fp32 ? m->vae_params * 4 : vae;

	double act = m->act_bytes_per_token * tokens_of(m, o) * o->batch * m->cfg * (fp32 ? 2 : 1);
	double dec_px = o->vae_tiling ? fmin(IMAGE_VAE_TILE_PX, w * h) : w * h * o->batch;
	double dec = m->vae_bytes_per_px * dec_px * (dec_fp32 ? 2 : 1);
	/* upcasting the VAE keeps its 16-bit copy while the fp32 one runs */
	double vae_peak = vae + (vae_decode_w > vae ? vae_decode_w : 0);

	double res_den = den, res_te = te, res_vae = vae, host = 0, peak, resident;
	switch (o->offload) {
	case IMAGE_OFFLOAD_NONE:
		if (comfy) {
			/* ComfyUI loads what each stage needs and frees the rest when
			 * memory is short: encoders, then denoiser, then VAE */
			peak = fmax(te, fmax(den + act, vae_peak + dec));
			resident = te + den + fmax(vae + act, vae_peak + dec);
		} else {
			peak = te + den + fmax(vae + act, vae_peak + dec);
			resident = peak;
		}
		break;
	case IMAGE_OFFLOAD_TEXT_ENCODERS:
		/* encoders run first, then leave for host RAM */
		peak = comfy ? fmax(te, fmax(den + act, vae_peak + dec)) : fmax(te, den + fmax(vae + act, vae_peak + dec));
		resident = fmax(te, den + fmax(vae + act, vae_peak + dec));
		res_te = 0;
		host = te;
		break;
	default: {
		double blk = IMAGE_SEQUENTIAL_RESIDENT * fmax(den, te);
		res_den = IMAGE_SEQUENTIAL_RESIDENT * den;
		res_te = 0;
		peak = fmax(blk + act, vae_peak + dec);
		resident = peak;
		host = te + den;
		break;
	}
	}
	bd->denoiser = u64(res_den);
	bd->text_encoders = u64(res_te);
	bd->vae = u64(res_vae);
	bd->activations = u64(act);
	bd->vae_decode = u64(dec);
	bd->overhead = IMAGE_CUDA_CONTEXT_BYTES;
	bd->total = u64(peak) + bd->overhead;
	bd->resident = u64(resident) + bd->overhead;
	bd->host = u64(host);
	bd->vae_fp32 = dec_fp32;
	return 0;
}

/* ---- speed and advice -------------------------------------------------- */


/* Matrix-unit power caps in TFLOPS per watt of board power, from the
 * architecture's full-rate part at its board power (data/gpus.tsv): Turing
 * the 2080 Ti's 107.6 FP16-accumulate TFLOPS at 250 W, Ada the 4090's
 * 330.3 at 450 W [derived].  A T4 (70 W) is held to about 30 TFLOPS of its
 * 65, an L4 (72 W) to about 53 of its 121. */
static const struct {
	const char *arch;
	double tflops_per_w;
} power_caps[] = {
	{"Turing", 107.6 / 250},
	{"Ada Lovelace", 330.3 / 450},
};

/* The VAE decoder's work per output pixel: about 1.24 TFLOPs for a 512x512
 * decode of the SD/SDXL VAE [assumption]; tiles overlap by a quarter
 * (diffusers tile_overlap_factor 0.25), fp32 convolutions run at half the
 * 16-bit rate (TF32). */
#define IMAGE_VAE_FLOP_PER_PX (1.24e12 / (512.0 * 512.0))
#define IMAGE_VAE_TILE_OVERLAP 1.25

/* The share of its board bandwidth a denoiser's weight reads reach, as for
 * LLM decode's streaming reads [assumption]. */
#define IMAGE_BW_FRACTION 0.8

typedef struct backend_row {
	const char *backend, *name, *rate, *measured, *caveat;
	double fraction, overhead_s, vector_k;
	double attn_fraction; /* attention's matrix work at this share of R (1: as the rest) */
} backend_row;

/* Row r's non-empty cells over b's (an empty cell keeps what b has). */
static void backend_overlay(const kb_table *t, size_t r, backend_row *b)
{
	const char *v;
	if (*(v = kb_cell(t, r, kb_col(t, "backend"))))
		b->backend = v;
	if (*(v = kb_cell(t, r, kb_col(t, "name"))))
		b->name = v;
	if (*(v = kb_cell(t, r, kb_col(t, "rate"))))
		b->rate = v;
	if (*(v = kb_cell(t, r, kb_col(t, "measured_gpus"))))
		b->measured = v;
	if (*(v = kb_cell(t, r, kb_col(t, "caveat"))))
		b->caveat = v;
	if (num(t, r, "fraction") > 0)
		b->fraction = num(t, r, "fraction");
	if (*kb_cell(t, r, kb_col(t, "overhead_s")))
		b->overhead_s = num(t, r, "overhead_s");
	if (*kb_cell(t, r, kb_col(t, "vector_k")))
		b->vector_k = num(t, r, "vector_k");
	if (num(t, r, "attn_fraction") > 0)
		b->attn_fraction = num(t, r, "attn_fraction");
}

/*
 * The data/image-backends.tsv row of g's vendor (its arch cell empty), then
 * the first row of the same vendor whose arch starts g's arch, whose
 * non-empty cells replace the vendor row's (Xe-HPG: attention without a
 * fused kernel runs at a measured share of the GEMM rate).  False when the
 * vendor has no row.
 */
static bool backend_of(const gpu_spec *g, backend_row *b)
{
	const kb_table *t = kb_get_table("image-backends", NULL);
	if (!t || !g)
		return false;
	memset(b, 0, sizeof *b);
	b->measured = "";
	b->attn_fraction = 1;
	long c_vendor = kb_col(t, "vendor"), c_arch = kb_col(t, "arch");
	size_t base = t->nrows, arch = t->nrows;
	for (size_t r = 0; r < t->nrows; r++) {
		if (!str_ieq(kb_cell(t, r, c_vendor), g->vendor))
			continue;
		const char *a = kb_cell(t, r, c_arch);
		if (!*a && base == t->nrows)
			base = r;
		else if (*a && arch == t->nrows && g->arch && str_starts(g->arch, a))
			arch = r;
	}
	if (base == t->nrows)
		return false;
	backend_overlay(t, base, b);
	if (arch < t->nrows)
		backend_overlay(t, arch, b);
	return b->fraction > 0;
}

static bool listed(const char *list, const char *id)
{
	char *copy = xstrdup(list);
	char *parts[64];
	size_t n = str_split(copy, ',', parts, 64);
	bool hit = false;
	for (size_t i = 0; i < n && i < 64 && !hit; i++)
		hit = str_ieq(str_trim(parts[i]), id);
	free(copy);
	return hit;
}

/* Effective host-to-GPU copy rate by PCIe generation, about 75% of an x16
 * link (gen3 15.8, gen4 31.5, gen5 63 GB/s raw) [assumption]. */
static double pcie_gbs(int gen)
{
	return gen <= 3 && gen > 0 ? 12 : gen >= 5 ? 48 : 24;
}

/*
 * Seconds per sampler step, the same arithmetic as
 * tests/validation/fit_image.py:
 *   matrix work: guidance forwards x batch x the denoiser's FLOPs (linear
 *     part x T/Tn, attention's part x (T/Tn)^2) at the realised matrix rate;
 *   vector work: the forwards' activation working sets (act_bytes_per_token
 *     x T) x vector_k FLOPs per byte (normalisation, activations, softmax,
 *     elementwise) on the FP32 ALUs, slowed by the same power cap; this is
 *     what makes an A100 (312 matrix, 19.5 FP32 TFLOPS) no faster than an
 *     RTX 4090 (165, 83) at SD 1.5;
 *   the denoiser's weights read once from memory;
 *   plus the backend's per-evaluation overhead.
 */
static void speed(image_plan *p)
{
	const image_model *m = &p->model;
	const image_opts *o = &p->opts;
	const gpu_spec *g = o->gpu;
	backend_row b;
	if (!g || !(m->gflops_native > 0) || !backend_of(g, &b))
		return;
	double paper = str_ieq(b.rate, "fp32") || !(g->fp16_tflops > 0) ? g->fp32_tflops : g->fp16_tflops;
	if (!(paper > 0))
		return;
	double rate = paper;
	for (size_t i = 0; i < sizeof power_caps / sizeof power_caps[0]; i++)
		if (str_starts(g->arch, power_caps[i].arch) && g->tdp_w > 0)
			rate = fmin(rate, g->tdp_w * power_caps[i].tflops_per_w);
	p->has_speed = true;
	p->backend = b.backend;
	p->backend_name = b.name;
	p->speed_estimated = !listed(b.measured, g->id);
	p->paper_tflops = paper;
	p->rate_tflops = rate;
	p->fraction = b.fraction;
	double R = rate * 1e12 * b.fraction;

	image_opts native = *o;
	native.width = native.height = 0;
	double x = p->tokens / tokens_of(m, &native);
	double attn = m->attn_gflops_native > 0 && m->attn_gflops_native < m->gflops_native ? m->attn_gflops_native : 0;
	/* attention's T^2 work at attn_fraction of the matrix rate: its FLOPs
	 * weighted by 1/attn_fraction (the same time as that many at R) */
	double flops = ((m->gflops_native - attn) * x + attn * x * x / b.attn_fraction) * 1e9;
	p->attn_fraction = b.attn_fraction;
	p->speed_caveat = b.caveat;
	double n = (double)m->cfg * o->batch;
	double alu = g->fp32_tflops * (rate / paper) * 1e12;
	double vector_s = alu > 0 && b.vector_k > 0 ? n * b.vector_k * m->act_bytes_per_token * p->tokens / alu : 0;
	p->alu_tflops = vector_s > 0 ? alu / 1e12 : 0;
	double wbpp;
	image_quant_bytes(o->quant, &wbpp);
	double mem_bw = g->bandwidth_gbs * 1e9 * IMAGE_BW_FRACTION;
	double weights_s = mem_bw > 0 ? m->denoiser_params * wbpp / mem_bw : 0;
	p->s_per_step = n * flops / R + vector_s + weights_s + b.overhead_s;

	double w = o->width, h = o->height;
	double dec_flops = IMAGE_VAE_FLOP_PER_PX * w * h * o->batch * (o->vae_tiling ? IMAGE_VAE_TILE_OVERLAP : 1);
	p->decode_s = dec_flops / (R * (p->bd.vae_fp32 ? 0.5 : 1));

	double bw = pcie_gbs(o->pcie_gen ? o->pcie_gen : g->pcie_gen) * 1e9;
	double bpp;
	image_quant_bytes(o->quant, &bpp);
	double den = m->denoiser_params * bpp;
	double te = (double)p->bd.host - (o->offload == IMAGE_OFFLOAD_SEQUENTIAL ? den : 0);
	double xfer = 0;
	if (o->offload == IMAGE_OFFLOAD_TEXT_ENCODERS)
		xfer = te / bw;                     /* encoders in again for each new prompt */
	else if (o->offload == IMAGE_OFFLOAD_SEQUENTIAL)
		xfer = te / bw + p->steps * den / bw; /* the whole denoiser streamed every step */
	else if (p->has_budget && p->bd.resident > p->vram_bytes)
		/* ComfyUI swaps: encoders and denoiser back in for each new prompt */
		xfer = (p->bd.resident - p->bd.total) / bw;
	p->offload_s = xfer / o->batch;
	p->s_per_image = (p->steps * p->s_per_step + p->decode_s + xfer) / o->batch;
	p->images_per_min = p->s_per_image > 0 ? 60 / p->s_per_image : 0;
}

static void add_row(image_advice **list, size_t *n, size_t *cap, uint64_t before, uint64_t after, bool fits,
		    bool resident, const char *action_fmt, char *action)
{
	char a[32], d[32];
	*list = xgrow(*list, cap, *n + 1, sizeof **list);
	image_advice *ad = &(*list)[(*n)++];
	fmt_bytes(a, sizeof a, after);
	fmt_bytes(d, sizeof d, before > after ? before - after : 0);
	/* action_fmt: the catalog format of action (src/cmd translates it); action: the
	 * English made from it, or NULL when it is the format itself */
	ad->action = action ? action : xstrdup(action_fmt);
	ad->action_fmt = action_fmt;
	/* resident: measured against everything loaded at once (what ComfyUI keeps
	 * when it fits), not against the largest stage */
	ad->effect_fmt = resident ? N_("%s with everything loaded (-%s)%s") : N_("%s peak (-%s)%s");
	const char *tail = fits ? N_(", fits") : N_(", still too large");
	ad->effect = resident ? xasprintf("%s with everything loaded (-%s)%s", a, d, tail)
			      : xasprintf("%s peak (-%s)%s", a, d, tail);
	ad->total_after = after;
	ad->fits_after = fits;
}

/* The GGUF steps tried after 8-bit weights, largest first. */
static const char *const gguf_steps[] = {"q6_k", "q5_k_s", "q4_k_s"};

/*
 * Ranked changes, applied cumulatively, cheapest in quality and speed
 * first: tiled VAE decode; text encoders to the CPU between stages
 * (diffusers, A1111; ComfyUI does it already); 8-bit weights (fp8 or the
 * GGUF Q8_0); smaller GGUF types; batch 1; sequential offload last.
 */
static int advise(image_plan *p, gw_error *err)
{
	image_opts o = p->opts;
	image_breakdown bd;
	uint64_t cur = p->bd.total;
	size_t cap = 0;
	double bpp;
	int rc;
	image_quant_bytes(o.quant, &bpp);
#define TRY(cond, mutate, fmt, text)                                                                         \
	if (cond) {                                                                                          \
		mutate;                                                                                      \
		if ((rc = image_memory(&p->model, &o, &bd, err)))                                            \
			return rc;                                                                           \
		if (bd.total < cur) {                                                                        \
			add_row(&p->advice, &p->n_advice, &cap, cur, bd.total, bd.total <= p->vram_bytes, false, fmt, text); \
			cur = bd.total;                                                                      \
			if (bd.total <= p->vram_bytes)                                                       \
				return 0;                                                                    \
		}                                                                                            \
	}
	TRY(!o.vae_tiling, o.vae_tiling = true, N_("tiled VAE decode (--vae-tiling)"), NULL);
	TRY(o.offload == IMAGE_OFFLOAD_NONE && o.ui != IMAGE_UI_COMFYUI, o.offload = IMAGE_OFFLOAD_TEXT_ENCODERS,
	    N_("move the text encoders to the CPU after encoding (--offload text-encoders)"), NULL);
	TRY(bpp > 1.1, o.quant = "fp8", N_("8-bit weights (--quant fp8, or the GGUF q8_0)"), NULL);
	for (size_t i = 0; i < sizeof gguf_steps / sizeof gguf_steps[0]; i++) {
		double nb;
		image_quant_bytes(o.quant, &bpp);
		image_quant_bytes(gguf_steps[i], &nb);
		TRY(bpp > nb * 1.01 && o.offload != IMAGE_OFFLOAD_SEQUENTIAL, o.quant = gguf_steps[i],
		    N_("a GGUF %s of the model (--quant %s; ComfyUI-GGUF, stable-diffusion.cpp)"),
		    xasprintf("a GGUF %s of the model (--quant %s; ComfyUI-GGUF, stable-diffusion.cpp)", gguf_steps[i],
			      gguf_steps[i]));
	}
	TRY(o.batch > 1, o.batch = 1, N_("one image at a time (--batch 1)"), NULL);
	TRY(o.offload != IMAGE_OFFLOAD_SEQUENTIAL, o.offload = IMAGE_OFFLOAD_SEQUENTIAL,
	    N_("stream the model block by block (--offload sequential; much slower)"), NULL);
#undef TRY
	return 0;
}

/*
 * When it fits: each memory-saving change alone, against what the card
 * holds (everything resident when that fits, else the stage peak).
 */
static int savings(image_plan *p, gw_error *err)
{
	uint64_t base = p->bd.resident <= p->vram_bytes ? p->bd.resident : p->bd.total;
	bool res = p->bd.resident <= p->vram_bytes;
	size_t cap = 0;
	double bpp;
	image_quant_bytes(p->opts.quant, &bpp);
	for (int k = 0; k < 2; k++) {
		image_opts o = p->opts;
		const char *text;
		if (k == 0 && !o.vae_tiling) {
			o.vae_tiling = true;
			text = N_("tiled VAE decode (--vae-tiling)");
		} else if (k == 1 && bpp > 1.1) {
			o.quant = "fp8";
			text = N_("8-bit weights (--quant fp8, or the GGUF q8_0)");
		} else {
			continue;
		}
		image_breakdown bd;
		int rc = image_memory(&p->model, &o, &bd, err);
		if (rc)
			return rc;
		uint64_t after = res ? bd.resident : bd.total;
		if (after >= base)
			continue;
		add_row(&p->savings, &p->n_savings, &cap, base, after, true, res, text, NULL);
	}
	return 0;
}

int image_plan_compute(const image_model *m, const image_opts *o, uint64_t vram_bytes, image_plan *p,
		       gw_error *err)
{
	memset(p, 0, sizeof *p);
	p->model = *m;
	p->opts = *o;
	if (!p->opts.width)
		p->opts.width = (uint32_t)m->native_px;
	if (!p->opts.height)
		p->opts.height = (uint32_t)m->native_px;
	int rc = image_memory(m, &p->opts, &p->bd, err);
	if (rc)
		return rc;
	p->steps = o->steps ? o->steps : m->default_steps;
	p->tokens = tokens_of(m, &p->opts);
	p->vram_bytes = vram_bytes;
	p->has_budget = vram_bytes > 0;
	p->fits = p->has_budget && p->bd.total <= vram_bytes;
	p->little_headroom = p->fits && (double)(vram_bytes - p->bd.total) < IMAGE_LITTLE_HEADROOM * (double)vram_bytes;
	speed(p);
	if (p->has_budget && !p->fits)
		rc = advise(p, err);
	else if (p->has_budget)
		rc = savings(p, err);
	return rc;
}

void image_plan_release(image_plan *p)
{
	for (size_t i = 0; i < p->n_advice; i++) {
		free(p->advice[i].action);
		free(p->advice[i].effect);
	}
	free(p->advice);
	for (size_t i = 0; i < p->n_savings; i++) {
		free(p->savings[i].action);
		free(p->savings[i].effect);
	}
	free(p->savings);
	memset(p, 0, sizeof *p);
}
