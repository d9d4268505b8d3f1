#!/bin/sh
# The daemon (release build) under valgrind through a day in its life:
# quotas, shared and exclusive jobs, logs, hold/release, cancel of a running
# job, hostile clients, SIGTERM.  No invalid access, no definite leak.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/queue-lib.sh"
if ! command -v valgrind >/dev/null; then
	skip "valgrind not installed (apt-get install valgrind)"
	done_testing
	exit 0
fi
if [ ! -x "$GW_TOP/gpuwise" ]; then
	skip "no release build at $GW_TOP/gpuwise (make gpuwise)"
	done_testing
	exit 0
fi
QDAEMON="valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99 --child-silent-after-fork=yes --log-file=$TMP/vg.txt $GW_TOP/gpuwise"
# standard sizes per model, so that charging by placement runs under valgrind too
printf 'context_reserve = 512M\nclient_timeout = 2s\nvram_sizes = 8G,16G,48G\nvram_sizes[No Such Model] = 4G\n' > "$TMP/daemon.conf"
q_start
"$GW" quota set lab --vram 32G --jobs 3 >/dev/null
a=$("$GW" submit --project lab --vram 10G -- sh -c 'echo valgrind-job; sleep 1')
b=$("$GW" submit --project lab --vram 10G --after "$a" -- true)
c=$("$GW" submit --mode exclusive -- sleep 30)
d=$("$GW" submit --vram 40G -- true)
"$GW" hold "$d" >/dev/null
q_wait_state "$a" done 60
q_wait_state "$b" done 60
q_wait_state "$c" running 60
"$GW" cancel "$c" >/dev/null
q_wait_state "$c" cancelled 60
"$GW" release "$d" >/dev/null
q_wait_state "$d" done 60
"$GW" show --json "$a" >/dev/null
"$GW" show "$d" >/dev/null
run_gw logs "$a"
like "$out" "valgrind-job" "logs through the daemon under valgrind"
"$GW" queue --all --json >/dev/null
"$GW" quota --json >/dev/null
python3 "$QTOOLS" raw "$SOCK" > "$TMP/raw.txt" 2>&1
grep -E '^[a-z-]+: (unexpected|ping failed|never)' "$TMP/raw.txt" | sed 's/^/# /'
is "$(grep -cE '^[a-z-]+: (unexpected|ping failed|never)' "$TMP/raw.txt")" 0 "hostile clients answered as expected under valgrind"
q_stop
is "$q_daemon_rc" 0 "the daemon exits 0 under valgrind (99 would be a valgrind error)"
[ -e "$TMP/vg.txt" ]; ok $? "valgrind ran the daemon (its log exists)"
is "$(cat "$TMP/vg.txt")" "" "valgrind reports nothing (no invalid access, no definite or indirect leak)"
done_testing
