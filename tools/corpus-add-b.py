#!/usr/bin/env python3
"""Build the explain corpus (issue 31, helper b) from stage/*.txt records.

Record format (one per block, blocks separated by blank lines):
  @ diagnosis | family | lang | source-url
  M: message line (repeatable; lines are joined with the two characters \\n)
  R: resolution in our own words
  F: fix_match POSIX ERE (may be empty)
Negative records:
  N: source-url
  M: message line
Split rule (docs: /work/wt/EXPLAIN-CORPUS-FORMAT.md): sha1(source)[:2] < "55" -> held-out.
"""
import glob, hashlib, re, sys, os

HDR = "diagnosis\tlang\tfamily\tmessage\tsource\tresolution\tfix_match"
LIC = ("# Licence basis: each message is a short verbatim error text (a fact, not creative prose) quoted\n"
       "# from the public thread at its source URL; the resolution column is our own words (gpuwise, issue 31).\n")
FAMILIES = set("pytorch cuda-driver nvml container k8s wsl windows bitsandbytes flash-attn xformers deepspeed "
               "accelerate fsdp nccl tensorrt onnxruntime llama.cpp ollama vllm sglang comfyui rocm xpu mps "
               "triton jax tensorflow other".split())
NEWIDS = set("k8s-gpu-unschedulable k8s-device-plugin sglang-memory vllm-gpu-memory-utilization mps-unsupported-op "
             "xpu-alloc-limit xpu-device-lost fsdp-config tensorrt-build xformers-build triton-windows "
             "windows-dll-load gpu-reset-required onnxruntime-cuda-provider".split())

def ids():
    s = set()
    for l in open("data/errors.tsv", encoding="utf-8"):
        if l.startswith("#") or not l.strip(): continue
        s.add(l.split("\t")[0])
    return s | NEWIDS

def esc(s):
    return s.replace("\t", "\\t")

def main():
    valid = ids()
    rows, negs, errs = [], [], []
    seen, nseen = set(), set()
    for fn in sorted(glob.glob("stage/*.txt")):
        text = open(fn, encoding="utf-8").read()
        for bi, block in enumerate(re.split(r"\n\s*\n", text)):
            lines = [l for l in block.split("\n") if l.strip() and not l.startswith("#")]
            if not lines: continue
            where = f"{fn} block {bi}: {lines[0][:60]}"
            if lines[0].startswith("N:"):
                src = lines[0][2:].strip()
                for l in lines[1:]:
                    if not l.startswith("M:"): errs.append(where + ": bad line " + l[:40]); continue
                    m = esc(l[2:].strip())
                    if (m, src) in nseen: continue
                    nseen.add((m, src)); negs.append((m, src))
                continue
            if not lines[0].startswith("@"):
                errs.append(where + ": no @ header"); continue
            h = [x.strip() for x in lines[0][1:].split("|")]
            if len(h) != 4: errs.append(where + ": header needs 4 fields"); continue
            diag, fam, lang, src = h
            msgs, res, fm = [], "", ""
            for l in lines[1:]:
                if l.startswith("M:"): msgs.append(l[2:].strip())
                elif l.startswith("R:"): res = l[2:].strip()
                elif l.startswith("F:"): fm = l[2:].strip()
                else: errs.append(where + ": bad line " + l[:40])
            # several M: lines make ONE message joined with \n; use M2:-less blocks for separate rows
            msg = esc("\\n".join(msgs))
            if diag not in valid: errs.append(where + f": unknown id {diag}")
            if fam not in FAMILIES: errs.append(where + f": unknown family {fam}")
            if lang not in ("en", "zh"): errs.append(where + ": lang")
            if not re.match(r"https?://", src): errs.append(where + ": source")
            if not msg or len(msg) > 600: errs.append(where + f": message length {len(msg)}")
            if len(res) > 120: errs.append(where + f": resolution length {len(res)}")
            if fm:
                try: re.compile(fm, re.I)
                except re.error as e: errs.append(where + f": fix_match {e}")
            if (msg, src) in seen: errs.append(where + ": duplicate"); continue
            seen.add((msg, src))
            rows.append((diag, lang, fam, msg, src, res, fm))
    if errs:
        print("\n".join(errs), file=sys.stderr); sys.exit(1)
    side = lambda r: hashlib.sha1(r[4].encode()).hexdigest()[:2] < "55"
    first, kept = {}, []
    for r in rows:  # one message on both sides would leak the held-out part; keep the first
        if r[3] in first and first[r[3]] != side(r):
            print(f"note: skipped {r[4]}: its message is on the other side of the split", file=sys.stderr)
            continue
        first.setdefault(r[3], side(r)); kept.append(r)
    rows = kept
    fit = [r for r in rows if not side(r)]
    ho = [r for r in rows if side(r)]
    other = set()
    for fn in glob.glob("tests/validation/explain-negative-*.tsv") + glob.glob("data/explain-corpus-*.tsv") + glob.glob("tests/validation/explain-heldout-*.tsv"):
        if fn.endswith("-b.tsv"): continue
        for l in open(fn, encoding="utf-8"):
            if not l.startswith("#"): other.add(l.split("\t")[0] if "negative" in fn else (l.split("\t") + ["", "", "", ""])[3])
    n0 = len(negs)
    negs = [n for n in negs if n[0] not in other]
    if n0 != len(negs): print(f"note: {n0 - len(negs)} negatives already in another part skipped", file=sys.stderr)
    for path, rs in (("data/explain-corpus-b.tsv", fit), ("tests/validation/explain-heldout-b.tsv", ho)):
        with open(path, "w", encoding="utf-8") as f:
            f.write(LIC + HDR + "\n")
            for r in rs: f.write("\t".join(r) + "\n")
    with open("tests/validation/explain-negative-b.tsv", "w", encoding="utf-8") as f:
        f.write(LIC.replace("the resolution column is our own words", "non-GPU error lines for the false-positive rate")
                + "message\tsource\n")
        for m, s in negs: f.write(f"{m}\t{s}\n")
    from collections import Counter
    c = Counter((r[2], "heldout" if r in ho else "fit") for r in rows)
    fams = sorted({r[2] for r in rows})
    for fam in fams: print(f"{fam:12} fit {c[(fam,'fit')]:4} heldout {c[(fam,'heldout')]:4}")
    print(f"total {len(rows)} (fit {len(fit)}, heldout {len(ho)}), zh {sum(r[1]=='zh' for r in rows)}, "
          f"threads {len({r[4] for r in rows})}, negatives {len(negs)}")

main()
