#!/bin/sh
# libgpuwise-cap.so and gpuwise run --vram-cap (issue 14), against the fake
# libcuda's simulated memory pool (one 24 GiB GPU).  The job programs are
# tests/cap/captest.c (built into $GW_BUILD/cap/) and tests/cap/captest.py.
. "$(dirname "$0")/lib.sh"
unset CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER GPUWISE_FAKE_CLOCK GPUWISE_ROOT LD_PRELOAD GPUWISE_CAP_REGION
GW_BUILD=${GW_BUILD:-$GW_TOP/build/check}
CT=$GW_BUILD/cap/captest
LIB=$GW_BUILD/libgpuwise-cap.so
export GPUWISE_CUDA_LIB="$GW_FAKE/libcuda.so" GPUWISE_NVML_LIB="$GW_FAKE/libnvidia-ml.so"
export GPUWISE_NO_STATUS_LINE=1 XDG_RUNTIME_DIR="$TMP/run"
mkdir -p "$XDG_RUNTIME_DIR"
# the inner gpuwise (ASan) runs with the cap library ahead of libasan
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}:verify_asan_link_order=0"
G=1073741824
scenario() { # scenario FILE [PROCESS_JSON]
	cat > "$1" <<JSON
{"driver_version": "570.124.06", "nvml_version": "12.570.124.06", "cuda_driver_version": 12080,
 "gpus": [{"name": "NVIDIA GeForce RTX 4090", "uuid": "GPU-5a1c2f7e-0d4b-4c39-9e61-1f2a3b4c5d6e",
  "pci_bus_id": "00000000:01:00.0", "memory_total_bytes": 25757220864, "sm_count": 128,
  "clock_sm_max_mhz": 3105, "processes": [${2:-}]}]}
JSON
}
scenario "$TMP/s.json"
export GPUWISE_FAKE_SCENARIO="$TMP/s.json"
[ -x "$CT" ] && [ -f "$LIB" ]; ok $? "captest and libgpuwise-cap.so are built ($CT, $LIB)"

capped() { # capped SIZE CMD...: run CMD under gpuwise run --vram-cap SIZE
	size=$1
	shift
	run_gw run --no-gpu --vram-cap "$size" -- "$@"
}

# ---- bad input -------------------------------------------------------------------
for bad in 0 abc -5G 1Q ''; do
	run_gw run --vram-cap "$bad" -- true
	is "$rc" 2 "--vram-cap '$bad' is a usage error"
	like "$err" "^gpuwise: .*--vram-cap needs a size like 10G, not '$bad'" "--vram-cap '$bad': one-line message"
done
run_gw run --help
like "$out" "--vram-cap SIZE" "run --help shows --vram-cap"

# ---- every road to the driver ------------------------------------------------------
for via in link dlsym proc proc2; do
	capped 1G "$CT" --via "$via" info total alloc 600M alloc 600M alloc 400M free free alloc 1G alloc 1
	is "$rc" 0 "$via: the job ran"
	like "$out" "^info rc=0 free=$G total=$G\$" "$via: cuMemGetInfo_v2 reports the 1 GiB cap as total and free"
	like "$out" "^total rc=0 total=$G\$" "$via: cuDeviceTotalMem_v2 reports the cap"
	is "$(printf '%s\n' "$out" | grep '^alloc' | tr '\n' ' ')" \
		"alloc 600M rc=0 alloc 600M rc=2 alloc 400M rc=0 alloc 1G rc=0 alloc 1 rc=2 " \
		"$via: 600M fits, a second 600M is CUDA_ERROR_OUT_OF_MEMORY, 400M fits, freed memory comes back"
	like "$err" "gpuwise-cap: refused 600.0 MiB on GPU 0: the job uses 600.0 MiB of its 1.00 GiB cap" \
		"$via: the refusal is said on the job's stderr"
done

# without the cap the same job gets everything it asks (the fake pool is 24 GiB)
out=$("$CT" --via proc2 alloc 600M alloc 600M alloc 400M info 2>&1)
like "$out" "alloc 600M rc=0.*" "without --vram-cap the second 600M is granted"
is "$(printf '%s\n' "$out" | grep -c 'rc=0$')" 3 "without --vram-cap all three allocations succeed"

