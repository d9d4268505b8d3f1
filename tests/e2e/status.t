#!/bin/sh
# gpuwise status against fixture roots and the fake NVML / CUDA libraries.
. "$(dirname "$0")/lib.sh"

NVML_NEW=$GW_FAKE/libnvidia-ml.so
NVML_OLD=$GW_FAKE/libnvidia-ml-old.so
export GPUWISE_CUDA_LIB="$GW_FAKE/libcuda.so"
unset CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER GPUWISE_FAKE_CLOCK
LOG=$TMP/calls.log

# use ROOT [SCENARIO [NVML]]: point gpuwise at a fixture and a fake library
use() {
	export GPUWISE_ROOT="$FIX/roots/$1"
	export GPUWISE_FAKE_SCENARIO="$FIX/scenarios/${2:-$1}.json"
	export GPUWISE_NVML_LIB="${3:-$NVML_NEW}"
	export GPUWISE_FAKE_LOG="$LOG"
	rm -f "$LOG"
}
calls() { cat "$LOG" 2>/dev/null; }

# ---- options -----------------------------------------------------------------
run_gw status --help
is "$rc" 0 "--help exits 0"
like "$out" "--prometheus" "--help lists --prometheus"
like "$out" "--wake" "--help lists --wake"
like "$out" "Exit status" "--help documents exit codes"

run_gw status --bogus
is "$rc" 2 "unknown option exits 2"
like "$err" "unknown option '--bogus'" "unknown option is named"

run_gw status --watch soon
is "$rc" 2 "a bad --watch duration exits 2"
like "$err" "'soon'" "the bad duration is quoted"

run_gw status --json --prometheus
is "$rc" 2 "--json with --prometheus exits 2"

run_gw status --count 3
is "$rc" 2 "--count without --watch exits 2"

# ---- no GPU ------------------------------------------------------------------
use nogpu desktop-4090 /nonexistent/libnvidia-ml.so.1
run_gw status
is "$rc" 0 "no GPU: exit 0"
like "$out" "no GPU found" "no GPU: says so"
run_gw status --json
is "$(echo "$out" | jget 'len(d["gpus"])')" 0 "no GPU: JSON has no GPUs"
is "$(echo "$out" | jget 'd["driver_version"]')" None "no GPU: driver_version is null"
like "$(echo "$out" | jget 'd["nvml_error"]')" "cannot load '/nonexistent" "no GPU: nvml_error says why"

# ---- desktop with an RTX 4090 --------------------------------------------------
use desktop-4090
run_gw status --json
is "$rc" 0 "4090: exit 0"
j=$out
is "$(echo "$j" | jget 'len(d["gpus"])')" 1 "4090: one GPU"
is "$(echo "$j" | jget 'd["gpus"][0]["name"]')" "NVIDIA GeForce RTX 4090" "4090: name from NVML"
is "$(echo "$j" | jget 'd["driver_version"]')" "570.124.06" "4090: driver version"
is "$(echo "$j" | jget 'd["cuda_driver_version"]')" "12.8" "4090: CUDA driver version from NVML"
is "$(echo "$j" | jget 'd["gpus"][0]["memory_total_bytes"]')" 25757220864 "4090: memory total in bytes"
is "$(echo "$j" | jget 'd["gpus"][0]["memory_reserved_bytes"]')" 347078656 "4090: reserved memory from nvmlMemory_v2_t"
is "$(echo "$j" | jget 'd["gpus"][0]["compute_capability"]')" "8.9" "4090: compute capability as a string"
is "$(echo "$j" | jget 'd["gpus"][0]["power_w"]')" 412.345 "4090: power in watts"
is "$(echo "$j" | jget 'd["gpus"][0]["temperature_c"]')" 64 "4090: temperature"
is "$(echo "$j" | jget 'd["gpus"][0]["pci_bus_id"]')" "0000:01:00.0" "4090: bus id normalised"
is "$(echo "$j" | jget 'd["gpus"][0]["kernel_driver"]')" "nvidia" "4090: driver from sysfs"
is "$(echo "$j" | jget 'd["gpus"][0]["ecc_mode"]')" None "4090: NOT_SUPPORTED ECC is null, not 0"
is "$(echo "$j" | jget 'd["gpus"][0]["unavailable"]["ecc_mode"]')" "not supported" "4090: says why ECC is null"
is "$(echo "$j" | jget 'd["gpus"][0]["sm_count"]')" None "4090: no CUDA query without --all"
is "$(echo "$j" | jget '[p["user"] for p in d["gpus"][0]["processes"]]')" '["alice", "root"]' "4090: process users"
is "$(echo "$j" | jget 'd["gpus"][0]["processes"][0]["command"]')" "python3 train.py --epochs 3" "4090: command line"
is "$(echo "$j" | jget 'd["gpus"][0]["processes"][1]["type"]')" "graphics" "4090: Xorg is a graphics process"
is "$(echo "$j" | jget 'd["gpus"][0]["processes"][0]["used_memory_bytes"]')" 19327352832 "4090: process memory"
calls | grep -q '^nvmlDeviceGetMemoryInfo_v2 0$'; ok $? "4090: current driver: nvmlDeviceGetMemoryInfo_v2 accepted our version field"
calls | grep -q '^nvmlDeviceGetMemoryInfo 0$'; ok $((!$?)) "4090: no fallback to v1 memory info"
calls | grep -q '^nvmlDeviceGetComputeRunningProcesses_v3 0$'; ok $? "4090: _v3 process list used"
calls | grep -q '^nvmlDeviceGetCurrentClocksEventReasons 0$'; ok $? "4090: ClocksEventReasons used"
calls | grep -q '^cuInit'; ok $((!$?)) "4090: CUDA not initialised without --all"

