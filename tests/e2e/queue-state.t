#!/bin/sh
# The queue's state leaks nothing and never runs a job twice, against a real
# daemon (root) whose state directory is a small tmpfs (the real ENOSPC of a
# full disk), with jobs of root, of nobody and of a user this test creates:
# the state files are 0600 and nobody gets EACCES on them and on a job's
# environment; on a full disk a refused submission never runs, a start that
# could not be saved is not made (so no job runs twice after a restart) and
# the next submitter gets none of another job's log; a job's log stops at
# log_limit; a daemon restarted right after SIGKILL starts; an empty, a
# damaged and a lost state.db are refused with the command that starts anew,
# and --new-state continues the ids; a read-only state directory and a free
# space below free_space_reserve are refused with their own reasons.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/queue-lib.sh"

ST=$TMP/state
mkdir -p "$ST"
if ! mount -t tmpfs -o size=4m,mode=0711 tmpfs "$ST" 2>"$TMP/mount.err"; then
	diag "cannot mount a tmpfs: $(cat "$TMP/mount.err")"
	skip "this test needs root and mount -t tmpfs"
	done_testing
	exit 0
fi
U=gwq$$
useradd -M -N -g nogroup -s /bin/sh "$U" 2>"$TMP/useradd.err" || diag "useradd: $(cat "$TMP/useradd.err")"
trap 'q_cleanup; cd /; umount "$TMP/ro" 2>/dev/null; umount -l "$ST" 2>/dev/null; userdel "$U" 2>/dev/null; rm -rf "$TMP"' EXIT
as_u() { _u=$1; shift; out=$(setpriv --reuid "$_u" --regid nogroup --clear-groups "$@" 2>"$TMP/stderr"); rc=$?; err=$(cat "$TMP/stderr"); }
errno_of() { # the errno name a read of FILE gets as nobody, or "read"
	setpriv --reuid nobody --regid nogroup --clear-groups /usr/bin/python3 -c 'import errno, sys
try:
    open(sys.argv[1], "rb").read(1)
    print("read")
except OSError as e:
    print(errno.errorcode[e.errno])' "$1"
}
# bounded wait for a line in a file (the jobs write their ids)
wait_line() { # FILE REGEX SECONDS
	_i=0
	while [ $_i -lt $(($3 * 20)) ]; do
		grep -Eq -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
		_i=$((_i + 1))
	done
	return 1
}
printf 'context_reserve = 512M\nclient_timeout = 2s\nlog_limit = 64K\nfree_space_reserve = 0\n' > "$TMP/daemon.conf"
umask 022

# ---- 0600 state, EACCES for nobody -------------------------------------------------
q_start
if id "$U" >/dev/null 2>&1; then owner=$U; else owner=root; diag "no user of our own: root owns the job"; fi
as_u "$owner" "$GW" submit --vram 1G --env TOKEN=s3cret-$$ -- sh -c 'echo $$ > '"$WORK"'/job.pid; touch '"$WORK"'/made-by-job; exec sleep 60'
is "$rc" 0 "a user submits a job with a secret in --env"
sj=$out
wait_line "$WORK/job.pid" '^[0-9]+$' 20 || diag "the job did not start"
is "$(stat -c %a "$ST/state.db" "$ST/state.db-wal" "$ST/state.db-shm" | tr '\n' ' ')" "600 600 600 " "state.db, -wal and -shm are 0600"
is "$(stat -c %a "$ST/logs/$sj.log" "$ST/ids" "$ST/daemon.lock" | tr '\n' ' ')" "600 600 600 " "the job's log, the ids file and the lock are 0600"
grep -q "s3cret-$$" "$ST/state.db" "$ST/state.db-wal" && have_secret=0 || have_secret=1
ok "$have_secret" "... and the secret is in them (so the modes matter)"
for f in state.db state.db-wal state.db-shm; do
	is "$(errno_of "$ST/$f")" EACCES "nobody reading $f gets EACCES"
done
as_u nobody cat "$ST/state.db"
is "$rc" 1 "cat state.db as nobody: exit 1"
is "$err" "cat: $ST/state.db: Permission denied" "... Permission denied"
jp=$(cat "$WORK/job.pid")
is "$(errno_of "/proc/$jp/environ")" EACCES "nobody reading the job's environment (/proc/PID/environ) gets EACCES"
is "$(tr '\0' '\n' < "/proc/$jp/environ" | grep '^TOKEN=')" "TOKEN=s3cret-$$" "... which holds the secret"
is "$(errno_of "$ST/run/$sj.jsonl")" EACCES "nobody reading the job's supervisor log gets EACCES"
as_nobody show --json "$sj"
is "$rc" 3 "nobody's show of the job: exit 3"
is "$err" "gpuwise: job $sj belongs to another user" "... it belongs to another user"
as_nobody queue --all --json
unlike "$out" "s3cret" "nobody's queue listing has no secret"
is "$(stat -c %a "$WORK/made-by-job")" 644 "the job itself keeps the daemon's starting umask (its file is 0644), not 0077"
"$GW" cancel "$sj" >/dev/null
q_wait_state "$sj" cancelled 40