# ---- every allocation call is counted and every free gives back --------------------
for via in link proc2; do
	seq=""
	want=""
	for kind in managed async pool create; do
		seq="$seq $kind 40M alloc 40M free"
		want="$want$kind 40M rc=0 alloc 40M rc=2 free rc=0 "
	done
	# shellcheck disable=SC2086
	capped 64M "$CT" --via "$via" $seq pitch 4096 10240 alloc 40M free alloc 64M
	is "$(printf '%s\n' "$out" | grep -v '^info' | tr '\n' ' ')" \
		"${want}pitch 4096 10240 rc=0 pitch=4096 alloc 40M rc=2 free rc=0 alloc 64M rc=0 " \
		"$via: managed, async, from-pool, cuMemCreate and pitch allocations count against a 64M cap and their frees give it back"
done
# cuMemCreate of host memory is not device memory: not counted
capped 64M "$CT" --via proc2 create 64M alloc 1
like "$out" "alloc 1 rc=2" "cuMemCreate on the device fills the cap"

# ---- Python (ctypes): by symbol and through cuGetProcAddress_v2 ---------------------
if command -v python3 >/dev/null 2>&1; then
	capped 1G python3 "$GW_TOP/tests/cap/captest.py" 629145600 629145600 419430400
	is "$rc" 0 "python ctypes job ran"
	like "$out" "^info free=$G total=$G\$" "python: cuMemGetInfo through cuGetProcAddress_v2 reports the cap"
	is "$(printf '%s\n' "$out" | grep alloc | tr '\n' ' ')" \
		"symbol alloc 629145600 rc=0 symbol alloc 629145600 rc=2 symbol alloc 419430400 rc=0 procaddr alloc 629145600 rc=0 procaddr alloc 629145600 rc=2 procaddr alloc 419430400 rc=0 " \
		"python: ctypes symbols and cuGetProcAddress_v2 pointers are both capped"
else
	skip "python3 not found"
fi

# ---- sizes near 2^64 are refused, not wrapped --------------------------------------
capped 1G "$CT" --via proc2 alloc 512M alloc 18446744073709551615 alloc 18446744073172680704 \
	pitch 4294967296 4294967297 create 18446744073707454464 info alloc 512M alloc 1
is "$(printf '%s\n' "$out" | tr '\n' ' ')" \
	"alloc 512M rc=0 alloc 18446744073709551615 rc=2 alloc 18446744073172680704 rc=2 pitch 4294967296 4294967297 rc=2 pitch=0 create 18446744073707454464 rc=2 info rc=0 free=536870912 total=$G alloc 512M rc=0 alloc 1 rc=2 " \
	"2^64-1, 2^64-512M (which would wrap the count), a pitch whose area overflows and a 2^64-2M cuMemCreate are refused; the count is unchanged"

# ---- two processes of one job share one cap -----------------------------------------
cat > "$TMP/two.sh" <<'SH'
ct=$1; d=$2; . "$d/wait.sh"
mkfifo "$d/fifo"
"$ct" alloc 600M hold < "$d/fifo" > "$d/a.out" 2>&1 &
exec 3> "$d/fifo"
wait_for "$d/a.out" holding
"$ct" alloc 600M alloc 400M
exec 3>&-
wait
cat "$d/a.out"
SH
# wait_for FILE TEXT: up to 10 s
cat > "$TMP/wait.sh" <<'SH'
wait_for() { i=0; while ! grep -q "$2" "$1" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done; }
SH
capped 1G sh "$TMP/two.sh" "$CT" "$TMP"
like "$out" "holding" "two processes: the first holds 600M"
is "$(printf '%s\n' "$out" | grep -v holding | tr '\n' ' ')" "alloc 600M rc=2 alloc 400M rc=0 alloc 600M rc=0 " \
	"two processes of one job: the second gets only what the first left of the 1G cap"

