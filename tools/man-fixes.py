#!/usr/bin/env python3
"""The man page's printed fixes, generated from the binary's own tables.

A man line `.\\" fix-example: MESSAGE` marks the bold command line after it
as the fix `gpuwise explain --no-probe MESSAGE` prints (its first fix that
starts with the same program, e.g. `pip install` or `gpuwise`).  Modes:
  man-fixes.py GPUWISE MAN           rewrite those lines from the binary (make man-fixes)
  man-fixes.py --check GPUWISE MAN   exit 1, naming each line, when a marked line differs
                                     or a concrete versioned command (torch~=2.11.0) is unmarked
Prints how many marked fixes it compared.
"""
import json, re, subprocess, sys

def roff(cmd):  # a command as man writes it in bold
    return "\\fB" + cmd.replace("\\", "\\\\").replace("-", "\\-") + "\\fR"

def unroff(line):
    return re.sub(r"\\f[BIRP]", "", line).replace("\\-", "-").replace("\\\\", "\\").strip()

def binary_fix(gw, msg, like):
    out = subprocess.run([gw, "explain", "--no-probe", "--json", msg], capture_output=True, text=True,
                         env={"LANG": "C", "PATH": "/usr/bin:/bin"})
    head = like.split()[:2]
    for m in json.loads(out.stdout or '{"matches": []}').get("matches", []):
        for f in m.get("fixes", []):
            if f.split()[:2] == head:
                return f
    return None

def main():
    args = sys.argv[1:]
    check = args and args[0] == "--check"
    if check:
        args = args[1:]
    gw, man = args
    lines = open(man, encoding="utf-8").read().split("\n")
    bad, n = [], 0
    marked = set()
    for i, l in enumerate(lines):
        m = re.match(r'^\.\\" fix-example: (.+)$', l)
        if not m:
            continue
        j = i + 1
        while j < len(lines) and not lines[j].startswith("\\fB"):
            j += 1
        if j >= len(lines):
            bad.append(f"{man}:{i + 1}: fix-example without a bold command after it")
            continue
        marked.add(j)
        want = binary_fix(gw, m.group(1), unroff(lines[j]))
        n += 1
        if want is None:
            bad.append(f"{man}:{j + 1}: the binary prints no fix like this one for: {m.group(1)}")
        elif unroff(lines[j]) != want:
            if check:
                bad.append(f"{man}:{j + 1}: man says   {unroff(lines[j])}\n{man}:{j + 1}: binary says {want}")
            else:
                lines[j] = roff(want)
    for j, l in enumerate(lines):
        if j not in marked and re.search(r"~=[0-9]+\.[0-9]+", unroff(l)) and unroff(l).startswith(("pip ", "gpuwise ")):
            bad.append(f"{man}:{j + 1}: a versioned command with no fix-example line to check it against: {unroff(l)}")
    if not check:
        open(man, "w", encoding="utf-8").write("\n".join(lines))
    print(f"{n} printed fixes compared with the binary")
    for b in bad:
        print(b, file=sys.stderr)
    sys.exit(1 if bad else 0)

main()
