#!/bin/sh
# gpuwise sim on the release binary (make check builds it): every seed of the
# default run on the openb trace, the daemon's policy against FGD, best-fit
# and whole-GPU allocation on each; the whole trace replayed at its own times,
# its peak checked against an independent count.  The sanitizer build: sim.t.
. "$(dirname "$0")/lib.sh"
PODS=$FIX/openb/openb_pod_list_default.csv
NODES=$FIX/openb/openb_node_list_gpu_node.csv

# ---- every seed of the default run ----
REL=$GW_TOP/gpuwise
[ -x "$REL" ] || REL=$GW
out=$("$REL" sim --pods "$PODS" --nodes "$NODES" --seeds 5 --stop 101 --json 2>"$TMP/err"); rc=$?
is "$rc" 0 "sim --seeds 5: exit 0"
printf '%s\n' "$out" > "$TMP/five.json"
res=$(python3 "$GW_TOP/tests/e2e/sim_check.py" "$TMP/five.json")
like "$res" "^ok 5 seeds" "seeds 1-5: gpuwise >= fgd, > best-fit, > exclusive at 100% arrived on every seed"
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
