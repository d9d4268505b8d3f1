#!/usr/bin/env python3
"""Fit the image-speed constants of data/image-speed.tsv on the rows of
tests/validation/image-speed.tsv with held_out 0 (never the held-out GPUs).

The model (plan/image.c image_speed, the same arithmetic):
  per sampler step = evals x (n x F / R + (W + n x k x A x T) / BW)
  n = guidance forwards x batch; F = the denoiser's FLOPs per forward at T tokens;
  W = weight bytes read per forward; A x T = its activation working set;
  k = times that working set streams through DRAM per forward (fitted, shared);
  R = the paper rate the kernel uses (NVIDIA: fp16_tflops, which is GeForce's halved
      FP32-accumulate rate; AMD/Intel: their matrix rate; Apple: the FP32 ALU rate),
      capped by board power (tdp_w x tflops_per_w), times the backend's realised fraction;
  BW = bandwidth_gbs x 0.8.
Prints the fitted constants and the per-row errors.  Usage: fit_image.py [DIR]
"""
import csv, math, os, sys

TOP = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def table(path):
    with open(path) as f:
        return list(csv.DictReader((l for l in f if not l.startswith("#")), delimiter="\t"))


gpus = {g["id"]: g for g in table(os.path.join(TOP, "data/gpus.tsv"))}
models = {m["id"]: m for m in table(os.path.join(TOP, "data/diffusion.tsv"))}
rows = [r for r in table(os.path.join(TOP, "tests/validation/image-speed.tsv")) if not r["setup"]]
WB = {"fp16": 2, "bf16": 2, "fp8": 1, "fp32": 4}
BW_FRAC = 0.8
CAP = {"Turing": 107.6 / 250, "Ada Lovelace": 330.3 / 450}


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
    F = (float(m["gflops_native"]) * 1e9 - Fa) * T / Tn + Fa * (T / Tn) ** 2
    W = float(m["denoiser_params"]) * WB[r["quant"]]
    A = float(m["act_bytes_per_token"])
    paper = float(g["fp16_tflops"]) or float(g["fp32_tflops"])
    cap = float(g["tdp_w"]) * CAP.get(g["arch"].split(" (")[0], 1e9)
    rate = min(paper, cap) * 1e12 * p["f_" + r["backend"]]
    bw = float(g["bandwidth_gbs"]) * 1e9 * BW_FRAC
    return float(r["evals"]) * (n * F / rate + (W + n * p["k"] * A * T) / bw + p["ovh"])


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
    for _ in range(60):
        for k in keys:
            best, bl = p[k], loss(p, rs)
            for f in (0.5, 0.7, 0.85, 0.93, 0.97, 1.03, 1.07, 1.15, 1.4, 2.0):
                q = dict(p)
                q[k] = best * f
                l = loss(q, rs)
                if l < bl:
                    bl, p[k] = l, best * f
                    best = p[k]
    return p


p = {"f_cuda": 0.4, "f_rocm": 0.3, "f_xpu": 0.4, "f_mps": 0.5, "k": 4.0, "tflops_per_w": 10.0, "ovh": 0.01}
fitted = [r for r in rows if r["held_out"] == "0"]
KEYS = os.environ.get("FIT_KEYS", "f_cuda f_rocm f_xpu f_mps ovh").split()
for k0 in ("k", "ovh"):
    if k0 not in KEYS:
        p[k0] = 0
p = fit(fitted, p, KEYS)
for k, v in p.items():
    print(f"{k}\t{v:.4g}")
for r in rows:
    pr, me = step_s(r, p), measured_step(r)
    print(f"{'held' if r['held_out'] == '1' else 'fit '} {r['gpu']:16} {r['model']:14} {r['backend']:5} "
          f"pred {pr:8.3f} s/step meas {me:8.3f} err {100 * (pr / me - 1):+6.1f}%")

# the four cards of issue 23 at SDXL 1024x1024, batch 1 (images per minute at 30 steps, sampling only)
for gid in ("arc-b580", "rtx-4060-ti-16g", "rx-9070-xt", "rtx-3060"):
    be = {"NVIDIA": "cuda", "AMD": "rocm", "Intel": "xpu", "Apple": "mps"}[gpus[gid]["vendor"]]
    r = {"gpu": gid, "model": "sdxl", "backend": be, "width": "1024", "height": "1024", "batch": "1", "evals": "1", "quant": "fp16"}
    s = step_s(r, p)
    print(f"order {gid:16} {1 / s:5.2f} it/s  {60 / (30 * s):5.2f} img/min (30 steps, no decode)")
