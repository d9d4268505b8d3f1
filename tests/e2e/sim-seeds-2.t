#!/bin/sh
# gpuwise sim on the release binary: the default run's seeds 4-5 (1-3:
# sim-seeds.t), and the whole openb trace replayed at its own times, its peak
# checked against an independent count.  The sanitizer build: sim.t.
. "$(dirname "$0")/lib.sh"
PODS=$FIX/openb/openb_pod_list_default.csv
NODES=$FIX/openb/openb_node_list_gpu_node.csv

# ---- seeds 4-5 of the default run ----
REL=$GW_TOP/gpuwise
[ -x "$REL" ] || REL=$GW
out=$("$REL" sim --pods "$PODS" --nodes "$NODES" --seed 4 --seeds 2 --stop 101 --json 2>"$TMP/err"); rc=$?
is "$rc" 0 "sim --seed 4 --seeds 2: exit 0"
printf '%s\n' "$out" > "$TMP/seeds.json"
res=$(python3 "$GW_TOP/tests/e2e/sim_check.py" "$TMP/seeds.json")
like "$res" "^ok 2 seeds" "seeds 4-5: gpuwise >= fgd, > best-fit, > exclusive at 100% arrived on every seed"
diag "$res"

# ---- replay at the trace's own times ------------------------------------------
# (the whole trace; the sanitizer build replays a part of it in sim.t)
out=$("$REL" sim --pods "$PODS" --nodes "$NODES" --replay times --policy best-fit,gpuwise --json 2>"$TMP/err"); rc=$?
is "$rc" 0 "sim --replay times: exit 0"
peak=$(printf '%s' "$out" | jget 'd["replay"][0]["peak_requested_gpus"]')
# the same peak counted independently: +GPUs at max(creation, scheduled), - at deletion
want=$(python3 -c "
import csv
ev=[]
for p in csv.DictReader(open('$PODS')):
    g=int(p['num_gpu'])*int(p['gpu_milli'])/1000
    if g==0: continue
    s=max(float(p['creation_time']), float(p['scheduled_time'] or -1))
    ev.append((s,1,g))
    if p['deletion_time'] and float(p['deletion_time'])>=s: ev.append((float(p['deletion_time']),0,-g))
ev.sort(key=lambda e:(e[0],e[1]))
c=m=0
for t,k,g in ev:
    c+=g; m=max(m,c)
print(round(m,3))")
is "$peak" "$want" "replay: at most $want GPUs asked for at once (independent count)"
is "$(printf '%s' "$out" | jget 'd["replay"][1]["pods_failed"]')" 0 "replay: gpuwise places every pod (the trace never stresses the cluster)"
done_testing
