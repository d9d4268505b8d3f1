#!/usr/bin/env python3
"""Plan every measured row of plan-measurements.tsv that `gpuwise plan` can
express, print predicted against measured with the error, and check:

- llama.cpp's own buffers (model, KV, compute; llamacpp-buffers.tsv holds
  the per-buffer figures transcribed from each row's source notes): each
  within 3%;
- totals measured by nvidia-smi: median error within 10%;
- decode tokens/s of llama-bench tg rows: median error within 25%;
- rows measured as OOM: the plan must not say "fits".

Other rows (torch max_memory_allocated, vLLM profile figures, speeds that
include prefill) are printed for information.  Training rows belong to
`plan --train` and are skipped, as are rows whose architecture or setup the
planner cannot express (each skip says why).

Usage: validate_plan.py GPUWISE [DIR]   (DIR: where the TSV files are)
"""
import csv
import json
import os
import re
import statistics
import subprocess
import sys

GW = sys.argv[1] if len(sys.argv) > 1 else "./gpuwise"
DIR = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(os.path.abspath(__file__))
MIB = 1024 * 1024
GIB = 1024 * MIB

MODELS = {
    "Meta-Llama-3-8B": "llama-3-8b", "Meta-Llama-3-70B": "llama-3-70b", "Llama-2-7B": "llama-2-7b",
    "Llama-2-13B": "llama-2-13b", "Llama-2-70B": "llama-2-70b", "LLaMA-7B (v1)": "llama-7b",
    "qwen2.5-coder:32b (Ollama)": "qwen2.5-32b", "Qwen2.5-7B-Instruct": "qwen2.5-7b",
    "Qwen2.5-14B-Instruct": "qwen2.5-14b", "Qwen2.5-72B-Instruct": "qwen2.5-72b", "Qwen3-8B": "qwen3-8b",
    "Qwen3-32B": "qwen3-32b", "Qwen3-30B-A3B": "qwen3-30b-a3b",
}

# (pattern on the row's gpu column, catalog id); first match wins
GPUS = [
    (r"RTX 4090", "rtx-4090"), (r"RTX 3070", "rtx-3070"), (r"RTX 3090", "rtx-3090"),
    (r"RTX 3080 Ti", "rtx-3080-ti"), (r"RTX 3080", "rtx-3080"), (r"RTX 4070 Ti", "rtx-4070-ti"),
    (r"RTX 4080", "rtx-4080"), (r"RTX A6000", "rtx-a6000"), (r"RTX 6000 Ada", "rtx-6000-ada"),
    (r"RTX 5000 Ada", "rtx-5000-ada"), (r"L40S", "l40s"), (r"A100 SXM", "a100-80g-sxm"),
    (r"A100 80GB", "a100-80g-sxm"), (r"H100 PCIe", "h100-pcie"), (r"H100 80GB", "h100-sxm"),
    (r"H20", "h20"), (r"M1 Max", "m1-max"), (r"M3 Max", "m3-max-64g"), (r"M2 Ultra", "m2-ultra"),
    (r"Apple M1 7", "m1-7c-8g"),
]


def quant_of(q):
    q = q.split(" ")[0].lower()
    return {"awq": "awq-int4", "awq-int4": "awq-int4"}.get(q, q)


def engine_of(src):
    if "ollama/ollama" in src:
        return "ollama"
    if "vllm-project" in src:
        return "vllm"
    if "QwenLM" in src:
        return "transformers"
    return "llama.cpp"


def gpu_args(g):
    m = re.match(r"(\d+)x\s*(.*)", g)
    n, rest = (int(m.group(1)), m.group(2)) if m else (1, g)
    for pat, gid in GPUS:
        if re.search(pat, rest):
            args = ["--gpu", f"{n}x{gid}" if n > 1 else gid]
            mem = re.search(r"(\d+)GB", rest)
            if gid.startswith("m") and mem:  # Apple: unified memory size of this machine
                args += ["--vram", mem.group(1) + "G"]
            return args, n
    return None, n


