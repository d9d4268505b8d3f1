#!/bin/sh
# gpuwise run under hostile conditions (issue 10): signals that used to
# kill gpuwise and leave the job unsupervised (SIGQUIT, SIGUSR1, SIGKILL),
# hooks' background children, a stalled or closed stdout, a job that
# stopped itself, --oom-halve-arg, host memory leaks, the summary line and
# the report of a failed attempt.  Every run is under `timeout`, so a hang
# is a failure, not a stuck test.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/report_shot.sh"
export GPUWISE_NO_STATUS_LINE=1

# wait_for FILE: up to 10 s for FILE to exist
wait_for() {
	_i=0
	while [ ! -s "$1" ] && [ $_i -lt 100 ]; do sleep 0.1; _i=$((_i + 1)); done
}
# alive PATTERN: how many processes match (pgrep -f)
alive() { pgrep -f "^$1\$" | wc -l | tr -d ' '; }

# ---- signals that used to end gpuwise and not the job --------------------------
for sig in QUIT USR1 HUP; do
	rm -f "$TMP/ready" "$TMP/got"
	# a background job of a script starts with SIGINT and SIGQUIT ignored, and
	# one under nohup with SIGHUP ignored (an ignored signal is discarded before
	# gpuwise's signalfd sees it, and sh cannot trap it): restore them
	perl -e '$SIG{$_} = "DEFAULT" for qw(INT QUIT HUP USR1); exec @ARGV or die' "$GW" run --no-gpu --grace 2s -- sh -c \
		"trap 'echo $sig > $TMP/got; exit 42' $sig; echo x > $TMP/ready; while :; do sleep 0.05; done" \
		>/dev/null 2>"$TMP/sig.err" &
	gpid=$!
	(sleep 20; kill -KILL "$gpid" 2>/dev/null) &
	dog=$!
	wait_for "$TMP/ready"
	kill -"$sig" "$gpid"
	wait "$gpid"
	grc=$?
	kill "$dog" 2>/dev/null
	pkill -f "trap 'echo $sig" 2>/dev/null
	is "$(cat "$TMP/got" 2>/dev/null)" "$sig" "SIG$sig to gpuwise reaches the job"
	is "$grc" 42 "  ... and gpuwise ends with the job's status (42)"
done

# ---- SIGKILL: nothing of the job lives on --------------------------------------
rm -f "$TMP/ready"
"$GW" run --no-gpu -- sh -c "sleep 3171 & setsid sleep 3172 & echo x > $TMP/ready; exec sleep 3173" \
	>/dev/null 2>&1 &
