#!/usr/bin/env python3
# usage: stage-fix.py FILE < lines "URL<TAB>resolution<TAB>fix_match": rewrite R:/F: of that URL's blocks
import sys, re
fn = sys.argv[1]
fix = {}
for l in sys.stdin:
    if l.strip():
        u, r, f = (l.rstrip("\n").split("\t") + ["", ""])[:3]
        fix[u] = (r, f)
blocks = re.split(r"(\n\s*\n)", open(fn, encoding="utf-8").read())
out = []
for b in blocks:
    m = re.match(r"@ [^\n]*\|\s*(\S+)\s*$", b.split("\n")[0]) if b.startswith("@") else None
    if m and m.group(1) in fix:
        r, f = fix[m.group(1)]
        b = re.sub(r"(?m)^R:.*$", lambda _: "R: " + r, b)
        b = re.sub(r"(?m)^F:.*$", lambda _: "F: " + f, b)
    out.append(b)
open(fn, "w", encoding="utf-8").write("".join(out))