# ---- per GPU, by UUID: processes that number the GPUs differently agree ---------------
cat > "$TMP/two-gpus.json" <<'JSON'
{"driver_version": "570.124.06", "nvml_version": "12.570.124.06", "cuda_driver_version": 12080,
 "gpus": [{"name": "NVIDIA GeForce RTX 4090", "uuid": "GPU-aaaaaaaa-0d4b-4c39-9e61-1f2a3b4c5d6e",
   "pci_bus_id": "00000000:01:00.0", "memory_total_bytes": 25757220864, "sm_count": 128, "clock_sm_max_mhz": 3105},
  {"name": "NVIDIA GeForce RTX 4090", "uuid": "GPU-bbbbbbbb-0d4b-4c39-9e61-1f2a3b4c5d6e",
   "pci_bus_id": "00000000:02:00.0", "memory_total_bytes": 25757220864, "sm_count": 128, "clock_sm_max_mhz": 3105}]}
JSON
rm -f "$TMP/fifo" "$TMP/a.out"
cat > "$TMP/gpus.sh" <<'SH'
ct=$1; d=$2; . "$d/wait.sh"
mkfifo "$d/fifo"
CUDA_VISIBLE_DEVICES=1 "$ct" alloc 600M hold < "$d/fifo" > "$d/a.out" 2>&1 &
exec 3> "$d/fifo"
wait_for "$d/a.out" holding
"$ct" --dev 1 alloc 600M
"$ct" --dev 0 alloc 600M alloc 400M
exec 3>&-
wait
SH
capped 1G env GPUWISE_FAKE_SCENARIO="$TMP/two-gpus.json" sh "$TMP/gpus.sh" "$CT" "$TMP"
is "$(printf '%s\n' "$out" | tr '\n' ' ')" "alloc 600M rc=2 alloc 600M rc=0 alloc 400M rc=0 " \
	"two GPUs: 600M held on the second GPU (as CUDA_VISIBLE_DEVICES=1's device 0) leaves 424M there (device 1 here); the first GPU has its own 1G"

# ---- a process killed with SIGKILL gives its memory back ----------------------------
rm -f "$TMP/fifo" "$TMP/a.out"
cat > "$TMP/kill.sh" <<'SH'
ct=$1; d=$2; . "$d/wait.sh"
mkfifo "$d/fifo"
"$ct" alloc 800M hold < "$d/fifo" > "$d/a.out" 2>&1 &
pid=$!
exec 3> "$d/fifo"
wait_for "$d/a.out" holding
"$ct" alloc 800M info
kill -9 $pid
wait $pid
echo "killed $?"
"$ct" info alloc 800M
SH
capped 1G sh "$TMP/kill.sh" "$CT" "$TMP"
is "$(printf '%s\n' "$out" | tr '\n' ' ')" \
	"alloc 800M rc=2 info rc=0 free=234881024 total=$G killed 137 info rc=0 free=$G total=$G alloc 800M rc=0 " \
	"SIGKILL: the holder's 800M is counted while it lives and returned once it is killed"

# ---- 8 threads allocating and freeing at once never pass the cap --------------------
capped 256M "$CT" --via proc2 threads 8 20000 256M alloc 256M
like "$out" "^threads 8 ok=[1-9][0-9]* refused=[1-9][0-9]* errors=0 max=[0-9]+ cap=268435456 within\$" \
	"8 threads: many allocations granted, many refused, the job never held more than 256M"
like "$out" "^alloc 256M rc=0\$" "8 threads: afterwards the count is back to 0 (the whole cap can be allocated)"
out=$("$CT" --via proc2 threads 8 20000 256M 2>&1)
like "$out" "PASSED" "8 threads without the cap do pass 256M (so the check above can fail)"
# two processes of 4 threads each at once: afterwards the job's count is exactly 0 again
capped 256M sh -c "\"$CT\" threads 4 10000 256M & \"$CT\" --via proc2 threads 4 10000 256M; wait; \"$CT\" info"
is "$(printf '%s\n' "$out" | grep -c 'errors=0 max=[0-9]* cap=268435456 within$')" 2 "2 processes x 4 threads: both stay within the cap"
like "$out" "^info rc=0 free=268435456 total=268435456\$" "2 processes x 4 threads: no count is lost or left behind"