run_gw status --all --json
j=$out
is "$(echo "$j" | jget 'd["gpus"][0]["sm_count"]')" 128 "4090 --all: SM count from CUDA"
is "$(echo "$j" | jget 'd["gpus"][0]["cuda_index"]')" 0 "4090 --all: CUDA ordinal"
is "$(echo "$j" | jget 'd["gpus"][0]["memory_bandwidth_gbs"]')" 1008.1 "4090 --all: bandwidth from clock x bus width"
is "$(echo "$j" | jget 'd["cuda_order_note"]')" None "4090 --all: one GPU, no order note"

run_gw status
is "$rc" 0 "4090 text: exit 0"
like "$out" '^\[0\] NVIDIA GeForce RTX 4090 .* 64°C' "4090 text: GPU line with temperature"
like "$out" 'alice +18.00 GiB +4242 +python3 train.py' "4090 text: process line under the GPU"

# ---- old driver: no versioned symbols ------------------------------------------
use desktop-4090 desktop-4090 "$NVML_OLD"
run_gw status --json
is "$rc" 0 "old driver: exit 0"
j=$out
calls | grep -q '^nvmlInit$'; ok $? "old driver: falls back to nvmlInit"
calls | grep -q '^nvmlDeviceGetComputeRunningProcesses 0$'; ok $? "old driver: v1 process list"
calls | grep -q '^nvmlDeviceGetMemoryInfo 0$'; ok $? "old driver: v1 memory info"
calls | grep -q '^nvmlDeviceGetCurrentClocksThrottleReasons 0$'; ok $? "old driver: ThrottleReasons"
is "$(echo "$j" | jget 'd["gpus"][0]["memory_used_bytes"]')" 20001587200 "old driver: v1 used memory includes reserved"
is "$(echo "$j" | jget 'd["gpus"][0]["memory_reserved_bytes"]')" None "old driver: reserved unknown"
is "$(echo "$j" | jget 'd["gpus"][0]["unavailable"]["memory_reserved_bytes"]')" "not in this driver" "old driver: says the symbol is missing"
is "$(echo "$j" | jget 'd["gpus"][0]["processes"][0]["user"]')" alice "old driver: processes still listed"
is "$(echo "$j" | jget 'd["gpus"][0]["processes"][0]["gpu_instance_id"]')" None "old driver: v1 has no GPU instance"
is "$(echo "$j" | jget 'd["gpus"][0]["architecture"]')" None "old driver: no nvmlDeviceGetArchitecture"