def plan(args):
    p = subprocess.run([GW, "plan"] + args + ["--json"], capture_output=True, text=True)
    if p.returncode not in (0, 3, 4):
        raise RuntimeError(f"gpuwise plan {' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}")
    return json.loads(p.stdout)


def err(pred, meas):
    return pred / meas - 1


def main():
    fails = []
    out = []

    def line(kind, what, pred, meas, unit, ok=None):
        e = err(pred, meas) if meas else float("nan")
        mark = "" if ok is None else ("ok" if ok else "FAIL")
        out.append(f"{kind:<10} {what:<62} {pred:>10.2f} {meas:>10.2f} {unit:<5} {e * 100:+6.1f}% {mark}")
        return e

    # ---- llama.cpp buffers ------------------------------------------------
    buf_errs = []
    with open(os.path.join(DIR, "llamacpp-buffers.tsv")) as f:
        rows = [r for r in csv.DictReader((l for l in f if not l.startswith("#")), delimiter="\t")]
    for r in rows:
        n = int(r["gpus"])
        gpu = f"{n}x{r['gpu']}" if n > 1 else r["gpu"]
        # the logs are of llama.cpp b2824: plan that build's profile
        d = plan([r["model"], "--quant", r["quant"], "--ctx", r["ctx"], "--gpu", gpu, "--gpu-layers", "999",
                  "--engine", "llama.cpp@b2824"])
        what = f"{r['model']} {r['quant']} ctx {r['ctx']} {gpu}"
        bd = d["breakdown"]
        comp = [dv["compute_bytes"] / MIB for dv in d["devices"] if dv["layers"]]
        pred = {
            "model": bd["weights_bytes"] / MIB,
            "model_gpu0": d["devices"][0]["weights_bytes"] / MIB,
            "model_gpu1": d["devices"][1]["weights_bytes"] / MIB if len(d["devices"]) > 1 else 0,
            "kv": bd["kv_cache_bytes"] / MIB,
            "compute": max(comp) if comp else 0,
            "context": (bd["kv_cache_bytes"] + bd["compute_bytes"]) / MIB,
            "total": (bd["weights_bytes"] + bd["kv_cache_bytes"] + bd["compute_bytes"]) / MIB,
        }
        for k in ("model", "model_gpu0", "model_gpu1", "kv", "compute", "context", "total"):
            v = r[k + "_mib"]
            if not v:
                continue
            meas = float(v)
            e = err(pred[k], meas)
            ok = abs(e) <= 0.03
            line("llama.cpp", f"{what}: {k}", pred[k], meas, "MiB", ok)
            buf_errs.append(abs(e))
            if not ok:
                fails.append(f"llama.cpp {k} {what}: {e * 100:+.1f}%")

    # ---- the measurement table -------------------------------------------
    smi, dec, info = [], [], []
    with open(os.path.join(DIR, "plan-measurements.tsv")) as f:
        meas_rows = list(csv.DictReader(f, delimiter="\t"))
    for r in meas_rows:
        src = r["source"]
        what = f"{r['model']} {r['quant'].split(' ')[0]} ctx {r['ctx']} {r['gpu']}"
        if r["task"] != "inference":
            out.append(f"{'skip':<10} {what:<62} (training row: gpuwise plan --train)")
            continue
        model = MODELS.get(r["model"])
        if not model:
            out.append(f"{'skip':<10} {what:<62} (architecture not in the catalog)")
            continue
        if "fit-params" in src:
            out.append(f"{'skip':<10} {what:<62} (expert tensors overridden to the CPU with -ot: not expressible)")
            continue
        eng = engine_of(src)
        ga, n = gpu_args(r["gpu"].replace(", per GPU", ""))
        if eng == "ollama":
            ga = None  # GPU not stated: the fewest 24 GB cards that hold it, as Ollama's scheduler picks
        # llama.cpp rows were measured on b2824 (XiongjieDai, May 2024): that build's profile
        args = [model, "--quant", quant_of(r["quant"]), "--engine", "llama.cpp@b2824" if eng == "llama.cpp" else eng]
        if r["ctx"] not in ("", "None"):
            args += ["--ctx", r["ctx"]]
        if eng == "llama.cpp":
            args += ["--gpu-layers", "999"]  # the benchmarks offloaded every layer (-ngl 99)
        if eng == "ollama":
            d = None
            for k in range(1, 9):
                d = plan(args + ["--gpu", f"{k}x3090" if k > 1 else "rtx-3090"])
                if d["verdict"] == "fits":
                    break
        elif ga is None:
            out.append(f"{'skip':<10} {what:<62} (GPU not in the catalog)")
            continue
        else:
            d = plan(args + ga)
        mv, mt = r["measured_vram_gib"], r["measured_tok_s"]
        if mv == "OOM":
            ok = d["verdict"] != "fits"
            out.append(f"{'OOM':<10} {what:<62} predicted {d['verdict']:<8} {'ok' if ok else 'FAIL'}")
            if not ok:
                fails.append(f"OOM row planned as fits: {what}")
            continue
        bd = d["breakdown"]
        if mv:
            meas = float(mv)
            if eng == "ollama":
                pred = d["vram_bytes"] / GIB
                smi.append(abs(line("nvidia-smi", what + f" ({len(d['devices'])} GPU)", pred, meas, "GiB")))
            elif eng == "transformers":
                pred = (bd["weights_bytes"] + bd["kv_cache_bytes"] + bd["compute_bytes"]) / GIB
                info.append(abs(line("torch", what, pred, meas, "GiB")))
            elif eng == "vllm":
                dv = d["devices"][0]
                pred = (dv["weights_bytes"] + dv["compute_bytes"] + dv["overhead_bytes"]) / GIB
                info.append(abs(line("vllm", what + " excl. KV", pred, meas, "GiB")))
            elif "total VRAM used" in src or "(model" in src or "CUDA0" in src or "sum over" in src:
                pass  # llama.cpp buffers: checked above from llamacpp-buffers.tsv
            else:
                pred = (bd["weights_bytes"] + bd["kv_cache_bytes"] + bd["compute_bytes"]) / GIB
                info.append(abs(line("llama.cpp", what + " (total, no notes)", pred, meas, "GiB")))
        if mt:
            meas = float(mt)
            pred = d["decode_tok_s"] or 0.0
            if eng == "llama.cpp" and ("tg" in src or "llama-bench" in src or "tok/s" in src or "XiongjieDai" in src):
                dec.append(abs(line("decode", what, pred, meas, "tok/s")))
            else:
                info.append(abs(line("speed*", what + " (incl. prefill)", pred, meas, "tok/s")))

    print(f"{'kind':<10} {'row':<62} {'predicted':>10} {'measured':>10} {'unit':<5} {'error':>7}")
    print("\n".join(out))

    def med(x):
        return statistics.median(x) * 100 if x else float("nan")

    print(f"# llama.cpp buffers: {len(buf_errs)} figures, max |error| {max(buf_errs) * 100 if buf_errs else 0:.1f}% (limit 3% each)")
    print(f"# nvidia-smi totals: {len(smi)} rows, median |error| {med(smi):.1f}% (limit 10%)")
    print(f"# decode tok/s: {len(dec)} rows, median |error| {med(dec):.1f}% (limit 25%)")
    print(f"# informational (torch, vllm, speeds with prefill): {len(info)} rows, median |error| {med(info):.1f}%")
    if smi and med(smi) > 10:
        fails.append(f"nvidia-smi median {med(smi):.1f}% > 10%")
    if dec and med(dec) > 25:
        fails.append(f"decode median {med(dec):.1f}% > 25%")
    if not buf_errs or not smi or not dec:
        fails.append("a category has no rows")
    for f_ in fails:
        print(f"FAIL: {f_}")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