# ---- the CUDA context's own memory is counted (NVML's per-process figure) ----------
cat > "$TMP/ctx.sh" <<'SH'
ct=$1; d=$2
sed "s/\"pid\": 0/\"pid\": $$/" "$d/ctx-tmpl.json" > "$d/ctx.json"
GPUWISE_FAKE_SCENARIO=$d/ctx.json exec "$ct" info alloc 1M info alloc 800M alloc 700M
SH
scenario "$TMP/ctx-tmpl.json" '{"pid": 0, "used_memory_bytes": 268435456, "type": "compute"}'
capped 1G sh "$TMP/ctx.sh" "$CT" "$TMP"
is "$(printf '%s\n' "$out" | tr '\n' ' ')" \
	"info rc=0 free=$G total=$G alloc 1M rc=0 info rc=0 free=804257792 total=$G alloc 800M rc=2 alloc 700M rc=0 " \
	"a context NVML sees at 256M is charged at the first allocation: 1G - 256M - 1M left"

# what the driver holds grows (modules loaded later, rounding): measured again, at most once a second
scenario "$TMP/ctx-tmpl.json" '{"pid": 0, "used_memory_bytes": {"series": [268435456, 536870912], "step_ms": 1000}, "type": "compute"}'
sed -i 's/exec "$ct" .*/exec "$ct" alloc 1M info sleep 1100 alloc 1M info/' "$TMP/ctx.sh"
capped 1G sh "$TMP/ctx.sh" "$CT" "$TMP"
is "$(printf '%s\n' "$out" | grep '^info' | tr '\n' ' ')" \
	"info rc=0 free=804257792 total=$G info rc=0 free=535822336 total=$G " \
	"NVML's figure for the process is charged again when it grows (256M, then 512M a second later, plus the 1M asked after it)"

# ---- NVML reports the cap; so does gpuwise itself inside the job -------------------
capped 10G "$CT" alloc 1G nvml
like "$out" "^nvml rc=0 total=10737418240 free=9663676416 used=$G\$" "nvmlDeviceGetMemoryInfo: total is the 10G cap, used the job's 1G"
like "$out" "^nvml_v2 rc=0 total=10737418240 free=9663676416 used=$G\$" "nvmlDeviceGetMemoryInfo_v2 likewise"
capped 10G "$GW" status --json
like "$out" '"memory_total_bytes": ?10737418240' "gpuwise status inside a capped job sees a 10 GiB GPU"
run_gw status --json
like "$out" '"memory_total_bytes": ?25757220864' "outside the job the GPU has its 24 GiB"

# ---- the supervisor owns the region --------------------------------------------------
capped 1G sh -c 'echo "region=$GPUWISE_CAP_REGION"; echo "preload=$LD_PRELOAD"; ls -l "$GPUWISE_CAP_REGION"; stat -c "dir=%a %U" "${GPUWISE_CAP_REGION%/region}"'
like "$out" "^region=$XDG_RUNTIME_DIR/gpuwise-cap-[0-9a-f]{32}/region\$" "the region is a file in a directory of XDG_RUNTIME_DIR with a random 128-bit name"
like "$out" "^preload=/.*/libgpuwise-cap.so\$" "LD_PRELOAD names the library by absolute path"
like "$out" "^-rw------- " "the region file is private to the user (0600)"
like "$out" "^dir=700 root\$" "its directory is private to the job's user (0700, root here)"
r1=$(printf '%s\n' "$out" | sed -n 's/^region=//p')
capped 1G sh -c 'echo "$GPUWISE_CAP_REGION"'
isnt "$out" "$r1" "a second job's region has another name"
is "$(ls "$XDG_RUNTIME_DIR")" "" "the region and its directory are removed when gpuwise run ends"
# shellcheck disable=SC2016
out=$(LD_PRELOAD=$GW_FAKE/libnvidia-ml-old.so "$GW" run --no-gpu --vram-cap 1G -- sh -c 'echo "preload=$LD_PRELOAD"' 2>/dev/null)
like "$out" "^preload=/.*/libgpuwise-cap.so $GW_FAKE/libnvidia-ml-old.so\$" "an LD_PRELOAD of the user's is kept after ours"
# a nested --vram-cap would leave the outer count: refused; a plain nested run stays under the cap
capped 1G "$GW" run --no-gpu --vram-cap 10G -- "$CT" alloc 2G
like "$err" "gpuwise: cannot nest --vram-cap: this job is already under the VRAM cap of '$XDG_RUNTIME_DIR/gpuwise-cap-[0-9a-f]{32}/region'" \
	"a nested --vram-cap is refused with one line"