# driver 535.43-535.86: the _v3 process struct changed size; _v2 is read instead
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["driver_version"]="535.54.03"; json.dump(d, open(sys.argv[2],"w"))' \
	"$FIX/scenarios/desktop-4090.json" "$TMP/r535.json"
use desktop-4090
export GPUWISE_FAKE_SCENARIO="$TMP/r535.json"
run_gw status --json
calls | grep -q '^nvmlDeviceGetComputeRunningProcesses_v2 0$'; ok $? "535.54: _v2 process list used"
calls | grep -q 'RunningProcesses_v3 0$'; ok $((!$?)) "535.54: _v3 process list avoided"
like "$(echo "$out" | jget 'd["nvml_note"]')" "535.104.05" "535.54: note says which driver fixes it"
is "$(echo "$out" | jget 'd["gpus"][0]["processes"][0]["user"]')" alice "535.54: processes still listed"

# ---- laptop: the NVIDIA GPU sleeps ----------------------------------------------
use laptop-5070
run_gw status --json
is "$rc" 0 "laptop asleep: exit 0"
j=$out
is "$(echo "$j" | jget 'len(d["gpus"])')" 2 "laptop: two GPUs"
is "$(echo "$j" | jget 'd["gpus"][0]["vendor"]')" NVIDIA "laptop: NVIDIA first"
is "$(echo "$j" | jget 'd["gpus"][0]["asleep"]')" True "laptop: NVIDIA asleep"
is "$(echo "$j" | jget 'd["gpus"][0]["memory_total_bytes"]')" None "laptop: asleep GPU memory unknown (null)"
is "$(echo "$j" | jget 'd["gpus"][1]["vendor"]')" Intel "laptop: Intel iGPU listed"
is "$(echo "$j" | jget 'd["gpus"][1]["integrated"]')" True "laptop: iGPU at 00:02.0 is integrated"
is "$(echo "$j" | jget 'd["gpus"][1]["kernel_driver"]')" i915 "laptop: i915 bound"
is "$(echo "$j" | jget 'd["nvml_initialised"]')" False "laptop: NVML not initialised"
is "$(calls | grep -c '^nvmlInit' || true)" 0 "laptop: the fake NVML saw no nvmlInit"
is "$(calls | grep -c '^cuInit' || true)" 0 "laptop: the fake CUDA saw no cuInit"
run_gw status
like "$out" 'asleep' "laptop text: says asleep"
like "$out" 'Intel Arc Graphics' "laptop text: iGPU named from pci.ids"
run_gw status --all --json
is "$(calls | grep -c '^nvmlInit' || true)" 0 "laptop --all: still no nvmlInit"

run_gw status --wake --json
j=$out
calls | grep -q '^nvmlInit_v2$'; ok $? "laptop --wake: NVML initialised"
is "$(echo "$j" | jget 'd["gpus"][0]["asleep"]')" False "laptop --wake: not asleep"
is "$(echo "$j" | jget 'd["gpus"][0]["name"]')" "NVIDIA GeForce RTX 5070 Laptop GPU" "laptop --wake: NVML name"
is "$(echo "$j" | jget 'd["gpus"][0]["compute_capability"]')" "12.0" "laptop --wake: sm_120"
is "$(echo "$j" | jget 'd["gpus"][0]["fan_pct"]')" None "laptop --wake: no fan (NOT_SUPPORTED) is null"

use laptop-5070-awake laptop-5070
run_gw status --json
calls | grep -q '^nvmlInit_v2$'; ok $? "laptop awake: NVML initialised without --wake"
is "$(echo "$out" | jget 'd["gpus"][0]["processes"][0]["command"]')" "ollama serve" "laptop awake: ollama listed"