# ---- log_limit ----------------------------------------------------------------------
lj=$("$GW" submit --vram 1G -- sh -c 'head -c 1000000 /dev/zero | tr "\0" x; echo; echo END-OF-OUTPUT')
q_wait_state "$lj" done 30
is "$(q_state "$lj")" done "a job writing 1 MB under log_limit = 64K ends done (not killed)"
run_gw logs "$lj"
note="gpuwise: this job's output reached the log limit of 64.00 KiB (log_limit in daemon.conf); the rest is not kept"
is "$(stat -c %s "$ST/logs/$lj.log")" "$((65536 + ${#note} + 2))" "its log is 64 KiB plus the note"
is "$(printf '%s' "$out" | tail -n 1)" "$note" "... which ends with the note"
unlike "$out" "END-OF-OUTPUT" "... and nothing past the limit"

# ---- a full disk: nothing refused runs, nothing runs twice, no log leaks ---------------
: > "$WORK/ran.txt"
chmod 666 "$WORK/ran.txt"
b=$("$GW" submit --vram 1G -- sh -c 'echo $GPUWISE_JOB_ID >> '"$WORK"'/ran.txt; sleep 2')
q_wait_state "$b" running 20
h=$("$GW" submit --vram 1G --after "$b" -- sh -c 'echo $GPUWISE_JOB_ID >> '"$WORK"'/ran.txt')
dd if=/dev/zero of="$ST/fill" bs=64k 2>/dev/null
diag "state tmpfs: $(df -k "$ST" | tail -1)"
run_gw submit --vram 1G -- sh -c 'echo refused >> '"$WORK"'/ran.txt'
is "$rc" 3 "a submission on the full disk: exit 3 (refused)"
is "$err" "gpuwise: the daemon could not save its state: state database: commit: database or disk is full" "... it could not save its state"
is "$out" "" "... and no id"
as_nobody submit --vram 1G -- sh -c 'echo refused-nobody >> '"$WORK"'/ran.txt'
is "$rc" 3 "nobody's submission on the full disk: exit 3 too"
# job b ends on the full disk; h may start but its start cannot be saved
_i=0
while [ $_i -lt 200 ]; do
	r=$("$GW" show --json "$h" 2>/dev/null | jget "d['reason']")
	case "$r" in *"cannot save its state"*) break ;; esac
	sleep 0.05
	_i=$((_i + 1))
done
like "$r" "^waiting: the daemon cannot save its state \(state database: commit: database or disk is full\)$" "the job after b is not started while its start cannot be saved, and says why"
is "$(q_state "$h")" queued "... it is still queued"
is "$(grep -c . "$WORK/ran.txt")" 1 "... and only b has run"
rm -f "$ST/fill"
q_wait_state "$h" done 20
is "$(q_state "$h")" done "with space again, the job after b runs"
as_nobody submit --vram 1G -- sh -c 'echo only-mine'
is "$rc" 0 "the next submitter (nobody) gets an id"
nj=$out
ok "$([ "$nj" -gt "$h" ]; echo $?)" "... a new one ($nj), after every id acknowledged before ($b, $h)"
q_wait_state "$nj" done 20
as_nobody logs "$nj"
is "$(printf '%s\n' "$out" | grep -v '^gpuwise: ')" "only-mine" "... and its log holds its own output only (and its supervisor's lines)"
# SIGKILL, restart at once: nothing runs a second time
q_kill
q_start
ok $? "the daemon restarts right after SIGKILL"
q_wait_state "$b" done 20
is "$(q_state "$b")" done "b, which ended while its end could not be saved, is recorded done after the restart"
sleep 1
is "$(sort "$WORK/ran.txt" | tr '\n' ' ')" "$(printf '%s\n' "$b" "$h" | sort | tr '\n' ' ')" "each job ran once, no refused job ran"
"$GW" queue --all --json > "$TMP/all.json"
is "$(jget "len(d['jobs']) == len(set(j['id'] for j in d['jobs']))" < "$TMP/all.json")" True "no id is held by two jobs"

# ---- restarts right after SIGKILL while jobs start -----------------------------------------
fails=0
for k in 1 2 3; do
	for n in 1 2 3 4; do "$GW" submit --vram 1G -- true >/dev/null; done
	q_kill
	q_start || fails=$((fails + 1))
done
is "$fails" 0 "3 restarts right after SIGKILL during job starts all succeed"
like "$(cat "$TMP/daemon.log")" "." "(daemon log kept)"
q_stop
is "$q_daemon_rc" 0 "the daemon stops cleanly"
last=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT max(id) FROM jobs").fetchone()[0])' "$ST/state.db")
is "$(sed 's/^0*//' "$ST/ids")" "$last" "the ids file holds the highest id handed out ($last)"