unlike "$out" "alloc 2G" "a nested --vram-cap does not start its job"
capped 1G "$GW" run --no-gpu -- "$CT" alloc 2G alloc 1G
is "$(printf '%s\n' "$out" | tr '\n' ' ')" "alloc 2G rc=2 alloc 1G rc=0 " "a job started by a nested plain gpuwise run is under the outer cap"
# a process cannot bring its own limit: a region it made up is refused, everything fails closed
printf 'not a region' > "$TMP/fake-region"
out=$(LD_PRELOAD=$LIB GPUWISE_CAP_REGION=$TMP/fake-region "$CT" alloc 1M 2>&1)
like "$out" "alloc 1M rc=2" "a bogus region: allocations are refused (fail closed)"
like "$out" "gpuwise-cap: cannot use the cap region '$TMP/fake-region': not a gpuwise cap region of this version" \
	"a bogus region is said on stderr"
out=$(LD_PRELOAD=$LIB GPUWISE_CAP_REGION=$TMP/none "$CT" alloc 1M 2>&1)
like "$out" "alloc 1M rc=2" "a missing region: allocations are refused"
# preloaded without a region, or with an empty one: fail closed (issue 20; it used to pass everything through)
out=$(LD_PRELOAD=$LIB "$CT" --via proc2 alloc 2G info 2>&1)
like "$out" "^alloc 2G rc=2\$" "preloaded without GPUWISE_CAP_REGION: allocations are refused (fail closed)"
like "$out" "^gpuwise-cap: libgpuwise-cap.so is preloaded but GPUWISE_CAP_REGION is not set; every GPU allocation is refused\$" \
	"... and said on stderr"
out=$(LD_PRELOAD=$LIB GPUWISE_CAP_REGION= "$CT" --via dlsym alloc 1M 2>&1)
like "$out" "^alloc 1M rc=2\$" "an empty GPUWISE_CAP_REGION: allocations are refused (fail closed)"
like "$out" "^gpuwise-cap: GPUWISE_CAP_REGION is empty; every GPU allocation is refused\$" "... and said on stderr"
# inside a capped job, a job's own unset/emptied variable does not lift the cap either
capped 1G env -u GPUWISE_CAP_REGION "$CT" alloc 2G
like "$out" "^alloc 2G rc=2\$" "a capped job that unsets GPUWISE_CAP_REGION gets no GPU memory at all"

# ---- forged regions: valid regions the job's own supervisor did not make are refused ---------
reason() { printf '%s\n' "$1" | sed -n "s/^gpuwise-cap: cannot use the cap region '[^']*': not a region this job's supervisor created: \(.*\); every GPU allocation is refused\$/\1/p"; }
# (1) a copy of the job's real region, its limit raised to 1 PiB, in a private directory of the job's
cat > "$TMP/forge.sh" <<'SH'
ct=$1; d=$2
mkdir -m 700 "$d/forged"
cp "$GPUWISE_CAP_REGION" "$d/forged/region"
chmod 600 "$d/forged/region"
# limit_bytes: the 8 bytes after magic, version, n_slots and region_bytes (cap/region.h)
python3 -c 'import struct,sys; f=open(sys.argv[1],"r+b"); f.seek(24); f.write(struct.pack("<Q", 1<<50))' "$d/forged/region"
GPUWISE_CAP_REGION=$d/forged/region "$ct" alloc 2G
"$ct" alloc 2G
SH
capped 1G sh "$TMP/forge.sh" "$CT" "$TMP"
is "$(printf '%s\n' "$out" | grep '^alloc' | tr '\n' ' ')" "alloc 2G rc=2 alloc 2G rc=2 " \
	"a copy of the region with a 1 PiB limit does not lift the 1G cap (the real region still refuses 2G)"
like "$(reason "$err")" "^its creator \(pid [0-9]+\) does not hold it open\$" \
	"the copy is refused: its creator does not hold that file open"
