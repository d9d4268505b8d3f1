#!/bin/sh
# gpuwise run against the fake NVML with time series: the leak detector
# (a ramp is caught with the right slope, a sawtooth is not), --mem-limit,
# heat pausing the job (SIGSTOP seen in /proc) and resuming it, Xid events
# and the HTML report with GPU charts.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/report_shot.sh"
export GPUWISE_NO_STATUS_LINE=1
NVML="$GW_FAKE/libnvidia-ml.so"
if [ ! -e "$NVML" ]; then
	skip "fake NVML not built ($NVML)"
	done_testing
	exit
fi
export GPUWISE_NVML_LIB="$NVML"

# scenario KIND FILE: one GPU whose only process is gpuwise's child (the
# job), with memory and temperature series stepping every 100 ms.
scenario() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
kind, path = sys.argv[1], sys.argv[2]
MiB, GiB = 1 << 20, 1 << 30
temp = 60
mem = 1 * GiB
if kind == "leak":        # 16 MiB/s for 20 s: 1.6 MiB per 100 ms step
    mem = {"series": [GiB + int(i * 1.6 * MiB) for i in range(200)], "step_ms": 100}
elif kind == "sawtooth":  # 1.0 .. 1.5 GiB every 700 ms, forever, no growth
    mem = {"series": [GiB + int(i * GiB / 12) for i in range(7)], "step_ms": 100, "loop": True}
elif kind == "heat":      # 60 C for 1 s, 90 C for 1.5 s, then 60 C
    temp = {"series": [60] * 10 + [90] * 15 + [60], "step_ms": 100}
gpu = {
    "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-00000000-0000-0000-0000-000000000001",
    "pci_bus_id": "00000000:18:00.0", "cc": "9.0", "memory_total_bytes": 80 * GiB,
    "temp_c": temp, "temp_slowdown_c": 87, "temp_shutdown_c": 92, "util_gpu_pct": 95,
    "util_mem_pct": 40, "power_mw": 350000, "power_limit_mw": 700000,
    "clock_sm_mhz": 1980, "clock_mem_mhz": 2619, "throttle_reasons": 0,
    "processes": [{"pid": "child", "used_memory_bytes": mem, "type": "compute"}],
}
json.dump({"driver_version": "570.124.06", "nvml_version": "12.570.124.06",
           "cuda_driver_version": 12080, "gpus": [gpu]}, open(path, "w"), indent=1)
EOF
}

# A ramp of 16 MiB/s is caught, with the slope within 10%.
scenario leak "$TMP/leak.json"
GPUWISE_FAKE_SCENARIO="$TMP/leak.json" run_gw run --interval 100ms --leak-warmup 1s --leak-window 500ms \
	--on-leak stop --grace 300ms --json --report "$TMP/leak.html" --log "$TMP/leak.csv" -- sleep 20
like "$err" "leak: job GPU memory grows" "the leak is reported on stderr"
slope=$(printf '%s\n' "$out" | jget '[e["slope_bytes_per_s"] for e in d["events"] if e["event"]=="leak"][0]')
python3 -c 'import sys; s=float(sys.argv[1]); t=16*2**20; sys.exit(not abs(s-t)/t < 0.10)' "$slope"
ok $? "leak slope $slope B/s is within 10% of 16 MiB/s"
tto=$(printf '%s\n' "$out" | jget '[e["time_to_oom_s"] for e in d["events"] if e["event"]=="leak"][0]')
python3 -c 'import sys; t=float(sys.argv[1]); sys.exit(not 3000 < t < 6000)' "$tto"
ok $? "time to out-of-memory ($tto s) is about 79 GiB at 16 MiB/s"
is "$(printf '%s\n' "$out" | jget 'd["attempts"][0]["class"] + "/" + d["attempts"][0]["reason"]')" \
	"stopped-by-gpuwise/leak" "--on-leak stop stops the job"
is "$(printf '%s\n' "$out" | jget 'd["gpu"]')" "True" "the GPU was sampled"
peak=$(printf '%s\n' "$out" | jget 'd["peaks"]["job_gpu_mem_bytes"]')
[ "$peak" -gt 1073741824 ]; ok $? "job memory is the fake's per-process figure for the job ($peak)"
like "$(sed -n 2p "$TMP/leak.csv")" "^[0-9.]+,[0-9]+,1,[0-9]+,[0-9]+,[0-9]+,0,[0-9]+,[0-9]+,95,60,350000," \
	"the CSV log has the GPU columns"
like "$(cat "$TMP/leak.html")" ">leak<" "the report marks the leak"
report_shot "$TMP/leak.html" "$TMP/leak.png" "GPU report"

# --on-leak restart starts the job again (even with --restart never).
GPUWISE_FAKE_SCENARIO="$TMP/leak.json" run_gw run --interval 100ms --leak-warmup 1s --leak-window 500ms \
	--on-leak restart --max-restarts 1 --backoff 100ms..100ms --grace 300ms --json -- sleep 20
