#!/bin/sh
# The user-facing promises agree with the binary: every long option of
# `gpuwise CMD --help` is in that command's .SS section of man/gpuwise.1 and
# back; every key of docs/json-*.md is in a real --json output and back, and
# unit-suffixed keys hold numbers or null (conventions: docs/json-conventions.md).
. "$(dirname "$0")/lib.sh"
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
man_section "GLOBAL OPTIONS" SH | python3 "$TMP/opts.py" > "$TMP/global"
like "$(cat "$TMP/global")" "^--data-dir" "man: GLOBAL OPTIONS lists --data-dir"
like "$(man_section DESCRIPTION SH)" 'Every command accepts \\fB\\-\\-help' "man: DESCRIPTION promises --help for every command"
printf -- '--help\n' >> "$TMP/global"

for c in plan cards cost status doctor explain run bench list sim export; do
	run_gw "$c" --help
	is "$rc" 0 "$c --help exits 0"
	printf '%s\n' "$out" | python3 "$TMP/opts.py" > "$TMP/help"
	man_section "$c" | python3 "$TMP/opts.py" > "$TMP/man"
	allowed=$TMP/man
	# cards takes plan's options (its man section says so)
	if [ "$c" = cards ]; then
		like "$(man_section cards)" 'the options of' "man: cards refers to plan's options"
		man_section plan | python3 "$TMP/opts.py" | sort -u - "$TMP/man" > "$TMP/allowed"
		allowed=$TMP/allowed
	fi
	missing=$(sort -u "$allowed" "$TMP/global" | comm -23 "$TMP/help" -)
	is "$missing" "" "$c: every option of --help is in man/gpuwise.1 (.SS $c)"
	extra=$(comm -23 "$TMP/man" "$TMP/help")
	is "$extra" "" "$c: every option of man .SS $c is in --help"
	[ "$(wc -l < "$TMP/man")" -ge 1 ] ; ok $? "$c: the man section lists options"
done

# every GPUWISE_* variable the code reads is in man ENVIRONMENT
envs=$(cat "$GW_TOP"/src/*.c "$GW_TOP"/src/*/*.c | grep -oE 'getenv\("GPUWISE_[A-Z_]+"\)' | sed 's/getenv("\(.*\)")/\1/' | sort -u)
[ -n "$envs" ]; ok $? "src reads GPUWISE_* variables"
missing=$(for e in $envs; do man_section ENVIRONMENT SH | grep -q "$e" || echo "$e"; done)
is "$missing" "" "man ENVIRONMENT documents every GPUWISE_* variable"

# exit statuses: the numbers of the "Exit status:" paragraph agree
cat > "$TMP/exits.py" <<'PY'
import re, sys
t = sys.stdin.read().replace('\\-', '-')
m = re.search(r'Exit status:(.*?)(\n\s*\n|\n\.[A-Z]|\Z)', t, re.S)
print(' '.join(sorted(set(re.findall(r'(?<![\w.+-])\d+(?![\w.])', m.group(1))), key=int)) if m else 'none')
PY
for c in plan cards cost status doctor explain run bench list sim export; do
	h=$("$GW" "$c" --help | python3 "$TMP/exits.py")
	m=$(man_section "$c" | python3 "$TMP/exits.py")
	isnt "$h" none "$c: --help has an Exit status paragraph"
	is "$m" "$h" "$c: man and --help list the same exit statuses"
done

# ---- JSON keys against docs/json-*.md ---------------------------------------
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

run_gw plan llama-2-13b --vram 10G --json
is "$rc" 3 "plan llama-2-13b --vram 10G: exit 3 (offload)"
jcheck plan json-plan.md
run_gw plan llama-3.1-8b --gpu rtx-4090 --engine vllm --parallel 4 --per-user-tps 20 --json
jcheck plan-serve json-plan.md
run_gw plan llama-2-7b --train lora --vram 8G --json
is "$rc" 4 "plan --train lora --vram 8G: exit 4"
jcheck plan-train "json-plan-workloads.md#fine-tuning-train-full-lora-qlora"
run_gw plan sdxl --image 1024x1024 --vram 6G --json
is "$rc" 4 "plan --image 1024x1024 --vram 6G: exit 4"
jcheck plan-image "json-plan-workloads.md#image-generation-image-wxh"
run_gw cards llama-3.1-8b --quant q4_k_m --json
is "$rc" 0 "cards: exit 0"
jcheck cards json-cards.md
run_gw cost --gpu rtx-4090 --json
is "$rc" 0 "cost --gpu rtx-4090: exit 0"
jcheck cost json-cost.md
run_gw cards llama-3.1-70b --budget 1000 --json
is "$rc" 0 "cards 70B within 1000 USD: exit 0"
is "$(printf '%s' "$out" | jget 'd["cheapest_over_budget"] is not None and any(r["remedy"] for r in d["rows"])')" True "with remedies and a configuration over budget"
jcheck cards-over json-cards.md
for t in gpus models quants; do
	run_gw list "$t" --json
	is "$rc" 0 "list $t --json: exit 0"
	jcheck "list-$t" json-list.md
