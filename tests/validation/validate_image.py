#!/usr/bin/env python3
"""Predict every row of image-speed.tsv (public image-generation speed
measurements) with `gpuwise plan MODEL --image WxH --gpu G --json` and print
predicted against measured seconds per sampler step, with the error.

Rows whose GPU is held out (held_out 1) were set aside before the constants of
data/image-backends.tsv were fitted (tests/validation/fit_image.py fits on the
others).  Rows with a setup note ([not modelled: ...]) are printed as skipped.
The summary gives, per vendor, the median and worst |error| of the fitted and
of the held-out rows, and the order of the four cards of issue 23 (RTX 4060 Ti
16GB, RTX 3060 12GB, RX 9070 XT, Arc B580) predicted against measured, both at
each card's measured SDXL configuration, per image and sampler step.

Targets (exit 1 when missed): at least 40 modelled rows over NVIDIA, AMD,
Intel and Apple, each vendor with a fitted and a held-out GPU; median |error|
<= 20% per vendor on the fitted rows and on all modelled rows; median |error|
<= 25% per vendor on the held-out rows.  A vendor listed in
HELD_OUT_KNOWN_MISSES may miss the held-out aim and, through its held-out rows,
the all-rows median (both printed with the reason; its fitted median must still
meet 20%); a listed vendor that meets both, or an unlisted one that misses
either, fails.  A vendor listed in KNOWN_NO_HELD_OUT may have no held-out GPU
(said, with the reason); once it has one it must leave the list.  Rows marked
not modelled are predicted too where the planner can, and their errors printed
as reference, never counted.  The four-card order must agree.

Usage: validate_image.py GPUWISE [TSV]
"""
import csv
import json
import os
import statistics
import subprocess
import sys

GW = sys.argv[1] if len(sys.argv) > 1 else "./gpuwise"
TSV = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "image-speed.tsv")
MEDIAN_TARGET = 0.20
HELD_OUT_TARGET = 0.25
MIN_MODELLED = 40
# Held-out misses understood but not fixed by the model, with the reason (none at present).
HELD_OUT_KNOWN_MISSES = {}
# Vendors with no held-out GPU on the modelled stack, with the reason: their fitted rows are all
# the validation there is, and the summary names them.
KNOWN_NO_HELD_OUT = {
    "Intel": "the B580 is the only Intel GPU with a row on PyTorch XPU without IPEX; every Arc A-series row "
             "ran IPEX (retired after 2.8), recorded as not modelled and printed for reference above",
}
FOUR = ["rtx-4060-ti-16g", "rtx-3060", "rx-9070-xt", "arc-b580"]
VENDOR = {"cuda": "NVIDIA", "rocm": "AMD", "xpu": "Intel", "mps": "Apple", "vulkan": "(vulkan)"}


def measured_step(r):
    v, s, b = float(r["value"]), float(r["steps"]), float(r["batch"])
    return {"it_s": lambda: 1 / v, "s_per_it": lambda: v, "image_it_s": lambda: b / v,
            "s_sampling": lambda: v / s, "s_image": lambda: v / s}[r["metric"]]()