is "$(printf '%s\n' "$out" | jget '[a["reason"] for a in d["attempts"]]')" '["leak", "leak"]' \
	"--on-leak restart: two attempts, both stopped for the leak"
like "$err" "give-up: not restarting: 1 restart done" "then the restart budget ends it"

# A sawtooth that does not grow raises nothing.
scenario sawtooth "$TMP/saw.json"
GPUWISE_FAKE_SCENARIO="$TMP/saw.json" run_gw run --interval 100ms --leak-warmup 1s --leak-window 500ms \
	--json -- sleep 7
is "$rc" 0 "the sawtooth job ends normally"
is "$(printf '%s\n' "$out" | jget '[e["event"] for e in d["events"] if e["event"]=="leak"]')" "[]" \
	"a sawtooth that does not grow raises no leak"
peak=$(printf '%s\n' "$out" | jget 'd["peaks"]["job_gpu_mem_bytes"]')
[ "$peak" -gt 1500000000 ]; ok $? "the sawtooth was seen (peak $peak)"

# --mem-limit stops the job when its GPU memory passes the limit.
GPUWISE_FAKE_SCENARIO="$TMP/leak.json" run_gw run --interval 100ms --mem-limit 1.05G --grace 300ms \
	--json -- sleep 20
like "$err" "mem-limit: job GPU memory .* is over --mem-limit" "--mem-limit is reported"
is "$(printf '%s\n' "$out" | jget 'd["attempts"][0]["reason"]')" "mem-limit" "the job is stopped for the limit"

# Heat pauses the job (state T in /proc) and resumes it when 5 C under.
scenario heat "$TMP/heat.json"
rm -f "$TMP/jobpid"
GPUWISE_FAKE_SCENARIO="$TMP/heat.json" "$GW" run --interval 100ms --on-heat pause --json \
	-- sh -c 'echo $$ > "$0"; sleep 4' "$TMP/jobpid" >"$TMP/heat.out" 2>"$TMP/heat.err" &
gpid=$!
states=$(python3 - "$TMP/jobpid" <<'EOF'
import os, sys, time
seen = []
t0 = time.time()
while time.time() - t0 < 10:
    try:
        pid = open(sys.argv[1]).read().strip()
        st = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        if seen:
            break
        time.sleep(0.02)
        continue
    if not seen or seen[-1] != st:
        seen.append(st)
    time.sleep(0.02)
print("".join(seen))
EOF
)
wait "$gpid"
rc=$?
is "$rc" 0 "the paused job resumes and ends with 0"
like "$states" "T" "the job was stopped (SIGSTOP) while hot (states: $states)"
like "$states" "T[SR]" "and running again afterwards"
like "$(cat "$TMP/heat.err")" "heat: GPU 0 at 90 C \(limit 83 C\)" "heat is reported"
like "$(cat "$TMP/heat.err")" "pause: job paused" "the pause is reported"
like "$(cat "$TMP/heat.err")" "resume: job resumed" "the resume is reported"
order=$(jget '" ".join(e["event"] for e in d["events"] if e["event"] in ("heat","pause","heat-clear","resume"))' \
	< "$TMP/heat.out")
is "$order" "heat pause heat-clear resume" "events in order: heat, pause, heat-clear, resume"

# --on-heat stop ends the job and does not restart it.
GPUWISE_FAKE_SCENARIO="$TMP/heat.json" run_gw run --interval 100ms --on-heat stop --restart on-failure \
	--grace 300ms --json -- sleep 20
is "$(printf '%s\n' "$out" | jget 'd["attempts"][0]["class"] + "/" + d["attempts"][0]["reason"]')" \
	"stopped-by-gpuwise/heat" "--on-heat stop stops the job"
is "$(printf '%s\n' "$out" | jget 'len(d["attempts"])')" 1 "and does not restart it"
like "$err" "not restarting: gpuwise stopped it \(heat\)" "says why"

# Xid events in the kernel log during the run; a hardware Xid classifies the failure.
printf '%s\n' "3,100,1000000,-;NVRM: Xid (PCI:0000:18:00): 13, pid=1, name=old, Graphics Exception" > "$TMP/kmsg"
printf '%s\n' "3,101,9000000,-;NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus." > "$TMP/xid79"
GPUWISE_FAKE_SCENARIO="$TMP/leak.json" run_gw run --interval 100ms --xid-file "$TMP/kmsg" --json -- \
	sh -c 'sleep 0.3; cat "$0" >> "$1"; sleep 1.5; exit 1' "$TMP/xid79" "$TMP/kmsg"
is "$rc" 1 "the job's status passes through"
is "$(printf '%s\n' "$out" | jget '[e["xid"] for e in d["events"] if e["event"]=="xid"]')" "[79]" \
	"the new Xid 79 is reported, the old Xid 13 is not"
is "$(printf '%s\n' "$out" | jget 'd["attempts"][0]["class"]')" "hardware" "the failure is classified hardware"

done_testing