done
GPUWISE_ROOT="$FIX/roots/nogpu" GPUWISE_NVML_LIB=/nonexistent/libnvidia-ml.so.1 run_gw plan llama-3.1-8b --json
is "$rc" 0 "plan without a GPU: exit 0"
jcheck plan-need "json-plan.md#without-a-gpu"
out=$(printf '%s' 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.78 GiB. GPU 0 has a total capacity of 31.47 GiB of which 12.73 GiB is free. Process 608946 has 14.91 GiB memory in use. Including non-PyTorch memory, this process has 18.73 GiB memory in use. Of the allocated memory 9.08 GiB is allocated by PyTorch, and 9.35 GiB is reserved by PyTorch but unallocated.' |
	"$GW" explain --no-probe --json - 2>/dev/null); rc=$?
is "$rc" 0 "explain (CUDA OOM message): exit 0"
jcheck explain json-explain.md
out=$(printf 'RuntimeError: CUDA error: no kernel image is available for execution on the device\n' | "$GW" explain --no-probe --json - 2>/dev/null); rc=$?
is "$rc" 0 "explain (no kernel image): exit 0"
jcheck explain-arch json-explain.md

fake() { # fake ROOT: env for a fixture root and its scenario
	export GPUWISE_ROOT="$FIX/roots/$1" GPUWISE_FAKE_SCENARIO="$FIX/scenarios/$1.json" GPUWISE_NVML_LIB="$GW_FAKE/libnvidia-ml.so"
}
fake laptop-5070
run_gw doctor --json --no-exec
like "$rc" '^[034]$' "doctor --json on laptop-5070: a verdict exit status"
jcheck doctor json-doctor.md
fake server-8xh100
run_gw status --json
is "$rc" 0 "status --json on 8xH100: exit 0"
is "$(printf '%s' "$out" | jget 'len([g for g in d["gpus"] if g["vendor"] == "NVIDIA"])')" 8 "status: 8 NVIDIA GPUs"
jcheck status json-status.md
run_gw status --all --json --watch 100ms --count 2
is "$rc" 0 "status --all --json --watch: exit 0"
is "$(printf '%s\n' "$out" | grep -c '^{')" 2 "status --watch --count 2: two JSON lines"
jcheck status-watch json-status.md
fake wsl2-laptop
run_gw doctor --json --no-exec
jcheck doctor-wsl json-doctor.md
run_gw plan llama-3.1-8b --json
jcheck plan-wsl json-plan.md
fake desktop-4090
run_gw run --interval 100ms --json -- sleep 0.3
is "$rc" 0 "run --json -- sleep 0.3: exit 0"
jcheck run json-run.md
unset GPUWISE_ROOT GPUWISE_FAKE_SCENARIO
GPUWISE_NVML_LIB=/nonexistent/libnvidia-ml.so.1 run_gw run --json -- sh -c 'exit 3'
is "$rc" 3 "run --json without a GPU: the job's exit status"
jcheck run-nogpu json-run.md
# the keys only: the trace's first 200 GPU nodes and (for the replay) its first
# 2,000 pods give the same keys as the whole trace in a hundredth of the time
# (the whole trace is sim.t's)
head -n 201 "$FIX/openb/openb_node_list_gpu_node.csv" > "$TMP/nodes200.csv"
head -n 2001 "$FIX/openb/openb_pod_list_default.csv" > "$TMP/pods2000.csv"
run_gw sim --pods "$FIX/openb/openb_pod_list_default.csv" --nodes "$TMP/nodes200.csv" --seeds 2 --stop 101 --json
is "$rc" 0 "sim --json: exit 0"
jcheck sim "json-sim.md#inflation-the-default-mode"
run_gw sim --pods "$TMP/pods2000.csv" --nodes "$TMP/nodes200.csv" --replay times --json
is "$rc" 0 "sim --replay times --json: exit 0"
jcheck sim-replay "json-sim.md#replay-replay-times"

GPUWISE_OPENCL_LIB=/nonexistent/libOpenCL.so.1 GPUWISE_CUDA_LIB="$GW_FAKE/cudadeep.so" run_gw bench --quick --no-opencl --max-n 100000 --json
is "$rc" 0 "bench --quick --json (fake CUDA device): exit 0"
jcheck bench json-bench.md

