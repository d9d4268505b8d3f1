#!/bin/sh
# gpuwise sim on the release binary (make check builds it): the default run's
# seeds 1-3 on the openb trace, the daemon's policy against FGD, best-fit and
# whole-GPU allocation on each (seeds 4-5 and the whole trace replayed at its
# own times: sim-seeds-2.t; each seed's draws are its own, so the split
# runs give the figures of one --seeds 5 run).  The sanitizer build: sim.t.
. "$(dirname "$0")/lib.sh"
PODS=$FIX/openb/openb_pod_list_default.csv
NODES=$FIX/openb/openb_node_list_gpu_node.csv

# ---- seeds 1-3 of the default run ----
REL=$GW_TOP/gpuwise
[ -x "$REL" ] || REL=$GW
out=$("$REL" sim --pods "$PODS" --nodes "$NODES" --seed 1 --seeds 3 --stop 101 --json 2>"$TMP/err"); rc=$?
is "$rc" 0 "sim --seed 1 --seeds 3: exit 0"
printf '%s\n' "$out" > "$TMP/seeds.json"
res=$(python3 "$GW_TOP/tests/e2e/sim_check.py" "$TMP/seeds.json")
like "$res" "^ok 3 seeds" "seeds 1-3: gpuwise >= fgd, > best-fit, > exclusive at 100% arrived on every seed"
diag "$res"

done_testing