gpid=$!
wait_for "$TMP/ready"
sleep 0.3
is "$(alive 'sleep 317[123]')" 3 "the job's three processes run"
kill -KILL "$gpid"
wait "$gpid" 2>/dev/null
i=0
while [ "$(alive 'sleep 317[123]')" != 0 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
is "$(alive 'sleep 317[123]')" 0 "gpuwise SIGKILLed: the leader, a child and a setsid'd child all end"
pkill -f 'sleep 317[123]' 2>/dev/null

# ---- hooks are reaped with the job -----------------------------------------------
timeout 30 "$GW" run --no-gpu --grace 1s --on-event 'sleep 3181 >/dev/null 2>&1 &' -- true >/dev/null 2>&1
sleep 0.3
is "$(alive 'sleep 3181')" 0 "a hook's background process does not outlive the run"
pkill -f 'sleep 3181' 2>/dev/null

# ---- the output path never blocks the supervisor ---------------------------------
# The job floods stdout, which nobody reads (a FIFO held open, never read);
# SIGTERM to gpuwise must still reach the job within 100 ms.
mkfifo "$TMP/stall"
exec 7<>"$TMP/stall"
rm -f "$TMP/t1" "$TMP/ready"
perl -e 'sleep 1000' >"$TMP/stall" &
holder=$!
timeout 30 "$GW" run --no-gpu --grace 5s --hang-timeout 500ms -- perl -MTime::HiRes=time -e '
	$SIG{TERM} = sub { open my $f, ">", $ARGV[0]; printf $f "%.6f\n", time; close $f; exit 0 };
	if (fork() == 0) { $| = 1; print "x" x 65536 while 1; }
	open my $r, ">", $ARGV[1]; print $r "x"; close $r;
	sleep 1 while 1' "$TMP/t1" "$TMP/ready" >"$TMP/stall" 2>"$TMP/stall.err" &
gpid=$!
wait_for "$TMP/ready"
sleep 1
t0=$(perl -MTime::HiRes=time -e 'printf "%.6f", time')
kill -TERM "$gpid"
wait_for "$TMP/t1"
lat=$(perl -e 'printf "%.0f", ($ARGV[1] - $ARGV[0]) * 1000' "$t0" "$(cat "$TMP/t1" 2>/dev/null || echo 1e12)")
diag "SIGTERM reached the job $lat ms after it was sent to gpuwise, stdout stalled"
[ "$lat" -ge 0 ] && [ "$lat" -lt 100 ]; ok $? "a stalled stdout reader does not delay a forwarded signal (${lat} ms < 100 ms)"
kill "$holder" 2>/dev/null
exec 7<&-
unlike "$(cat "$TMP/stall.err")" "hang:" "a job blocked on a stalled reader is not taken for hung (--hang-timeout 500ms)"
cat "$TMP/stall" >/dev/null 2>&1 &
wait "$gpid" 2>/dev/null

# a closed stdout reaches the job as a closed pipe
first=$(timeout 20 "$GW" run --no-gpu -- yes 2>"$TMP/yes.err" | head -1)
is "$first" "y" "gpuwise run -- yes | head -1 prints one line"
out=$(timeout 20 sh -c "\"$GW\" run --no-gpu -- yes 2>/dev/null | head -1 >/dev/null; echo done")
is "$out" "done" "gpuwise run -- yes | head ends (the job sees the closed pipe)"
like "$(cat "$TMP/yes.err")" "status 141 \\(Broken pipe\\)" "  ... yes ended by SIGPIPE"

# a forwarded signal to a job that stopped itself is followed by SIGCONT
rm -f "$TMP/ready"
"$GW" run --no-gpu --grace 30s -- sh -c "echo x > $TMP/ready; kill -STOP \$\$; exit 0" \
	>/dev/null 2>&1 &
gpid=$!
(sleep 20; kill -KILL "$gpid" 2>/dev/null) &
dog=$!
wait_for "$TMP/ready"
sleep 0.5
kill -TERM "$gpid"
wait "$gpid"
is "$?" 143 "SIGTERM to a stopped job: SIGCONT follows, the job ends (143), no hang"
kill "$dog" 2>/dev/null

# ---- --oom-halve-arg -------------------------------------------------------------
cat > "$TMP/train.sh" <<'EOF'
#!/bin/sh
# prints its batch size; "CUDA out of memory" until it is 2 or less
log=$1; shift
for a in "$@"; do case $prev in --batch-size) b=$a ;; esac; case $a in --batch-size=*) b=${a#*=} ;; esac; prev=$a; done
echo "$b" >> "$log"
if [ "$b" -gt 2 ]; then
	echo "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB" >&2
	exit 1
fi
EOF
chmod +x "$TMP/train.sh"
: > "$TMP/sizes"
out=$(timeout 30 "$GW" run --no-gpu --restart on-failure --backoff 100ms..100ms --oom-halve-arg --batch-size --json \
	-- "$TMP/train.sh" "$TMP/sizes" --lr 3e-4 --batch-size 8 --epochs 1 2>"$TMP/halve.err"); rc=$?
is "$rc" 0 "--oom-halve-arg: the job succeeds once the batch fits"
is "$(tr '\n' ' ' < "$TMP/sizes")" "8 4 2 " "--batch-size 8 is halved to 4, then 2"
is "$(printf '%s\n' "$out" | jget '[a["arg_value"] for a in d["attempts"]]')" '["8", "4", "2"]' "the JSON says each attempt's value"
: > "$TMP/sizes"
timeout 30 "$GW" run --no-gpu --restart on-failure --backoff 100ms..100ms --oom-halve-arg --batch-size \
	-- "$TMP/train.sh" "$TMP/sizes" --batch-size=5 >/dev/null 2>&1
is "$(tr '\n' ' ' < "$TMP/sizes")" "5 2 " "--batch-size=5 is halved to 2 (the joined form)"
out=$(timeout 10 "$GW" run --no-gpu --oom-halve-arg --batch-size -- "$TMP/train.sh" "$TMP/sizes" --lr 1 2>&1); rc=$?
is "$rc" 1 "--oom-halve-arg with no such option in the command: exit 1"
like "$out" "the command has no '--batch-size N' or '--batch-size=N'" "  ... said so"

# ---- host memory (RSS) leaks: the same detector -----------------------------------
out=$(timeout 60 "$GW" run --no-gpu --interval 100ms --leak-warmup 500ms --leak-window 300ms --on-leak stop \
	--grace 1s --json -- python3 -c '
import time
keep = []
for i in range(400):
    keep.append(b"x" * (4 << 20))
    time.sleep(0.05)' 2>"$TMP/rss.err"); rc=$?
like "$(cat "$TMP/rss.err")" "host-leak: job host memory \\(RSS\\) grows" "a growing host RSS is reported as a leak"
slope=$(printf '%s\n' "$out" | jget '[e["slope_bytes_per_s"] for e in d["events"] if e["event"]=="host-leak"][0]')
python3 -c 'import sys; s=float(sys.argv[1]); t=80*2**20; sys.exit(not 0.3*t < s < 1.5*t)' "$slope"
ok $? "  ... at about the 80 MiB/s the job allocates ($slope B/s)"
is "$(printf '%s\n' "$out" | jget 'd["attempts"][0]["class"] + "/" + d["attempts"][0]["reason"]')" \
	"stopped-by-gpuwise/host-leak" "--on-leak stop stops it"
out=$(timeout 60 "$GW" run --no-gpu --interval 100ms --leak-warmup 500ms --leak-window 300ms --json -- python3 -c '
import time
keep = [b"x" * (64 << 20)]
time.sleep(4)' 2>"$TMP/flat.err")
is "$(printf '%s\n' "$out" | jget 'len([e for e in d["events"] if e["event"]=="host-leak"])')" 0 \
	"a job that allocates once and holds it is not a leak"

# ---- the summary line and the failed attempt in the report ---------------------------
timeout 60 "$GW" run --no-gpu --interval 100ms --restart on-failure --max-restarts 1 --backoff 1s..1s \
	--report "$TMP/fail.html" -- python3 -c '
import time
time.sleep(1.2)
raise RuntimeError("the dataloader worker died <badly>")' >/dev/null 2>"$TMP/fail.err"
rc=$?
is "$rc" 1 "the failing job's status passes through"
last=$(tail -1 "$TMP/fail.err")
like "$last" "^gpuwise: run: 2 attempts, failure \\(exit 1\\) after [0-9.]+s; peak job GPU memory n/a, host RSS [0-9.]+ [KMG]iB; report $TMP/fail.html$" \
	"one summary line at exit: attempts, outcome, peaks, report"
html=$(cat "$TMP/fail.html")
like "$html" "RuntimeError: the dataloader worker died &lt;badly&gt;" "the report shows the failed attempt's stderr tail (escaped)"
like "$html" "Traceback \\(most recent call last\\)" "  ... from the traceback's start"
# the host memory chart: one line per attempt, none across the back-off gap
n=$(printf '%s\n' "$html" | sed -n '/aria-label="Host memory"/,/<\/svg>/p' | grep -c '<polyline')
is "$n" 2 "the RSS chart draws 2 lines for 2 attempts (no line across the back-off)"
report_shot "$TMP/fail.html" "$TMP/fail.png" "the failed run's report in chromium"

# ---- valgrind: run is long-running code, every allocation is freed ------------------
rel=$GW_TOP/gpuwise
if command -v valgrind >/dev/null && [ -x "$rel" ]; then
	timeout 120 valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect,possible --error-exitcode=9 \
		"$rel" run --no-gpu --interval 100ms --restart on-failure --max-restarts 2 --backoff 100ms..100ms \
		--on-event true --report "$TMP/vg.html" --log "$TMP/vg.csv" --json \
		-- sh -c 'echo out; echo err >&2; sleep 0.5; exit 3' >"$TMP/vg.out" 2>"$TMP/vg.err"
	is "$?" 3 "under valgrind: no error, no leak (the job's status 3 passes through)"
	unlike "$(grep -E 'ERROR SUMMARY|lost:' "$TMP/vg.err")" 'ERROR SUMMARY: [1-9]|lost: [1-9]' "  ... valgrind's summary is clean"
else
	skip "valgrind or the release binary is missing (apt-get install valgrind; make gpuwise)"
fi

done_testing
