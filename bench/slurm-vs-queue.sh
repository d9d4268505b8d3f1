#!/bin/sh
# Benchmark: `gpuwise submit` against `sbatch`, in one run, on one machine.
# A release queue daemon (fake NVML, 8 GPUs) on a temporary socket and a real
# single-node Slurm (slurmctld + slurmd + munge, the configuration of
# tests/e2e/slurm.t: two GPUs backed by character devices, its own munge key,
# ports and state in a temporary directory) are started side by side; the same
# CLIENTS parallel clients each submit PER trivial one-GPU jobs (`true`) with
# the command line tools, one process per submission, and the rate of
# acknowledged submissions is printed for each with the ratio.  Neither runs
# the jobs (the daemon's project has a 0-job quota, Slurm's jobs are held), so
# only submission is measured.  Everything started here is stopped and
# removed at the end.  Needs root and Debian's slurm-wlm and munge; without
# them it says why and exits 0.
# Env: GW (binary), GW_BUILD (release build dir), CLIENTS (8), PER (64).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${GW_BUILD:-build/release}
case $build in /*) ;; *) build=$top/$build ;; esac
GW=${GW:-$top/gpuwise}
case $GW in /*) ;; *) GW=$top/$GW ;; esac
CLIENTS=${CLIENTS:-8}
PER=${PER:-64}
N=$((CLIENTS * PER))
echo "== gpuwise submit vs sbatch (bench/slurm-vs-queue.sh)"
if [ "$(id -u)" != 0 ]; then
	echo "skipped: slurmd must run as root to take jobs (run make bench as root)"
	exit 0
fi
for b in munged mungekey slurmctld slurmd sbatch scancel sinfo; do
	if ! command -v "$b" >/dev/null 2>&1; then
		echo "skipped: Slurm is not installed ($b not found; apt-get install slurm-wlm munge)"
		exit 0
	fi
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gw-bench-slurm.XXXXXX")
S=$tmp/slurm
dpid=""
cleanup() {
	set +e
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	if [ -n "${SLURM_CONF:-}" ] && [ -s "$S/slurmctld.pid" ]; then
		scancel --quiet --partition=gwbench 2>/dev/null || true
	fi
	pids=
	for p in slurmd slurmctld munged; do
		pid=$(cat "$S/$p.pid" 2>/dev/null) && [ -n "$pid" ] && kill "$pid" 2>/dev/null && pids="$pids $pid"
	done
	# wait for them to go before their files (and the device nodes) are removed
	for _i in 1 2 3 4 5 6 7 8 9 10; do
		alive=
		for pid in $pids; do
			kill -0 "$pid" 2>/dev/null && alive=1
		done
		[ -z "$alive" ] && break
		sleep 0.5
	done
	[ -n "${KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
mkdir -p "$S/spool" "$S/state" "$S/dev" "$S/log"
chmod 700 "$S"

# ---- the single-node Slurm of tests/e2e/slurm.t --------------------------------------
if ! mknod "$S/dev/nvidia0" c 195 0 || ! mknod "$S/dev/nvidia1" c 195 1; then
	echo "skipped: cannot make the GPU device nodes for Slurm (mknod)"
	exit 0
fi
mungekey -c -k "$S/munge.key" 2>/dev/null || dd if=/dev/urandom of="$S/munge.key" bs=128 count=1 2>/dev/null
chmod 400 "$S/munge.key"
munged --socket="$S/munge.sock" --key-file="$S/munge.key" --pid-file="$S/munged.pid" \
	--log-file="$S/log/munged.log" --seed-file="$S/munge.seed" --force 2>"$S/log/munged.err"
port=$((25000 + ($$ % 2500) * 2))
H=$(hostname)
cat > "$S/slurm.conf" <<CONF
ClusterName=gwbench
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
MaxJobCount=100000
NodeName=$H NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=1000 Gres=gpu:2 State=UNKNOWN
PartitionName=gwbench Nodes=$H Default=YES MaxTime=INFINITE State=UP
CONF
printf 'Name=gpu File=%s/dev/nvidia[0-1]\n' "$S" > "$S/gres.conf"
export SLURM_CONF=$S/slurm.conf
if slurmctld -f "$SLURM_CONF" 2>"$S/log/ctld.err"; then
	sleep 1
	slurmd -f "$SLURM_CONF" 2>"$S/log/d.err" || true
fi
up=
for _i in $(seq 1 30); do
	if [ "$(sinfo -h -o %T 2>/dev/null)" = idle ]; then up=1; break; fi
	sleep 1
done
if [ -z "$up" ]; then
	echo "skipped: the Slurm node did not come up idle in 30 s ($(tail -1 "$S/log/slurmctld.log" 2>/dev/null))"
	exit 0
fi

# ---- the queue daemon --------------------------------------------------------------------
export GPUWISE_NVML_LIB="$build/fake/libnvidia-ml.so"
export GPUWISE_FAKE_SCENARIO="$top/tests/fixtures/scenarios/server-8xh100.json"
sock=$tmp/sock
"$GW" daemon --state "$tmp/state" --socket "$sock" 2>>"$tmp/daemon.log" &
dpid=$!
i=0
# (not 'queue': with SLURM_CONF set it answers with Slurm's jobs alone while no daemon is up)
while ! "$GW" quota set bench --jobs 0 --socket "$sock" >/dev/null 2>&1; do
	sleep 0.05
	i=$((i + 1))
	[ $i -lt 200 ] || { echo "the daemon did not start" >&2; cat "$tmp/daemon.log" >&2; exit 1; }
done

# ---- the same load for both: CLIENTS parallel clients, PER submissions each ---------------
now() { date +%s%N; }
# burst NAME COMMAND...: CLIENTS loops of PER runs of COMMAND; prints elapsed ns,
# leaves the count of acknowledged submissions in $tmp/NAME.ok
burst() {
	name=$1
	shift
	t0=$(now)
	c=0
	while [ $c -lt "$CLIENTS" ]; do
		(
			k=0 ok=0
			while [ $k -lt "$PER" ]; do
				"$@" >/dev/null 2>>"$tmp/$name.err" && ok=$((ok + 1))
				k=$((k + 1))
			done
			echo "$ok" > "$tmp/$name.$c"
		) &
		c=$((c + 1))
	done
	wait
	t1=$(now)
	cat "$tmp/$name".[0-9]* | awk '{s += $1} END {print s + 0}' > "$tmp/$name.ok"
	echo $((t1 - t0))
}
cd "$tmp"
# one warm-up submission each, so that neither pays its first connection's set-up
"$GW" submit --socket "$sock" --project bench --vram 1G -- true >/dev/null
sbatch --parsable --hold --gres=gpu:1 --output=/dev/null --wrap true >/dev/null
ns_gw=$(burst gw "$GW" submit --socket "$sock" --project bench --vram 1G -- true)
ns_sb=$(burst sb sbatch --parsable --hold --gres=gpu:1 --output=/dev/null --wrap true)
ok_gw=$(cat "$tmp/gw.ok")
ok_sb=$(cat "$tmp/sb.ok")
queued_gw=$("$GW" queue --socket "$sock" --json 2>/dev/null | grep -o '"state": *"queued"' | wc -l || true)
queued_sb=$(squeue -h -p gwbench -t PD -o %i 2>/dev/null | wc -l)
rate() { awk -v n="$1" -v ns="$2" 'BEGIN {printf "%.0f", n / (ns / 1e9)}'; }
r_gw=$(rate "$ok_gw" "$ns_gw")
r_sb=$(rate "$ok_sb" "$ns_sb")
printf 'gpuwise submit: %d of %d acknowledged from %d clients in %.2f s: %s submissions/s (%s queued in the daemon, with the warm-up)\n' \
	"$ok_gw" "$N" "$CLIENTS" "$(awk -v ns="$ns_gw" 'BEGIN {print ns / 1e9}')" "$r_gw" "$queued_gw"
printf 'sbatch:         %d of %d acknowledged from %d clients in %.2f s: %s submissions/s (%s pending in slurmctld, with the warm-up)\n' \
	"$ok_sb" "$N" "$CLIENTS" "$(awk -v ns="$ns_sb" 'BEGIN {print ns / 1e9}')" "$r_sb" "$queued_sb"
awk -v a="$r_gw" -v b="$r_sb" 'BEGIN {if (b > 0) printf "ratio gpuwise submit / sbatch: %.2fx\n", a / b}'
echo "(both: one command-line process per submission, a one-GPU 'true' job; Slurm $(sinfo -V 2>/dev/null | awk '{print $2}'),"
echo " accounting off, jobs held; the daemon commits each job to SQLite (synchronous=FULL) before its reply,"
echo " slurmctld writes its state files in the background)"
[ -s "$tmp/gw.err" ] && { echo "gpuwise submit errors (first 3):"; head -3 "$tmp/gw.err"; }
[ -s "$tmp/sb.err" ] && { echo "sbatch errors (first 3):"; head -3 "$tmp/sb.err"; }
exit 0
