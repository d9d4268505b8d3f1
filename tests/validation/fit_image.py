#!/usr/bin/env python3
"""Fit the image-speed constants of data/image-backends.tsv on the rows of
tests/validation/image-speed.tsv with held_out 0 (never the held-out GPUs).

The model (plan/image.c speed(), the same arithmetic):
  per sampler step = evals x (n x F / (R x f) + n x k x A x T / R_alu + W / BW + ovh)
  n = guidance forwards x batch; F = the denoiser's FLOPs per forward at T tokens
      (linear part x T/Tn, self-attention's part x (T/Tn)^2);
  R = the paper rate the matrix kernels use (NVIDIA: fp16_tflops, which is GeForce's
      halved FP32-accumulate rate; AMD/Intel: their matrix rate; Apple: the FP32 ALU
      rate), capped by board power (tdp_w x tflops_per_w); f = the backend's fitted share;
  A x T = the activation working set of one image's forward (act_bytes_per_token x T);
  k = the vector work (normalisation, activations, softmax, elementwise) per byte of it,
      run on the FP32 ALUs at R_alu = fp32_tflops x the same power-cap clock factor;
      one fitted value for every backend;
  W / BW = the denoiser's weights read once per step at bandwidth_gbs x 0.8;
  ovh = framework and launch time per model evaluation (one value for every backend);
  attention's T^2 FLOPs count 1/attn_fraction times on an architecture whose row in
  data/image-backends.tsv gives one (Xe-HPG: no fused attention kernel).
Prints the fitted constants, the per-row errors and the medians per vendor, fitted
and held-out apart.

Usage: fit_image.py [DIR]            fit and report
       fit_image.py --choose SEED [DIR]
                                     choose the held-out GPUs (before any fit) and
                                     rewrite the held_out column of image-speed.tsv:
                                     per vendor, random.Random(SEED) picks one chip in
                                     three (at least one) among the GPUs with modelled
                                     rows; memory variants of one chip (same arch, SMs and
                                     matrix rate) are one chip, held out together.
"""
import csv, math, os, random, statistics, sys

args = sys.argv[1:]
SEED = None
if args[:1] == ["--choose"]:
    SEED = int(args[1])
    args = args[2:]
TOP = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
TSV = os.path.join(TOP, "tests/validation/image-speed.tsv")


def table(path):
    with open(path) as f:
        return list(csv.DictReader((l for l in f if not l.startswith("#")), delimiter="\t"))


gpus = {g["id"]: g for g in table(os.path.join(TOP, "data/gpus.tsv"))}
models = {m["id"]: m for m in table(os.path.join(TOP, "data/diffusion.tsv"))}
rows = [r for r in table(TSV) if not r["setup"]]
VENDOR = {"cuda": "NVIDIA", "rocm": "AMD", "xpu": "Intel", "mps": "Apple"}


def choose(seed):
    groups = {}
    for r in rows:
        g = gpus[r["gpu"]]
        groups.setdefault(g["vendor"], {}).setdefault((g["arch"], g["sms"], g["fp16_tflops"]), set()).add(r["gpu"])
    rng = random.Random(seed)
    held = set()
    for v in sorted(groups):
        chips = sorted(groups[v], key=lambda k: sorted(groups[v][k]))
        pick = rng.sample(chips, max(1, round(len(chips) / 3)))
        for k in pick:
            held |= groups[v][k]
        print(f"{v}: {len(chips)} chips, held out {sorted(sorted(groups[v][k]) for k in pick)}")
    out = []
    with open(TSV) as f:
        lines = f.read().splitlines()
    cols = None
    for l in lines:
        if l.startswith("#") or not l:
            out.append(l)
            continue
        cells = l.split("\t")
        if cols is None:
            cols = cells
            out.append(l)
            continue
        cells[cols.index("held_out")] = "1" if cells[cols.index("gpu")] in held else "0"
        out.append("\t".join(cells))
    with open(TSV, "w") as f:
        f.write("\n".join(out) + "\n")


if SEED is not None:
    choose(SEED)
    sys.exit(0)

WB = {"fp16": 2, "bf16": 2, "fp8": 1, "fp32": 4}
BW_FRAC = 0.8
CAP = {"Turing": 107.6 / 250, "Ada Lovelace": 330.3 / 450}


# per-architecture rows of data/image-backends.tsv: attention's share of the matrix rate
ATTN = [(b["vendor"], b["arch"], float(b["attn_fraction"])) for b in table(os.path.join(TOP, "data/image-backends.tsv"))
        if b.get("arch") and b.get("attn_fraction")]


def attn_fraction(g):
    for v, a, f in ATTN:
        if g["vendor"] == v and g["arch"].startswith(a):
            return f
    return 1.0


