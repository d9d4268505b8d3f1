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
use nogpu desktop-4090 none
run_gw status
is "$rc" 0 "no GPU, NVML not wanted (GPUWISE_NVML_LIB=none): exit 0"
like "$out" "no GPU found" "no GPU: says so"
run_gw status --json
is "$(echo "$out" | jget 'len(d["gpus"])')" 0 "no GPU: JSON has no GPUs"
is "$(echo "$out" | jget 'd["driver_version"]')" None "no GPU: driver_version is null"
is "$(echo "$out" | jget 'd["nvml_state"]')" disabled "no GPU: nvml_state disabled"
run_gw status --prometheus
like "$out" '^gpuwise_nvml_up\{library="",state="disabled",error=""\} 1$' "no GPU: health gauge 1 (nothing broken)"
like "$out" '^gpuwise_gpus 0$' "no GPU: gpuwise_gpus 0"

# ---- an unusable NVML is an error, not "no GPU" (issue 10) ---------------------
use nogpu desktop-4090 /nonexistent/libnvidia-ml.so.1
run_gw status
is "$rc" 1 "bad GPUWISE_NVML_LIB: exit 1"
like "$out" "NVML cannot be used: cannot load '/nonexistent" "bad GPUWISE_NVML_LIB: text says why (without --all)"
unlike "$out" "no GPU found" "bad GPUWISE_NVML_LIB: not reported as 'no GPU'"
like "$err" "^gpuwise: NVML cannot be used: cannot load '/nonexistent" "bad GPUWISE_NVML_LIB: one-line error"
run_gw status --json
is "$rc" 1 "bad GPUWISE_NVML_LIB --json: exit 1"
like "$(echo "$out" | jget 'd["nvml_error"]')" "cannot load '/nonexistent" "bad GPUWISE_NVML_LIB: nvml_error says why"
is "$(echo "$out" | jget 'd["nvml_state"]')" failed "bad GPUWISE_NVML_LIB: nvml_state failed"
run_gw status --prometheus
is "$rc" 1 "bad GPUWISE_NVML_LIB --prometheus: exit 1"
like "$out" '^gpuwise_nvml_up\{library="",state="failed",error="cannot load .*/nonexistent/libnvidia-ml.so.1[^"]*"\} 0$' \
	"bad GPUWISE_NVML_LIB --prometheus: health gauge 0 with the reason"
printf 'not a library\n' > "$TMP/notalib.so"
use nogpu desktop-4090 "$TMP/notalib.so"
run_gw status --json
is "$rc" 1 "GPUWISE_NVML_LIB not a shared object: exit 1"
like "$(echo "$out" | jget 'd["nvml_error"]')" "notalib.so" "not a shared object: named"
# nvmlInit fails (DRIVER_NOT_LOADED) on a machine without any NVIDIA PCI device
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["errors"]={"nvmlInit_v2": "DRIVER_NOT_LOADED"}; json.dump(d, open(sys.argv[2],"w"))' \
	"$FIX/scenarios/desktop-4090.json" "$TMP/noinit.json"
use nogpu desktop-4090
export GPUWISE_FAKE_SCENARIO="$TMP/noinit.json"
run_gw status
is "$rc" 1 "nvmlInit fails: exit 1"
like "$out" "NVML cannot be used: cannot initialise NVML: Driver Not Loaded \\(NVML error 9\\)" "nvmlInit fails: text says why"
run_gw status --json
is "$(echo "$out" | jget 'd["nvml_state"]')" failed "nvmlInit fails: nvml_state failed"
run_gw status --prometheus
like "$out" '^gpuwise_nvml_up\{library="[^"]*libnvidia-ml.so",state="failed",error="cannot initialise NVML: Driver Not Loaded \(NVML error 9\)"\} 0$' \
	"nvmlInit fails: health gauge 0 with the reason"

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

rm -f "$LOG"
run_gw status
is "$rc" 0 "4090 text: exit 0"
calls | grep -q '^nvmlDeviceGetPcieThroughput'; ok $((!$?)) "4090 text: PCIe throughput (20 ms per NVML reading) not read when not shown"
rm -f "$LOG"
run_gw status --json
calls | grep -q '^nvmlDeviceGetPcieThroughput 0$'; ok $? "4090 --json: PCIe throughput read"
is "$(echo "$out" | jget 'd["gpus"][0]["pcie_rx_kbytes_per_s"]')" 1200000 "4090 --json: PCIe rx KB/s"
run_gw status
like "$out" '^\[0\] NVIDIA GeForce RTX 4090 .* 64°C' "4090 text: GPU line with temperature"
like "$out" 'alice +18.00 GiB +4242 +95% +python3 train.py --epochs 3$' "4090 text: process line under the GPU, with its SM %"

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

