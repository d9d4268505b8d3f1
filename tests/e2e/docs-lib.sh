# Helpers for the docs tests (sourced after lib.sh): the man page and docs/
# paths, opts.py (the long options of a text), man_section NAME [SH],
# exits.py (the numbers of an "Exit status:" paragraph), jsondoc.py and
# jcheck NAME DOC[#SECTION] (the keys of --json output against docs/json-*.md).
MAN=$GW_TOP/man/gpuwise.1
DOCS=$GW_TOP/docs
unset CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER GPUWISE_FAKE_CLOCK
export GPUWISE_CUDA_LIB="$GW_FAKE/libcuda.so"

# long options in a text (man escapes \- normalised; pip's own options skipped)
cat > "$TMP/opts.py" <<'PY'
import re, sys
t = sys.stdin.read().replace('\\-', '-')
t = re.sub(r'\\fBpip [^\n]*?\\fR', '', t)
t = re.sub(r'pip (install|uninstall)[^\n]*', '', t)
print('\n'.join(sorted(set(re.findall(r'--[a-z0-9][a-z0-9-]*', t)))))
PY
man_section() { # man_section NAME: the .SS NAME section (or .SH NAME when $2=SH)
	awk -v want="${2:-SS} $1" '/^\.S[SH] /{on = ($0 == "." want); next} on' "$MAN"
}

# exit statuses: the numbers of the "Exit status:" paragraph agree
cat > "$TMP/exits.py" <<'PY'
import re, sys
t = sys.stdin.read().replace('\\-', '-')
m = re.search(r'Exit status:(.*?)(\n\s*\n|\n\.[A-Z]|\Z)', t, re.S)
print(' '.join(sorted(set(re.findall(r'(?<![\w.+-])\d+(?![\w.])', m.group(1))), key=int)) if m else 'none')
PY

cat > "$TMP/jsondoc.py" <<'PY'
# jsondoc.py DOC.md[#SECTION] OUTPUT.json: compare the keys documented in a
# docs/json-*.md page with the keys of one JSON output (see docs/json-conventions.md)
import json, re, sys
UNIT = ('_bytes', '_pct', '_c', '_w', '_mw', '_ms', '_s', '_usd')
doc, _, want = sys.argv[1].partition('#')
documented, optional, free = set(), set(), set()
prefix, section, in_table = '', '', False
for line in open(doc, encoding='utf-8'):
    line = line.rstrip('\n')
    if line.startswith('#'):
        title = line.lstrip('#').strip()
        if line.startswith('## ') or line.startswith('# '):
            m = re.match(r'`([^`]+)`', title)
            prefix = m.group(1) + '.' if m and line.startswith('## ') else ''
            if line.startswith('## '):
                section = re.sub(r'[^a-z0-9]+', '-', title.lower()).strip('-')
        in_table = False
        continue
    if not line.startswith('|'):
        in_table = False
        continue
    cells = [c.strip() for c in line.strip().strip('|').split('|')]
    if cells[0] == 'key':
        in_table = True
        continue
    if not in_table or set(cells[0]) <= set('-: '):
        continue
    if want and section != want:
        continue
    names = re.findall(r'`([^`]+)`', cells[0])
    first_parent = ''
    for i, n in enumerate(names):
        if i == 0:
            path = prefix + n
            first_parent = path.rsplit('.', 1)[0] + '.' if '.' in path else ''
        elif n.startswith('.'):
            path = first_parent + n[1:]
        elif '.' in n:
            path = prefix + n
        else:
            path = first_parent + n
        path = path[:-2] if path.endswith('[]') else path
        documented.add(path)
        meaning = cells[2] if len(cells) > 2 else ''
        if meaning.startswith('only'):
            optional.add(path)
        if len(cells) > 1 and cells[1].startswith('map'):
            free.add(path)
found, bad = set(), []
def walk(v, path):
    if isinstance(v, dict):
        if path in free:
            return
        for k, x in v.items():
            p = path + '.' + k if path else k
            found.add(p)
            if k.endswith(UNIT) and not (x is None or (isinstance(x, (int, float)) and not isinstance(x, bool))):
                bad.append('%s is %s, not a number or null' % (p, json.dumps(x)))
            walk(x, p)
    elif isinstance(v, list):
        for x in v:
            walk(x, path + '[]' if isinstance(x, dict) else path)
def norm(p):
    return p.replace('[].', '.').replace('[]', '')
text = open(sys.argv[2], encoding='utf-8').read()
objs = [json.loads(l) for l in text.splitlines() if l.strip()] if text.lstrip().startswith('{') and '\n{' in text else [json.loads(text)]
for o in objs:
    walk(o, '')
fn = set(norm(p) for p in found)
dn = set(norm(p) for p in documented)
on = set(norm(p) for p in optional)
problems = ['undocumented key: ' + k for k in sorted(fn - dn)]
problems += ['documented key missing from the output: ' + k for k in sorted(dn - fn - on)]
problems += bad
if not documented:
    problems.append('no keys documented in ' + sys.argv[1])
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
PY
# jcheck NAME DOC[#SECTION]: compare $out (the --json output) with the doc
jcheck() {
	printf '%s\n' "$out" > "$TMP/$1.json"
	res=$(python3 "$TMP/jsondoc.py" "$DOCS/$2" "$TMP/$1.json" 2>&1)
	is "$res" "" "$1: keys of --json match docs/$2, unit keys are numbers or null"
}
