#!/usr/bin/env python3
"""Predict every row of llamabench-current.tsv (public llama-bench results of
current llama.cpp builds) with `gpuwise plan` and print predicted against
measured decode (tg) and prefill (pp) tokens/s, with the error.

The GPUs whose rows say held_out 1 were set aside before data/speed.tsv was
fitted.  The summary gives, for the fitted and the held-out GPUs apart, the
median and worst |error| per backend, then the median per GPU generation
(speed family) over all rows, and checks the targets:

- held-out GPUs: decode median |error| <= 10%, prefill median <= 20%;
- no backend and no GPU generation with a median beyond 20% (decode) or
  30% (prefill), among those with at least one fitted GPU (a generation
  whose rows are all held out runs on assumed constants; it is printed).

Rows dated before 2025 (discussion 4167's 2023 build) are printed as 'old'
and neither fitted nor counted.  Files llamabench-added-unasserted.tsv and
cpu-llama-bench-added-unasserted.tsv, where present, hold rows kept apart
from the asserted set; they are printed as the 'added' set, never asserted
(none are kept apart now: the 2026-12-01 rows are in the asserted files).  The closing table gives
all six backends (cuda, rocm, vulkan, metal, sycl, cpu) for the fitted,
held-out and added rows, with the Intel Arc rows on Vulkan beside sycl; the cpu rows are planned with plan --gpu none as validate_cpu.py does
(their own bounds are asserted by tests/e2e/plan-cpu.t).

Rows whose GPU or model the catalog lacks, and rows whose source marks a
setup the planner does not model ([not expressible: ...]), are printed as
skipped.

Usage: validate_speed.py GPUWISE [DIR] [--before] [--fit]
  --before  plan with the 2024 closed form (llama.cpp@b2824), the model
            every build used before data/speed.tsv: the "before" figures
  --fit     fitted GPUs only, with the constants' suggested corrections
            (what fitting data/speed.tsv looked at; never the held-out rows)
"""
import csv
import json
import os
import statistics
import subprocess
import sys

args = [a for a in sys.argv[1:] if not a.startswith("--")]
GW = args[0] if args else "./gpuwise"
DIR = args[1] if len(args) > 1 else os.path.dirname(os.path.abspath(__file__))
BEFORE = "--before" in sys.argv
FIT = "--fit" in sys.argv

# decode targets and prefill targets (fractions)
HELD_DEC, HELD_PP, GROUP_DEC, GROUP_PP = 0.10, 0.20, 0.20, 0.30


def plan(a):
    p = subprocess.run([GW, "plan"] + a + ["--json"], capture_output=True, text=True)
    if p.returncode not in (0, 3, 4):
        return None, p.stderr.strip().splitlines()[0] if p.stderr.strip() else f"exit {p.returncode}"
    return json.loads(p.stdout), None


ADDED_GPU = "llamabench-added-unasserted.tsv"
ADDED_CPU = "cpu-llama-bench-added-unasserted.tsv"
INTEL = []  # (set, backend, kind, err) of the Intel Arc rows, for the "SYCL or Intel" line
SIX = ("cuda", "rocm", "vulkan", "metal", "sycl", "cpu")


def cpu_rows():
    """The CPU backend's rows: cpu-llama-bench.tsv planned as validate_cpu.py
    and plan-cpu.t do (plan --gpu none with the row's threads and host
    bandwidth).  set fit -> fitted, holdout -> held-out; the prefill of 2023
    builds (before the llamafile GEMM) is left out as there.  Printed here;
    their bounds are asserted by tests/e2e/plan-cpu.t, not by this script."""
    rows = []
    for name, tag in (("cpu-llama-bench.tsv", None), (ADDED_CPU, "added")):
        path = os.path.join(DIR, name)
        if os.path.exists(path) and not (FIT and tag):
            with open(path) as f:
                for r in csv.DictReader((l for l in f if not l.startswith("#")), delimiter="\t"):
                    if tag:
                        r["set"] = tag
                    rows.append(r)
    out = []
    for r in rows:
        if r["old_build"] == "1" and r["test"] == "pp":
            continue
        if "[not expressible:" in r["note"]:
            continue
        if FIT and r["set"] != "fit":
            continue
        p = subprocess.run([GW, "plan", r["model"], "--gpu", "none", "--ram", "1024G", "--quant", r["quant"],
                            "--ctx", r["ctx"], "--threads", r["threads"], "--host-bw", r["host_bw_gbs"], "--json"],
                           capture_output=True, text=True)
        if p.returncode != 0:
            print(f"skip     cpu {r['cpu']} {r['model']} {r['quant']} ({p.stderr.strip()[:80]})")
            continue
        d = json.loads(p.stdout)
        pred = d["decode_tok_s"] if r["test"] == "tg" else d["prefill_tok_s"]
        out.append(({"fit": "fitted", "holdout": "held-out"}.get(r["set"], r["set"]), "cpu", "cpu",
                    "decode" if r["test"] == "tg" else "prefill", pred / float(r["tok_s"]) - 1))
    return out


