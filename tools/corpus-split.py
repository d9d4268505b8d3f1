#!/usr/bin/env python3
"""The explain corpus (issue 31): split staged rows into fit / held-out files
by whole source thread, and check every corpus file is well formed.

  corpus-split.py split --part a STAGED.tsv...     rows -> data/explain-corpus-a.tsv
                                                   and tests/validation/explain-heldout-a.tsv
  corpus-split.py negative --part a STAGED.tsv...  rows -> tests/validation/explain-negative-a.tsv
  corpus-split.py check [FILE...]                  (default: every explain corpus file)
  corpus-split.py stats [FILE...]                  rows per family and split

Split rule (decided before any matcher tuning): a row whose
sha1(source).hexdigest()[:2] < "55" is held out, every other row is fit.
All rows of one thread share its URL, so a thread is never on both sides.

Staged corpus rows have the 7 columns of the contract (a header line and
'#' lines are skipped); staged negative rows have 2 (message, source).
Rows already present are skipped, so a staging file may be split again; a
message already on the other side of the split is skipped with a note (one
message on both sides would let the held-out part be answered from memory).  Exit status: 0 ok,
1 a check failed (one line per problem on stderr), 2 bad usage.
"""
import hashlib
import os
import re
import sys

TOP = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
HEADER = ["diagnosis", "lang", "family", "message", "source", "resolution", "fix_match"]
NEG_HEADER = ["message", "source"]
FAMILIES = set("""pytorch cuda-driver nvml container k8s wsl windows bitsandbytes flash-attn
xformers deepspeed accelerate fsdp nccl tensorrt onnxruntime llama.cpp ollama vllm sglang
comfyui rocm xpu mps triton jax tensorflow other""".split())
# ids the contract (EXPLAIN-CORPUS-FORMAT.md) adds; explain-matcher puts them in data/errors.tsv
NEW_IDS = set("""k8s-gpu-unschedulable k8s-device-plugin sglang-memory vllm-gpu-memory-utilization
mps-unsupported-op xpu-alloc-limit xpu-device-lost fsdp-config tensorrt-build xformers-build
triton-windows windows-dll-load gpu-reset-required onnxruntime-cuda-provider""".split())
LICENCE = [
    "# Licence basis: each message is a short verbatim error text (a fact, not creative prose)",
    "# quoted with the URL of its public thread; the resolution column is our own words.",
]
MAX_MESSAGE, MAX_RESOLUTION = 600, 120
# Perl/Python-only regex syntax that POSIX ERE (regcomp) does not have
NOT_ERE = re.compile(r"\\[dDwWsSbB]|\(\?|[*+?}]\?")


def held_out(source):
    return hashlib.sha1(source.encode()).hexdigest()[:2] < "55"


def paths(part):
    return (os.path.join(TOP, "data", "explain-corpus-%s.tsv" % part),
            os.path.join(TOP, "tests", "validation", "explain-heldout-%s.tsv" % part),
            os.path.join(TOP, "tests", "validation", "explain-negative-%s.tsv" % part))


def all_files():
    out = []
    for d, pre in (("data", "explain-corpus-"), (os.path.join("tests", "validation"), "explain-heldout-"),
                   (os.path.join("tests", "validation"), "explain-negative-")):
        full = os.path.join(TOP, d)
        out += sorted(os.path.join(full, f) for f in os.listdir(full)
                      if f.startswith(pre) and f.endswith(".tsv"))
    return out