rm -rf "$TMP/forged"
# (2) the region of another gpuwise run of the same user (a 100G one beside the job): not an ancestor
mkfifo "$TMP/other.fifo"
"$GW" run --no-gpu --vram-cap 100G -- sh -c 'echo "$GPUWISE_CAP_REGION" > "$1.name"; read x < "$1"' sh "$TMP/other.fifo" 2>/dev/null &
other=$!
i=0; while [ ! -s "$TMP/other.fifo.name" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
oreg=$(cat "$TMP/other.fifo.name")
capped 1G env GPUWISE_CAP_REGION="$oreg" "$CT" alloc 2G
like "$out" "^alloc 2G rc=2\$" "another job's 100G region named in the environment does not lift a 1G cap"
like "$(reason "$err")" "^its creator \(pid [0-9]+\) is not an ancestor of this process\$" "... refused: its creator is not the job's ancestor"
echo > "$TMP/other.fifo"; wait $other
# (3) a nested gpuwise run that drops GPUWISE_CAP_REGION to make a 100G region of its own: refused
capped 1G env -u GPUWISE_CAP_REGION "$GW" run --no-gpu --vram-cap 100G -- "$CT" alloc 2G
unlike "$out" "alloc 2G" "a nested gpuwise run --vram-cap 100G after unsetting the variable does not start its job"
like "$err" "^gpuwise: cannot nest --vram-cap: libgpuwise-cap.so is loaded here, so this job is already under a VRAM cap \(GPUWISE_CAP_REGION was unset; a plain gpuwise run inside stays under it\)\$" \
	"... and says why in one line"
# (3b) a process of the job that writes a region of its own (owner: itself, holding it open) for its child
cat > "$TMP/forge2.py" <<'PY'
import os, shutil, struct, subprocess, sys
d = sys.argv[2]
os.mkdir(d + "/own", 0o700)
path = d + "/own/region"
shutil.copyfile(os.environ["GPUWISE_CAP_REGION"], path)
os.chmod(path, 0o600)
fd = os.open(path, os.O_RDWR)
start = int(open("/proc/self/stat").read().rsplit(")", 1)[1].split()[19])
# limit_bytes at 24, owner_pid at 32, owner_start_ticks at 40, owner_fd at 48 (cap/region.h)
os.pwrite(fd, struct.pack("<Q", 1 << 50), 24)
os.pwrite(fd, struct.pack("<I", os.getpid()), 32)
os.pwrite(fd, struct.pack("<Q", start), 40)
os.pwrite(fd, struct.pack("<i", fd), 48)
env = dict(os.environ, GPUWISE_CAP_REGION=path)
sys.exit(subprocess.call([sys.argv[1], "alloc", "2G"], env=env))
PY
capped 1G python3 "$TMP/forge2.py" "$CT" "$TMP"
like "$out" "^alloc 2G rc=2\$" "a region the job's own python writes, holds open and names as its creator does not lift the cap"
like "$(reason "$err")" "^its creator \(pid [0-9]+\) is itself under a VRAM cap\$" "... refused: its creator is itself under the cap"
rm -rf "$TMP/own"
# (4) a region file another user owns, put where the job looks
capped 1G sh -c 'mkdir -m 700 "$1/o"; cp "$GPUWISE_CAP_REGION" "$1/o/region"; chown nobody "$1/o/region"; GPUWISE_CAP_REGION=$1/o/region "$2" alloc 1M' sh "$TMP" "$CT"
like "$out" "^alloc 1M rc=2\$" "a region file owned by another user: refused"
like "$(reason "$err")" "^the file is not private to uid 0 \(owner 65534, mode 0600\)\$" "... refused: not the job user's own file"
capped 1G sh -c 'mkdir -m 755 "$1/p"; cp "$GPUWISE_CAP_REGION" "$1/p/region"; GPUWISE_CAP_REGION=$1/p/region "$2" alloc 1M' sh "$TMP" "$CT"
like "$(reason "$err")" "^its directory '$TMP/p' is not private to uid 0\$" "a region in a directory others can read: refused"
rm -rf "$TMP/o" "$TMP/p"

# ---- another user pre-creating region names does not block a capped job ------------------------
# the old names were gpuwise-cap-PID-N in /dev/shm; nobody plants every one for the next 300 PIDs
# (and a directory of the new form); the job's region is made where nobody can guess it
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	base=$(sh -c 'echo $$')
	setpriv --reuid nobody --regid nogroup --clear-groups sh -c '
		i=$1; while [ $i -lt $(($1 + 300)) ]; do n=0; while [ $n -lt 16 ]; do : > /dev/shm/gpuwise-cap-$i-$n; n=$((n + 1)); done; i=$((i + 1)); done
		mkdir /dev/shm/gpuwise-cap-00000000000000000000000000000000' sh "$base"
	planted=$(ls /dev/shm | grep -c '^gpuwise-cap-')
	out=$(env -u XDG_RUNTIME_DIR "$GW" run --no-gpu --vram-cap 1G -- sh -c 'echo "region=$GPUWISE_CAP_REGION"; "$1" alloc 600M alloc 600M' sh "$CT" 2>&1); rc=$?
	is "$rc" 0 "with $planted names planted in /dev/shm by nobody, a capped job starts"
	like "$out" "^region=/dev/shm/gpuwise-cap-[0-9a-f]{32}/region\$" "... its region is in a fresh private directory of /dev/shm"
	is "$(printf '%s\n' "$out" | grep '^alloc' | tr '\n' ' ')" "alloc 600M rc=0 alloc 600M rc=2 " "... and the cap holds"
	find /dev/shm -maxdepth 1 -user nobody -name 'gpuwise-cap-*' -exec rm -rf {} +
	# a job of nobody's own gets a directory owned by nobody (when nobody can reach the
	# build: a checkout under a private directory, such as a mktemp -d clone, it cannot)
	chmod 755 "$TMP"
	if ! setpriv --reuid nobody --regid nogroup --clear-groups sh -c 'test -x "$1" && test -r "$2" && test -r "$3"' sh \
		"$GW" "$CT" "$GW_FAKE/libcuda.so"; then
		chmod 700 "$TMP"
		skip "nobody's capped job: nobody cannot reach the build tree ($GW) from a private checkout directory"
	else
	out=$(setpriv --reuid nobody --regid nogroup --clear-groups env -u XDG_RUNTIME_DIR "$GW" run --no-gpu --vram-cap 1G -- \
		sh -c 'stat -c "%a %U" "${GPUWISE_CAP_REGION%/region}"; "$1" alloc 600M alloc 600M' sh "$CT" 2>/dev/null)
	chmod 700 "$TMP"
	is "$(printf '%s\n' "$out" | tr '\n' ' ')" "700 nobody alloc 600M rc=0 alloc 600M rc=2 " \
		"nobody's capped job: the region's directory is 0700 and nobody's, and the cap holds"
	fi
else
	skip "/dev/shm is not writable here"
fi

# ---- where gpuwise run finds the library ----------------------------------------------
mkdir -p "$TMP/p/bin" "$TMP/p/lib/gpuwise" "$TMP/q"
cp "$GW" "$TMP/p/bin/gpuwise"
cp "$LIB" "$TMP/p/lib/gpuwise/"
out=$("$TMP/p/bin/gpuwise" run --no-gpu --vram-cap 1G -- sh -c 'echo "$LD_PRELOAD"' 2>/dev/null)
is "$out" "$TMP/p/lib/gpuwise/libgpuwise-cap.so" "an installed gpuwise (PREFIX/bin) finds PREFIX/lib/gpuwise/libgpuwise-cap.so"
cp "$GW" "$TMP/q/gpuwise"
out=$("$TMP/q/gpuwise" run --no-gpu --vram-cap 1G -- true 2>&1); rc=$?
is "$rc" 1 "no library anywhere: exit 1 before the job starts"
like "$out" "^gpuwise: cannot find libgpuwise-cap.so for --vram-cap: looked for '$TMP/q/libgpuwise-cap.so' or '$TMP/q/../lib/gpuwise/libgpuwise-cap.so'\$" \
	"no library: one line naming the places looked at"
is "$(ls "$XDG_RUNTIME_DIR")" "" "no region is left behind when the library is missing"

# ---- doctor reports the cap -----------------------------------------------------------
capped 10G "$GW" doctor --json
like "$out" '"id": ?"vram-cap"' "doctor inside a capped job has a vram-cap finding"
like "$out" 'VRAM cap active: 10.00 GiB per GPU' "doctor says the cap's size"
run_gw doctor --json
unlike "$out" '"id": ?"vram-cap"' "doctor outside a job has no vram-cap finding"
out=$(LD_PRELOAD=$LIB "$GW" doctor 2>&1)
like "$out" "libgpuwise-cap.so is preloaded but no cap region is set: every GPU allocation is refused" \
	"doctor fails the library without a region (it fails closed)"

done_testing
