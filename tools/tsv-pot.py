#!/usr/bin/env python3
"""tsv-pot: the translatable texts of the data tables as a .pot, for
`make pot` (issue 24).

  tsv-pot.py data/errors.tsv po/errors-ids.txt
      explain's diagnoses (title, causes, fixes).  Only the diagnoses listed
      in po/errors-ids.txt are extracted: a diagnosis joins the catalog when
      it is translated, so the 100%-translated check stays honest over what
      is extracted.  {name} placeholders are kept by the translation
      (tests/e2e/po.t checks it).
  tsv-pot.py --table KEY COLUMN[,COLUMN...] FILE
      every row's cells of the named columns, commented with the row's KEY
      cell: data/error-catalog.tsv's meaning (explain's catalog lines),
      data/xid.tsv's meaning and action (explain, doctor --deep),
      data/lifecycle.tsv's torch_wheel, cuda_build, prebuilt and hardware and
      data/install.tsv's power_connector (cards' caveats, plan's assumptions),
      data/markets.tsv's note and data/explain-fixes.tsv's fix (explain's fix
      lines chosen by the message's facts; {name} placeholders are kept).
      The code translates them where it prints them.

The strings are no C formats."""
import json, sys

def esc(s):
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")

def rows(tsv):
    header = None
    for n, line in enumerate(open(tsv, encoding="utf-8"), 1):
        if line.startswith("#"):
            continue
        row = line.rstrip("\n").split("\t")
        if header is None:
            header = row
            continue
        yield n, dict(zip(header, row))

def write(out, order, refs, notes):
    out.write('msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n')
    for t in order:
        out.write(f"#. {notes[t]}\n")
        out.write("#: " + " ".join(refs[t]) + "\n#, no-c-format\n")
        out.write(f'msgid "{esc(t)}"\nmsgstr ""\n\n')

def collect(texts, order, refs, notes, ref, note):
    for t in texts:
        if not t:
            continue
        if t not in refs:
            refs[t] = []
            order.append(t)
            notes[t] = note(t)
        refs[t].append(ref)

def errors(tsv, ids_file):
    ids = {l.split("#")[0].strip() for l in open(ids_file, encoding="utf-8")} - {""}
    order, refs, notes = [], {}, {}
    for n, r in rows(tsv):
        if r.get("id") not in ids:
            continue
        texts = [("title", r["title"])] + [("cause", c) for c in json.loads(r["causes"])] + \
                [("fix", f) for f in json.loads(r["fixes"])]
        for kind, t in texts:
            collect([t], order, refs, notes, f"{tsv}:{n}",
                    lambda _t: f"diagnosis {r['id']} {kind}; keep every {{name}} as it is")
    write(sys.stdout, order, refs, notes)

def table(key, cols, tsv):
    order, refs, notes = [], {}, {}
    name = tsv.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    for n, r in rows(tsv):
        for c in cols:
            if c not in r:
                sys.exit(f"tsv-pot: {tsv}:{n}: no column '{c}'")
            collect([r[c]], order, refs, notes, f"{tsv}:{n}",
                    lambda _t: f"{name} {r[key]} {c}; names, numbers, commands and variables stay as they are")
    write(sys.stdout, order, refs, notes)

if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--table":
        table(sys.argv[2], sys.argv[3].split(","), sys.argv[4])
    elif len(sys.argv) == 3:
        errors(sys.argv[1], sys.argv[2])
    else:
        sys.exit("usage: tsv-pot.py ERRORS.tsv IDS | tsv-pot.py --table KEY COLUMN[,COLUMN...] FILE.tsv")
