#!/bin/sh
# Issue 20, item 6: gpuwise run never writes --report/--log through a planted
# symbolic link, and the queue's run_args are parsed as gpuwise run parses them,
# so that a job cannot displace the daemon's own --vram-cap and --log (a real
# daemon with vram_cap = yes and over_request = stop).
. "$(dirname "$0")/lib.sh"
unset LD_PRELOAD GPUWISE_CAP_REGION
export GPUWISE_NO_STATUS_LINE=1

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null 2>&1; then
	skip "needs root and setpriv (a link planted by another user)"
	done_testing
	exit 0
fi

# ---- a planted link at --report / --log in a group-writable directory ----------------
# root's own file, and a directory its group (nogroup) may write, where nobody plants links
chmod 755 "$TMP"
printf 'precious\n' > "$TMP/root-owned"
chmod 644 "$TMP/root-owned"
mkdir "$TMP/shared"
chgrp nogroup "$TMP/shared"
chmod 2775 "$TMP/shared"
setpriv --reuid nobody --regid nogroup --clear-groups sh -c '
	ln -s "$1/root-owned" "$1/shared/report.html" &&
	ln -s "$1/root-owned" "$1/shared/run.jsonl" &&
	mkfifo "$1/shared/fifo.csv"' sh "$TMP"
ok $? "nobody planted two links to a root-owned file and a FIFO in the group-writable directory"
for opt in report log; do
	f=$TMP/shared/report.html
	[ "$opt" = log ] && f=$TMP/shared/run.jsonl
	run_gw run --no-gpu "--$opt" "$f" -- touch "$TMP/ran-$opt"
	is "$rc" 1 "--$opt at a planted link: exit 1"
	is "$err" "gpuwise: cannot write '$f': it is a symbolic link, which gpuwise run never writes through" \
		"--$opt at a planted link: the one-line refusal"
	is "$(cat "$TMP/root-owned")" "precious" "--$opt: the root-owned file the link points to is untouched"
	[ ! -e "$TMP/ran-$opt" ]; ok $? "--$opt: the job did not start"
done
# a FIFO is not waited on (a reader that never comes would hang the run)
out=$(timeout 20 "$GW" run --no-gpu --log "$TMP/shared/fifo.csv" -- true 2>&1); rc=$?
is "$rc" 1 "--log at a planted FIFO: exit 1, no hang"
is "$out" "gpuwise: cannot write '$TMP/shared/fifo.csv': No such device or address" "--log at a FIFO: one line"
# a plain file there (and a new one) is still written
printf 'old\n' > "$TMP/shared/mine.html"
run_gw run --no-gpu --report "$TMP/shared/mine.html" --log "$TMP/shared/new.csv" -- true
is "$rc" 0 "--report over an existing regular file and --log to a new one: exit 0"
like "$(head -c 200 "$TMP/shared/mine.html")" "<!DOCTYPE html>" "... the report replaced the old file"
[ -s "$TMP/shared/new.csv" ]; ok $? "... the log was written"

# ---- run_args under a real daemon: vram_cap = yes, over_request = stop ----------------------
. "$(dirname "$0")/queue-lib.sh"
export GPUWISE_FAKE_SCENARIO="$FIX/scenarios/server-2gpu-queue-overuse.json"
printf 'context_reserve = 512M\nvram_cap = yes\nover_request = stop\nover_request_grace = 10%%\n' > "$TMP/daemon.conf"
q_start
# shellcheck disable=SC2016
run_gw submit --vram 2G --run-opt=-- -- sh -c 'echo "cap=${GPUWISE_CAP_REGION:+set}"'
is "$rc" 3 "run_args ['--', ...]: refused at submit (exit 3)"
is "$err" "gpuwise: 'run_args' may not hold '--': the job's command goes after the daemon's options" \
	"... with the reason"
run_gw submit --vram 2G --run-opt --lo --run-opt "$TMP/x.jsonl" -- true
is "$rc" 3 "an abbreviated --log in run_args: refused (exit 3)"
is "$err" "gpuwise: 'run_args' may not abbreviate options: '--lo' (write it in full, e.g. '--log')" "... with the reason"
run_gw submit --vram 2G --run-opt --vram-cap --run-opt 1P -- true
is "$rc" 3 "--vram-cap in run_args: refused (exit 3)"
is "$err" "gpuwise: 'run_args' may not set '--vram-cap' (the daemon sets it)" "... with the reason"
run_gw submit --vram 2G --run-opt --grace -- true
is "$rc" 3 "an option without its value (it would take the daemon's --vram-cap as one): refused (exit 3)"
is "$err" "gpuwise: 'run_args': option '--grace' needs a value" "... with the reason"
run_gw queue --json --all
is "$(printf '%s' "$out" | jget "len(d['jobs'])")" 0 "no refused submission is in the queue"
# accepted run options still leave the job capped and sampled
id=$("$GW" submit --vram 10G --run-opt --interval --run-opt 200ms -- sh -c 'echo "cap=${GPUWISE_CAP_REGION:+set} preload=${LD_PRELOAD##*/}"; exec sleep 30')
q_wait_state "$id" failed 30
run_gw show --json "$id"
like "$(printf '%s' "$out" | jget "d['reason']")" "^stopped: used 30.00 GiB of GPU memory, over its request of 10.00 GiB by more than 10%$" \
	"with run options, over_request = stop still sees the samples and stops the job"
like "$("$GW" logs "$id")" "cap=set preload=libgpuwise-cap.so" "... and the job ran under the VRAM cap"
q_stop

# ---- the table of run options agrees with gpuwise run's own -------------------------------
run_names=$(sed -n 's/^\t\t{"\([a-z-]*\)", \(required\|no\)_argument, NULL, [A-Z_h'"'"']*},$/\1/p' "$GW_TOP/src/cmd/run.c" | sort | tr '\n' ' ')
table_names=$(grep -o '{"[a-z-]*", \(true\|false\), \(true\|false\)}' "$GW_TOP/src/watch/runargs.c" | sed 's/{"\([a-z-]*\)".*/\1/' | sort | tr '\n' ' ')
isnt "$run_names" "" "gpuwise run's long options were found in src/cmd/run.c"
is "$table_names" "$run_names" "src/watch/runargs.c knows every option of gpuwise run, and no other"

done_testing
