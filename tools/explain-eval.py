#!/usr/bin/env python3
"""explain-eval: run `gpuwise explain --batch - --no-probe` (one process for
each set) over the labelled explain corpus (issue 31) and print what it gets
right.

  explain-eval.py GPUWISE TOP [--lang-env zh_CN.UTF-8] [--fails N]

Reads TOP/data/explain-corpus-*.tsv (fit: the matcher's own data),
TOP/tests/validation/explain-heldout-*.tsv (held out: the binary never
reads them) and TOP/tests/validation/explain-negative-*.tsv (non-GPU
errors).  For fit and held-out apart, overall and per family:
  top-1   the first match's id is the row's diagnosis
  fix     the first match's fixes have a line matching the row's fix_match
          (case-insensitive; rows with an empty fix_match are not counted)
For the negatives: the share that gets any diagnosis.  And over every fix
list all of it produced: lines that start with a dangling connective
("or ...", "and ...") and lines repeated within one list.

Last lines, for tests/e2e/explain-corpus.t to read:
  RATE fit top1=P fix=P n=N nfix=N
  RATE fit-loo top1=P fix=P n=N nfix=N   (--loo: each fit row with its own thread left out)
  RATE heldout top1=P fix=P n=N nfix=N
  RATE negative fp=P n=N
  LINT dangling=N repeated=N lists=N
"""
import glob, json, os, re, subprocess, sys
from collections import defaultdict

# --fit-every N: only every Nth fit row (the test's time budget); held-out and negatives are always whole
FIT_EVERY = int(sys.argv[sys.argv.index("--fit-every") + 1]) if "--fit-every" in sys.argv else 1


def rows(path):
    header = None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("#") or not line.strip():
            continue
        cells = line.split("\t")
        if header is None:
            header = cells
            continue
        yield dict(zip(header, cells))


def unescape(s):
    return s.replace("\\n", "\n").replace("\\t", "\t")


def explain_all(gw, msgs, env, excludes=None):
    """The matches of each message (None where the batch gave none), in order."""
    recs = []
    for i, msg in enumerate(msgs):
        r = {"message": msg}
        if excludes:
            r["exclude_source"] = excludes[i]
        recs.append(json.dumps(r))
    p = subprocess.run([gw, "explain", "--batch", "-", "--json", "--no-probe"], input="\n".join(recs).encode(),
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, timeout=300)
    out = [None] * len(msgs)
    for line in p.stdout.decode().splitlines():
        try:
            o = json.loads(line)
            out[o["line"] - 1] = o.get("matches")
        except (ValueError, KeyError, IndexError):
            pass
    return out


lint = {"dangling": 0, "repeated": 0, "lists": 0}
lint_examples = []


def check_fixes(fixes, where):
    lint["lists"] += 1
    seen = set()
    for f in fixes:
        if re.match(r"(or|and|but)\b", f.strip(), re.I) or (not seen and re.match(r"then\b", f.strip(), re.I)):
            lint["dangling"] += 1
            lint_examples.append(f"{where}: dangling: {f[:80]}")
        if f in seen:
            lint["repeated"] += 1
            lint_examples.append(f"{where}: repeated: {f[:80]}")
        seen.add(f)


def evaluate(gw, files, label, env, fails, loo=False):
    fam = defaultdict(lambda: [0, 0, 0, 0])  # n, top1, nfix, fix
    misses = []
    todo = [r for path in files for r in rows(path)]
    if label.startswith("fit") and FIT_EVERY > 1:
        todo = todo[::FIT_EVERY]
    answers = explain_all(gw, [unescape(r["message"]) for r in todo], env, [r["source"] for r in todo] if loo else None)
    for r, m in zip(todo, answers):
        if True:
            got = m[0]["id"] if m else "-"
            f = fam[r.get("family", "other")]
            f[0] += 1
            ok = got == r["diagnosis"]
            f[1] += ok
            fixok = None
            if m:
                for x in m:
                    check_fixes(x["fixes"], r["source"])
            fm = r.get("fix_match", "")
            if fm:
                f[2] += 1
                try:
                    rx = re.compile(fm, re.I)
                except re.error:
                    rx = re.compile(re.escape(fm), re.I)
                fixok = bool(m) and any(rx.search(x) for x in m[0]["fixes"])
                f[3] += fixok
            if not ok or fixok is False:
                misses.append(f"{label} {'TOP1' if not ok else 'FIX '} want={r['diagnosis']} got={got} "
                              f"[{r.get('family')}] {r['message'][:90]!r} {r['source']}")
    tot = [sum(v[i] for v in fam.values()) for i in range(4)]
    pct = lambda a, b: 100.0 * a / b if b else 0.0
    print(f"== {label}: {tot[0]} messages")
    for k in sorted(fam):
        v = fam[k]
        print(f"  {k:14s} n={v[0]:4d} top1={pct(v[1], v[0]):5.1f}%  fix={pct(v[3], v[2]):5.1f}% (of {v[2]})")
    for line in misses[:fails]:
        print("  " + line)
    return tot, pct(tot[1], tot[0]), pct(tot[3], tot[2])


def main():
    gw, top = sys.argv[1], sys.argv[2]
    fails = int(sys.argv[sys.argv.index("--fails") + 1]) if "--fails" in sys.argv else 0
    env = dict(os.environ, NO_COLOR="1", LANG="C", LC_ALL="C")
    env.pop("LANGUAGE", None)
    fit = sorted(glob.glob(os.path.join(top, "data/explain-corpus-*.tsv")))
    held = sorted(glob.glob(os.path.join(top, "tests/validation/explain-heldout-*.tsv")))
    neg = sorted(glob.glob(os.path.join(top, "tests/validation/explain-negative-*.tsv")))
    out = []
    for files, label, loo in ((fit, "fit", False), (fit, "fit-loo", True), (held, "heldout", False)):
        if loo and "--loo" not in sys.argv:
            continue
        tot, t1, fx = evaluate(gw, files, label, env, fails, loo)
        out.append(f"RATE {label} top1={t1:.1f} fix={fx:.1f} n={tot[0]} nfix={tot[2]}")
    n = hits = 0
    fps = []
    todo = [r for path in neg for r in rows(path)]
    for r, m in zip(todo, explain_all(gw, [unescape(r["message"]) for r in todo], env)):
        if True:
            n += 1
            if m:
                hits += 1
                fps.append(f"  FP {m[0]['id']} via={m[0].get('via')} {r['message'][:100]!r}")
    print(f"== negative: {n} messages, {hits} got a diagnosis")
    for line in fps[:fails]:
        print(line)
    for line in lint_examples[:fails]:
        print("  LINT " + line)
    print("\n".join(out))
    print(f"RATE negative fp={100.0 * hits / n if n else 0:.1f} n={n}")
    print(f"LINT dangling={lint['dangling']} repeated={lint['repeated']} lists={lint['lists']}")


main()
