#!/bin/sh
# gpuwise run: process control, exit status, restarts with back-off,
# --oom-halve, logs, the JSON summary and the HTML report (host side; the
# GPU detectors are in run-gpu.t).
. "$(dirname "$0")/lib.sh"
export GPUWISE_NO_STATUS_LINE=1
# No NVML here unless a test asks for the fake one.
export GPUWISE_NVML_LIB=/nonexistent/libnvidia-ml.so.1

run_gw run --help
is "$rc" 0 "--help exits 0"
like "$out" "--restart POLICY" "--help lists --restart"
like "$out" "Exit status:" "--help documents exit codes"

run_gw run
is "$rc" 2 "no command is a usage error"
like "$err" "no command given" "says what is missing"
run_gw run --restart sometimes -- true
is "$rc" 2 "bad --restart exits 2"
like "$err" "gpuwise: --restart must be never, on-failure or always, not 'sometimes'" "names the bad value"
run_gw run --interval 10ms -- true
is "$rc" 2 "--interval under 100ms is refused"
run_gw run --backoff 5s -- true
is "$rc" 2 "--backoff without .. is refused"
run_gw run --no-restart-on 2,bogus -- true
is "$rc" 2 "--no-restart-on with an unknown class is refused"
run_gw run --bogus -- true
is "$rc" 2 "unknown option exits 2"

# exit status passthrough
run_gw run -- sh -c 'exit 7'
is "$rc" 7 "exit code passes through"
run_gw run -- sh -c 'kill -TERM $$'
is "$rc" 143 "killed by SIGTERM gives 128+15"
run_gw run -- sh -c 'kill -KILL $$'
is "$rc" 137 "killed by SIGKILL gives 128+9"
run_gw run -- /nonexistent/cmd
is "$rc" 127 "a missing command gives 127"
like "$err" "cannot run '/nonexistent/cmd'" "says the command cannot run"
run_gw run -- sh -c 'echo to-stdout; echo to-stderr >&2'
is "$out" "to-stdout" "the job's stdout passes through"
like "$err" "to-stderr" "the job's stderr passes through"
like "$err" "no GPU to watch" "says it watches the host side only"

run_gw run --xid-file /nonexistent/kmsg --json -- true
is "$(printf '%s\n' "$out" | jget 'd["xid_error"]')" "cannot read '/nonexistent/kmsg': No such file or directory" \
	"an unreadable kernel log is reported in the summary"

# an unwritable log is an error before the job starts
rm -f "$TMP/started"
run_gw run --log /nonexistent/dir/x.csv -- touch "$TMP/started"
is "$rc" 1 "unwritable --log exits 1"
like "$err" "^gpuwise: cannot write '/nonexistent/dir/x.csv': No such file or directory" "clear error"
[ ! -e "$TMP/started" ]; ok $? "the job did not start"
run_gw run --report /nonexistent/r.html -- touch "$TMP/started"
is "$rc" 1 "unwritable --report exits 1"
[ ! -e "$TMP/started" ]; ok $? "the job did not start (report)"

# fails twice, then succeeds: 2 restarts with back-off 200ms, 400ms
cat > "$TMP/flaky.sh" <<'EOF'
#!/bin/sh
python3 -c 'import time; print(time.monotonic())' >> "$TIMES"
echo "$GPUWISE_RESTART_COUNT" >> "$COUNTS"
[ "$GPUWISE_RESTART_COUNT" -ge 2 ]
EOF
export TIMES="$TMP/times" COUNTS="$TMP/counts"
run_gw run --restart on-failure --backoff 200ms..1s --json -- sh "$TMP/flaky.sh"
is "$rc" 0 "fails twice then succeeds: exit 0"
is "$(printf '%s\n' "$out" | jget 'd["restarts"]')" 2 "2 restarts"
is "$(tr '\n' ' ' < "$COUNTS")" "0 1 2 " "GPUWISE_RESTART_COUNT is 0, 1, 2"
is "$(printf '%s\n' "$out" | jget '[a["class"] for a in d["attempts"]]')" '["failure", "failure", "success"]' \
	"attempts classified failure, failure, success"
