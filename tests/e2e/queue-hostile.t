#!/bin/sh
# Issue 33, against a real root daemon with nobody and a user this test
# creates: a heavy project's flood at --priority 1000 starts none of its jobs
# ahead of the favoured project's waiting ones (priority orders a user's own
# jobs; the cross-user level is an administrator's or capped by
# max_priority[PROJECT]); one user's logs are kept to user_log_limit (their
# oldest go first) and, below free_space_reserve, only the user holding the
# logs is refused; control characters in names are refused at submit and
# printed escaped; an acknowledged cancel survives a SIGKILL of the daemon
# and the job ends "cancelled" within kill_wait; a removed WAL stops the
# acknowledgements with the reason.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/queue-lib.sh"

ST=$TMP/state
QSTATE=$ST
mkdir -p "$ST"
if ! mount -t tmpfs -o size=48m,mode=0711 tmpfs "$ST" 2>"$TMP/mount.err"; then
	diag "cannot mount a tmpfs: $(cat "$TMP/mount.err")"
	skip "this test needs root and mount -t tmpfs"
	done_testing
	exit 0
fi
U=gwh$$
useradd -M -N -g nogroup -s /bin/sh "$U" 2>"$TMP/useradd.err" || diag "useradd: $(cat "$TMP/useradd.err")"
trap 'q_cleanup; cd /; umount -l "$ST" 2>/dev/null; userdel "$U" 2>/dev/null; rm -rf "$TMP"' EXIT
as_u() { _u=$1; shift; out=$(setpriv --reuid "$_u" --regid nogroup --clear-groups "$GW" "$@" 2>"$TMP/stderr"); rc=$?; err=$(cat "$TMP/stderr"); }
# start order of jobs (by start time) as the first letter of their project
order() { # IDS...
	"$GW" queue --all --json | python3 -c '
import json, sys
want = set(int(x) for x in sys.argv[1:])
jobs = [j for j in json.load(sys.stdin)["jobs"] if j["id"] in want]
jobs.sort(key=lambda j: (j["start_ms"] or 0, j["id"]))
print("".join(j["project"][0] for j in jobs))' "$@"
}

# ---- the priority-1000 flood ------------------------------------------------------
printf 'context_reserve = 512M\nclient_timeout = 2s\nfairshare_half_life = 1h\nmax_priority[fav] = 10\nfree_space_reserve = 0\n' > "$TMP/daemon.conf"
q_start
"$GW" quota set fav --vram 1000G --members "$U" >/dev/null
"$GW" quota set heavy --vram 1000G --members nobody >/dev/null
# heavy has used the GPUs (4 s of both); fav has not.  The jobs below have a
# time limit of 1 s: a start weighs that long on its project for the rest of
# its pass (the reservation for the next one), not the mean run of 4 s
as_u nobody submit --project heavy --gpus 2 --vram 40G --name past -- sleep 4
q_wait_state "$out" done 30
# a blocker of root's holds both GPUs while the others queue
blk=$("$GW" submit --gpus 2 --vram 40G --name blocker -- sleep 2)
q_wait_state "$blk" running 20
ids=""
for i in 1 2 3 4; do as_u "$U" submit --project fav --time-limit 1s --gpus 2 --vram 40G --name f$i -- true; ids="$ids $out"; done
for i in $(seq 1 12); do as_u nobody submit --project heavy --priority 1000 --time-limit 1s --gpus 2 --vram 40G --name h$i -- true; ids="$ids $out"; done
set -- $ids
h1=$5
run_gw show --json "$h1"
is "$(printf '%s' "$out" | jget "(d['priority'], d['priority_level'])")" "(1000, 0)" "nobody's --priority 1000 is kept for ordering its own jobs, at level 0"
python3 "$QTOOLS" drain "$SOCK" 60 >/dev/null 2>&1
o=$(order $ids)
diag "start order after the blocker: $o"
like "$o" "^ffff" "the favoured project's 4 waiting jobs all start before the heavy project's 12 at --priority 1000"
is "$(printf '%s' "$o" | tr -cd h | wc -c)" 12 "... and the flood still runs, after them"
as_u "$U" submit --project fav --priority 50 --gpus 2 --vram 40G --name capped -- true
capped=$out
run_gw show --json "$capped"
is "$(printf '%s' "$out" | jget "d['priority_level']")" 10 "max_priority[fav] = 10 caps a member's --priority 50 at level 10"
q_stop

