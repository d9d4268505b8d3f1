#!/bin/sh
# Independent NVML clients -- pynvml (nvidia-ml-py), gpustat and nvitop from
# PyPI -- run against the fake libnvidia-ml on every scenario, and their
# readings are compared with `gpuwise status --json` field by field: each
# checks both the fake and gpuwise.  .ci/run installs the three into
# build/venv-peers (GW_PEERS_VENV overrides).
. "$(dirname "$0")/lib.sh"

VENV=${GW_PEERS_VENV:-$GW_TOP/build/venv-peers}
PY=$VENV/bin/python
if [ ! -x "$PY" ] || ! "$PY" -c 'import pynvml, gpustat, nvitop' 2>/dev/null; then
	skip "no venv with nvidia-ml-py, gpustat and nvitop at $VENV (.ci/run makes it)"
	done_testing
	exit $?
fi
diag "peers: $("$PY" -c 'import importlib.metadata as m; print(", ".join(p + " " + m.version(p) for p in ("nvidia-ml-py", "gpustat", "nvitop")))')"

unset CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER GPUWISE_FAKE_CLOCK GPUWISE_FAKE_LOG
# the clients dlopen libnvidia-ml.so.1 by that name: a directory holding the fake under it
mkdir -p "$TMP/lib"
ln -s "$GW_FAKE/libnvidia-ml.so" "$TMP/lib/libnvidia-ml.so.1"
export GPUWISE_NVML_LIB="$GW_FAKE/libnvidia-ml.so"
TABLE=$TMP/table.tsv
: > "$TABLE"

# check NAME ROOT SCENARIO: every client against gpuwise on one scenario
check() {
	name=$1
	if [ -n "$2" ]; then export GPUWISE_ROOT="$2"; else unset GPUWISE_ROOT; fi
	export GPUWISE_FAKE_SCENARIO="$3"
	"$GW" status --json > "$TMP/gw.json" 2>"$TMP/gw.err"
	for client in pynvml gpustat nvitop; do
		LD_LIBRARY_PATH="$TMP/lib" "$PY" "$GW_TOP/tests/e2e/peers.py" read "$client" > "$TMP/$client.json" 2>"$TMP/$client.err"
		is "$?" 0 "$name: $client runs on the fake NVML"
		[ -s "$TMP/$client.err" ] && sed 's/^/#   /' "$TMP/$client.err" | head -20
		python3 "$GW_TOP/tests/e2e/peers.py" compare "$TMP/gw.json" "$TMP/$client.json" "$client" "$name" > "$TMP/cmp.txt" 2>&1
		is "$?" 0 "$name: $client's readings compared"
		grep -E '^# (mismatch|not compared)' "$TMP/cmp.txt"
		awk -F '\t' 'NF == 4 && !/^#/' "$TMP/cmp.txt" >> "$TABLE"
		bad=$(grep -c '^# mismatch' "$TMP/cmp.txt")
		cells=$(awk -F '\t' 'NF == 4 && !/^#/ {n += $4} END {print n + 0}' "$TMP/cmp.txt")
		[ "$bad" -eq 0 ] && [ "$cells" -gt 10 ]
		ok $? "$name: $client agrees with gpuwise status --json on all $cells readings"
		[ "$cells" -gt 10 ] || tail -5 "$TMP/cmp.txt" | sed 's/^/#   /'
	done
	out=$(LD_LIBRARY_PATH="$TMP/lib" "$VENV/bin/nvitop" -1 2>&1); rc=$?
	is "$rc" 0 "$name: the nvitop -1 command runs"
	like "$out" "Driver Version: 570.124.06" "$name: nvitop shows the fake's driver version"
	out=$(LD_LIBRARY_PATH="$TMP/lib" "$VENV/bin/gpustat" 2>&1); rc=$?
	is "$rc" 0 "$name: the gpustat command runs"
}

check desktop-4090 "$FIX/roots/desktop-4090" "$FIX/scenarios/desktop-4090.json"
check laptop-5070 "$FIX/roots/laptop-5070-awake" "$FIX/scenarios/laptop-5070.json"
check server-8xh100 "$FIX/roots/server-8xh100" "$FIX/scenarios/server-8xh100.json"
check fell-off-bus "$FIX/roots/fell-off-bus" "$FIX/scenarios/fell-off-bus.json"

# live: processes of this host, so gpustat and nvitop (which read /proc
# through psutil) list them too, with their users
python3 -c 'import time; time.sleep(120)' trainer &
p1=$!
python3 -c 'import time; time.sleep(120)' server &
p2=$!
for _ in $(seq 1 30); do
	grep -q 'time.sleep' "/proc/$p1/cmdline" 2>/dev/null && grep -q 'time.sleep' "/proc/$p2/cmdline" 2>/dev/null && break
	sleep 0.2
done
python3 - "$FIX/scenarios/desktop-4090.json" "$TMP/live.json" "$p1" "$p2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
g = d["gpus"][0]
g["processes"] = [
    {"pid": int(sys.argv[3]), "used_memory_bytes": 6 << 30, "type": "compute", "sm_pct": 71, "mem_pct": 20},
    {"pid": int(sys.argv[4]), "used_memory_bytes": 1536 << 20, "type": "compute", "sm_pct": 12, "mem_pct": 3}]
json.dump(d, open(sys.argv[2], "w"))
EOF
check live "" "$TMP/live.json"
kill "$p1" "$p2" 2>/dev/null
wait "$p1" "$p2" 2>/dev/null

# MIG GPUs: the fake answers NOT_SUPPORTED for utilisation as a real driver does
export GPUWISE_ROOT="$FIX/roots/server-8xh100" GPUWISE_FAKE_SCENARIO="$FIX/scenarios/server-8xh100.json"
r=$(LD_LIBRARY_PATH="$TMP/lib" "$PY" -c '
import pynvml as N
N.nvmlInit()
out = []
for i in (0, 2):
    try:
        out.append(N.nvmlDeviceGetUtilizationRates(N.nvmlDeviceGetHandleByIndex(i)).gpu)
    except N.NVMLError_NotSupported:
        out.append("NOT_SUPPORTED")
print(out)')
is "$r" "['NOT_SUPPORTED', 99]" "pynvml: a MIG-enabled GPU answers NOT_SUPPORTED for utilisation, a plain one 99"

# the table: client x field, agreeing readings over all scenarios
diag "client  field  agree/total (all scenarios)"
awk -F '\t' '{a[$1 "\t" $2] += $3; t[$1 "\t" $2] += $4; if (!($1 "\t" $2 in o)) {o[$1 "\t" $2] = ++n; k[n] = $1 "\t" $2}}
	END {for (i = 1; i <= n; i++) printf "# %s\t%d/%d\n", k[i], a[k[i]], t[k[i]]}' "$TABLE"
total=$(awk -F '\t' '{t += $4} END {print t + 0}' "$TABLE")
agree=$(awk -F '\t' '{a += $3} END {print a + 0}' "$TABLE")
diag "all readings: $agree of $total agree"
is "$agree" "$total" "every reading of every client agrees with gpuwise"
[ "$total" -gt 500 ]; ok $? "a substantial comparison ($total readings)"

done_testing
