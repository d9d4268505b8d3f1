#!/bin/sh
# The queue's enforcement and the less common requests: a job over its VRAM
# request (warned, then stopped), a time limit, --vram auto through the
# planner, MIG instances by UUID on an 8 x H100 server, and a personal
# queue run by a normal user.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/queue-lib.sh"

# ---- over its request: warn (default), then stop -----------------------------
export GPUWISE_FAKE_SCENARIO="$FIX/scenarios/server-2gpu-queue-overuse.json"
printf 'context_reserve = 512M\nover_request_samples = 3\n' > "$TMP/daemon.conf"
q_start
id=$("$GW" submit --vram 10G --run-opt --interval --run-opt 200ms -- sleep 3)
q_wait_state "$id" done 30
run_gw show --json "$id"
is "$(printf '%s' "$out" | jget "d['state']")" done "warn mode: a job over its request runs to its end"
like "$(printf '%s' "$out" | jget "d['reason']")" "^warning: uses 30.00 GiB of GPU memory, over its request of 10.00 GiB by more than 10%$" "... with the warning recorded"
is "$(printf '%s' "$out" | jget "d['vram_measured_bytes']")" 32212254720 "... and the measured VRAM (30 GiB) shown"
ok=$("$GW" submit --vram 32G --run-opt --interval --run-opt 200ms -- sleep 1.5)
q_wait_state "$ok" done 30
is "$(q_state "$ok")" done "a job within its request plus the grace is left alone"
run_gw show --json "$ok"
is "$(printf '%s' "$out" | jget "d['reason']")" None "... and gets no warning"
# run's own limit: --mem-limit reaches the supervisor, which stops the job
id=$("$GW" submit --vram 40G --mem-limit 5G --restart on-failure --max-restarts 0 --run-opt --interval --run-opt 200ms -- sleep 30)
q_wait_state "$id" failed 30
run_gw show --json "$id"
is "$(printf '%s' "$out" | jget "d['spec']['run_args']")" '["--mem-limit", "5G", "--interval", "200ms"]' "submit's run options are passed to gpuwise run"
run_gw logs "$id"
like "$out" "mem-limit" "... and gpuwise run stopped the job at its --mem-limit"
q_stop
printf 'context_reserve = 512M\nover_request = stop\nover_request_grace = 10%%\n' > "$TMP/daemon.conf"
q_start
id=$("$GW" submit --vram 10G --run-opt --interval --run-opt 200ms -- sleep 30)
q_wait_state "$id" failed 30
run_gw show --json "$id"
like "$(printf '%s' "$out" | jget "d['reason']")" "^stopped: used 30.00 GiB of GPU memory, over its request of 10.00 GiB by more than 10%$" "stop mode: the job is stopped, the reason recorded"
q_stop

# ---- a hard cap at the request: vram_cap = yes runs shared jobs under run --vram-cap ------------
export GPUWISE_FAKE_SCENARIO="$FIX/scenarios/server-2gpu-queue.json"
printf 'context_reserve = 512M\nvram_cap = yes\n' > "$TMP/daemon.conf"
q_start
id=$("$GW" submit --vram 2G -- sh -c 'echo "cap=${GPUWISE_CAP_REGION:+set} preload=${LD_PRELOAD##*/}"')
ex=$("$GW" submit --mode exclusive -- sh -c 'echo "cap=${GPUWISE_CAP_REGION:+set}"')
q_wait_state "$id" done 30
q_wait_state "$ex" done 30
like "$("$GW" logs "$id")" "^cap=set preload=libgpuwise-cap.so$" "vram_cap = yes: a shared job runs with the cap library preloaded"
like "$("$GW" logs "$ex")" "^cap=$" "... an exclusive job (whole GPUs) does not"
q_stop

