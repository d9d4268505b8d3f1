#!/bin/sh
# gpuwise sim: the openb trace (Weng et al., ATC'23) through every placement
# policy under the sanitizers, one seed: the daemon's policy against FGD,
# best-fit and whole-GPU allocation; a part of the trace replayed; the plot
# rendered and its pixels checked; bad CSV input.  Every seed and the whole
# replay, on the release binary: sim-seeds.t.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/report_shot.sh"
PODS=$FIX/openb/openb_pod_list_default.csv
NODES=$FIX/openb/openb_node_list_gpu_node.csv

run_gw sim --help
is "$rc" 0 "sim --help: exit 0"
like "$out" "--replay times" "sim --help lists --replay"

# ---- the full trace, one seed, under the sanitizers (all policies, plot) ----
run_gw sim --pods "$PODS" --nodes "$NODES" --seeds 1 --stop 101 --json --plot "$TMP/plot.svg"
is "$rc" 0 "sim on openb: exit 0"
is "$err" "" "sim: nothing on stderr"
printf '%s\n' "$out" > "$TMP/one.json"
is "$(jget 'd["trace"]["gpus"]' < "$TMP/one.json")" 6212 "trace: 6212 GPUs"
is "$(jget 'd["trace"]["nodes"]' < "$TMP/one.json")" 1213 "trace: 1213 GPU nodes"
is "$(jget 'd["trace"]["gpu_pods"]' < "$TMP/one.json")" 7064 "trace: 7064 pods ask for GPUs"
# independent count of the GPU nodes, GPUs and pods from the CSV files
is "$(python3 -c "
import csv
n=list(csv.DictReader(open('$NODES'))); p=list(csv.DictReader(open('$PODS')))
print(len([x for x in n if int(x['gpu'])>0]), sum(int(x['gpu']) for x in n), len([x for x in p if int(x['num_gpu'])>0]))")" "1213 6212 7064" "the CSV files agree"
res=$(python3 "$GW_TOP/tests/e2e/sim_check.py" "$TMP/one.json")
like "$res" "^ok 1 seeds" "one seed: allocation never above arrival; gpuwise >= fgd, > best-fit, > exclusive at 100%"
diag "$res"
# whole-GPU allocation gives each shared pod a GPU: it fails well before 100%
ex=$(jget '[p for p in d["inflation"]["policies"] if p["policy"]=="exclusive"][0]["first_failure"]["arrived"]["mean_pct"]' < "$TMP/one.json")
python3 -c "import sys; sys.exit(0 if 50 < $ex < 95 else 1)"; ok $? "exclusive: first failure at $ex% arrived (between 50 and 95)"

# ---- text output (under the sanitizers, on the trace's first 2,000 pods and 200 GPU nodes) ----
head -n 2001 "$PODS" > "$TMP/pods2000.csv"
head -n 201 "$NODES" > "$TMP/nodes200.csv"
run_gw sim --pods "$TMP/pods2000.csv" --nodes "$TMP/nodes200.csv" --seeds 1 --stop 60 --policy best-fit,gpuwise
is "$rc" 0 "sim text: exit 0"
like "$out" "GPU allocation ratio" "text: the allocation table"
like "$out" "Fragmented GPUs" "text: the fragmentation table"
like "$out" "GPU pods placed" "text: the share of pods placed"
unlike "$out" "fgd " "text: --policy limits the policies"

# ---- the plot: valid SVG with one line per policy, rendered and checked ----------
cat > "$TMP/svg.py" <<'PY'
import sys, xml.etree.ElementTree as ET
t = ET.parse(sys.argv[1]).getroot()
ns = '{http://www.w3.org/2000/svg}'
lines = list(t.iter(ns + 'polyline'))
texts = [x.text for x in t.iter(ns + 'text')]
out = []
for l in lines:
    pts = [tuple(map(float, p.split(','))) for p in l.get('points').split()]
    out.append('%s:%d' % (l.get('stroke'), len(pts)))
print(len(lines), ' '.join(out), ' '.join(n for n in ('exclusive', 'first-fit', 'best-fit', 'fgd', 'gpuwise') if n in texts))
PY
res=$(python3 "$TMP/svg.py" "$TMP/plot.svg")
like "$res" "^10 " "plot: ten polylines (two panels, five policies)"
like "$res" ":102( |$)" "plot: 102 points (0..101% arrived)"
like "$res" "exclusive first-fit best-fit fgd gpuwise$" "plot: a legend entry per policy"
_chrome=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$_chrome" ]; then
	skip "plot pixels: chromium is not installed (apt-get install chromium)"
else
	timeout 90 "$_chrome" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$TMP/chrome-profile" --screenshot="$TMP/plot.png" --window-size=1100,500 \
		"file://$TMP/plot.svg" >"$TMP/chrome.log" 2>&1
	[ -s "$TMP/plot.png" ]; ok $? "plot: chromium rendered the SVG"
	cat > "$TMP/px.py" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
from pngstat import decode
w, h, bpp, rows = decode(sys.argv[1])
want = {'exclusive': (0x94, 0x67, 0xbd), 'first-fit': (0xff, 0x7f, 0x0e), 'best-fit': (0x2c, 0xa0, 0x2c),
        'fgd': (0x1f, 0x77, 0xb4), 'gpuwise': (0xd6, 0x27, 0x28)}
