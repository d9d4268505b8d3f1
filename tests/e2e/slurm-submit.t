#!/bin/sh
# 'gpuwise submit --backend slurm' (no daemon) against a real single-node
# Slurm (slurm-lib.sh): a job to completion read back with 'gpuwise logs
# slurm:ID' and 'show', one seen pending in 'gpuwise queue' with backend
# slurm and 'gpuwise cancel'ed, a failing job, 'logs -f' to a job's end,
# bad input.  Skips with the reason where Slurm cannot start.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/slurm-lib.sh"

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
for i in $(seq 1 100); do [ "$(squeue -h -j "$pid2" -o %r)" = Resources ] && break; sleep 0.2; done
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