run_gw status --prometheus --prometheus-names gpuwise
is "$rc" 0 "prometheus: exit 0"
like "$out" '^# TYPE gpuwise_gpu_memory_used_bytes gauge$' "prometheus: TYPE line"
like "$out" '^gpuwise_gpu_memory_used_bytes\{gpu="2",uuid="GPU-ab000002-[^"]*",pci_bus_id="0000:3a:00.0"\} 76235669504$' \
	"prometheus: one sample per GPU"
like "$out" '^gpuwise_process_memory_used_bytes\{gpu="6",[^}]*pid="52001",user="bob",command="vllm",container="",gpu_instance_id=""\} 79456894976$' \
	"prometheus: one sample per process"
like "$out" '^gpuwise_gpu_temperature_celsius\{gpu="3",.*\} 86$' "prometheus: temperature"
unlike "$out" 'gpuwise_gpu_fan_ratio\{gpu="0"' "prometheus: unknown fan has no sample"

# compute modes: nvmlComputeMode_t 0 DEFAULT, 1 EXCLUSIVE_THREAD, 2 PROHIBITED, 3 EXCLUSIVE_PROCESS
run_gw status --json
j=$out
is "$(echo "$j" | jget '[d["gpus"][i]["compute_mode"] for i in (2, 3, 4, 6)]')" \
	'["exclusive_process", "default", "prohibited", "exclusive_thread"]' "8xH100: every compute mode named as NVML numbers them"
run_gw status --all
like "$out" 'compute mode exclusive_process' "8xH100 text: EXCLUSIVE_PROCESS (3) shown as exclusive_process"
like "$out" 'compute mode prohibited' "8xH100 text: PROHIBITED (2) shown as prohibited"
# MIG: the driver has no device-wide utilisation; null, not 0
is "$(echo "$j" | jget '[d["gpus"][i]["utilization_gpu_pct"] for i in (0, 1, 2)]')" '[null, null, 99]' \
	"8xH100: MIG GPUs have no utilisation (NOT_SUPPORTED is null)"
is "$(echo "$j" | jget 'd["gpus"][0]["unavailable"]["utilization_gpu_pct"]')" "not supported" "8xH100: MIG utilisation says why"
is "$(echo "$j" | jget 'd["gpus"][0]["mig_devices"][0]["profile"]')" "3g.40gb" "8xH100: MIG profile from the name"
# readings peers show: encoder/decoder, per-process SM, PCIe throughput, energy, P-state
is "$(echo "$j" | jget '[d["gpus"][7][k] for k in ("encoder_utilization_pct", "decoder_utilization_pct")]')" '[22, 35]' \
	"8xH100: encoder and decoder utilisation"
is "$(echo "$j" | jget 'd["gpus"][0]["encoder_utilization_pct"]')" None "8xH100: MIG GPU encoder utilisation null"
is "$(echo "$j" | jget '[d["gpus"][2][k] for k in ("pcie_tx_kbytes_per_s", "pcie_rx_kbytes_per_s")]')" '[9000000, 11000000]' \
	"8xH100: PCIe throughput in KB/s"
is "$(echo "$j" | jget 'd["gpus"][3]["energy_mj"]')" 4003000000 "8xH100: energy counter in mJ"
is "$(echo "$j" | jget 'd["gpus"][3]["performance_state"]')" 0 "8xH100: P-state"
is "$(echo "$j" | jget '[d["gpus"][2]["processes"][0][k] for k in ("sm_utilization_pct", "memory_utilization_pct")]')" '[97, 48]' \
	"8xH100: per-process SM and memory utilisation"
is "$(echo "$j" | jget 'd["gpus"][0]["processes"][0]["sm_utilization_pct"]')" None "8xH100: no per-process sample on a MIG GPU: null"
is "$(echo "$j" | jget 'd["gpus"][2]["processes"][0]["argv"]')" \
	'["python", "-m", "torch.distributed.run", "--nproc_per_node=4", "pretrain.py"]' "8xH100: argv array"
is "$(echo "$j" | jget 'd["gpus"][1]["processes"][1]["argv"]')" None "8xH100: argv null when not in /proc"
calls | grep -q '^nvmlDeviceGetProcessUtilization 2$'; ok $? "8xH100: nvmlDeviceGetProcessUtilization asked"
calls | grep -q '^nvmlDeviceGetProcessUtilization 0$'; ok $((!$?)) "8xH100: not asked on a MIG GPU"