# the pixels of the two panels (not the legend) by colour, then each policy's
# colour within 8 per channel (one pass over the pixels, not one per colour)
from collections import Counter
hist = Counter()
for line in rows:
    hist.update(bytes(line[x:x + 3]) for x in range(0, 945 * bpp, bpp))
count = {k: sum(n for px, n in hist.items() if all(abs(a - b) <= 8 for a, b in zip(px, c))) for k, c in want.items()}
print(w, h, ' '.join('%s=%d' % (k, count[k]) for k in want))
PY
	res=$(python3 "$TMP/px.py" "$TMP/plot.png" "$GW_TOP/tests/e2e")
	diag "$res"
	# each policy's line shows in the panels (the legend is left out of the count)
	python3 - "$res" <<'PY'; ok $? "plot: every policy's colour covers > 50 pixels of the panels"
import sys
f = sys.argv[1].split()
sys.exit(0 if all(int(x.split('=')[1]) > 50 for x in f[2:]) else 1)
PY
fi

# ---- replay at the trace's own times (the whole trace on the release binary: sim-seeds.t)
run_gw sim --pods "$TMP/pods2000.csv" --nodes "$TMP/nodes200.csv" --replay times --policy gpuwise
is "$rc" 0 "sim --replay times under the sanitizers (2,000 pods, 200 nodes): exit 0"
like "$out" "never stress" "replay text: says how lightly the trace loads the cluster"

# ---- bad input: one line, the file and line named, exit 1 ----------------------------
H='name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time'
printf '%s\np0,1000,10,1,500,,LS,Running,0,10,0\np1,1000,10,one,500,,LS,Running,0,10,0\n' "$H" > "$TMP/bad1.csv"
run_gw sim --pods "$TMP/bad1.csv" --nodes "$NODES"
is "$rc" 1 "malformed num_gpu: exit 1"
is "$err" "gpuwise: $TMP/bad1.csv:3: num_gpu 'one' is not an integer from 0 to 64" "malformed num_gpu: file, line and field named"
printf '%s\np0,1000,10,1,500,,LS,Running,0,10\n' "$H" > "$TMP/bad2.csv"
run_gw sim --pods "$TMP/bad2.csv" --nodes "$NODES"
is "$rc" 1 "short row: exit 1"
is "$err" "gpuwise: $TMP/bad2.csv:2: 10 fields, the header has 11" "short row: one line with the line number"
printf 'sn,cpu_milli,memory_mib,model\nn0,1000,10,T4\n' > "$TMP/bad3.csv"
run_gw sim --pods "$PODS" --nodes "$TMP/bad3.csv"
is "$rc" 1 "node list without a gpu column: exit 1"
is "$err" "gpuwise: $TMP/bad3.csv:1: missing column 'gpu'" "missing column named"
printf 'sn,cpu_milli,memory_mib,gpu,model\nn0,1000,10,2,T4\nn1,1000,10,-2,T4\n' > "$TMP/bad4.csv"
run_gw sim --pods "$PODS" --nodes "$TMP/bad4.csv"
is "$err" "gpuwise: $TMP/bad4.csv:3: gpu '-2' is not an integer from 0 to 64" "negative GPU count refused with its line"
printf '%s\np0,1000,10,1,2000,,LS,Running,0,10,0\n' "$H" > "$TMP/bad5.csv"
run_gw sim --pods "$TMP/bad5.csv" --nodes "$NODES"
is "$err" "gpuwise: $TMP/bad5.csv:2: gpu_milli '2000' is not an integer from 0 to 1000" "gpu_milli over 1000 refused"
: > "$TMP/empty.csv"
run_gw sim --pods "$TMP/empty.csv" --nodes "$NODES"
is "$rc" 1 "empty pod list: exit 1"
like "$err" "empty file" "empty pod list: said"
head -c 300 /bin/sh > "$TMP/bin.csv"
run_gw sim --pods "$TMP/bin.csv" --nodes "$NODES"
is "$rc" 1 "binary pod list: exit 1"
is "$(printf '%s\n' "$err" | wc -l)" 1 "binary pod list: one line"
run_gw sim --pods "$TMP/missing.csv" --nodes "$NODES"
is "$rc" 1 "missing file: exit 1"
like "$err" "cannot open" "missing file: said"
run_gw sim --pods "$PODS"
is "$rc" 2 "no --nodes: usage error"
run_gw sim --pods "$PODS" --nodes "$NODES" --policy worst-fit
is "$rc" 2 "unknown policy: usage error"
like "$err" "unknown policy 'worst-fit'" "unknown policy named"
run_gw sim --pods "$PODS" --nodes "$NODES" --seeds 0
is "$rc" 2 "--seeds 0: usage error"
run_gw sim --pods "$PODS" --nodes "$NODES" --replay random
is "$rc" 2 "--replay random: usage error"
run_gw sim --pods "$PODS" --nodes "$NODES" --replay times --plot "$TMP/x.svg"
is "$rc" 2 "--plot with --replay: usage error"
done_testing