# ---- 8 x H100 with MIG ----------------------------------------------------------
use server-8xh100
run_gw status --json
is "$rc" 0 "8xH100: exit 0"
j=$out
is "$(echo "$j" | jget 'len([g for g in d["gpus"] if g["vendor"] == "NVIDIA"])')" 8 "8xH100: 8 NVIDIA GPUs"
is "$(echo "$j" | jget 'd["gpus"][8]["name"]')" "ASPEED Graphics Family" "8xH100: BMC VGA listed last"
is "$(echo "$j" | jget '[g["pci_bus_id"] for g in d["gpus"][:2]]')" '["0000:18:00.0", "0000:2a:00.0"]' "8xH100: NVML order"
is "$(echo "$j" | jget 'd["gpus"][0]["mig_mode"]')" True "8xH100: MIG on GPU 0"
is "$(echo "$j" | jget 'len(d["gpus"][0]["mig_devices"])')" 2 "8xH100: 2 MIG devices on GPU 0"
is "$(echo "$j" | jget 'len(d["gpus"][1]["mig_devices"])')" 3 "8xH100: 3 MIG devices on GPU 1"
is "$(echo "$j" | jget 'd["gpus"][0]["mig_devices"][1]["uuid"]')" "MIG-1d2e3f40-5a6b-5c7d-8e9f-0a1b2c3d4e02" "8xH100: MIG UUID"
is "$(echo "$j" | jget 'd["gpus"][0]["mig_devices"][1]["memory_used_bytes"]')" 21474836480 "8xH100: MIG memory"
is "$(echo "$j" | jget 'len(d["gpus"][2]["mig_devices"])')" 0 "8xH100: no MIG devices on GPU 2"
is "$(echo "$j" | jget 'sorted(set(p["user"] for g in d["gpus"] for p in g["processes"] if p["user"]))')" \
	'["alice", "bob", "carol", "root"]' "8xH100: process users"
is "$(echo "$j" | jget 'sum(len(g["processes"]) for g in d["gpus"])')" 10 "8xH100: 10 processes"
is "$(echo "$j" | jget 'd["gpus"][0]["processes"][1]["gpu_instance_id"]')" 2 "8xH100: process on its GPU instance"
is "$(echo "$j" | jget 'd["gpus"][1]["processes"][0]["container"]')" \
	"3f4e5d6c7b8a99887766554433221100ffeeddccbbaa00112233445566778899" "8xH100: docker container id from cgroup"
is "$(echo "$j" | jget 'd["gpus"][1]["processes"][1]["running"]')" False "8xH100: PID without /proc entry flagged"
is "$(echo "$j" | jget 'd["gpus"][1]["processes"][1]["user"]')" None "8xH100: its user is null"
is "$(echo "$j" | jget 'd["gpus"][3]["throttle_reasons"]')" '["thermal slowdown (software)"]' "8xH100: throttle decoded"
is "$(echo "$j" | jget 'd["gpus"][5]["ecc_errors_corrected"]')" 12 "8xH100: ECC errors"
is "$(echo "$j" | jget 'd["gpus"][2]["remapped_rows_pending"]')" False "8xH100: remapped rows read"

run_gw status --prometheus
is "$rc" 0 "prometheus: exit 0"
like "$out" '^# TYPE gpuwise_gpu_memory_used_bytes gauge$' "prometheus: TYPE line"
like "$out" '^gpuwise_gpu_memory_used_bytes\{gpu="2",uuid="GPU-ab000002-[^"]*",pci_bus_id="0000:3a:00.0"\} 76235669504$' \
	"prometheus: one sample per GPU"
like "$out" '^gpuwise_process_memory_used_bytes\{gpu="6",[^}]*pid="52001",user="bob",command="vllm"\} 79456894976$' \
	"prometheus: one sample per process"
like "$out" '^gpuwise_gpu_temperature_celsius\{gpu="3",.*\} 86$' "prometheus: temperature"
unlike "$out" 'gpuwise_gpu_fan_ratio\{gpu="0"' "prometheus: unknown fan has no sample"

run_gw status --all --json
j=$out
is "$(echo "$j" | jget '[g["cuda_index"] for g in d["gpus"]]')" '[0, 1, 2, 3, 4, 5, 6, 7, null]' "8xH100: CUDA order = NVML order"
is "$(echo "$j" | jget 'd["cuda_order_note"]')" None "8xH100: no order note when orders agree"
CUDA_VISIBLE_DEVICES=3,1 run_gw status --all --json
unset CUDA_VISIBLE_DEVICES
j=$out
is "$(echo "$j" | jget '[g["cuda_index"] for g in d["gpus"][:4]]')" '[null, 1, null, 0]' "CUDA_VISIBLE_DEVICES=3,1 maps by UUID"
like "$(echo "$j" | jget 'd["cuda_order_note"]')" "CUDA_VISIBLE_DEVICES=3,1" "order note names CUDA_VISIBLE_DEVICES"

