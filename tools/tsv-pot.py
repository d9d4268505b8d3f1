#!/usr/bin/env python3
"""tsv-pot: the translatable texts of data/errors.tsv (title, causes, fixes)
as a .pot, for `make pot` (issue 24).  Only the diagnoses listed in
po/errors-ids.txt are extracted: a diagnosis joins the catalog when it is
translated, so the 100%-translated check stays honest over what is
extracted.  {name} placeholders are kept by the translation (tests/e2e/po.t
checks it); the strings are no C formats."""
import json, sys

def esc(s):
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")

def main(tsv, ids_file):
    ids = {l.split("#")[0].strip() for l in open(ids_file, encoding="utf-8")} - {""}
    seen = {}
    order = []
    header = None
    for n, line in enumerate(open(tsv, encoding="utf-8"), 1):
        if line.startswith("#"):
            continue
        row = line.rstrip("\n").split("\t")
        if header is None:
            header = row
            continue
        r = dict(zip(header, row))
        if r.get("id") not in ids:
            continue
        texts = [("title", r["title"])] + [("cause", c) for c in json.loads(r["causes"])] + \
                [("fix", f) for f in json.loads(r["fixes"])]
        for kind, t in texts:
            if not t:
                continue
            if t not in seen:
                seen[t] = []
                order.append(t)
            seen[t].append(f"data/errors.tsv:{n}")
            seen.setdefault(("kind", t), f"{r['id']} {kind}")
    out = sys.stdout
    out.write('msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n')
    for t in order:
        out.write(f"#. diagnosis {seen[('kind', t)]}; keep every {{name}} as it is\n")
        out.write("#: " + " ".join(seen[t]) + "\n#, no-c-format\n")
        out.write(f'msgid "{esc(t)}"\nmsgstr ""\n\n')

if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