def known_ids():
    ids = set(NEW_IDS)
    with open(os.path.join(TOP, "data", "errors.tsv"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            ids.add(line.split("\t", 1)[0])
    ids.discard("id")  # the header
    return ids


def read_rows(path):
    """(line number, fields) of the data rows; the header and '#' lines skipped."""
    rows = []
    with open(path, encoding="utf-8", newline="") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("#") or not line.strip():
                continue
            fields = line.split("\t")
            if fields in (HEADER, NEG_HEADER):
                continue
            rows.append((n, fields))
    return rows


def kind_of(path):
    base = os.path.basename(path)
    if base.startswith("explain-negative-"):
        return "negative"
    if base.startswith("explain-heldout-"):
        return "heldout"
    return "fit"


def check_row(fields, kind, ids):
    """the problems of one row (a list of strings)"""
    bad = []
    want = 2 if kind == "negative" else 7
    if len(fields) != want:
        return ["%d fields, want %d" % (len(fields), want)]
    for v in fields:
        if "\r" in v or "\n" in v:
            bad.append("a carriage return or newline inside a field")
        if v != v.strip():
            bad.append("a field with leading or trailing blanks")
    if kind == "negative":
        msg, src = fields
    else:
        diag, lang, fam, msg, src, res, fix = fields
        if diag not in ids:
            bad.append("diagnosis %r is neither in data/errors.tsv nor a new id of the contract" % diag)
        if lang not in ("en", "zh"):
            bad.append("lang %r is not en or zh" % lang)
        if fam not in FAMILIES:
            bad.append("family %r is not one of the contract" % fam)
        if len(res) > MAX_RESOLUTION:
            bad.append("resolution longer than %d characters" % MAX_RESOLUTION)
        if fix and not res:
            bad.append("fix_match without a resolution")
        if fix:
            if NOT_ERE.search(fix):
                bad.append("fix_match %r uses syntax POSIX ERE lacks" % fix)
            try:
                re.compile(fix, re.I)
            except re.error as e:
                bad.append("fix_match %r does not compile: %s" % (fix, e))
        want_held = kind == "heldout"
        if held_out(src) != want_held:
            bad.append("source belongs in the %s file by the sha1 rule" % ("held-out" if held_out(src) else "fit"))
    if not msg:
        bad.append("empty message")
    if len(msg) > MAX_MESSAGE:
        bad.append("message longer than %d characters" % MAX_MESSAGE)
    if not re.match(r"https?://[^\s/]+\.[^\s/]+/\S*$", src):
        bad.append("source %r is not an http(s) URL" % src)
    return bad


def check(files):
    ids = known_ids()
    problems = 0
    seen_msg = {}  # corpus message -> [(source, where, side)]
    seen_neg = {}
    for path in files:
        kind = kind_of(path)
        with open(path, encoding="utf-8", newline="") as f:
            first = [l.rstrip("\n") for l in f if not l.startswith("#")][:1]
        want = NEG_HEADER if kind == "negative" else HEADER
        if not first or first[0].split("\t") != want:
            print("%s: the first line that is not a comment must be the header %s" % (path, "\\t".join(want)),
                  file=sys.stderr)
            problems += 1
        for n, fields in read_rows(path):
            where = "%s:%d" % (os.path.relpath(path, TOP), n)
            for b in check_row(fields, kind, ids):
                print("%s: %s" % (where, b), file=sys.stderr)
                problems += 1
            if kind == "negative":
                key = fields[0]
                if key in seen_neg:
                    print("%s: duplicate negative message (also %s)" % (where, seen_neg[key]), file=sys.stderr)
                    problems += 1
                seen_neg[key] = where
            elif len(fields) == 7:
                # the same row twice, or one message on both sides of the split
                # (the held-out side would be answered from memory); one message
                # from several threads on the same side is allowed
                key = fields[3]
                for k2, w2, kind2 in seen_msg.get(key, ()):
                    if k2 == fields[4] or kind2 != kind:
                        print("%s: duplicate message (also %s%s)" % (where, w2,
                              "" if k2 == fields[4] else ", on the other side of the split"), file=sys.stderr)
                        problems += 1
                        break
                seen_msg.setdefault(key, []).append((fields[4], where, kind))
    # a negative that is also a labelled GPU message is a contradiction
    for key, where in seen_neg.items():
        if key in seen_msg:
            print("%s: negative message is also a corpus message (%s)" % (where, seen_msg[key][0][1]), file=sys.stderr)
            problems += 1
    return problems


def ensure(path, header):
    if not os.path.exists(path):
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(LICENCE) + "\n" + "\t".join(header) + "\n")


def existing_messages():
    """corpus message -> {(source, held_out)}"""
    s = {}
    for path in all_files():
        kind = kind_of(path)
        if kind != "negative":
            for _, fields in read_rows(path):
                if len(fields) == 7:
                    s.setdefault(fields[3], set()).add((fields[4], kind == "heldout"))
    return s


def split(part, staged):
    fit, held, _ = paths(part)
    ensure(fit, HEADER)
    ensure(held, HEADER)
    ids = known_ids()
    have = existing_messages()
    added = [0, 0]
    bad = 0
    with open(fit, "a", encoding="utf-8") as ffit, open(held, "a", encoding="utf-8") as fheld:
        for path in staged:
            for n, fields in read_rows(path):
                h = len(fields) == 7 and held_out(fields[4])
                if len(fields) == 7 and fields[3] in have:
                    seen = have[fields[3]]
                    if (fields[4], h) in seen:
                        continue  # already split
                    if any(side != h for _, side in seen):
                        print("%s:%d: the same message is on the other side of the split (row skipped)"
                              % (path, n), file=sys.stderr)
                        continue
                probs = check_row(fields, "heldout" if h else "fit", ids)
                if probs:
                    print("%s:%d: %s (row skipped)" % (path, n, "; ".join(probs)), file=sys.stderr)
                    bad += 1
                    continue
                (fheld if h else ffit).write("\t".join(fields) + "\n")
                have.setdefault(fields[3], set()).add((fields[4], h))
                added[1 if h else 0] += 1
    print("added %d fit rows, %d held-out rows (%d staged rows refused)" % (added[0], added[1], bad))
    return 1 if bad else 0


def negative(part, staged):
    neg = paths(part)[2]
    ensure(neg, NEG_HEADER)
    have = set()
    for path in all_files():
        if kind_of(path) == "negative":
            have.update(fields[0] for _, fields in read_rows(path))
    added = bad = 0
    with open(neg, "a", encoding="utf-8") as f:
        for path in staged:
            for n, fields in read_rows(path):
                if fields and fields[0] in have:
                    continue
                probs = check_row(fields, "negative", set())
                if probs:
                    print("%s:%d: %s (row skipped)" % (path, n, "; ".join(probs)), file=sys.stderr)
                    bad += 1
                    continue
                f.write("\t".join(fields) + "\n")
                have.add(fields[0])
                added += 1
    print("added %d negative rows (%d staged rows refused)" % (added, bad))
    return 1 if bad else 0


def stats(files):
    from collections import Counter
    c = Counter()
    threads = {}
    neg = 0
    for path in files:
        kind = kind_of(path)
        for _, fields in read_rows(path):
            if kind == "negative":
                neg += 1
            elif len(fields) == 7:
                c[(fields[2], kind)] += 1
                threads.setdefault(kind, set()).add(fields[4])
    fams = sorted({f for f, _ in c})
    print("%-14s %5s %8s %6s" % ("family", "fit", "heldout", "total"))
    for fam in fams:
        a, b = c[(fam, "fit")], c[(fam, "heldout")]
        print("%-14s %5d %8d %6d" % (fam, a, b, a + b))
    a = sum(v for (f, k), v in c.items() if k == "fit")
    b = sum(v for (f, k), v in c.items() if k == "heldout")
    print("%-14s %5d %8d %6d" % ("all", a, b, a + b))
    print("threads: %d fit, %d held-out; negatives: %d" % (len(threads.get("fit", ())),
          len(threads.get("heldout", ())), neg))


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    cmd, rest = argv[0], argv[1:]
    if cmd in ("split", "negative"):
        if len(rest) < 3 or rest[0] != "--part" or not re.match(r"^[a-z]$", rest[1]):
            print("usage: corpus-split.py %s --part LETTER STAGED.tsv..." % cmd, file=sys.stderr)
            return 2
        return (split if cmd == "split" else negative)(rest[1], rest[2:])
    if cmd in ("check", "stats"):
        files = rest or all_files()
        for p in files:
            if not os.path.exists(p):
                print("%s: no such file" % p, file=sys.stderr)
                return 2
        if cmd == "stats":
            stats(files)
            return 0
        n = check(files)
        if n:
            print("%d problems" % n, file=sys.stderr)
            return 1
        print("%d files ok" % len(files))
        return 0
    print("corpus-split.py: unknown command %r (split, negative, check, stats)" % cmd, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
