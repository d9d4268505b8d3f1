# Helpers for the queue tests (sourced after lib.sh): a daemon on a
# temporary socket with the fake NVML of a 2 x 48 GiB server.
chmod 755 "$TMP"
# Jobs run as their submitter (nobody in these tests), through this binary
# and the fake NVML.  When the checkout is not reachable by other users (a
# clone under a 0700 directory), run from copies in $TMP, which is.
if ! setpriv --reuid nobody --regid nogroup --clear-groups /usr/bin/test -x "$GW" 2>/dev/null; then
	mkdir -p "$TMP/reach/bin" "$TMP/reach/fixtures"
	cp "$GW" "$TMP/reach/bin/gpuwise"
	[ -f "$(dirname "$GW")/libgpuwise-cap.so" ] && cp "$(dirname "$GW")/libgpuwise-cap.so" "$TMP/reach/bin/"
	cp -r "$GW_FAKE" "$TMP/reach/fake"
	cp -r "$FIX/scenarios" "$TMP/reach/fixtures/scenarios"
	chmod -R a+rX "$TMP/reach"
	diag "$GW is not reachable by nobody: running from copies in $TMP/reach"
	GW=$TMP/reach/bin/gpuwise GW_FAKE=$TMP/reach/fake FIX=$TMP/reach/fixtures
	export GW GW_FAKE
fi
export GPUWISE_NVML_LIB="$GW_FAKE/libnvidia-ml.so"
export GPUWISE_FAKE_SCENARIO="$FIX/scenarios/server-2gpu-queue.json"
SOCK=$TMP/q.sock
export GPUWISE_SOCKET="$SOCK"
WORK=$TMP/work
mkdir -p "$WORK"
chmod 777 "$WORK"
cd "$WORK" || exit 1
QTOOLS=$GW_TOP/tests/e2e/queue_tools.py
printf 'context_reserve = 512M\nclient_timeout = 2s\n' > "$TMP/daemon.conf"
q_pid=""

# Start the daemon (LEAKME in its environment must not reach the jobs) on
# the state directory $QSTATE (default $TMP/state).
q_start() {
	# shellcheck disable=SC2086
	LEAKME=daemon ${QDAEMON:-"$GW"} daemon --state "${QSTATE:-$TMP/state}" --socket "$SOCK" --config "$TMP/daemon.conf" \
		2>>"$TMP/daemon.log" &
	q_pid=$!
	_i=0
	while [ $_i -lt 600 ]; do
		"$GW" queue >/dev/null 2>&1 && return 0
		sleep 0.05
		_i=$((_i + 1))
	done
	diag "the daemon did not start:"
	sed 's/^/#   /' "$TMP/daemon.log" | tail -20
	return 1
}
q_stop() {
	[ -n "$q_pid" ] || return 0
	kill -TERM "$q_pid" 2>/dev/null
	wait "$q_pid"
	q_daemon_rc=$?
	q_pid=""
}
q_kill() {
	kill -KILL "$q_pid" 2>/dev/null
	wait "$q_pid" 2>/dev/null
	q_pid=""
}
# Cancel what still runs (the jobs outlive the daemon by design), then stop it.
q_cleanup() {
	if [ -n "$q_pid" ]; then
		_ids=$(python3 "$QTOOLS" active "$SOCK" 2>/dev/null)
		[ -n "$_ids" ] && printf '%s\n' $_ids | xargs -n 1000 "$GW" cancel >/dev/null 2>&1
		python3 "$QTOOLS" drain "$SOCK" 40 >/dev/null 2>&1
		q_stop
	fi
}
trap 'q_cleanup; cd /; rm -rf "$TMP"' EXIT

q_state() { "$GW" show --json "$1" 2>/dev/null | jget "d['state']"; }
q_wait_state() { # ID STATE SECONDS
	python3 "$QTOOLS" wait "$SOCK" "$1" "$2" "$3" || diag "job $1 did not reach $2 in $3 s (it is $(q_state "$1"))"
}
q_sample_until_idle() { # FILE SECONDS
	python3 "$QTOOLS" sample "$SOCK" "$1" "$2" || diag "the queue did not drain in $2 s"
}
as_nobody() {
	out=$(setpriv --reuid nobody --regid nogroup --clear-groups "$GW" "$@" 2>"$TMP/stderr"); rc=$?
	err=$(cat "$TMP/stderr")
}
