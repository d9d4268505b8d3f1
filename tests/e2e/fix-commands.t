#!/bin/sh
# Every `gpuwise ...` command that an explain or doctor fix prints parses
# its own options: each is run again with --help appended (getopt reads the
# options in order, so an unknown option or a missing value fails before
# --help is reached) and must exit 0.  The commands come from
#  - explain --json over a message of each diagnosis of the corpora, the
#    messages whose fixes C code writes, and a WSL2-shaped root;
#  - doctor --json over every fixture root (fake NVML scenarios);
# a placeholder value (SIZE, DURATION, N, YOUR_GPU) is filled in with an
# example first, as the reader would; an operand placeholder (MODEL) stays;
#  - the fixes templates of data/errors.tsv and the string literals of
#    src/doctor/*.c, for fixes no fixture reaches.
. "$(dirname "$0")/lib.sh"
V=$GW_TOP/tests/validation
export GPUWISE_NVML_LIB="$GW_FAKE/libnvidia-ml.so" GPUWISE_CUDA_LIB="$GW_FAKE/libcuda.so"

mkdir -p "$TMP/wsl/proc/sys/kernel"
echo "5.15.167.4-microsoft-standard-WSL2" > "$TMP/wsl/proc/sys/kernel/osrelease"

python3 - "$GW" "$GW_TOP" "$TMP" > "$TMP/cmds" 2> "$TMP/collect.err" <<'PY'
import glob, json, os, re, subprocess, sys
gw, top, tmp = sys.argv[1:4]
V = f"{top}/tests/validation"
SUBS = set(re.findall(r'\{"([a-z-]+)", cmd_', open(f"{top}/src/main.c").read()))

def tsv(path):
    rows = [l.rstrip("\n").split("\t") for l in open(path) if not l.startswith("#")]
    return rows[1:]

# one message of each expected diagnosis of the corpora (the fixes follow the
# diagnosis; every template is also read from errors.tsv below)
by_id = {}
exp = [r[2] for r in tsv(f"{V}/error-corpus-expected.tsv")]
for m, e in zip([r[0] for r in tsv(f"{V}/error-corpus.tsv")], exp):
    by_id.setdefault(e, m)
for f in ("error-extra.tsv", "error-holdout.tsv", "error-issue21.tsv"):
    for r in tsv(f"{V}/{f}"):
        by_id.setdefault(r[1], r[0])
msgs = list(by_id.values())
# messages whose fixes the C code writes (OOM verdicts, arch, driver, catalog rows)
msgs += [
    "CUDA out of memory. Tried to allocate 30.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.00 GiB is free.",
    "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.50 GiB is free. Process 4242 has 6.00 GiB memory in use. Of the allocated memory 12.00 GiB is allocated by PyTorch, and 3.00 GiB is reserved by PyTorch but unallocated.",
    "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 9.00 GiB is free.",
    "CUDA out of memory. Tried to allocate 32.00 MiB. GPU 0 has a total capacity of 4.00 GiB of which 41.00 MiB is free.",
    "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.",
    "The NVIDIA driver on your system is too old (found version 11040).",
    "CUDA error 716", "cudaErrorStreamCaptureInvalidated", "hipErrorLaunchFailure", "ncclInProgress",
    "NVRM: Xid (PCI:0000:01:00): 44, pid=1, name=python",
    "ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is needed, which is larger than the available KV cache memory (9.97 GiB). Based on the available memory, the estimated maximum model length is 81472.",
]
fixes = []   # (origin, fix text)

def explain(msg, env=None, probe=True):
    p = subprocess.run([gw, "explain", "--json", "-"] + ([] if probe else ["--no-probe"]), input=msg.encode(),
                       capture_output=True, env=env)
    for m in json.loads(p.stdout or b'{"matches":[]}')["matches"]:
        fixes.extend(("explain: " + msg[:50], f) for f in m["fixes"])

for m in dict.fromkeys(msgs):
    explain(m, probe=False)
# with the machine probed: the WSL2 rewrites and "on this machine" lines
wsl_env = dict(os.environ, GPUWISE_ROOT=f"{tmp}/wsl")
for m in msgs[-12:] + [r[0] for r in tsv(f"{V}/error-issue21.tsv")][:12]:
    explain(m, env=wsl_env)