# ---- time limit, --vram auto ---------------------------------------------------------
export GPUWISE_FAKE_SCENARIO="$FIX/scenarios/server-2gpu-queue.json"
printf 'context_reserve = 512M\n' > "$TMP/daemon.conf"
q_start
id=$("$GW" submit --vram 1G --time-limit 1s -- sleep 30)
q_wait_state "$id" failed 30
run_gw show --json "$id"
is "$(printf '%s' "$out" | jget "d['reason']")" "stopped at its time limit of 1.0s" "a job past its time limit is stopped, with the reason"
ok "$([ "$(printf '%s' "$out" | jget "d['run_ms']")" -lt 10000 ]; echo $?)" "... within seconds"
run_gw submit --vram auto -- llama-3.1-8b --quant q4_k_m --ctx 4096 --vram 48G -- true
is "$rc" 0 "submit --vram auto with plan options"
id=$out
want=$("$GW" plan llama-3.1-8b --quant q4_k_m --ctx 4096 --vram 48G --json | jget "max(x['total_bytes'] for x in d['devices'])")
run_gw show --json "$id"
is "$(printf '%s' "$out" | jget "d['vram_request_bytes']")" "$want" "the request is the planner's per-GPU total"
like "$(printf '%s' "$out" | jget "d['spec']['vram_plan']")" "^llama-3.1-8b Q4_K_M ctx 4096 \\(fits\\): .* per GPU = weights .* \\+ KV cache .* \\+ compute .* \\+ overhead" "show says what the planner computed"
run_gw show "$id"
like "$out" "planner     llama-3.1-8b" "... in text too"
# log retention: a restart with a retention of 1s drops the logs of ended jobs
q_stop
sleep 1.2
printf 'context_reserve = 512M\nlog_retention = 1s\n' > "$TMP/daemon.conf"
q_start
for _i in $(seq 40); do [ -e "$TMP/state/logs/$id.log" ] || break; sleep 0.05; done
run_gw logs "$id"
is "$rc" 3 "the logs of a job ended longer ago than log_retention are removed"
like "$err" "the logs of job $id are gone \\(older than the retention\\)" "... and logs says so"
run_gw show --json "$id"
is "$(printf '%s' "$out" | jget "d['state']")" done "... while the job itself stays in the history"
run_gw submit --vram auto -- no-such-model-xyz -- true
is "$rc" 1 "--vram auto with a model the planner cannot size: exit 1"
like "$err" "the planner could not size the job" "... says so"
q_stop

# ---- MIG instances by UUID -------------------------------------------------------------
export GPUWISE_FAKE_SCENARIO="$FIX/scenarios/server-8xh100.json"
rm -rf "$TMP/state"
q_start
m1=$("$GW" submit --mode mig:1g.10gb -- sh -c 'echo "cvd=$CUDA_VISIBLE_DEVICES"; sleep 2')
m2=$("$GW" submit --mode mig:1g.10gb -- sh -c 'echo "cvd=$CUDA_VISIBLE_DEVICES"; sleep 2')
q_wait_state "$m1" done 30
q_wait_state "$m2" done 30
l1=$("$GW" logs "$m1" | grep '^cvd=')
l2=$("$GW" logs "$m2" | grep '^cvd=')
like "$l1" "^cvd=MIG-2e3f4051-6b7c-5d8e-9fa0-1b2c3d4e5f0[0-9]$" "a MIG job gets its instance's UUID in CUDA_VISIBLE_DEVICES"
isnt "$l1" "$l2" "two MIG jobs get two different instances"
run_gw submit --mode mig:7g.80gb -- true
is "$rc" 3 "a profile no GPU has: refused"
like "$err" "no GPU here has a MIG instance of profile 7g.80gb" "... says so"
run_gw submit --mode exclusive --gpus 8 -- true
is "$rc" 3 "8 whole GPUs where 2 are MIG-partitioned: refused"
q_stop

# ---- topology: NUMA node and PCIe switch from sysfs -----------------------------------------
export GPUWISE_FAKE_SCENARIO="$FIX/scenarios/server-2gpu-queue.json"
r=$TMP/root
for g in 41:00.0 81:00.0; do
	port=08.0
	[ "$g" = 81:00.0 ] && port=10.0
	mkdir -p "$r/sys/devices/pci0000:40/0000:40:01.0/0000:3f:00.0/0000:3f:$port/0000:$g"
	echo 0 > "$r/sys/devices/pci0000:40/0000:40:01.0/0000:3f:00.0/0000:3f:$port/0000:$g/numa_node"
