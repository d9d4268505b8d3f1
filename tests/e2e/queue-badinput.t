#!/bin/sh
# Bad input to the queue: hostile clients on the socket (malformed JSON,
# unknown fields, huge lines, negative and overflowing sizes, a silent
# client, a disconnect mid-request, a client that never reads) while the
# daemon keeps serving; bad options of the client commands and the daemon.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/queue-lib.sh"

q_start
python3 "$QTOOLS" raw "$SOCK" > "$TMP/raw.txt" 2>&1
r() { grep "^$1: " "$TMP/raw.txt" | sed "s/^$1: //"; }
like "$(r malformed)" "^error malformed JSON" "malformed JSON: an error reply"
like "$(r not-object)" "^error malformed JSON: '\\[' or '\\{' expected" "a JSON string: an error reply"
is "$(r unknown-field)" "error unknown key 'color' for op 'queue'" "an unknown field: an error reply"
is "$(r unknown-op)" "error unknown op 'shutdown'" "an unknown op: an error reply"
is "$(r negative)" "error 'vram_bytes' must not be negative" "a negative size: an error reply"
like "$(r overflow)" "^error malformed JSON: too big integer" "an overflowing size: an error reply"
is "$(r too-large)" "error 'vram_bytes' is too large" "a size beyond any GPU: an error reply"
like "$(r binary)" "^error malformed JSON" "binary garbage: an error reply"
is "$(r uid-claim)" "error unknown key 'uid' in 'job'" "a client cannot claim a uid"
like "$(r too-big-for-gpus)" "^error no GPU here has .* \\(the request 1.00 TiB plus a 512 MiB context reserve\\)$" "a request no GPU can hold is refused at submission"
like "$(r no-project)" "^error no project 'nope'" "an unknown project is refused"
is "$(r huge)" "error request longer than 1048576 bytes" "a huge line: an error reply"
is "$(r after-huge)" "ping ok" "... and the same connection still works"
is "$(r while-silent)" "ping ok" "a silent client does not block the others"
like "$(r silent)" "^dropped after [0-9.]+ s" "... and is dropped after the client timeout"
is "$(r after-disconnect)" "ping ok" "a client that disconnects mid-request does not hurt"
is "$(r while-greedy)" "ping ok" "a client that never reads its replies does not block the others"
is "$(r after-all)" "ping ok" "the daemon still serves after all of it"

# ---- client commands -----------------------------------------------------------
run_gw submit --vram -5G -- true
is "$rc" 2 "submit --vram -5G: usage error"
like "$err" "^gpuwise: --vram '-5G' is not a size" "... says so"
run_gw submit --vram 99999999T -- true
is "$rc" 2 "submit --vram 99999999T: usage error"
run_gw submit --gpus 0 --vram 1G -- true
is "$rc" 2 "submit --gpus 0: usage error"
run_gw submit --mode mig: -- true
is "$rc" 2 "submit --mode mig: without a profile: usage error"
run_gw submit --priority 5000 --vram 1G -- true
is "$rc" 2 "submit --priority 5000: usage error"
run_gw submit --vram 1G --mem-limit lots -- true
is "$rc" 2 "submit --mem-limit lots: usage error"
run_gw submit --vram 1G
is "$rc" 2 "submit without a command: usage error"
like "$err" "no command to queue" "... says so"
run_gw submit -- true
is "$rc" 2 "a shared job without --vram: usage error"
run_gw submit --vram auto -- true
is "$rc" 2 "--vram auto without plan options: usage error"
run_gw submit --mode exclusive --gpus 3 -- true
is "$rc" 3 "3 GPUs on a 2-GPU server: refused (exit 3)"
like "$err" "this server has 2 usable GPUs, the job asks for 3" "... says why"
run_gw submit --mode mig:1g.10gb -- true
is "$rc" 3 "a MIG profile this server lacks: refused"
run_gw show abc
is "$rc" 2 "show abc: usage error"
run_gw cancel 0
is "$rc" 2 "cancel 0: usage error"
run_gw cancel
is "$rc" 2 "cancel without ids: usage error"
run_gw quota set
is "$rc" 2 "quota set without a project: usage error"
run_gw quota set x
is "$rc" 2 "quota set without anything to set: usage error"
run_gw quota set 'bad name' --jobs 1
is "$rc" 3 "quota set with a bad project name: refused"
run_gw quota --vram 1G
is "$rc" 2 "quota --vram without set: usage error"
run_gw queue extra
is "$rc" 2 "queue EXTRA: usage error"

# ---- the daemon's own options ------------------------------------------------------
run_gw daemon --state "$TMP/state2" --socket "$SOCK"
is "$rc" 1 "a second daemon on a socket in use: exit 1"
like "$err" "^gpuwise: a daemon already listens on '$SOCK'$" "... says so"
printf 'colour = blue\n' > "$TMP/bad.conf"
run_gw daemon --state "$TMP/state3" --socket "$TMP/s3" --config "$TMP/bad.conf"
is "$rc" 1 "a config with an unknown key: exit 1"
like "$err" "^gpuwise: config '.*bad.conf' line 1: unknown key 'colour'$" "... names the line and the key"
printf '# comment\n\nborrowing = maybe\n' > "$TMP/bad.conf"
run_gw daemon --state "$TMP/state3" --socket "$TMP/s3" --config "$TMP/bad.conf"
like "$err" "line 3: bad value 'maybe' for 'borrowing'" "a bad config value is named, with its line (blank lines counted)"
run_gw daemon --config "$TMP/missing.conf" --state "$TMP/state3" --socket "$TMP/s3"
is "$rc" 1 "a missing --config: exit 1"
# the shipped sample config, every setting uncommented, is accepted
# (the lab page on a port the kernel picks, not the sample's 9400)
sed 's/^#\([a-z_]* =\)/\1/; s/^http = .*/http = 127.0.0.1:0/' "$GW_TOP/dist/daemon.conf" > "$TMP/sample.conf"
is "$(grep -c '^[a-z_]* =' "$TMP/sample.conf")" 27 "the sample config has its 27 settings"
"$GW" daemon --state "$TMP/state4" --socket "$TMP/s4" --config "$TMP/sample.conf" 2>"$TMP/s4.log" &
s4=$!
for _i in $(seq 100); do "$GW" queue --socket "$TMP/s4" >/dev/null 2>&1 && break; sleep 0.05; done
run_gw queue --socket "$TMP/s4"
is "$rc" 0 "a daemon with the sample config (all settings uncommented) serves"
kill "$s4"; wait "$s4"
run_gw daemon extra
is "$rc" 2 "daemon EXTRA: usage error"
q_stop
is "$q_daemon_rc" 0 "the daemon survived all of it and stops cleanly"
unlike "$(cat "$TMP/daemon.log")" "Sanitizer|runtime error" "no sanitizer report from the daemon"
done_testing