scen = sorted(glob.glob(f"{top}/tests/fixtures/scenarios/*.json"))
for root in sorted(glob.glob(f"{top}/tests/fixtures/roots/*/")):
    name = os.path.basename(root.rstrip("/"))
    if name in ("malformed", "doctor-toolkits"):
        continue  # a root doctor must refuse, and a partial one for the toolkit checks (doctor.t runs both)
    sc = f"{top}/tests/fixtures/scenarios/{name}.json"
    env = dict(os.environ, GPUWISE_ROOT=root, GPUWISE_FAKE_SCENARIO=sc if os.path.exists(sc) else scen[0],
               HOME="/home/alice", DISPLAY=":0", PATH="/usr/bin:/bin")
    p = subprocess.run([gw, "doctor", "--json", "--no-exec"], capture_output=True, env=env)
    try:
        for f in json.loads(p.stdout)["findings"]:
            if f.get("fix"):
                fixes.append(("doctor: " + name, f["fix"]))
    except ValueError:
        print(f"doctor on {name}: no JSON ({p.stderr.decode()[:200]})", file=sys.stderr)

# the templates and the literals no run reaches
for row in tsv(f"{top}/data/errors.tsv"):
    for f in json.loads(row[5]):
        fixes.append(("errors.tsv: " + row[0], re.sub(r"\{[a-z_0-9]+\}", "4096", f)))
for c in sorted(glob.glob(f"{top}/src/doctor/*.c")):
    src = open(c).read()
    for m in re.finditer(r'"((?:[^"\\\n]|\\.)*)"(?:\s*"((?:[^"\\\n]|\\.)*)")*', src):
        lit = re.sub(r'"\s*"', "", m.group(0))[1:-1]
        if "gpuwise " in lit:
            fixes.append((os.path.basename(c), re.sub(r"%[-0-9.]*(s|d|u|zu|ld|lu)", "X", lit)))

# a command: gpuwise SUB, then options, their values and placeholder operands
PLACEHOLDER = {"SIZE": "10G", "DURATION": "2s", "N": "2", "YOUR_GPU": "rtx-4090"}
VALUE = re.compile(r"^([A-Z][A-Z0-9_.]*|[0-9][0-9A-Za-z.:_-]*|[A-Za-z0-9_-]*[0-9./=][A-Za-z0-9_./=:-]*|X)$")
seen = set()
for origin, text in fixes:
    for m in re.finditer(r"\bgpuwise ([a-z][a-z-]*)((?: +[^ ;,()'\"`]+)*)", text):
        sub = m.group(1)
        if sub not in SUBS:
            continue  # prose ("point gpuwise at an environment")
        argv, prev_opt = [sub], False
        for tok in m.group(2).split():
            if tok == "--":
                break  # what follows is the job's own command line, never run here
            tok = tok.rstrip(".:;,)")
            # a placeholder value is filled in as the reader would
            tok = PLACEHOLDER.get(tok, tok) if prev_opt else tok
            if tok.startswith("-") and len(tok) > 1:
                argv.append(tok)
                prev_opt = "=" not in tok
            elif VALUE.match(tok) and (prev_opt or len(argv) == 1 or argv[-1].isupper()):
                argv.append(tok)
                prev_opt = False
            else:
                break
        key = " ".join(argv)
        if key not in seen:
            seen.add(key)
            print(f"{key}\t{origin}")
PY
diag "collected from $(grep -c . "$TMP/cmds") commands; collection notes: $(wc -l < "$TMP/collect.err")"
is "$(cat "$TMP/collect.err")" "" "every doctor run gave JSON"
n=0
while IFS="$(printf '\t')" read -r cmd origin; do
	[ -n "$cmd" ] || continue
	n=$((n + 1))
	# shellcheck disable=SC2086
	err=$("$GW" $cmd --help 2>&1 >/dev/null); rc=$?
	is "$rc" 0 "gpuwise $cmd parses its options ($origin)${err:+: $err}"
done <<EOF
$(cat "$TMP/cmds")
EOF
ok "$([ "$n" -ge 8 ]; echo $?)" "at least 8 distinct commands were printed and checked ($n)"
# the check itself can fail: the command issue 21 found
"$GW" plan MODEL --context 131072 --help > /dev/null 2>&1
is "$?" 2 "the old 'gpuwise plan MODEL --context 131072' fails this check (exit 2)"
unset GPUWISE_NVML_LIB GPUWISE_CUDA_LIB
done_testing
