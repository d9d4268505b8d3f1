#!/bin/sh
# gpuwise export slurm against a real single-node Slurm (Debian's slurm-wlm
# and munge), started here in a temporary directory with its own munge key,
# socket and ports, and two GPUs backed by character devices (major 195) the
# test makes: a job runs to completion and its output is read back; another
# is seen pending behind a job holding both GPUs and is cancelled; a job
# killed on the node is restarted by gpuwise run, and requeued by Slurm.
# Then the same through 'gpuwise submit --backend slurm' (no daemon): a job
# to completion read back with 'gpuwise logs slurm:ID' and 'show', one seen
# pending in 'gpuwise queue' with backend slurm and 'gpuwise cancel'ed, --vram
# auto asking Slurm for the planner's GPUs, the queue daemon's and Slurm's jobs
# side by side, 'gpuwise quota export' from the daemon's quotas, bad input.
# Skips with the reason where Slurm cannot start (not root, not installed).
. "$(dirname "$0")/lib.sh"

need() { command -v "$1" >/dev/null 2>&1 || { skip "Slurm: $1 is not installed (apt-get install slurm-wlm munge)"; done_testing; exit 0; }; }
if [ "$(id -u)" != 0 ]; then
	skip "Slurm: slurmd must run as root to start jobs (run the tests as root)"
	done_testing
	exit 0
fi
for b in munged mungekey munge slurmctld slurmd sbatch squeue scontrol scancel sinfo; do need "$b"; done

S=$TMP/slurm
mkdir -p "$S/spool" "$S/state" "$S/dev" "$S/log" "$S/out"
chmod 700 "$S"
stop() {
	for p in slurmd slurmctld munged; do
		[ -s "$S/$p.pid" ] && kill "$(cat "$S/$p.pid")" 2>/dev/null
	done
	sleep 1
	rm -rf "$TMP"
}
trap stop EXIT
if ! mknod "$S/dev/nvidia0" c 195 0 || ! mknod "$S/dev/nvidia1" c 195 1; then
	skip "Slurm: cannot make the GPU device nodes (mknod)"
	done_testing
	exit 0
fi
mungekey -c -k "$S/munge.key" 2>/dev/null || dd if=/dev/urandom of="$S/munge.key" bs=128 count=1 2>/dev/null
chmod 400 "$S/munge.key"
munged --socket="$S/munge.sock" --key-file="$S/munge.key" --pid-file="$S/munged.pid" \
	--log-file="$S/log/munged.log" --seed-file="$S/munge.seed" --force 2>"$S/log/munged.err"
