#!/bin/sh
# Durability: SIGKILL the daemon during a burst of 10,000 submissions from 8
# clients, restart it: every acknowledged job is there exactly once, no job
# runs twice, and the jobs that were running are re-adopted and finish.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/queue-lib.sh"

q_start
"$GW" quota set crash --jobs 2 >/dev/null
job='{"argv":["sh","-c","echo $GPUWISE_JOB_ID >> '"$WORK"'/ran.txt; sleep 3"],"cwd":"'"$WORK"'","project":"crash","vram_bytes":1073741824}'
: > "$TMP/acks"
# one job is surely running at the kill, however loaded the machine is (the
# burst's own jobs may not have been started yet when half of it is in): it
# runs until the test releases it after the restart
pre=$("$GW" submit --project crash --vram 1G -- sh -c 'echo $GPUWISE_JOB_ID >> '"$WORK"'/ran.txt; while [ ! -e '"$WORK"'/release ]; do sleep 0.1; done')
q_wait_state "$pre" running 30
pids=""
for c in 1 2 3 4 5 6 7 8; do
	python3 "$QTOOLS" load "$SOCK" "$c" 1250 "$TMP/acks.$c" "$job" &
	pids="$pids $!"
done
# kill it once half the burst is acknowledged
_i=0
while [ "$(cat "$TMP"/acks.* 2>/dev/null | wc -l)" -lt 5000 ] && [ $_i -lt 1200 ]; do sleep 0.05; _i=$((_i + 1)); done
q_kill
# the jobs the state database says were running (with a process) at the kill
running_before=$(python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(" ".join(str(r[0]) for r in db.execute("SELECT id FROM jobs WHERE state = 2 AND pid > 0 ORDER BY id")))' "$TMP/state/state.db")
for p in $pids; do wait "$p"; done
cat "$TMP"/acks.* > "$TMP/acks"
n_acked=$(wc -l < "$TMP/acks")
diag "$n_acked submissions acknowledged before SIGKILL; running then: $running_before"
ok "$([ "$n_acked" -ge 5000 ] && [ "$n_acked" -lt 10000 ]; echo $?)" "the daemon was killed in the middle of the burst"

q_start
like "$(cat "$TMP/daemon.log")" "re-adopted" "the restarted daemon re-adopts running jobs"
"$GW" queue --all --limit 100000 --json > "$TMP/dump.json"
res=$(python3 "$QTOOLS" check-crash "$TMP/acks" "$TMP/dump.json" 2>"$TMP/check.err")
diag "$res"
[ -s "$TMP/check.err" ] && diag "$(cat "$TMP/check.err")"
like "$res" "^$n_acked acknowledged, [0-9]+ stored, 0 missing or moved, 0 twice$" "every acknowledged job is there exactly once"
stored=$(printf '%s' "$res" | awk '{print $3}')
ok "$([ "$stored" -ge "$n_acked" ] && [ "$stored" -le 10001 ]; echo $?)" "no more jobs stored than were sent (10,000 and the held job)"
touch "$WORK/release"
n_readopted=0
for id in $running_before; do
	q_wait_state "$id" done 30
	is "$(q_state "$id")" done "job $id, running at the crash, is re-adopted and ends done (exit status from its shim)"
	n_readopted=$((n_readopted + 1))
done
ok "$([ $n_readopted -ge 1 ] && case " $running_before " in *" $pre "*) true ;; *) false ;; esac; echo $?)" \
	"at least one job was running at the crash (the held job $pre among them)"
# let a few more run after the restart, then check nothing ran twice
sleep 4
dups=$(sort "$WORK/ran.txt" | uniq -d | wc -l)
is "$dups" 0 "no job ran twice ($(wc -l < "$WORK/ran.txt") runs)"
unlike "$(cat "$TMP/daemon.log")" "Sanitizer|runtime error" "no sanitizer report from the daemon"
done_testing