# the default Prometheus names are dcgm-exporter's (etc/default-counters.csv)
run_gw status --prometheus
is "$rc" 0 "prometheus dcgm: exit 0"
like "$out" '^# TYPE DCGM_FI_DEV_GPU_UTIL gauge$' "prometheus dcgm: DCGM_FI_DEV_GPU_UTIL declared"
like "$out" '^DCGM_FI_DEV_GPU_UTIL\{gpu="2",UUID="GPU-ab000002-1111-2222-3333-444400000002",pci_bus_id="0000:3a:00.0",device="nvidia2",modelName="NVIDIA H100 80GB HBM3",Hostname="[^"]*",DCGM_FI_DRIVER_VERSION="570.124.06"\} 99$' \
	"prometheus dcgm: labels gpu, UUID, pci_bus_id, device, modelName, Hostname"
unlike "$out" '^DCGM_FI_DEV_GPU_UTIL\{gpu="0",' "prometheus dcgm: no utilisation sample for a MIG GPU"
like "$out" '^DCGM_FI_DEV_FB_USED\{gpu="2",[^}]*\} 72704$' "prometheus dcgm: FB_USED in MiB"
like "$out" '^DCGM_FI_DEV_FB_FREE\{gpu="2",[^}]*\} 8296$' "prometheus dcgm: FB_FREE in MiB (total - reserved - used)"
like "$out" '^DCGM_FI_DEV_POWER_USAGE\{gpu="2",[^}]*\} 640$' "prometheus dcgm: power in W"
like "$out" '^DCGM_FI_DEV_SM_CLOCK\{gpu="3",[^}]*\} 1755$' "prometheus dcgm: SM clock in MHz"
like "$out" '^DCGM_FI_DEV_GPU_TEMP\{gpu="3",[^}]*\} 86$' "prometheus dcgm: temperature in C"
like "$out" '^DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION\{gpu="3",[^}]*\} 4003000000$' "prometheus dcgm: energy in mJ"
like "$out" '^DCGM_FI_DEV_ENC_UTIL\{gpu="7",[^}]*\} 22$' "prometheus dcgm: encoder utilisation"
like "$out" '^DCGM_FI_DEV_COMPUTE_MODE\{gpu="2",[^}]*\} 3$' "prometheus dcgm: compute mode number"
like "$out" '^DCGM_FI_DEV_FB_USED\{gpu="1",[^}]*GPU_I_PROFILE="1g.10gb",GPU_I_ID="8",[^}]*\} 3072$' \
	"prometheus dcgm: MIG instance series with GPU_I_PROFILE and GPU_I_ID"
like "$out" '^gpuwise_container_memory_used_bytes\{gpu="1",[^}]*container="3f4e5d6c7b8a99887766554433221100ffeeddccbbaa00112233445566778899"\} 6442450944$' \
	"prometheus: container series"
like "$out" '^gpuwise_process_sm_utilization_ratio\{gpu="6",[^}]*pid="52001",[^}]*\} 0.61$' "prometheus: per-process SM ratio"
like "$out" '^gpuwise_process_memory_used_bytes\{gpu="1",[^}]*pid="54001",[^}]*container="3f4e5d6c7b8a[0-9a-f]*",GPU_I_ID="7"\} 6442450944$' \
	"prometheus: process series with container and MIG instance"
like "$out" '^gpuwise_nvml_up\{library="[^"]*",state="ok",error=""\} 1$' "prometheus: health gauge 1"
run_gw status --prometheus-names nvidia
is "$rc" 2 "--prometheus-names nvidia: usage error"
like "$err" "'dcgm' or 'gpuwise'" "--prometheus-names: the choices named"

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
use amd-7900xtx nogpu none
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
use nvidia-nodriver nogpu none
run_gw status --json
is "$rc" 0 "no driver: exit 0"
is "$(echo "$out" | jget 'd["gpus"][0]["kernel_driver"]')" None "no driver: kernel_driver null"
is "$(echo "$out" | jget 'd["gpus"][0]["error"]')" "no kernel driver bound" "no driver: says so"
use nouveau nogpu none
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
like "$err" "gpuwise: NVML cannot be used: cannot initialise NVML" "malformed scenario: gpuwise reports NVML failure"

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

# ---- real processes, no root prefix: users through NSS, argv, quoting -----------
python3 -c 'import time; time.sleep(120)' "it's one arg" "$(printf 'two\nlines')" "$(printf '%0200d' 7)" &
ppid1=$!
cat > "$TMP/real.json" <<EOF
{"driver_version": "570.124.06", "gpus": [{"name": "NVIDIA GeForce RTX 4090",
 "uuid": "GPU-5a1c2f7e-0d4b-4c39-9e61-1f2a3b4c5d6e", "pci_bus_id": "00000000:01:00.0",
 "memory_total_bytes": 25757220864, "temp_c": 50,
 "processes": [{"pid": $ppid1, "used_memory_bytes": 1073741824, "sm_pct": 40}]}]}