# ports from the test's pid, so that a second copy of the suite does not collide
port=$((20000 + ($$ % 5000) * 2))
H=$(hostname)
cat > "$S/slurm.conf" <<CONF
ClusterName=gwtest
SlurmctldHost=$H(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$S/munge.sock
CryptoType=crypto/munge
SlurmctldPort=$port
SlurmdPort=$((port + 1))
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
ReturnToService=2
NodeName=$H NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=1000 Gres=gpu:2 State=UNKNOWN
PartitionName=gw Nodes=$H Default=YES MaxTime=INFINITE State=UP
CONF
printf 'Name=gpu File=%s/dev/nvidia[0-1]\n' "$S" > "$S/gres.conf"
export SLURM_CONF=$S/slurm.conf
# where gpuwise remembers the nodes' answer to its srun probe: this test's own
export XDG_CACHE_HOME=$S/cache
slurmctld -f "$SLURM_CONF" 2>"$S/log/ctld.err" && sleep 1 && slurmd -f "$SLURM_CONF" 2>"$S/log/d.err"
up=
for i in $(seq 1 30); do
	if [ "$(sinfo -h -o %T 2>/dev/null)" = idle ]; then up=1; break; fi
	sleep 1
done
if [ -z "$up" ]; then
	skip "Slurm: the node did not come up idle in 30 s ($(sinfo -h -o %T 2>&1 | head -1); see slurmd.log: $(tail -1 "$S/log/slurmd.log" 2>/dev/null))"
	done_testing
	exit 0
fi
ok 0 "Slurm: slurmctld and slurmd up, node idle with gres/gpu:2"

state() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
wait_state() { # wait_state ID STATE SECONDS
	for _i in $(seq 1 "$3"); do [ "$(state "$1")" = "$2" ] && return 0; sleep 1; done
	return 1
}
wait_text() { # wait_text FILE ERE SECONDS
	for _i in $(seq 1 "$3"); do grep -Eq -- "$2" "$1" 2>/dev/null && return 0; sleep 1; done
	return 1
}

# ---- a job to completion, its output read back ---------------------------------------
run_gw export slurm --submit --gpuwise "$GW" --project vision --output "$S/out/%j.txt" -- \
	sh -c 'echo "hello gpus=$CUDA_VISIBLE_DEVICES account=$SLURM_JOB_ACCOUNT"'
is "$rc" 0 "export slurm --submit: exit 0"
like "$out" '^[0-9]+$' "sbatch --parsable gave a job id ($out)"
id=$out
wait_state "$id" COMPLETED 60; ok $? "job $id ran to completion"
like "$(cat "$S/out/$id.txt" 2>/dev/null)" "hello gpus=0 account=vision" "its output: one GPU (CUDA_VISIBLE_DEVICES=0), the project as account"
like "$(cat "$S/out/$id.txt" 2>/dev/null)" "attempt 1 ended: success" "it ran under gpuwise run"

# ---- pending behind a job holding both GPUs, then cancelled ------------------------------
run_gw export slurm --submit --gpuwise "$GW" --mode exclusive --gpus 2 --output "$S/out/%j.txt" -- sleep 120
blocker=$out
wait_state "$blocker" RUNNING 30; ok $? "a job holding both GPUs runs"
run_gw export slurm --submit --gpuwise "$GW" --output "$S/out/%j.txt" -- echo never
waiting=$out
# the scheduler gives the reason on its next pass
for i in $(seq 1 20); do [ "$(squeue -h -j "$waiting" -o %r)" = Resources ] && break; sleep 1; done
is "$(squeue -h -j "$waiting" -o '%T %r')" "PENDING Resources" "a one-GPU job is pending for resources"
scancel "$waiting"
wait_state "$waiting" CANCELLED 20; ok $? "scancel: the pending job is cancelled"
[ ! -e "$S/out/$waiting.txt" ]; ok $? "the cancelled job never ran"
scancel "$blocker"
wait_state "$blocker" CANCELLED 20; ok $? "the running job is cancelled too"

# ---- killed on the node: gpuwise run restarts it; requeued by Slurm ----------------------
run_gw export slurm --submit --gpuwise "$GW" --restart on-failure --max-restarts 3 --output "$S/out/%j.txt" -- \
	sh -c 'echo "start restart=$GPUWISE_RESTART_COUNT requeue=${SLURM_RESTART_COUNT:-0} pid=$$"; exec sleep 120'
rid=$out
f=$S/out/$rid.txt
wait_text "$f" 'start restart=0 requeue=0 pid=[0-9]+' 30; ok $? "restartable job started"
pid=$(sed -n 's/^start restart=0 requeue=0 pid=\([0-9]*\)$/\1/p' "$f" | head -1)
[ -n "$pid" ] && kill -KILL "$pid"
wait_text "$f" 'start restart=1 requeue=0' 30; ok $? "the job's process killed on the node (SIGKILL): gpuwise run restarted it"
like "$(cat "$f")" "attempt 1 ended: failure, status 137" "gpuwise run saw the kill"
is "$(state "$rid")" RUNNING "the Slurm job kept running meanwhile"
scontrol requeue "$rid"
ok $? "scontrol requeue: Slurm kills the job and puts it back in the queue"
wait_state "$rid" PENDING 20; ok $? "requeued: pending again"
# Slurm holds a requeued job back a while (Reason=BeginTime); let it start now
scontrol update jobid="$rid" StartTime=now
wait_text "$f" 'start restart=0 requeue=1' 40; ok $? "requeued job restarted on the node under gpuwise run (SLURM_RESTART_COUNT=1)"
like "$(scontrol show job "$rid")" "Restarts=1" "scontrol counts one restart"
scancel "$rid"
wait_state "$rid" CANCELLED 20; ok $? "cancelled at the end"
# ---- gpuwise submit --backend slurm; queue, logs, show, cancel through Slurm -----------
cd "$S/out" || exit 1
run_gw submit --backend slurm --gpuwise "$GW" --project vision --mode exclusive -- \
	sh -c 'echo "submitted gpus=$CUDA_VISIBLE_DEVICES account=$SLURM_JOB_ACCOUNT"'
is "$rc" 0 "submit --backend slurm: exit 0 ($err)"
like "$out" '^slurm:[0-9]+$' "submit --backend slurm prints slurm:ID ($out)"
sid=${out#slurm:}
wait_state "$sid" COMPLETED 60; ok $? "submitted job $sid ran to completion"
run_gw logs "slurm:$sid"
is "$rc" 0 "logs slurm:$sid: exit 0 ($err)"
like "$out" "submitted gpus=0 account=vision" "logs reads the Slurm job's output back"
like "$out" "attempt 1 ended: success" "the Slurm job ran under gpuwise run"
run_gw show --json "slurm:$sid"
is "$rc" 0 "show --json slurm:$sid: exit 0 ($err)"
like "$out" '"backend": "slurm"' "show: backend slurm"
like "$out" '"state": "done"' "show: the job is done"
like "$out" '"exit_status": 0' "show: exit status 0"
run_gw submit --backend slurm --gpuwise "$GW" --mode exclusive --gpus 2 -- sleep 120
bid=${out#slurm:}
wait_state "$bid" RUNNING 30; ok $? "a submitted job holding both GPUs runs"
run_gw submit --backend slurm --gpuwise "$GW" --mode exclusive --json -- echo never
like "$out" '"backend": "slurm"' "submit --json: backend slurm"
pid2=$(printf '%s' "$out" | sed -n 's/.*"id": \([0-9]*\).*/\1/p')
for i in $(seq 1 20); do [ "$(squeue -h -j "$pid2" -o %r)" = Resources ] && break; sleep 1; done
run_gw queue --json
is "$rc" 0 "queue --json without a daemon lists the Slurm jobs: exit 0 ($err)"
printf '%s\n' "$out" > "$S/q.json"
is "$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(" ".join("%s:%s:%s" % (r["backend"], r["id"], r["state"]) for r in j["jobs"] if r["id"] in (int(sys.argv[2]), int(sys.argv[3]))))' "$S/q.json" "$bid" "$pid2")" \
	"slurm:$bid:running slurm:$pid2:queued" "queue: the running and the pending Slurm job, backend slurm"
run_gw queue
like "$out" "slurm:$pid2 .*queued" "queue (text): the pending job as slurm:ID"
run_gw cancel "slurm:$pid2"
is "$rc" 0 "cancel slurm:$pid2: exit 0 ($err)"
like "$out" "job slurm:$pid2 cancelled" "cancel says so"
wait_state "$pid2" CANCELLED 20; ok $? "the pending Slurm job is cancelled"
! grep -qs never "$S/out/slurm-$pid2.out"; ok $? "the cancelled job never ran"
run_gw cancel "slurm:$bid"
like "$out" "job slurm:$bid is being stopped" "cancel of a running Slurm job"
wait_state "$bid" CANCELLED 20; ok $? "the running job is cancelled too"
run_gw cancel "slurm:$pid2"
is "$rc" 3 "cancel of an ended Slurm job: exit 3"
is "$(printf '%s\n' "$err" | wc -l)" 1 "... one line: $err"
run_gw logs slurm:99999999
is "$rc" 3 "logs of an unknown Slurm job: exit 3"
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
# ---- a failing Slurm job; logs -f follows one to its end --------------------------------
run_gw submit --backend slurm --gpuwise "$GW" --mode exclusive -- sh -c 'echo failing; exit 3'
fid=${out#slurm:}
wait_state "$fid" FAILED 60; ok $? "a job that exits 3 fails in Slurm"
run_gw show --json "slurm:$fid"
is "$(printf '%s' "$out" | jget "'%s %s %s' % (d['state'], d['slurm_state'], d['exit_status'])")" "failed FAILED 3" "show: failed, Slurm's FAILED, exit status 3"
run_gw submit --backend slurm --gpuwise "$GW" --mode exclusive -- sh -c 'echo one; sleep 3; echo two'
tid=${out#slurm:}
wait_state "$tid" RUNNING 30
out=$(timeout 60 "$GW" logs -f "slurm:$tid" 2>&1); rc=$?
is "$rc" 0 "logs -f slurm:$tid returns when the job ends"
like "$out" "one" "logs -f: the first line"
like "$out" "two" "... and the one written 3 s later, before the job ended"
is "$(state "$tid")" COMPLETED "the followed job completed"
run_gw hold "slurm:$tid"
is "$rc" 2 "hold slurm:N: usage error (Slurm's own scontrol hold)"
PATH=/nonexistent "$GW" show slurm:1 >/dev/null 2>"$S/e"; rc=$?
is "$rc" 1 "show slurm:N without scontrol: exit 1"
is "$(wc -l < "$S/e")" 1 "... one line: $(cat "$S/e")"
run_gw submit --backend pbs -- true
is "$rc" 2 "submit --backend pbs: exit 2"
like "$err" "unknown backend 'pbs'" "... says the backend is unknown"
PATH=/nonexistent "$GW" submit --backend slurm --mode exclusive -- true >/dev/null 2>"$S/e"; rc=$?
is "$rc" 1 "submit --backend slurm without sbatch: exit 1"
like "$(cat "$S/e")" "sbatch is not installed" "... says sbatch is missing"
is "$(wc -l < "$S/e")" 1 "... in one line"
cd / || exit 1
done_testing
