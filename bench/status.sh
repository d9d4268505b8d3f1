#!/bin/sh
# gpuwise status against the fake NVML with 8 GPUs and 64 processes:
# wall time of one `gpuwise status --json` (process start to exit) and the
# CPU cost of one refresh of an open hw handle (what `gpuwise run` and
# `status --watch` pay every interval).  Targets: 5 ms per invocation,
# 0.5 ms CPU per refresh.  Prints figures; asserts nothing.
set -eu
GW=${GW:-./gpuwise}
GW_BUILD=${GW_BUILD:-build/release}
FAKE=$GW_BUILD/fake
if [ ! -f "$FAKE/libnvidia-ml.so" ]; then
	echo "bench/status.sh: $FAKE/libnvidia-ml.so missing (run 'make bench')" >&2
	exit 1
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gw-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# a root with 8 H100s, 64 processes (8 per GPU) with /proc entries, passwd
python3 - "$TMP" <<'PY'
import json, os, sys
t = sys.argv[1]
root = os.path.join(t, "root")
def w(p, s):
    p = os.path.join(root, p)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    open(p, "w").write(s)
w("etc/passwd", "".join("user%d:x:%d:%d::/home/u:/bin/sh\n" % (i, 1000 + i, 1000 + i) for i in range(16)))
gpus = []
for i in range(8):
    bdf = "0000:%02x:00.0" % (0x10 + i * 0x10)
    d = "sys/bus/pci/devices/" + bdf + "/"
    for k, v in (("vendor", "0x10de"), ("device", "0x2330"), ("class", "0x030200"), ("revision", "0xa1"),
                 ("power/runtime_status", "active")):
        w(d + k, v + "\n")
    os.symlink("../../../../bus/pci/drivers/nvidia", os.path.join(root, d, "driver"))
    procs = []
    for k in range(8):
        pid = 10000 + i * 100 + k
        w("proc/%d/status" % pid, "Name:\tpython\nUid:\t%d\t%d\t%d\t%d\n" % ((1000 + k,) * 4))
        w("proc/%d/cmdline" % pid, "python\0train.py\0--rank=%d\0" % k)
        w("proc/%d/cgroup" % pid, "0::/user.slice/user-%d.slice/session-1.scope\n" % (1000 + k))
        procs.append({"pid": pid, "used_memory_bytes": (k + 1) << 30})
    gpus.append({"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-%08x-0000-0000-0000-000000000000" % i,
                 "pci_bus_id": "0000" + bdf, "cc": "9.0", "arch": 9, "memory_total_bytes": 81559 << 20,
                 "mem_reserved": 559 << 20, "temp_c": 50, "temp_slowdown_c": 87, "temp_shutdown_c": 92,
                 "util_gpu_pct": 90, "util_mem_pct": 40, "power_mw": 600000, "power_limit_mw": 700000,
                 "power_default_limit_mw": 700000, "clock_sm_mhz": 1980, "clock_mem_mhz": 2619,
                 "clock_sm_max_mhz": 1980, "clock_mem_max_mhz": 2619, "throttle_reasons": 0, "pcie_gen": 5,
                 "pcie_width": 16, "pcie_gen_max": 5, "pcie_width_max": 16, "persistence_mode": 1,
                 "compute_mode": 0, "mig_mode": 0, "ecc_mode": 1, "ecc_corrected": 0, "ecc_uncorrected": 0,
                 "remap_correctable": 0, "remap_uncorrectable": 0, "remap_pending": 0, "remap_failure": 0,
                 "processes": procs})
json.dump({"driver_version": "570.124.06", "nvml_version": "12.570.124.06", "cuda_driver_version": 12080,
           "gpus": gpus}, open(os.path.join(t, "scenario.json"), "w"))
PY
export GPUWISE_ROOT="$TMP/root" GPUWISE_FAKE_SCENARIO="$TMP/scenario.json"
export GPUWISE_NVML_LIB="$FAKE/libnvidia-ml.so" GPUWISE_CUDA_LIB="$FAKE/libcuda.so"
unset GPUWISE_FAKE_LOG

n=$("$GW" status --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["gpus"]), sum(len(g["processes"]) for g in d["gpus"]))')
runs=200
"$GW" status --json >/dev/null  # warm the page cache
t0=$(date +%s%N)
i=0
while [ $i -lt $runs ]; do "$GW" status --json >/dev/null; i=$((i + 1)); done
t1=$(date +%s%N)
wall=$(echo "$t0 $t1 $runs" | awk '{printf "%.2f", ($2 - $1) / 1e6 / $3}')
# the floor: starting the same binary that does nothing (dynamic linking, exec)
t0=$(date +%s%N)
i=0
while [ $i -lt $runs ]; do "$GW" --version >/dev/null; i=$((i + 1)); done
t1=$(date +%s%N)
floor=$(echo "$t0 $t1 $runs" | awk '{printf "%.2f", ($2 - $1) / 1e6 / $3}')
line=$("$GW" status --bench-refresh 5000)
cpu=$(echo "$line" | awk '{for (i = 1; i < NF; i++) if ($i == "cpu_ms_per_refresh") print $(i + 1)}')
echo "status: fake NVML, $(echo "$n" | awk '{print $1 " GPUs, " $2 " processes"}')"
echo "status: wall time per 'gpuwise status --json' invocation: $wall ms (target 5 ms, mean of $runs)"
echo "status:   of which process start ('gpuwise --version' takes $floor ms here; load average $(cut -d' ' -f1 /proc/loadavg))"
echo "status: CPU per refresh of an open handle: $cpu ms (target 0.5 ms, mean of 5000)"