is "$(printf '%s\n' "$out" | jget '[a["backoff_s"] for a in d["attempts"]]')" '[0.2, 0.4, null]' \
	"back-off doubles: 0.2 s then 0.4 s"
gaps=$(python3 -c '
import sys
t=[float(x) for x in open(sys.argv[1])]
print(" ".join("%d" % ((b-a)*1000) for a,b in zip(t,t[1:])))' "$TIMES")
set -- $gaps
[ "$1" -ge 200 ] && [ "$2" -ge 400 ]; ok $? "observed gaps between attempts ($gaps ms) cover the back-off"

# max restarts, then give up with the last status
run_gw run --restart on-failure --backoff 100ms..100ms --max-restarts 1 --json -- sh -c 'exit 3'
is "$rc" 3 "gives up with the job's status"
like "$err" "give-up: not restarting: 1 restart done" "says why it gives up"
run_gw run --restart on-failure --backoff 100ms..100ms --no-restart-on 3 -- sh -c 'exit 3'
like "$err" "exit status 3 is in --no-restart-on" "--no-restart-on stops restarts"

# CUDA out of memory: halve BATCH_SIZE 8, 4, 2
cat > "$TMP/oom.sh" <<'EOF'
#!/bin/sh
echo "$BATCH_SIZE" >> "$SIZES"
if [ "$BATCH_SIZE" -gt 2 ]; then
	echo "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.42 GiB of which 1.49 GiB is free." >&2
	exit 1
fi
EOF
export SIZES="$TMP/sizes"
BATCH_SIZE=8 run_gw run --restart on-failure --backoff 100ms..1s --oom-halve BATCH_SIZE --json -- sh "$TMP/oom.sh"
is "$rc" 0 "the OOM job succeeds once the batch is small enough"
is "$(tr '\n' ' ' < "$SIZES")" "8 4 2 " "BATCH_SIZE halves 8, 4, 2"
is "$(printf '%s\n' "$out" | jget '[a["class"] for a in d["attempts"]]')" '["cuda-oom", "cuda-oom", "success"]' \
	"OOM exits are classified cuda-oom"
is "$(printf '%s\n' "$out" | jget '[a["env_value"] for a in d["attempts"]]')" '["8", "4", "2"]' \
	"the summary records the value per attempt"
rm -f "$SIZES"
BATCH_SIZE=2 run_gw run --restart on-failure --backoff 100ms..1s --oom-halve BATCH_SIZE --max-restarts 5 -- \
	sh -c 'echo $BATCH_SIZE >> "$SIZES"; echo "CUDA out of memory" >&2; exit 1'
is "$(tr '\n' ' ' < "$SIZES")" "2 1 " "never below 1"
like "$err" "BATCH_SIZE is already 1 and cannot be halved" "says why it stops"
run_gw run --oom-halve NOPE_NOT_SET -- true
is "$rc" 1 "--oom-halve on an unset variable is an error"
like "$err" "NOPE_NOT_SET set to a positive integer" "names the variable"

# a grandchild that ignores SIGTERM is gone after gpuwise exits
cat > "$TMP/gc.sh" <<'EOF'
#!/bin/sh
setsid sh -c 'trap "" TERM; echo $$ > "$GCPID"; exec sleep 60' &
sleep 0.5
EOF
export GCPID="$TMP/gcpid"
run_gw run --grace 300ms -- sh "$TMP/gc.sh"
is "$rc" 0 "the job ends with 0"
gc=$(cat "$GCPID" 2>/dev/null)
[ -n "$gc" ]; ok $? "the grandchild started (pid $gc)"
[ ! -e "/proc/$gc" ]; ok $? "the grandchild is gone after gpuwise exits"

# signals are forwarded; the job's status comes back
"$GW" run -- sh -c 'trap "exit 42" TERM; while :; do sleep 0.1; done' 2>"$TMP/sig.err" &
gpid=$!
sleep 1
kill -TERM "$gpid"
wait "$gpid"
is "$?" 42 "SIGTERM is forwarded to the job and its status passes through"
like "$(cat "$TMP/sig.err")" "forwarding Terminated" "says it forwarded the signal"

# a job with no output (and no GPU use) for --hang-timeout is stopped
run_gw run --interval 100ms --grace 300ms --hang-timeout 1s --json -- sleep 20
is "$rc" 143 "the hung job is stopped with SIGTERM (143)"
like "$err" "hang: no output for" "says it hung"
is "$(printf '%s\n' "$out" | jget 'd["attempts"][0]["class"] + "/" + d["attempts"][0]["reason"]')" \
	"stopped-by-gpuwise/hang" "classified stopped-by-gpuwise (hang)"
t=$(printf '%s\n' "$out" | jget 'd["duration_s"]')
python3 -c 'import sys; sys.exit(not (1.0 <= float(sys.argv[1]) < 5))' "$t"; ok $? "stopped after about 1 s ($t s)"
run_gw run --interval 100ms --hang-timeout 1s -- sh -c 'for i in 1 2 3 4 5 6; do echo tick; sleep 0.3; done'
is "$rc" 0 "a job that keeps printing is not a hang"
unlike "$err" "hang:" "no hang event"

# a signal during the back-off ends gpuwise at once, with the job's last status
"$GW" run --restart on-failure --backoff 30s..1m -- sh -c 'exit 9' 2>"$TMP/bo.err" &
gpid=$!
sleep 1
kill -INT "$gpid"
t0=$(date +%s)
wait "$gpid"
brc=$?
is "$brc" 9 "interrupted during the back-off: the last status (9)"
[ $(( $(date +%s) - t0 )) -lt 5 ]; ok $? "and without waiting out the 30 s back-off"

# --on-event runs with the event in the environment
export EVLOG="$TMP/ev.log"
run_gw run --on-event 'echo "$GPUWISE_EVENT|$GPUWISE_EVENT_ATTEMPT|$GPUWISE_EVENT_DETAIL" >> "$EVLOG"' -- sh -c 'exit 5'
like "$(cat "$EVLOG")" "^start\|1\|attempt 1 started" "--on-event gets the start event"
like "$(cat "$EVLOG")" "^exit\|1\|attempt 1 ended: failure, status 5" "--on-event gets the exit event"

# logs: CSV and JSON lines
run_gw run --interval 100ms --log "$TMP/s.csv" -- sleep 0.5
is "$rc" 0 "with --log the job runs"
like "$(head -1 "$TMP/s.csv")" "^time_s,wall_ms,attempt,pids,host_rss_bytes,job_gpu_mem_bytes,paused" "CSV header"
n=$(wc -l < "$TMP/s.csv")
[ "$n" -ge 4 ]; ok $? "CSV has a row per sample ($n lines)"
run_gw run --interval 100ms --log "$TMP/s.jsonl" -- sleep 0.5
python3 -c '
import json,sys
rows=[json.loads(l) for l in open(sys.argv[1])]
assert len(rows)>=4, rows
assert all(r["host_rss_bytes"]>=0 and r["attempt"]==1 and r["job_gpu_mem_bytes"] is None for r in rows)
assert any(r["host_rss_bytes"]>0 for r in rows)
' "$TMP/s.jsonl"
ok $? "JSON lines: one object per sample, host RSS measured, GPU memory null"

# the HTML report is self-contained and renders
run_gw run --interval 100ms --restart on-failure --backoff 100ms..100ms --max-restarts 1 \
	--report "$TMP/r.html" -- sh -c 'sleep 0.6; exit 1'
is "$rc" 1 "report run exits with the job's status"
like "$(cat "$TMP/r.html")" "<svg" "the report has SVG charts"
unlike "$(cat "$TMP/r.html")" "<script|src=\"http|href=\"http" "no scripts, no external assets"
like "$(cat "$TMP/r.html")" "No GPU data" "says there was no GPU"
like "$(cat "$TMP/r.html")" ">restart<" "marks the restart"
. "$(dirname "$0")/report_shot.sh"
report_shot "$TMP/r.html" "$TMP/r.png" "host-only report"

done_testing