EOF
# wait until the process is python itself (its exe, not a pyenv shim's bash)
# with its whole argv; bounded at 20 s for a heavily loaded machine
_i=0
while [ $_i -lt 100 ]; do
	readlink "/proc/$ppid1/exe" 2>/dev/null | grep -q 'python[0-9.]*$' &&
		tr '\0' '\n' < "/proc/$ppid1/cmdline" 2>/dev/null | grep -q '^0*7$' && break
	sleep 0.2
	_i=$((_i + 1))
done
[ $_i -lt 100 ] || diag "python ($ppid1) had not exec'd after 20 s"
unset GPUWISE_ROOT
export GPUWISE_FAKE_SCENARIO="$TMP/real.json" GPUWISE_NVML_LIB="$NVML_NEW"
me=$(id -un)
run_gw status --json
is "$(printf '%s\n' "$out" | jget 'd["gpus"][0]["processes"][0]["user"]')" "$me" "no root prefix: the user named through NSS"
is "$(printf '%s\n' "$out" | jget 'd["gpus"][0]["processes"][0]["argv"][-5:-3]')" \
	'["-c", "import time; time.sleep(120)"]' "argv keeps arguments with spaces whole"
is "$(printf '%s\n' "$out" | jget 'd["gpus"][0]["processes"][0]["argv"][-3:-1]')" \
	'["it'"'"'s one arg", "two\nlines"]' "argv keeps quotes and newlines"
is "$(printf '%s\n' "$out" | jget 'len(d["gpus"][0]["processes"][0]["argv"][-1])')" 200 "argv: a 200-character argument is whole"
# LDAP/SSSD users are not in /etc/passwd: a directory service answers getpwuid_r
out=$(FAKE_NSS_NAME=ldap.alice LD_PRELOAD="$GW_FAKE/libnss-shim.so" ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=1 \
	"$GW" status --json 2>"$TMP/stderr")
is "$(printf '%s\n' "$out" | jget 'd["gpus"][0]["processes"][0]["user"]')" ldap.alice "a user known only to NSS (LDAP/SSSD) is named"
# under a root prefix the fixture's /etc/passwd names users, never the host's NSS
mkdir -p "$TMP/root/proc/$ppid1" "$TMP/root/etc" "$TMP/root/sys/bus/pci/devices"
printf 'Name:\tpython3\nUid:\t4321\t4321\t4321\t4321\n' > "$TMP/root/proc/$ppid1/status"
printf 'fixture.user:x:4321:4321::/home/f:/bin/sh\n' > "$TMP/root/etc/passwd"
out=$(GPUWISE_ROOT="$TMP/root" FAKE_NSS_NAME=ldap.alice LD_PRELOAD="$GW_FAKE/libnss-shim.so" \
	ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=1 "$GW" status --json 2>"$TMP/stderr")
is "$(printf '%s\n' "$out" | jget 'd["gpus"][0]["processes"][0]["user"]')" fixture.user "root prefix: the fixture's /etc/passwd names the user"
# text: quoted as a shell would need it, one line per process, cut to the terminal
run_gw status
line=$(printf '%s\n' "$out" | grep " $ppid1 ")
like "$line" "40% +[^ ]*python3 -c 'import time; time.sleep\(120\)' 'it'\\\\''s one arg' \\\$'two\\\\nlines' 0{10}" \
	"text: the command quoted for the shell (spaces, a quote, a newline)"
like "$line" "0{199}7$" "text: not cut when not a terminal (no COLUMNS)"
is "$(printf '%s\n' "$out" | grep -c "lines'")" 1 "text: an argument with a newline stays on the process's line"
out=$(COLUMNS=100 "$GW" status 2>/dev/null)
line=$(printf '%s\n' "$out" | grep " $ppid1 ")
is "$(printf '%s' "$line" | python3 -c 'import sys; print(len(sys.stdin.read()))')" 100 "COLUMNS=100: the process line fills 100 columns"
like "$line" "…$" "COLUMNS=100: a cut command ends with an ellipsis"
out=$(COLUMNS=200 "$GW" status 2>/dev/null)
line=$(printf '%s\n' "$out" | grep " $ppid1 ")
is "$(printf '%s' "$line" | python3 -c 'import sys; print(len(sys.stdin.read()))')" 200 "COLUMNS=200: a wider terminal shows more of the command (not 60 characters)"
kill $ppid1 2>/dev/null; wait $ppid1 2>/dev/null

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