# ---- AMD ------------------------------------------------------------------------
use amd-7900xtx nogpu /nonexistent/libnvidia-ml.so.1
run_gw status --json
is "$rc" 0 "AMD: exit 0 without NVML"
j=$out
is "$(echo "$j" | jget '[g["vendor"] for g in d["gpus"]]')" '["AMD", "AMD"]' "AMD: two AMD GPUs"
is "$(echo "$j" | jget 'd["gpus"][0]["memory_total_bytes"]')" 25753026560 "AMD: VRAM from amdgpu sysfs"
is "$(echo "$j" | jget 'd["gpus"][0]["memory_used_bytes"]')" 3221225472 "AMD: VRAM used"
is "$(echo "$j" | jget 'd["gpus"][0]["utilization_gpu_pct"]')" 37 "AMD: gpu_busy_percent"
is "$(echo "$j" | jget 'd["gpus"][0]["temperature_c"]')" 51 "AMD: hwmon temperature"
is "$(echo "$j" | jget 'd["gpus"][0]["power_w"]')" 98.0 "AMD: hwmon power"
is "$(echo "$j" | jget 'd["gpus"][0]["integrated"]')" False "AMD: 7900 XTX discrete"
is "$(echo "$j" | jget 'd["gpus"][1]["integrated"]')" True "AMD: Raphael iGPU integrated"
like "$(echo "$j" | jget 'd["gpus"][0]["name"]')" "7900 XTX" "AMD: name from pci.ids"

# ---- NVIDIA without the driver, or with nouveau -----------------------------------
use nvidia-nodriver nogpu /nonexistent/libnvidia-ml.so.1
run_gw status --json
is "$rc" 0 "no driver: exit 0"
is "$(echo "$out" | jget 'd["gpus"][0]["kernel_driver"]')" None "no driver: kernel_driver null"
is "$(echo "$out" | jget 'd["gpus"][0]["error"]')" "no kernel driver bound" "no driver: says so"
use nouveau nogpu /nonexistent/libnvidia-ml.so.1
run_gw status --json
is "$rc" 0 "nouveau: exit 0"
is "$(echo "$out" | jget 'd["gpus"][0]["kernel_driver"]')" nouveau "nouveau: driver named"
like "$(echo "$out" | jget 'd["gpus"][0]["error"]')" "bound to 'nouveau'" "nouveau: explained"

# ---- a GPU that fell off the bus ---------------------------------------------------
use fell-off-bus
run_gw status --json
is "$rc" 0 "fell off: exit 0 (the other GPU is fine)"
j=$out
is "$(echo "$j" | jget 'len(d["gpus"])')" 2 "fell off: both GPUs listed"
is "$(echo "$j" | jget 'd["gpus"][0]["fell_off_bus"]')" True "fell off: revision 0xff detected"
like "$(echo "$j" | jget 'd["gpus"][0]["error"]')" "GPU is lost" "fell off: NVML's GPU_IS_LOST kept"
is "$(echo "$j" | jget 'd["gpus"][0]["temperature_c"]')" None "fell off: temperature null"
is "$(echo "$j" | jget 'd["gpus"][0]["unavailable"]["temperature_c"]')" "GPU is lost" "fell off: field says GPU is lost"
is "$(echo "$j" | jget 'd["gpus"][1]["temperature_c"]')" 42 "fell off: the other GPU still read"
run_gw status
like "$out" '^\[0\].*GPU is lost' "fell off text: error on the GPU line"