# ---- the fair tree inside one project ----------------------------------------------
printf 'context_reserve = 512M\nclient_timeout = 2s\nfairshare_half_life = 1h\nfree_space_reserve = 0\n' > "$TMP/daemon.conf"
q_start
blk=$("$GW" submit --gpus 2 --vram 40G --name blocker -- sleep 1.5)
q_wait_state "$blk" running 20
ids=""
for i in $(seq 1 10); do as_u nobody submit --gpus 2 --vram 40G --name n$i -- sleep 0.1; ids="$ids $out"; done
as_u "$U" submit --gpus 2 --vram 40G --name mine -- sleep 0.1
mine=$out
run_gw show --json "$mine"
pos=$(printf '%s' "$out" | jget "d['queue_position']")
ok "$([ "$pos" -le 2 ] 2>/dev/null && echo 0 || echo 1)" "in the open default project, another user's job is at position $pos behind ten of nobody's (was 11)"
python3 "$QTOOLS" drain "$SOCK" 60 >/dev/null 2>&1
q_stop

# ---- names are data ----------------------------------------------------------------
q_start
as_u nobody submit --vram 1G --name "$(printf 'x\033]52;c;SGk=\007y')" -- true
is "$rc" 3 "a job name with ESC and BEL is refused at submit (exit 3)"
like "$err" "control characters" "... saying why"
# a name stored before the check (an older version): shown escaped everywhere
as_u nobody submit --vram 1G --name plain -- sh -c "$(printf 'echo \033[31mred')"
old=$out
q_wait_state "$old" done 20
q_stop
python3 - "$ST/state.db" "$old" <<'EOF'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
spec = json.loads(db.execute("SELECT spec FROM jobs WHERE id=?", (int(sys.argv[2]),)).fetchone()[0])
spec["name"] = "a\x1b]52;c;SGk=\x07b\n999 forged row"
db.execute("UPDATE jobs SET spec=? WHERE id=?", (json.dumps(spec), int(sys.argv[2])))
db.commit()
EOF
q_start
# another user's listing, and the administrator's (root) own view of the job
for cmd in "queue --all" "root:show $old" "root:queue --all"; do
	case $cmd in
	root:*) run_gw ${cmd#root:} ;;
	*) as_u "$U" $cmd ;;
	esac
	ok "$(printf '%s' "$out" | LC_ALL=C grep -q "$(printf '[\033\007]')" && echo 1 || echo 0)" "$cmd: no raw ESC or BEL reaches the terminal"
	like "$out" 'a\\x1b\]52;c;SGk=\\x07b\\x0a999 forged row' "$cmd: the name shows escaped (\\x1b, \\x07, \\x0a)"
done
run_gw show "$old"
like "$out" 'echo \\x1b\[31mred' "show: the command shows escaped too"
run_gw queue --all --json
like "$out" '"a\\u001[bB]\]52;c;SGk=\\u0007b\\n999 forged row"' "queue --json keeps the name, escaped as JSON does"
q_stop

# ---- a cancel survives a SIGKILL of the daemon -------------------------------------
printf 'context_reserve = 512M\nclient_timeout = 2s\nkill_wait = 2s\nfree_space_reserve = 0\n' > "$TMP/daemon.conf"
q_start
as_u nobody submit --vram 1G --name stubborn -- sh -c 'trap "" TERM; while :; do sleep 0.1; done'
stub=$out
q_wait_state "$stub" running 20
sleep 0.5
run_gw show --json "$stub"
shim=$(printf '%s' "$out" | jget "d['pid']")
like "$(ps -o args= -p "$shim")" "^gpuwise-shim job $stub" "a job's shim says what it is in ps (not 'gpuwise daemon --state ...')"
ok "$(pgrep -f 'gpuwise daemon' | grep -qx "$shim" && echo 1 || echo 0)" "... so pkill -f 'gpuwise daemon' does not take it for the daemon"
as_u nobody cancel "$stub"
is "$rc" 0 "the cancel of a job that ignores SIGTERM is acknowledged"
q_kill
t0=$(date +%s)
q_start
q_wait_state "$stub" cancelled 15
is "$(q_state "$stub")" cancelled "after a SIGKILL of the daemon and a restart, the job ends cancelled (not done)"
secs=$(($(date +%s) - t0))
ok "$([ "$secs" -le 8 ] && echo 0 || echo 1)" "... within its kill_wait of 2 s (took ${secs} s from the restart)"
q_stop

