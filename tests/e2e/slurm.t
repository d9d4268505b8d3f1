#!/bin/sh
# gpuwise export slurm against a real single-node Slurm (slurm-lib.sh): a
# job runs to completion and its output is read back; another is seen
# pending behind a job holding both GPUs and is cancelled; a job killed on
# the node is restarted by gpuwise run, and requeued by Slurm.  The same
# through 'gpuwise submit --backend slurm': slurm-submit.t and slurm-node.t
# (three files, each under a minute on a loaded machine).
# Skips with the reason where Slurm cannot start (not root, not installed).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/slurm-lib.sh"

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
for i in $(seq 1 100); do [ "$(squeue -h -j "$waiting" -o %r)" = Resources ] && break; sleep 0.2; done
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
# Slurm holds a requeued job back a while (Reason=BeginTime); let it start
# now.  An update that lands before Slurm has set that hold is overridden
# (seen when the PENDING state is caught within a second), and the reason
# squeue shows is not always BeginTime when it matters: so the update is
# repeated every 2 s while the job is still pending, whatever the reason.
# Not within the first 2 s: slurmd kills a relaunch whose credential is as
# old as the requeue's revocation ("Job credential revoked")
restarted=1
for _i in $(seq 1 200); do
	grep -Eq 'start restart=0 requeue=1' "$f" 2>/dev/null && { restarted=0; break; }
	[ "$_i" -gt 10 ] && [ $((_i % 10)) = 1 ] && [ "$(state "$rid")" = PENDING ] &&
		scontrol update jobid="$rid" StartTime=now 2>/dev/null
	sleep 0.2
done
[ "$restarted" = 0 ] || diag "job $rid: $(squeue -h -j "$rid" -o '%T %r' 2>/dev/null); $(tail -3 "$S/log/slurmctld.log" 2>/dev/null)"
ok $restarted "requeued job restarted on the node under gpuwise run (SLURM_RESTART_COUNT=1)"
like "$(scontrol show job "$rid")" "Restarts=1" "scontrol counts one restart"
scancel "$rid"
wait_state "$rid" CANCELLED 20; ok $? "cancelled at the end"
done_testing