# ---- per-field errors injected into one scenario -----------------------------------
cat > "$TMP/perm.json" <<'EOF'
{"driver_version": "570.124.06", "gpus": [
 {"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-00000000-0000-0000-0000-000000000001",
  "pci_bus_id": "00000000:18:00.0", "memory_total_bytes": 85520809984, "temp_c": 40, "power_mw": 70000,
  "processes": [{"pid": 51001, "used_memory_bytes": 1073741824}],
  "errors": {"nvmlDeviceGetComputeRunningProcesses_v3": "NO_PERMISSION", "nvmlDeviceGetPowerUsage": "NO_PERMISSION",
             "nvmlDeviceGetTemperature": {"error": "GPU_IS_LOST", "from_call": 1}}},
 {"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-00000000-0000-0000-0000-000000000002",
  "pci_bus_id": "00000000:2a:00.0", "memory_total_bytes": 85520809984, "temp_c": 41,
  "processes": [{"pid": 51002, "used_memory_bytes": null}]}]}
EOF
use server-8xh100
export GPUWISE_FAKE_SCENARIO="$TMP/perm.json"
run_gw status --json --watch 10ms --count 2
is "$rc" 0 "injected errors: exit 0"
first=$(printf '%s\n' "$out" | head -1)
second=$(printf '%s\n' "$out" | tail -1)
is "$(echo "$first" | jget 'd["gpus"][0]["processes_error"]')" "no permission" "NO_PERMISSION on the process list is reported"
is "$(echo "$first" | jget 'd["gpus"][0]["processes"]')" "[]" "no processes invented"
is "$(echo "$first" | jget 'd["gpus"][0]["power_w"]')" None "NO_PERMISSION power is null"
is "$(echo "$first" | jget 'd["gpus"][0]["unavailable"]["power_w"]')" "no permission" "and says why"
is "$(echo "$first" | jget 'd["gpus"][0]["temperature_c"]')" 40 "first sample: temperature read"
is "$(echo "$second" | jget 'd["gpus"][0]["temperature_c"]')" None "from the second call on: GPU_IS_LOST"
is "$(echo "$second" | jget 'd["gpus"][0]["error"]')" "GPU is lost" "a GPU lost mid-run says so"
is "$(echo "$second" | jget 'd["gpus"][1]["temperature_c"]')" 41 "the other GPU is still read"
is "$(echo "$second" | jget 'd["gpus"][1]["processes"][0]["used_memory_bytes"]')" None \
	"NVML_VALUE_NOT_AVAILABLE process memory is null"
is "$(echo "$second" | jget 'd["gpus"][1]["processes"][0]["user"]')" alice "its user is still known"

# a GPU so lost that even its handle and PCI info fail: listed once, at its bus
cat > "$TMP/lost.json" <<'EOF'
{"driver_version": "570.124.06", "gpus": [
 {"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-00000000-0000-0000-0000-000000000001",
  "pci_bus_id": "00000000:2a:00.0", "errors": {"*": "GPU_IS_LOST"}},
 {"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-00000000-0000-0000-0000-000000000002",
  "pci_bus_id": "00000000:3a:00.0", "temp_c": 41}]}
EOF
use fell-off-bus
export GPUWISE_FAKE_SCENARIO="$TMP/lost.json"
run_gw status --json
is "$(echo "$out" | jget 'len(d["gpus"])')" 2 "lost handle: GPU not listed twice"
is "$(echo "$out" | jget 'd["gpus"][0]["pci_bus_id"]')" "0000:2a:00.0" "lost handle: matched to its sysfs device"
like "$(echo "$out" | jget 'd["gpus"][0]["error"]')" "GPU is lost" "lost handle: error kept"
is "$(echo "$out" | jget 'd["gpus"][1]["temperature_c"]')" 41 "lost handle: the other GPU read"

# ---- bad input ---------------------------------------------------------------------
printf '{"gpus": [ {"name": "x",' > "$TMP/broken.json"
use desktop-4090
export GPUWISE_FAKE_SCENARIO="$TMP/broken.json"
run_gw status --json
is "$rc" 1 "malformed scenario: exit 1"
like "$err" "fake vendor library: scenario '.*broken.json': line" "malformed scenario: the fake says why"
like "$err" "gpuwise: cannot initialise NVML" "malformed scenario: gpuwise reports NVML failure"