# ---- refused databases -------------------------------------------------------------------
start_err() { rm -f "$ST/state.db-wal" "$ST/state.db-shm"; "$GW" daemon --state "$ST" --socket "$SOCK" --config "$TMP/daemon.conf" "$@" >/dev/null 2>"$TMP/d.err"; rc=$?; err=$(cat "$TMP/d.err"); }
how="restore it from a backup, or start anew with 'gpuwise daemon --state '$ST' --new-state'"
cp "$ST/state.db" "$TMP/good.db"
: > "$ST/state.db"
start_err
is "$rc" 1 "an emptied state.db: exit 1"
is "$err" "gpuwise: state database '$ST/state.db' is empty (0 bytes); $how" "... refused: empty, with the commands"
printf 'this is no database, only garbage %.0s' $(seq 1 200) > "$ST/state.db"
start_err
is "$rc" 1 "a state.db that is not SQLite: exit 1"
is "$err" "gpuwise: state database '$ST/state.db' is damaged (file is not a database); $how" "... refused: damaged"
cp "$TMP/good.db" "$ST/state.db"
python3 - "$ST/state.db" <<'EOF'
import sqlite3, sys
p = sys.argv[1]
db = sqlite3.connect(p)
root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'jobs'").fetchone()[0]
psz = db.execute("PRAGMA page_size").fetchone()[0]
db.close()
with open(p, "r+b") as f:  # an impossible b-tree page type on the jobs table's root page
    f.seek((root - 1) * psz)
    f.write(b"\x07" * 16)
EOF
start_err
is "$rc" 1 "a state.db with a damaged page: exit 1"
like "$err" "^gpuwise: state database '$ST/state.db' is damaged \((quick_check: |database disk image is malformed).*\); restore it from a backup, or start anew with 'gpuwise daemon --state '$ST' --new-state'$" "... refused: damaged (quick_check)"
rm -f "$ST/state.db"
start_err
is "$rc" 1 "a missing state.db after ids were handed out: exit 1"
is "$err" "gpuwise: state database '$ST/state.db' is missing, but job ids up to $last were handed out; $how" "... refused: missing"
python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1]); db.execute("DELETE FROM jobs WHERE id > 2"); db.execute("UPDATE sqlite_sequence SET seq = 2"); db.commit()' "$TMP/good.db"
cp "$TMP/good.db" "$ST/state.db"
start_err
is "$rc" 1 "an old copy of state.db (ids up to 2): exit 1"
is "$err" "gpuwise: state database '$ST/state.db' has lost its history: its last job id is 2, but ids up to $last were handed out; $how" "... refused: lost its history"
: > "$ST/state.db"
q_start_new() { LEAKME=daemon "$GW" daemon --state "$ST" --socket "$SOCK" --config "$TMP/daemon.conf" --new-state 2>>"$TMP/daemon.log" & q_pid=$!; }
q_start_new
_i=0
while [ $_i -lt 600 ] && ! "$GW" queue >/dev/null 2>&1; do sleep 0.05; _i=$((_i + 1)); done
run_gw submit --vram 1G -- true
is "$rc" 0 "--new-state starts anew"
is "$out" "$((last + 1))" "... and the ids continue after the old ones ($last)"
like "$(ls "$ST")" "state\.db\.old-[0-9]{8}T[0-9]{6}" "... the old file kept beside"
q_stop

# ---- a read-only state directory, the free-space reserve ------------------------------------
# the same state directory, read-only (a read-only bind mount of it)
mkdir "$TMP/ro"
mount --bind "$ST" "$TMP/ro" && mount -o remount,bind,ro "$TMP/ro"
"$GW" daemon --state "$TMP/ro" --socket "$SOCK" --config "$TMP/daemon.conf" >/dev/null 2>"$TMP/d.err"
rc=$?
is "$rc" 1 "a read-only state directory: exit 1"
is "$(cat "$TMP/d.err")" "gpuwise: cannot write the state directory '$TMP/ro': Read-only file system" "... refused with that reason, not 'another daemon'"
umount "$TMP/ro"
printf 'client_timeout = 2s\nfree_space_reserve = 1G\n' > "$TMP/daemon.conf"
q_start
run_gw submit --vram 1G -- true
is "$rc" 3 "a submission below free_space_reserve: exit 3 (refused)"
like "$err" "^gpuwise: the state directory '$ST' has [0-9.]+ MiB free, below the reserve of 1.00 GiB \(free_space_reserve\): submissions are refused until space is freed$" "... refused with the free space and the reserve"
q_stop
unlike "$(cat "$TMP/daemon.log")" "Sanitizer|runtime error" "no sanitizer report from the daemon"
done_testing