done
mkdir -p "$r/sys/bus/pci/devices"
ln -s ../../../devices/pci0000:40/0000:40:01.0/0000:3f:00.0/0000:3f:08.0/0000:41:00.0 "$r/sys/bus/pci/devices/0000:41:00.0"
ln -s ../../../devices/pci0000:40/0000:40:01.0/0000:3f:00.0/0000:3f:10.0/0000:81:00.0 "$r/sys/bus/pci/devices/0000:81:00.0"
rm -rf "$TMP/state"
export GPUWISE_ROOT="$r"
q_start
is "$(python3 "$QTOOLS" topology "$SOCK" | tr '\n' ';')" "0 0 0 0;1 0 0 0;" "both GPUs on NUMA node 0 under one PCIe switch (from the sysfs path)"
q_stop
rm -f "$r/sys/bus/pci/devices/0000:81:00.0"
mkdir -p "$r/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0"
echo 1 > "$r/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0/numa_node"
ln -s ../../../devices/pci0000:80/0000:80:01.0/0000:81:00.0 "$r/sys/bus/pci/devices/0000:81:00.0"
q_start
is "$(python3 "$QTOOLS" topology "$SOCK" | tr '\n' ';')" "0 0 0 0;1 1 None 0;" "a GPU straight on a root port: its own NUMA node, no switch"
q_stop
unset GPUWISE_ROOT

# ---- NVLink groups from NVML's active links (fake NVML "nvlinks": each link's remote bus id) ----
python3 - "$FIX/scenarios/server-8xh100.json" "$TMP/nvl.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
gpus = d["gpus"]
for i, g in enumerate(gpus):
    g.pop("migs", None); g["mig_mode"] = 0
    if i < 4:      # GPUs 0-3 on one NVSwitch (every link to it)
        g["nvlinks"] = ["0000:f0:00.0"] * 4
    elif i < 6:    # GPUs 4 and 5 linked to each other directly
        g["nvlinks"] = [gpus[9 - i]["pci_bus_id"]] * 2
    # GPUs 6 and 7: no NVLink (NVML answers NOT_SUPPORTED)
json.dump(d, open(sys.argv[2], "w"))
PY
export GPUWISE_FAKE_SCENARIO="$TMP/nvl.json"
rm -rf "$TMP/state"
q_start
is "$(python3 "$QTOOLS" nvlink "$SOCK")" "0 0 0 0 4 4 None None" "NVLink groups: one NVSwitch (0-3), a direct pair (4-5), none (6, 7)"
q_stop

# ---- a personal queue run by a normal user ------------------------------------------------
export GPUWISE_FAKE_SCENARIO="$FIX/scenarios/server-2gpu-queue.json"
psock=$WORK/personal.sock
setpriv --reuid nobody --regid nogroup --clear-groups "$GW" daemon --state "$WORK/pstate" --socket "$psock" 2>"$TMP/pdaemon.log" &
ppid=$!
for _i in $(seq 200); do setpriv --reuid nobody --regid nogroup --clear-groups "$GW" queue --socket "$psock" >/dev/null 2>&1 && break; sleep 0.05; done
as_nobody submit --socket "$psock" --vram 1G -- sh -c 'id -u > personal.txt'
is "$rc" 0 "a user submits to their own personal queue"
pid_job=$out
for _i in $(seq 200); do [ -s "$WORK/personal.txt" ] && break; sleep 0.05; done
is "$(cat "$WORK/personal.txt" 2>/dev/null)" 65534 "the job runs as that user"
as_nobody quota set mine --vram 10G --socket "$psock"
is "$rc" 0 "in a personal queue its user is the administrator"
as_nobody show --socket "$psock" "$pid_job"
is "$rc" 0 "... and sees their job"
kill "$ppid"; wait "$ppid"
is "$?" 0 "the personal daemon stops cleanly"
unlike "$(cat "$TMP/daemon.log" "$TMP/pdaemon.log")" "Sanitizer|runtime error" "no sanitizer report from the daemons"
done_testing