printf '{"gpus": [{"name": "x", "uuid": "GPU-1", "pci_bus_id": "0000:01:00.0", "temp_c": "hot"}]}' > "$TMP/badval.json"
export GPUWISE_FAKE_SCENARIO="$TMP/badval.json"
run_gw status
is "$rc" 1 "scenario with a bad value: exit 1"
like "$err" "gpus\[0\]\.temp_c" "bad value: the field is named"

use malformed
run_gw status
is "$rc" 1 "malformed fixture: exit 1"
like "$err" "cannot read '.*0000:01:00.0/vendor': not a 16-bit hex number" "malformed fixture: file and problem named"

export GPUWISE_ROOT="$TMP/no-such-root"
run_gw status
is "$rc" 1 "missing root: exit 1"
like "$err" "cannot read '.*no-such-root/sys/bus/pci/devices'" "missing root: named"

# ---- library loading ----------------------------------------------------------------
use desktop-4090
mkdir -p "$TMP/cuda/lib64/stubs" "$TMP/lib"
cp "$NVML_NEW" "$TMP/cuda/lib64/stubs/libnvidia-ml.so"
export GPUWISE_NVML_LIB="$TMP/cuda/lib64/stubs/libnvidia-ml.so"
run_gw status --json
is "$rc" 1 "toolkit stub only: exit 1 (driver bound, no NVML)"
like "$(echo "$out" | jget 'd["nvml_note"]')" "stub" "toolkit stub: rejected with a note"
is "$(echo "$out" | jget 'd["nvml_library"]')" None "toolkit stub: not reported as loaded"

cp "$NVML_NEW" "$TMP/lib/libnvidia-ml.so.1"
unset GPUWISE_NVML_LIB
out=$(LD_LIBRARY_PATH="$TMP/lib" "$GW" status --json 2>"$TMP/stderr"); rc=$?
is "$rc" 0 "default search: exit 0"
like "$(echo "$out" | jget 'd["nvml_library"]')" "/lib/libnvidia-ml.so.1$" "default search: libnvidia-ml.so.1 loaded and reported"

# ---- watch -----------------------------------------------------------------------------
cat > "$TMP/leak.json" <<'EOF'
{"driver_version": "570.124.06", "gpus": [{"name": "NVIDIA GeForce RTX 4090",
 "uuid": "GPU-5a1c2f7e-0d4b-4c39-9e61-1f2a3b4c5d6e", "pci_bus_id": "00000000:01:00.0",
 "memory_total_bytes": 25757220864, "temp_c": {"calls": [60, 70, 80]},
 "processes": [{"pid": 4242, "used_memory_bytes": {"series": [1073741824, 2147483648, 3221225472], "step_ms": 1000}}]}]}
EOF
use desktop-4090
export GPUWISE_FAKE_SCENARIO="$TMP/leak.json" GPUWISE_FAKE_CLOCK=calls
run_gw status --json --watch 10ms --count 3
unset GPUWISE_FAKE_CLOCK
is "$rc" 0 "watch --count 3: exit 0"
is "$(printf '%s\n' "$out" | wc -l | tr -d ' ')" 3 "watch --json: one document per line"
is "$(printf '%s\n' "$out" | python3 -c 'import json,sys; print([json.loads(l)["gpus"][0]["processes"][0]["used_memory_bytes"] for l in sys.stdin])')" \
	"[1073741824, 2147483648, 3221225472]" "watch: a leaking process series is played"
is "$(printf '%s\n' "$out" | python3 -c 'import json,sys; print([json.loads(l)["gpus"][0]["temperature_c"] for l in sys.stdin])')" \
	"[60, 70, 80]" "watch: a climbing temperature is played"

"$GW" status --watch 50ms > "$TMP/watch.out" 2>&1 &
wpid=$!
sleep 1
kill -INT $wpid
wait $wpid; wrc=$?
is "$wrc" 0 "watch: SIGINT ends it cleanly (exit 0)"
frames=$(grep -c '^\[0\]' "$TMP/watch.out")
[ "$frames" -ge 2 ]; ok $? "watch: repeated output when not a terminal ($frames frames)"
unlike "$(cat "$TMP/watch.out")" "$(printf '\033')" "watch: no terminal escapes when not a terminal"

done_testing
