#!/bin/sh
# Which gpuwise a Slurm job runs (this binary, checked once with srun; a
# path the nodes lack, warned; GPUWISE_SLURM_GPUWISE; no srun), --vram auto
# asking Slurm for the planner's GPUs, the queue daemon's and Slurm's jobs
# side by side, 'gpuwise quota export' from the daemon's quotas, against a
# real single-node Slurm (slurm-lib.sh).  Skips where Slurm cannot start.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/slurm-lib.sh"

cd "$S/out" || exit 1
# ---- which gpuwise the node runs: this binary by default, checked once with srun -------------
self=$(readlink -f "$GW")
run_gw submit --backend slurm --mode exclusive -- sh -c 'echo "self ran"'
is "$rc" 0 "submit --backend slurm without --gpuwise: exit 0 ($err)"
is "$err" "" "... no warning: this binary answered srun's probe on the node"
did=${out#slurm:}
like "$(scontrol write batch_script "$did" - 2>/dev/null)" "^exec '?$self'? run " "the job script runs this very binary ($self), not 'gpuwise' from the nodes' PATH"
wait_state "$did" COMPLETED 60; ok $? "... and the job ran to completion"
like "$(cat "slurm-$did.out" 2>/dev/null)" "self ran" "its output came back"
cut -f1 "$XDG_CACHE_HOME/gpuwise/slurm-probe" | grep -Fxq "$self"; ok $? "the probe that worked is remembered for this path"
run_gw export slurm --submit --mode exclusive --output "$S/out/%j.txt" -- true
eid=$out
like "$(scontrol write batch_script "$eid" - 2>/dev/null)" "^exec '?$self'? run " "export slurm --submit without --gpuwise: this binary too"
is "$err" "" "... no warning (the probe is remembered)"
wait_state "$eid" COMPLETED 60; ok $? "... and the job completes"
# a path the nodes do not have: warned at submit, in one line, and the job is still handed over
run_gw submit --backend slurm --gpuwise /nonexistent/gpuwise --mode exclusive -- true
is "$rc" 0 "--gpuwise /nonexistent/gpuwise: still submitted (exit 0)"
is "$(printf '%s\n' "$err" | wc -l)" 1 "... with one line on stderr"
diag "the warning: $err"
like "$err" "^gpuwise: warning: '/nonexistent/gpuwise' does not run on the cluster's nodes \(srun: .*\): the job will fail unless gpuwise is installed there; give --gpuwise PATH \(its path on the nodes\)\$" \
	"... the warning names the path and says what to do"
nid=${out#slurm:}
wait_state "$nid" FAILED 60; ok $? "... and that job does fail on the node, as warned"
! grep -Fq /nonexistent "$XDG_CACHE_HOME/gpuwise/slurm-probe"; ok $? "... and the failed probe is not remembered"
# the configured path (GPUWISE_SLURM_GPUWISE) wins over this binary
mkdir -p "$S/bin"
cp "$GW" "$S/bin/gw-node"
GPUWISE_SLURM_GPUWISE=$S/bin/gw-node "$GW" submit --backend slurm --mode exclusive -- true >"$S/cfg.out" 2>"$S/cfg.err"
cid=$(sed 's/^slurm://' "$S/cfg.out")
like "$(scontrol write batch_script "$cid" - 2>/dev/null)" "^exec '?$S/bin/gw-node'? run " "GPUWISE_SLURM_GPUWISE names the gpuwise the job runs"
is "$(cat "$S/cfg.err")" "" "... probed without a warning"
wait_state "$cid" COMPLETED 60; ok $? "... and the job completes"
# no srun: said, and the submission goes on
mkdir -p "$S/nosrun"
for b in sbatch sh; do ln -sf "$(command -v $b)" "$S/nosrun/$b"; done
PATH=$S/nosrun "$GW" submit --backend slurm --gpuwise "$S/bin/gw-elsewhere" --mode exclusive -- /bin/true >"$S/ns.out" 2>"$S/ns.err"; rc=$?
is "$rc" 0 "without srun on PATH: still submitted"
is "$(cat "$S/ns.err")" "gpuwise: warning: cannot check that '$S/bin/gw-elsewhere' runs on the cluster's nodes: srun is not installed" \
	"... and the check that could not be made is said"
scancel "$(sed 's/^slurm://' "$S/ns.out")" 2>/dev/null

# ---- --vram auto: the planner's GPUs become --gres=gpu:N -------------------------------
run_gw submit --backend slurm --gpuwise "$GW" --vram auto -- llama-3.1-8b --quant q4_k_m --ctx 4096 --gpu 2xrtx-4090 -- \
	sh -c 'echo "auto gpus=$CUDA_VISIBLE_DEVICES"'
is "$rc" 0 "submit --backend slurm --vram auto: exit 0 ($err)"
like "$err" "--vram auto: llama-3.1-8b Q4_K_M ctx 4096 .*; 2 GPUs" "the planner's summary and its GPU count on stderr"
aid=${out#slurm:}
like "$(scontrol show job "$aid")" "TresPerNode=gres:gpu:2" "Slurm was asked for the planner's 2 GPUs"
wait_state "$aid" COMPLETED 60; ok $? "the --vram auto job ran to completion"
run_gw logs "slurm:$aid"
like "$out" "auto gpus=0,1" "it got both GPUs"

# ---- side by side with the queue daemon; quota export from the daemon's quotas ----------
export GPUWISE_SOCKET=$S/q.sock
GPUWISE_FAKE_SCENARIO="$FIX/scenarios/server-2gpu-queue.json" GPUWISE_NVML_LIB="$GW_FAKE/libnvidia-ml.so" \
	"$GW" daemon --state "$S/qstate" --socket "$GPUWISE_SOCKET" 2>"$S/log/qdaemon.log" &
qpid=$!
for _i in $(seq 200); do "$GW" quota >/dev/null 2>&1 && break; sleep 0.05; done  # quota needs the daemon (queue lists Slurm jobs without one)
"$GW" quota set lab --gpus 2 --jobs 3 --vram 40G >/dev/null
run_gw quota export slurm
is "$rc" 0 "quota export slurm: exit 0 ($err)"
like "$out" "sacctmgr -i modify account where name=lab set GrpTRES=gres/gpu=2 GrpJobs=3" "quota export slurm reads the daemon's quotas"
like "$err" "VRAM" "... and says what Slurm cannot limit (VRAM)"
run_gw quota export k8s
like "$out" "requests.nvidia.com/gpu: \"?2\"?" "quota export k8s: the daemon's GPU quota as a ResourceQuota"
run_gw submit --vram 1G -- sleep 60
lid=$out
run_gw submit --backend slurm --gpuwise "$GW" --mode exclusive -- sleep 60
sid2=${out#slurm:}
wait_state "$sid2" RUNNING 30
run_gw queue --json
is "$rc" 0 "queue --json with a daemon and Slurm jobs: exit 0 ($err)"
printf '%s\n' "$out" > "$S/q2.json"
is "$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(" ".join(sorted("%s:%s" % (r["backend"], r["id"]) for r in j["jobs"])))' "$S/q2.json")" \
	"local:$lid slurm:$sid2" "queue: the daemon's job and the Slurm job side by side, each with its backend"
run_gw cancel "$lid" "slurm:$sid2"
is "$rc" 0 "cancel of a local and a Slurm job at once: exit 0 ($err)"
wait_state "$sid2" CANCELLED 20; ok $? "the Slurm one is cancelled"
kill "$qpid"; wait "$qpid" 2>/dev/null
unset GPUWISE_SOCKET
cd / || exit 1
done_testing