def predict(r):
    a = ["plan", r["model"], "--image", f'{r["width"]}x{r["height"]}', "--gpu", r["gpu"], "--steps", r["steps"],
         "--batch", r["batch"], "--quant", r["quant"], "--json"]
    p = subprocess.run([GW] + a, capture_output=True, text=True)
    if p.returncode not in (0, 4):
        return None, (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[0]
    j = json.loads(p.stdout)
    if j.get("s_per_step") is None:
        return None, "no speed"
    return j["s_per_step"] * float(r["evals"]), j


with open(TSV) as f:
    rows = list(csv.DictReader((l for l in f if not l.startswith("#")), delimiter="\t"))

errs = {}  # (vendor, "fitted"|"held-out") -> [abs err]
refs = []  # (gpu, error) of not-modelled rows the planner can predict
per_image = {}
ok = True
print(f"# {len(rows)} rows in {os.path.basename(TSV)}")
print(f"# {'set':8} {'gpu':16} {'model':14} {'backend':7} {'WxH':>9} {'b':>2} {'pred s/step':>11} {'meas':>9} {'error':>7}")
for r in rows:
    wh = f'{r["width"]}x{r["height"]}'
    if r["setup"]:
        print(f"# skipped  {r['gpu']:16} {r['model']:14} {r['backend']:7} {wh:>9} {r['batch']:>2}  {r['setup']}")
        if r["backend"] in VENDOR and VENDOR[r["backend"]] != "(vulkan)":
            pred, j = predict(r)
            if pred is not None:
                meas = measured_step(r)
                print(f"#   reference (not counted): pred {pred:.3f} s/step{'~' if j.get('speed_estimated') else ''}, "
                      f"meas {meas:.3f}, error {100 * (pred / meas - 1):+.1f}%")
                refs.append((r["gpu"], pred / meas - 1))
        continue
    pred, j = predict(r)
    if pred is None:
        print(f"# FAILED   {r['gpu']:16} {r['model']:14}: {j}")
        ok = False
        continue
    meas = measured_step(r)
    e = pred / meas - 1
    kind = "held-out" if r["held_out"] == "1" else "fitted"
    errs.setdefault((VENDOR[r["backend"]], kind), []).append(abs(e))
    if r["gpu"] in FOUR and r["model"] == "sdxl" and int(r["width"]) * int(r["height"]) >= 900000:
        b = float(r["batch"])
        per_image[r["gpu"]] = (pred / b, meas / b)
    print(f"# {kind:8} {r['gpu']:16} {r['model']:14} {r['backend']:7} {wh:>9} {r['batch']:>2} {pred:11.3f} {meas:9.3f} {100 * e:+6.1f}%")

print("#")
vendors = sorted({v for v, _ in errs})
modelled_vendors = set()
excused = []
for v in vendors:
    allv = errs.get((v, "fitted"), []) + errs.get((v, "held-out"), [])
    modelled_vendors.add(v)
    line = f"# {v:7}"
    for kind in ("fitted", "held-out"):
        e = errs.get((v, kind), [])
        line += (f"  {kind}: {len(e)} rows, median {100 * statistics.median(e):.1f}%, worst {100 * max(e):.1f}%"
                 if e else f"  {kind}: none")
    med = statistics.median(allv)
    line += f"  all: median {100 * med:.1f}%"
    fm = statistics.median(errs[(v, "fitted")]) if errs.get((v, "fitted")) else 0
    known = v in HELD_OUT_KNOWN_MISSES
    if fm > MEDIAN_TARGET:
        line += "  fitted MISSES the 20% target"
        ok = False
    if med > MEDIAN_TARGET:
        line += "  all-rows median MISSES the 20% target" + (" (through the known held-out miss)" if known else "")
        ok = ok and known
        if known:
            excused.append(v)
    hm = statistics.median(errs[(v, "held-out")]) if errs.get((v, "held-out")) else None
    if hm is None and errs.get((v, "fitted")) and v in KNOWN_NO_HELD_OUT:
        line += f"  NO held-out GPU (known: {KNOWN_NO_HELD_OUT[v]})"
        excused.append(v)
    elif hm is None or not errs.get((v, "fitted")):
        line += "  NO fitted or NO held-out GPU"
        ok = False
    elif v in KNOWN_NO_HELD_OUT:
        line += "  now has a held-out GPU: drop it from KNOWN_NO_HELD_OUT"
        ok = False
    elif hm > HELD_OUT_TARGET and known:
        line += f"  held-out MISSES the 25% aim (known: {HELD_OUT_KNOWN_MISSES[v]})"
        excused.append(v)
    elif hm > HELD_OUT_TARGET:
        line += "  held-out MISSES the 25% aim"
        ok = False
    elif known:
        line += "  held-out now meets the 25% aim: drop it from HELD_OUT_KNOWN_MISSES"
        ok = False
    print(line)

n_modelled = sum(len(e) for e in errs.values())
if n_modelled < MIN_MODELLED or not {"NVIDIA", "AMD", "Intel", "Apple"} <= modelled_vendors:
    print(f"# target missed: {n_modelled} modelled rows (at least {MIN_MODELLED}), modelled vendors {sorted(modelled_vendors)}")
    ok = False
else:
    print(f"# {n_modelled} modelled rows of {len(rows)}, held out before the fit: "
          + ", ".join(sorted({r['gpu'] for r in rows if r['held_out'] == '1' and not r['setup']})))

print("#")
if set(per_image) == set(FOUR):
    po = sorted(FOUR, key=lambda g: per_image[g][0])
    mo = sorted(FOUR, key=lambda g: per_image[g][1])
    print("# SDXL ~1 MP per image and step, fastest first (each card at its measured configuration):")
    print("#   predicted: " + " > ".join(f"{g} ({per_image[g][0]:.3f} s)" for g in po))
    print("#   measured:  " + " > ".join(f"{g} ({per_image[g][1]:.3f} s)" for g in mo))
    print(f"#   order {'agrees' if po == mo else 'DIFFERS'}")
    ok = ok and po == mo
else:
    print(f"# four-card order: missing rows for {sorted(set(FOUR) - set(per_image))}")
    ok = False
if refs:
    print(f"# not-modelled rows the planner predicts (reference, not counted): {len(refs)}, "
          f"median |error| {100 * statistics.median(abs(e) for _, e in refs):.1f}%: "
          + ", ".join(f"{g} {100 * e:+.0f}%" for g, e in refs))
ex = sorted(set(excused))
print(f"# targets {'met' if ok else 'MISSED'}" + (f" except the known gaps of {', '.join(ex)} (named above)" if ok and ex else ""))
sys.exit(0 if ok else 1)
