# A single-node Slurm for the Slurm tests (sourced after lib.sh; root only):
# Debian's slurm-wlm and munge started in $TMP with their own munge key,
# socket and ports, and two GPUs backed by character devices (major 195).
# Ends the test with a skip and its reason where Slurm cannot start.
# Provides $S (its directory), state ID, wait_state ID STATE SECONDS and
# wait_text FILE ERE SECONDS; stops the daemons when the test ends.

need() { command -v "$1" >/dev/null 2>&1 || { skip "Slurm: $1 is not installed (apt-get install slurm-wlm munge)"; done_testing; exit 0; }; }
if [ "$(id -u)" != 0 ]; then
	skip "Slurm: slurmd must run as root to start jobs (run the tests as root)"
	done_testing
	exit 0
fi
for b in munged mungekey munge slurmctld slurmd sbatch squeue scontrol scancel sinfo; do need "$b"; done

S=$TMP/slurm
mkdir -p "$S/spool" "$S/state" "$S/dev" "$S/log" "$S/out"
chmod 700 "$S"
stop() {
	pids=
	for p in slurmd slurmctld munged; do
		[ -s "$S/$p.pid" ] && kill "$(cat "$S/$p.pid")" 2>/dev/null && pids="$pids $(cat "$S/$p.pid")"
	done
	# until they have ended (at most 5 s), not a fixed second
	for _i in $(seq 1 50); do
		alive=
		for q in $pids; do kill -0 "$q" 2>/dev/null && alive=1; done
		[ -z "$alive" ] && break
		sleep 0.1
	done
	rm -rf "$TMP"
}
trap stop EXIT
if ! mknod "$S/dev/nvidia0" c 195 0 || ! mknod "$S/dev/nvidia1" c 195 1; then
	skip "Slurm: cannot make the GPU device nodes (mknod)"
	done_testing
	exit 0
fi
mungekey -c -k "$S/munge.key" 2>/dev/null || dd if=/dev/urandom of="$S/munge.key" bs=128 count=1 2>/dev/null
chmod 400 "$S/munge.key"
munged --socket="$S/munge.sock" --key-file="$S/munge.key" --pid-file="$S/munged.pid" \
	--log-file="$S/log/munged.log" --seed-file="$S/munge.seed" --force 2>"$S/log/munged.err"
# ports from the test's pid, so that a second copy of the suite does not collide
port=$((20000 + ($$ % 5000) * 2))
H=$(hostname)
cat > "$S/slurm.conf" <<CONF
ClusterName=gwtest
SlurmctldHost=$H(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$S/munge.sock
CryptoType=crypto/munge
SlurmctldPort=$port
SlurmdPort=$((port + 1))
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
ReturnToService=2
NodeName=$H NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=1000 Gres=gpu:2 State=UNKNOWN
PartitionName=gw Nodes=$H Default=YES MaxTime=INFINITE State=UP
CONF
printf 'Name=gpu File=%s/dev/nvidia[0-1]\n' "$S" > "$S/gres.conf"
export SLURM_CONF=$S/slurm.conf
# where gpuwise remembers the nodes' answer to its srun probe: this test's own
export XDG_CACHE_HOME=$S/cache
# slurmd once slurmctld answers (at most 10 s)
ctld_up() { for _i in $(seq 1 50); do scontrol ping 2>/dev/null | grep -q UP && return 0; sleep 0.2; done; return 1; }
slurmctld -f "$SLURM_CONF" 2>"$S/log/ctld.err" && ctld_up && slurmd -f "$SLURM_CONF" 2>"$S/log/d.err"
up=
for i in $(seq 1 150); do
	if [ "$(sinfo -h -o %T 2>/dev/null)" = idle ]; then up=1; break; fi
	sleep 0.2
done
if [ -z "$up" ]; then
	skip "Slurm: the node did not come up idle in 30 s ($(sinfo -h -o %T 2>&1 | head -1); see slurmd.log: $(tail -1 "$S/log/slurmd.log" 2>/dev/null))"
	done_testing
	exit 0
fi
ok 0 "Slurm: slurmctld and slurmd up, node idle with gres/gpu:2"

state() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
# the waits look every 0.2 s (a job's state changes within a second or
# two; looking once a second lost half a second on each of some twenty waits)
wait_state() { # wait_state ID STATE SECONDS
	for _i in $(seq 1 $(($3 * 5))); do [ "$(state "$1")" = "$2" ] && return 0; sleep 0.2; done
	return 1
}
wait_text() { # wait_text FILE ERE SECONDS
	for _i in $(seq 1 $(($3 * 5))); do grep -Eq -- "$2" "$1" 2>/dev/null && return 0; sleep 0.2; done
	return 1
}

