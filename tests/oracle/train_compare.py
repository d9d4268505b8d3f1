#!/usr/bin/env python3
"""plan --train against the MemTracker table (tests/validation/train-oracle.tsv).

  train_compare.py GPUWISE TABLE CONFIGDIR

For every row: runs `gpuwise plan CONFIGDIR/ARCH.json --train ... --json`
with the row's options and compares the plan's PyTorch-allocator peak
(`peak.allocated_bytes`: the CUDA context and allocator slack are GPU-only
and not in the tracker) with the tracker's peak, and the peak's parts in
the tracker's categories: parameters (Parameter + Buffer), gradients,
optimizer states (Optstate, the step's temporaries included), activations
(Activation + Temp).  Bounds: every total within 10%, every part of at
least 2% of the peak within 15%, trainable parameters exact.  Prints the
fitted and the held-out rows apart; exit 1 when a bound is broken.
"""
import json
import statistics
import subprocess
import sys

TOTAL_BOUND, PART_BOUND, PART_MIN = 0.10, 0.15, 0.02


def read_table(path):
    rows, hdr = [], None
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            v = line.rstrip("\n").split("\t")
            if hdr is None:
                hdr = v
                continue
            rows.append(dict(zip(hdr, v)))
    return rows


def args_of(r, cfgdir):
    a = ["plan", "%s/%s.json" % (cfgdir, r["arch"]), "--train", r["method"], "--framework", "transformers",
         "--precision", r["precision"], "--optimizer", r["optimizer"], "--checkpointing", r["ckpt"],
         "--flash-attn", "on" if r["attn"] == "sdpa" else "off", "--seq", r["seq"], "--micro-batch", r["mb"],
         "--grad-accum", r["accum"], "--json"]
    if r["loss"] == "chunked":
        a.append("--chunked-ce")
    if r["in_bwd"] == "1":
        a.append("--optimizer-in-bwd")
    if r["method"] != "full":
        a += ["--lora-targets", r["targets"], "--lora-rank", r["rank"]]
    return a


def main():
    gw, table, cfgdir = sys.argv[1:4]
    rows = read_table(table)
    res = {"fit": [], "holdout": []}
    bad = []
    print("# %-11s %-7s %-44s %10s %10s %7s  %-14s %-14s  parts (plan/tracker - 1, %% of peak)" %
          ("id", "split", "options", "tracker", "plan", "error", "phase(tracker)", "phase(plan)"))
    for r in rows:
        p = subprocess.run([gw] + args_of(r, cfgdir), capture_output=True, text=True)
        if p.returncode != 0:
            bad.append("%s: gpuwise exit %d: %s" % (r["id"], p.returncode, p.stderr.strip()))
            continue
        d = json.loads(p.stdout)
        pk = d["peak"]
        meas = int(r["peak_bytes"])
        err = pk["allocated_bytes"] / meas - 1
        parts = {"params": (pk["parameters_bytes"], int(r["param"])),
                 "grads": (pk["gradients_bytes"], int(r["grad"])),
                 "optimizer": (pk["optimizer_bytes"], int(r["opt"])),
                 "activations": (pk["activations_bytes"], int(r["act"]) + int(r["temp"]))}
        ptxt = []
        worst_part = 0.0
        for k, (pl, me) in parts.items():
            if me >= PART_MIN * meas:
                e = pl / me - 1
                worst_part = max(worst_part, abs(e))
                ptxt.append("%s %+.1f%% (%.0f%%)" % (k, e * 100, me * 100 / meas))
                if abs(e) > PART_BOUND:
                    bad.append("%s: %s %+.1f%% (plan %d, tracker %d)" % (r["id"], k, e * 100, pl, me))
            elif pl >= PART_MIN * meas:
                ptxt.append("%s plan-only %.1f%%" % (k, pl * 100 / meas))
                bad.append("%s: %s planned %d bytes, tracker %d" % (r["id"], k, pl, me))
        if d["trainable_params"] != int(r["trainable"]):
            bad.append("%s: trainable %d, tracker %s" % (r["id"], d["trainable_params"], r["trainable"]))
        if abs(err) > TOTAL_BOUND:
            bad.append("%s: total %+.1f%%" % (r["id"], err * 100))
        opts = "%s %s %s %s %s %s %s%s s%s b%s x%s%s" % (
            r["method"], r["precision"], r["optimizer"], r["ckpt"], r["attn"], r["loss"],
            r["targets"] + "/r" + r["rank"] + " " if r["method"] != "full" else "", "", r["seq"], r["mb"],
            r["accum"], " in-bwd" if r["in_bwd"] == "1" else "")
        print("  %-11s %-7s %-44s %10.2f %10.2f %+6.1f%%  %-14s %-14s  %s" %
              (r["id"], r["split"], opts[:44], meas / 2**20, pk["allocated_bytes"] / 2**20, err * 100,
               r["peak_phase"], pk["phase"], "; ".join(ptxt)))
        res[r["split"]].append((abs(err), worst_part, r["peak_phase"] == pk["phase"] or
                                (r["peak_phase"] == "optimizer" and pk["phase"] == "optimizer-step")))
    for split in ("fit", "holdout"):
        v = res[split]
        if not v:
            continue
        print("# %s: %d rows, total |error| median %.1f%%, worst %.1f%%; worst part %.1f%%; peak phase agrees "
              "in %d" % (split, len(v), statistics.median(x[0] for x in v) * 100, max(x[0] for x in v) * 100,
                         max(x[1] for x in v) * 100, sum(1 for x in v if x[2])))
    for b in bad:
        print("not ok: " + b)
    print("# %d rows, %d out of bounds" % (sum(len(v) for v in res.values()), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