def print_six(res, cpu, med):
    """Fitted and held-out decode and prefill median/worst |error| for each of
    the six backends the issue names, a backend without rows said so."""
    def cell(rows):
        x = [abs(t[-1]) for t in rows]
        return f"{med(x) * 100:.1f}%/{max(x) * 100:.0f}% (n={len(x)})" if x else "no rows"
    allr = res + cpu
    print("# per backend, median/worst |error| of the fitted, held-out and added-after-the-fit rows (GPU: "
          "llamabench-current.tsv, asserted above, and " + ADDED_GPU + ", not asserted; cpu: cpu-llama-bench.tsv "
          "via plan --gpu none, asserted by plan-cpu.t, and " + ADDED_CPU + ", not asserted):")
    for be in SIX:
        parts = []
        for s in ("fitted", "held-out", "added"):
            for kind in ("decode", "prefill"):
                parts.append(f"{s} {kind} {cell([t for t in allr if t[0] == s and t[1] == be and t[3] == kind])}")
        extra = ""
        if be == "sycl":
            intel = ", ".join(f"{s} {kind} {cell([t for t in INTEL if t[0] == s and t[2] == kind])}"
                              for s in ("fitted", "held-out", "added") for kind in ("decode", "prefill"))
            extra = f"; Intel Arc on Vulkan instead: {intel}"
        print(f"# backend {be:<6} {'; '.join(parts)}{extra}")