# ---- a removed WAL stops the acknowledgements -------------------------------------
q_start
as_u nobody submit --vram 1G -- true
is "$rc" 0 "a submission is acknowledged"
rm -f "$ST/state.db-wal"
as_u nobody submit --vram 1G -- true
isnt "$rc" 0 "after the WAL is removed under the daemon, a submission is refused"
like "$err" "was removed or replaced while the daemon ran" "... with the reason"
q_kill
rm -rf "${ST:?}"/*

# ---- log budgets -------------------------------------------------------------------
# each of nobody's jobs writes 3 MB (log_limit 4M); ten of them, one at a time
writer='head -c 3000000 /dev/zero | tr "\0" x'
printf 'context_reserve = 512M\nclient_timeout = 2s\nlog_limit = 4M\nuser_log_limit = 8M\nfree_space_reserve = 20M\n' > "$TMP/daemon.conf"
q_start
ids=""
for i in $(seq 1 10); do as_u nobody submit --gpus 2 --vram 40G --name w$i -- sh -c "$writer"; ids="$ids $out"; done
python3 "$QTOOLS" drain "$SOCK" 60 >/dev/null 2>&1
kept=0
for j in $ids; do [ -f "$ST/logs/$j.log" ] && kept=$((kept + $(stat -c %s "$ST/logs/$j.log"))); done
diag "nobody's kept logs: $kept bytes of 30000000 written"
ok "$([ "$kept" -le 8388608 ] && [ "$kept" -ge 6000000 ] && echo 0 || echo 1)" "user_log_limit 8M: nobody's logs are kept to the budget ($kept bytes)"
set -- $ids
ok "$([ ! -f "$ST/logs/$1.log" ] && [ -f "$ST/logs/${10}.log" ] && echo 0 || echo 1)" "... the oldest went first, the newest is kept"
as_u "$U" submit --vram 1G -- true
is "$rc" 0 "another user's submit is accepted"
# the per-user byte counter in the database (user_logs) against the kept logs on disk
logbytes() { # UID: "COUNTER DISK" for that user
	python3 - "$ST" "$1" <<'PYEOF'
import os, sqlite3, sys
st, uid = sys.argv[1], int(sys.argv[2])
db = sqlite3.connect("file:%s/state.db?mode=ro" % st, uri=True)
row = db.execute("SELECT bytes FROM user_logs WHERE uid = ?", (uid,)).fetchone()
disk = 0
for (i,) in db.execute("SELECT id FROM jobs WHERE uid = ? AND logs_kept = 1 AND state >= 3", (uid,)):
    for p in ("%s/logs/%d.log" % (st, i), "%s/run/%d.jsonl" % (st, i)):
        if os.path.exists(p):
            s = os.stat(p)
            disk += max(s.st_blocks * 512, s.st_size)
print(row[0] if row else 0, disk)
PYEOF
}
nb=$(id -u nobody)
set -- $(logbytes "$nb")
diag "nobody's log bytes: counter $1, on disk $2"
ok "$([ "$1" = "$2" ] && [ "$1" -ge 6000000 ] && echo 0 || echo 1)" "the database's count of nobody's log bytes ($1) is what the kept logs take on disk ($2)"
q_stop
# a log removed while the daemon is down: the start-up scan corrects the count;
# user_log_limit[nobody] = 2M gives nobody a smaller budget than everyone's 8M (what is left, 3 MB, is over it)
set -- $ids
rm -f "$ST/logs/${10}.log"
printf 'context_reserve = 512M\nclient_timeout = 2s\nlog_limit = 4M\nuser_log_limit = 8M\nuser_log_limit[nobody] = 2M\nfree_space_reserve = 20M\n' > "$TMP/daemon.conf"
q_start
set -- $(logbytes "$nb")
diag "after a log was removed with the daemon down: counter $1, on disk $2"
is "$1" "$2" "the start-up scan corrects the count to the disk ($2 bytes)"
like "$(cat "$TMP/daemon.log")" "the logs of 1 ended job changed on disk while the daemon was away" "... and the daemon's log says so"
as_u nobody submit --vram 1G -- true
python3 "$QTOOLS" drain "$SOCK" 30 >/dev/null 2>&1
set -- $(logbytes "$nb")
diag "nobody under user_log_limit[nobody] = 2M: counter $1, on disk $2"
ok "$([ "$1" = "$2" ] && [ "$1" -le 2097152 ] && echo 0 || echo 1)" "user_log_limit[nobody] = 2M: nobody's oldest logs are pruned to their own budget ($1 bytes, counted as on disk)"
q_stop
# log_retention[nobody] = 1s: nobody's ended logs go at the next start; the other user's stay
printf 'context_reserve = 512M\nclient_timeout = 2s\nlog_limit = 4M\nlog_retention[nobody] = 1s\nfree_space_reserve = 20M\n' > "$TMP/daemon.conf"
sleep 1.1
q_start
for _i in $(seq 1 40); do [ "$(logbytes "$nb")" = "0 0" ] && break; sleep 0.1; done
is "$(logbytes "$nb")" "0 0" "log_retention[nobody] = 1s: nobody's ended jobs' logs are removed, and their count is 0"
ukept=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect("file:%s/state.db?mode=ro" % sys.argv[1], uri=True).execute("SELECT count(*) FROM jobs WHERE uid = ? AND logs_kept = 1", (int(sys.argv[2]),)).fetchone()[0])' "$ST" "$(id -u "$U")")
is "$ukept" 1 "... the other user's log is kept (log_retention 30 days)"
q_stop
# without a budget, nobody's logs take the disk below the reserve
printf 'context_reserve = 512M\nclient_timeout = 2s\nlog_limit = 4M\nuser_log_limit = 0\nfree_space_reserve = 20M\n' > "$TMP/daemon.conf"
q_start
for i in $(seq 1 10); do as_u nobody submit --gpus 2 --vram 40G --name w$i -- sh -c "$writer"; done
python3 "$QTOOLS" drain "$SOCK" 60 >/dev/null 2>&1
diag "state disk free: $(df -h "$ST" | tail -1)"
sleep 2.1 # the users' log bytes are looked at most every 2 s
as_u nobody submit --vram 1G -- true
is "$rc" 3 "below free_space_reserve, the user whose logs fill the disk is refused (exit 3)"
like "$err" "your jobs' logs take" "... told that their logs are why"
as_u "$U" submit --vram 1G -- true
is "$rc" 0 "... and another user's submit is still accepted"
q_stop

# ---- the page and its port ---------------------------------------------------------
rm -rf "${ST:?}"/*
hport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# nobody takes the port first: the daemon's start fails, saying so
setpriv --reuid nobody --regid nogroup --clear-groups /usr/bin/python3 -c 'import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(__import__("sys").argv[1]))); s.listen(5); time.sleep(30)' "$hport" &
squat=$!
sleep 0.5
printf 'context_reserve = 512M\nclient_timeout = 2s\nfree_space_reserve = 0\nhttp = 127.0.0.1:%s\n' "$hport" > "$TMP/daemon.conf"
: > "$TMP/daemon.log"
timeout 20 "$GW" daemon --state "$ST" --socket "$SOCK" --config "$TMP/daemon.conf" 2>"$TMP/squat.err"
rc=$?
kill "$squat" 2>/dev/null
wait "$squat" 2>/dev/null
isnt "$rc" 0 "a page port squatted by nobody fails the daemon's start (exit $rc)"
like "$(cat "$TMP/squat.err")" "cannot serve the lab page on 127.0.0.1:$hport: Address already in use" "... with the reason"
q_start
page_pid() { pgrep -f "status --serve 127.0.0.1:$hport" | head -1; }
for _i in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$hport/" && break; sleep 0.1; done
p1=$(page_pid)
is "$(ps -o user= -p "$p1" 2>/dev/null | tr -d ' ')" "$(id -un gpuwise-page 2>/dev/null || echo nobody)" "the page server runs as gpuwise-page, else nobody, not root"
setpriv --reuid nobody --regid nogroup --clear-groups cat "/proc/$p1/environ" >/dev/null 2>&1
isnt "$?" 0 "nobody cannot read the page server's environment"
setpriv --reuid "$(ps -o uid= -p "$p1" | tr -d ' ')" --regid nogroup --clear-groups kill -KILL "$p1"
t0=$(python3 -c 'import time; print(time.time())')
back=no
for _i in $(seq 1 40); do
	curl -s -m 1 "http://127.0.0.1:$hport/" | grep -q "<html" && { back=yes; break; }
	sleep 0.05
done
dt=$(python3 -c "import time; print(round(time.time() - $t0, 2))")
is "$back" yes "killed by a process of its own user, the page server is back (in ${dt} s)"
ok "$(python3 -c "print(0 if $dt <= 2 else 1)")" "... within 2 s"
isnt "$(page_pid)" "$p1" "... as a new process"
# 1,100 idle connections from nobody: another user's page request is still answered
/usr/bin/python3 - "$hport" <<'PYEOF' &
import socket, sys, time, os
os.setgid(65534); os.setuid(65534)
held = []
for i in range(1100):
    try:
        s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2)
        held.append(s)
    except OSError:
        pass
time.sleep(6)
PYEOF
idle=$!
sleep 2
# the server holds at most http_per_address (64) of them: count its side of the connections (all nobody's)
held=$(ss -Htn state established "( sport = :$hport )" | wc -l)
diag "connections from nobody's address the page server holds: $held of 1,100"
ok "$(python3 -c "print(0 if 0 < $held <= 64 else 1)")" "1,100 idle connections from one address: the page server holds $held, at most http_per_address (64)"
# the other user comes from another address (127.0.0.2): the per-address cap is not theirs
t=$(setpriv --reuid "$U" --regid nogroup --clear-groups curl -s -o /dev/null -m 3 --interface 127.0.0.2 -w '%{http_code} %{time_total}' "http://127.0.0.1:$hport/")
diag "another user's page request under 1,100 idle connections: $t"
like "$t" "^200 0\.[0-9]+" "1,100 idle connections from nobody: another user's page request is answered within 1 s"
kill "$idle" 2>/dev/null
wait "$idle" 2>/dev/null
q_stop
done_testing