def tokens(m, w, h):
    lat = (w / 8) * (h / 8)
    if m["denoiser"] == "dit":
        return lat / (float(m["patch"]) ** 2) + float(m["text_tokens"])
    return lat


def step_s(r, p):
    g, m = gpus[r["gpu"]], models[r["model"]]
    w, h = float(r["width"]), float(r["height"])
    T = tokens(m, w, h)
    Tn = tokens(m, float(m["native_px"]), float(m["native_px"]))
    n = float(m["cfg"] or 1) * float(r["batch"])
    Fa = float(m["attn_gflops_native"]) * 1e9
    F = (float(m["gflops_native"]) * 1e9 - Fa) * T / Tn + Fa * (T / Tn) ** 2 / attn_fraction(g)
    W = float(m["denoiser_params"]) * WB[r["quant"]]
    A = float(m["act_bytes_per_token"])
    fp32 = float(g["fp32_tflops"])
    paper = fp32 if r["backend"] == "mps" else (float(g["fp16_tflops"]) or fp32)
    cap = float(g["tdp_w"]) * CAP.get(g["arch"].split(" (")[0], 1e9)
    rate = min(paper, cap)
    alu = fp32 * rate / paper
    bw = float(g["bandwidth_gbs"]) * 1e9 * BW_FRAC
    t = n * F / (rate * 1e12 * p["f_" + r["backend"]]) + n * p["k"] * A * T / (alu * 1e12) + W / bw + p["ovh"]
    return float(r["evals"]) * t


def measured_step(r):
    v, s, b = float(r["value"]), float(r["steps"]), float(r["batch"])
    mt = r["metric"]
    if mt == "it_s":
        return 1 / v
    if mt == "s_per_it":
        return v
    if mt == "image_it_s":
        return b / v
    if mt in ("s_sampling", "s_image"):  # decode and overheads not split off: a small bias
        return v / s
    raise SystemExit("unknown metric " + mt)


def loss(p, rs):
    return sum(math.log(step_s(r, p) / measured_step(r)) ** 2 for r in rs)


def fit(rs, p, keys):
    # coordinate descent on log-parameters
    for _ in range(80):
        for k in keys:
            best, bl = p[k], loss(p, rs)
            for f in (0.5, 0.7, 0.85, 0.93, 0.97, 0.99, 1.01, 1.03, 1.07, 1.15, 1.4, 2.0):
                q = dict(p)
                q[k] = best * f
                l = loss(q, rs)
                if l < bl:
                    bl, p[k] = l, best * f
                    best = p[k]
    return p


p = {"f_cuda": 0.5, "f_rocm": 0.3, "f_xpu": 0.4, "f_mps": 0.5, "k": 500.0, "ovh": 0.01}
fitted = [r for r in rows if r["held_out"] == "0"]
KEYS = os.environ.get("FIT_KEYS", "f_cuda f_rocm f_xpu f_mps k ovh").split()
p = fit(fitted, p, KEYS)
for k, v in p.items():
    print(f"{k}\t{v:.4g}")
errs = {}
for r in rows:
    pr, me = step_s(r, p), measured_step(r)
    kind = "held-out" if r["held_out"] == "1" else "fitted"
    errs.setdefault((VENDOR[r["backend"]], kind), []).append(abs(pr / me - 1))
    print(f"{'held' if r['held_out'] == '1' else 'fit '} {r['gpu']:16} {r['model']:14} {r['backend']:5} "
          f"{r['width']:>4}x{r['height']:<4} b{r['batch']:<2} pred {pr:8.3f} s/step meas {me:8.3f} err {100 * (pr / me - 1):+6.1f}%")
for v in ("NVIDIA", "AMD", "Intel", "Apple"):
    print(f"{v:7}" + "".join(f"  {k}: {len(e)} rows, median {100 * statistics.median(e):.1f}%, worst {100 * max(e):.1f}%"
                             for k in ("fitted", "held-out") for e in [errs.get((v, k), [])] if e))

# the four cards of issue 23 at SDXL 1024x1024, batch 1 (images per minute at 30 steps, sampling only)
for gid in ("arc-b580", "rtx-4060-ti-16g", "rx-9070-xt", "rtx-3060", "arc-a770"):
    be = {"NVIDIA": "cuda", "AMD": "rocm", "Intel": "xpu", "Apple": "mps"}[gpus[gid]["vendor"]]
    r = {"gpu": gid, "model": "sdxl", "backend": be, "width": "1024", "height": "1024", "batch": "1", "evals": "1", "quant": "fp16"}
    s = step_s(r, p)
    print(f"order {gid:16} {1 / s:5.2f} it/s  {60 / (30 * s):5.2f} img/min (30 steps, no decode)")