# ---- the queue (issue 11): --help against man, --json against docs ------------
for c in daemon submit queue show logs cancel hold release quota; do
	run_gw "$c" --help
	is "$rc" 0 "$c --help exits 0"
	printf '%s\n' "$out" | python3 "$TMP/opts.py" > "$TMP/help"
	man_section "$c" | python3 "$TMP/opts.py" > "$TMP/man"
	is "$(sort -u "$TMP/man" "$TMP/global" | comm -23 "$TMP/help" -)" "" "$c: every option of --help is in man/gpuwise.1 (.SS $c)"
	is "$(comm -23 "$TMP/man" "$TMP/help")" "" "$c: every option of man .SS $c is in --help"
	h=$(printf '%s\n' "$out" | python3 "$TMP/exits.py")
	isnt "$h" none "$c: --help has an Exit status paragraph"
	is "$(man_section "$c" | python3 "$TMP/exits.py")" "$h" "$c: man and --help list the same exit statuses"
done
qsock=$TMP/queue.sock
GPUWISE_FAKE_SCENARIO="$FIX/scenarios/server-2gpu-queue.json" GPUWISE_NVML_LIB="$GW_FAKE/libnvidia-ml.so" \
	"$GW" daemon --state "$TMP/qstate" --socket "$qsock" 2>"$TMP/qdaemon.log" &
qpid=$!
for _i in $(seq 100); do "$GW" queue --socket "$qsock" >/dev/null 2>&1 && break; sleep 0.05; done
"$GW" quota set lab --vram 40G --members root --socket "$qsock" >/dev/null
run_gw submit --project lab --vram 1G --name docs --env A=1 --time-limit 1h --socket "$qsock" --json -- sh -c 'echo hi'
is "$rc" 0 "submit --json: exit 0"
jcheck submit json-submit.md
qid=$(printf '%s' "$out" | jget "d['id']")
for _i in $(seq 100); do "$GW" show --socket "$qsock" "$qid" | grep -q '(done)' && break; sleep 0.05; done
"$GW" submit --mode exclusive --gpus 2 --socket "$qsock" -- sleep 1 >/dev/null
"$GW" submit --vram 2G --socket "$qsock" -- true >/dev/null
run_gw queue --all --json --socket "$qsock"
is "$rc" 0 "queue --all --json: exit 0"
jcheck queue json-queue.md
run_gw show --json --socket "$qsock" "$qid"
jcheck show json-show.md
run_gw quota --json --socket "$qsock"
jcheck quota json-quota.md
kill "$qpid"; wait "$qpid"
for d in queue-protocol.md json-queue.md json-show.md json-quota.md json-submit.md; do
	[ -s "$DOCS/$d" ]; ok $? "docs/$d exists"
done

# ---- README examples: every plan/cards/cost line runs with a verdict status -----
grep -E '^    gpuwise (plan|cards|cost)( |$)' "$GW_TOP/README.md" | grep -v '\.gguf' > "$TMP/readme"
[ "$(wc -l < "$TMP/readme")" -ge 5 ]; ok $? "README: plan/cards/cost examples found"
while IFS= read -r line; do
	cmd=${line%%#*}
	want=$(printf '%s' "$line" | sed -n 's/.*# *exit \([0-9]\).*/\1/p')
	# shellcheck disable=SC2086
	set -- ${cmd#*gpuwise }
	run_gw "$@"
	if [ -n "$want" ]; then
		is "$rc" "$want" "README: '$(echo $cmd)' exits $want"
	else
		like "$rc" '^[034]$' "README: '$(echo $cmd)' runs (exit $rc)"
	fi
	is "$err" "" "README: '$(echo $cmd)' writes nothing on stderr"
done < "$TMP/readme"

# every repository path README.md names in backticks exists
missing=$(grep -oE '`(docs|tests|data|man|src|bench)/[^` ]+`' "$GW_TOP/README.md" | tr -d '`' | sort -u |
	while read -r f; do [ -e "$GW_TOP/$f" ] || echo "$f"; done)
is "$missing" "" "README: every file it names exists"

# the checker itself catches drift: an undocumented key, a string in a unit key
printf '{"model":"x","extra_key":1}\n' > "$TMP/bad.json"
python3 "$TMP/jsondoc.py" "$DOCS/json-cost.md" "$TMP/bad.json" > "$TMP/res"
ok $((! $?)) "checker: a bad output fails"
like "$(cat "$TMP/res")" "undocumented key: extra_key" "checker: names the undocumented key"
like "$(cat "$TMP/res")" "missing from the output: price_usd" "checker: names a missing documented key"
printf '{"gpu":null,"price_usd":"100"}\n' > "$TMP/bad.json"
like "$(python3 "$TMP/jsondoc.py" "$DOCS/json-cost.md" "$TMP/bad.json")" 'price_usd is "100", not a number' "checker: a string in a _usd key fails"
done_testing