def main():
    with open(os.path.join(DIR, "llamabench-current.tsv")) as f:
        rows = list(csv.DictReader((l for l in f if not l.startswith("#")), delimiter="\t"))
    added = os.path.join(DIR, ADDED_GPU)
    if os.path.exists(added) and not FIT:
        with open(added) as f:
            for r in csv.DictReader((l for l in f if not l.startswith("#")), delimiter="\t"):
                r["held_out"] = "added"
                rows.append(r)
    out, res = [], []  # res: (set, backend, family, kind, err)
    gpus, gpus_added = set(), set()
    for r in rows:
        held = r["held_out"] == "1"
        sset = "added" if r["held_out"] == "added" else "held-out" if held else "fitted"
        if FIT and held:
            continue
        what = f"{r['gpu']} {r['backend']} {r['model']} {r['quant']} fa{r['fa']}"
        if r["date"][:4] < "2025":
            # an old build (discussion 4167's 2023 table): today's constants do not describe it
            out.append(f"old      {what:<58} (build {r['build']} of {r['date']}: printed by --before only, not counted)")
            if not BEFORE:
                continue
        if "[not expressible" in r["source"]:
            out.append(f"skip     {what:<58} ({r['source'].split('[not expressible: ')[1].split(';')[0]})")
            continue
        base = [r["model"], "--quant", r["quant"], "--gpu", r["gpu"], "--gpu-layers", "999",
                "--flash-attn", "on" if r["fa"] == "1" else "off"]
        if BEFORE:
            base += ["--engine", "llama.cpp@b2824"]
        else:
            base += ["--backend", r["backend"]]
        if r["ram_bw_gbs"]:
            base += ["--ram-bw", r["ram_bw_gbs"]]
        for kind, tok, meas in (("decode", r["tg_tokens"], r["tg_tok_s"]), ("prefill", r["pp_tokens"], r["pp_tok_s"])):
            if not meas:
                continue
            d, why = plan(base + ["--ctx", tok])
            if d is None:
                out.append(f"skip     {what:<58} ({why})")
                break
            fam = (d.get("speed_model") or {}).get("family") or "?"
            pred = d["decode_tok_s" if kind == "decode" else "prefill_tok_s"] or 0.0
            m = float(meas)
            e = pred / m - 1
            (gpus if sset != "added" else gpus_added).add(r["gpu"])
            res.append((sset, r["backend"], fam, kind, e))
            if r["gpu"].startswith("arc-") and r["backend"] == "vulkan":
                INTEL.append((sset, r["backend"], kind, e))
            out.append(f"{kind:<8} {what:<58} {fam:<13} {pred:>9.1f} {m:>9.1f} {e * 100:+7.1f}%"
                       f"{'  ' + sset if sset != 'fitted' else ''}")
    print(f"{'kind':<8} {'row':<58} {'family':<13} {'predicted':>9} {'measured':>9} {'error':>8}")
    print("\n".join(out))

    def med(x):
        return statistics.median(x) if x else float("nan")

    fails = []
    print(f"# model: {'2024 closed form (llama.cpp@b2824)' if BEFORE else 'data/speed.tsv (latest build)'}; "
          f"{sum(r['held_out'] != 'added' for r in rows)} rows, {len(gpus)} GPUs planned (asserted set), "
          f"plus {sum(r['held_out'] == 'added' for r in rows)} rows added after the fit ({ADDED_GPU}, not asserted), "
          f"{len(gpus_added)} GPUs planned there ({len(gpus_added - gpus)} not in the asserted set)")
    asserted = [t for t in res if t[0] != "added"]
    unasserted = [t for t in res if t[0] == "added"]
    res = asserted
    for s in ("fitted", "held-out"):
        for kind in ("decode", "prefill"):
            allx = [abs(e) for (ss, b, f, k, e) in res if ss == s and k == kind]
            if not allx:
                continue
            parts = []
            for be in sorted({b for (ss, b, f, k, e) in res if ss == s and k == kind}):
                x = [abs(e) for (ss, b, f, k, e) in res if ss == s and k == kind and b == be]
                parts.append(f"{be} {med(x) * 100:.1f}%/{max(x) * 100:.0f}% (n={len(x)})")
            print(f"# {s} {kind}: {len(allx)} rows, median |error| {med(allx) * 100:.1f}%, worst "
                  f"{max(allx) * 100:.0f}%; per backend median/worst: {', '.join(parts)}")
            if s == "held-out" and not FIT:
                lim = HELD_DEC if kind == "decode" else HELD_PP
                if med(allx) > lim:
                    fails.append(f"held-out {kind} median {med(allx) * 100:.1f}% > {lim * 100:.0f}%")
    for kind in ("decode", "prefill"):
        lim = GROUP_DEC if kind == "decode" else GROUP_PP
        for col, label in ((1, "backend"), (2, "generation")):
            groups = {}
            for t in res:
                if t[3] == kind:
                    groups.setdefault(t[col], []).append(abs(t[4]))
            line = ", ".join(f"{g} {med(x) * 100:.1f}%" for g, x in sorted(groups.items()))
            print(f"# {kind} median per {label} (all rows): {line}")
            fitted = {t[col] for t in res if t[0] == "fitted"}
            unfit = sorted(g for g in groups if g not in fitted)
            if unfit:
                print(f"# {kind} {label}s with no fitted GPU (constants are assumptions, not checked "
                      f"against the targets): {', '.join(unfit)}")
            for g, x in groups.items():
                if med(x) > lim and not BEFORE and g in fitted:
                    fails.append(f"{kind} median of {label} {g} {med(x) * 100:.1f}% > {lim * 100:.0f}%")
    for kind in ("decode", "prefill"):
        x = [abs(t[4]) for t in unasserted if t[3] == kind]
        if x:
            print(f"# added after the fit (held-out, not asserted) {kind}: {len(x)} rows, median |error| "
                  f"{med(x) * 100:.1f}%, worst {max(x) * 100:.0f}%")
    cpu = cpu_rows()
    cur_gpus = {r["gpu"] for r in rows if r["held_out"] != "added" and r["date"][:4] >= "2025"
                and "[not expressible" not in r["source"]} & gpus
    cur_rows = sum(1 for r in rows if r["held_out"] != "added" and r["date"][:4] >= "2025"
                   and "[not expressible" not in r["source"] and r["gpu"] in gpus)
    with open(os.path.join(DIR, "cpu-llama-bench.tsv")) as f:
        cpu_cur = sum(1 for r in csv.DictReader((l for l in f if not l.startswith("#")), delimiter="\t")
                      if r["date"][:4] >= "2025" and "[not expressible:" not in r["note"])
    print(f"# current-build rows: {cur_rows + cpu_cur} (GPU {cur_rows} over {len(cur_gpus)} GPUs, CPU {cpu_cur})")
    print_six(res + unasserted, cpu, med)
    if FIT:
        # suggested corrections: measured / predicted per (backend, family), median
        corr = {}
        for (ss, b, f, k, e) in res:
            corr.setdefault((b, f, k), []).append(1 / (1 + e))
        for (b, f, k), x in sorted(corr.items()):
            print(f"# fit {b} {f} {k}: measured/predicted median {med(x):.3f} (n={len(x)})")
        return 0
    if not BEFORE and not res:
        fails.append("no row was planned")
    for f_ in fails:
        print(f"FAIL: {f_}")
    return 1 if fails and not BEFORE else 0


if __name__ == "__main__":
    sys.exit(main())
