#!/bin/sh
# tests/device/check.sh [REPORT]: run gpuwise against a real GPU and compare
# with the vendor's own tools.  No fakes: GPUWISE_* variables are cleared.
# Writes a report (REPORT, else $OUT/report.txt, else ./device-report.txt)
# in sections; other commands append their own sections below "status".
# Exit status: 0 all checks passed or no GPU here, 1 a check failed.
# Budget: well under 5 minutes (one build, a few runs).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
report=${1:-${OUT:+$OUT/report.txt}}
report=${report:-$top/device-report.txt}
mkdir -p "$(dirname "$report")"
: > "$report"
# GW_DEVICE_SELFTEST=1 keeps them, to test this script against the fakes
[ "${GW_DEVICE_SELFTEST:-}" = 1 ] || unset GPUWISE_ROOT GPUWISE_NVML_LIB GPUWISE_CUDA_LIB GPUWISE_FAKE_SCENARIO GPUWISE_FAKE_LOG
failures=0

say() { printf '%s\n' "$*" | tee -a "$report"; }
section() { say ""; say "== $1"; }
check() { # check OK|FAIL TEXT
	say "$1: $2"
	[ "$1" = OK ] || failures=$((failures + 1))
}
ms_now() { echo $(( $(date +%s%N) / 1000000 )); }

section "machine"
say "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
say "kernel: $(uname -sr)"
if ! command -v nvidia-smi >/dev/null 2>&1; then
	say "no GPU: nvidia-smi not found, nothing to compare (exit 0)"
	exit 0
fi
nvidia-smi -L 2>&1 | tee -a "$report"

section "build"
t0=$(ms_now)
if ! make -j"$(nproc 2>/dev/null || echo 4)" gpuwise >"$report.build" 2>&1; then
	# a warning turned error in a release build must not hide the device check
	say "release build failed with -Werror; retrying with -Wno-error (see $report.build)"
	make -j"$(nproc 2>/dev/null || echo 4)" gpuwise OPT="-O2 -g -Wno-error" >>"$report.build" 2>&1 ||
		{ check FAIL "gpuwise does not build"; exit 1; }
fi
say "built ./gpuwise in $(( $(ms_now) - t0 )) ms"
GW=$top/gpuwise

# ---- status ---------------------------------------------------------------------
section "status"
q=name,memory.total,driver_version,temperature.gpu,power.draw
t0=$(ms_now)
nvidia-smi --query-gpu=$q --format=csv,noheader,nounits > "$report.smi" 2>&1
smi_rc=$?
smi_ms=$(( $(ms_now) - t0 ))
t0=$(ms_now)
"$GW" status --json > "$report.status.json" 2> "$report.status.err"
gw_rc=$?
gw_ms=$(( $(ms_now) - t0 ))
# a second run: the driver's state is warm now (persistence off makes the first slow)
t0=$(ms_now)
"$GW" status --json > /dev/null 2>&1
gw2_ms=$(( $(ms_now) - t0 ))
t0=$(ms_now)
nvidia-smi --query-gpu=$q --format=csv,noheader,nounits > /dev/null 2>&1
smi2_ms=$(( $(ms_now) - t0 ))
say "wall time: nvidia-smi --query-gpu $smi_ms ms then $smi2_ms ms; gpuwise status --json $gw_ms ms then $gw2_ms ms"
[ "$smi_rc" -eq 0 ] && check OK "nvidia-smi ran" || check FAIL "nvidia-smi exited $smi_rc: $(head -c 300 "$report.smi")"
[ "$gw_rc" -eq 0 ] && check OK "gpuwise status --json exited 0" ||
	check FAIL "gpuwise status --json exited $gw_rc: $(head -c 300 "$report.status.err")"
say "nvidia-smi: $(tr '\n' ';' < "$report.smi")"

if command -v python3 >/dev/null 2>&1; then
	python3 - "$report.smi" "$report.status.json" >> "$report.cmp" 2>&1 <<'PY'
import json, sys
smi = [l.strip() for l in open(sys.argv[1]) if l.strip()]
try:
    doc = json.load(open(sys.argv[2]))
except Exception as e:
    print("FAIL: gpuwise output is not JSON: %s" % e)
    sys.exit(0)
gpus = {g["nvml_index"]: g for g in doc["gpus"] if g.get("nvml_index") is not None}
print("%s: %d GPUs in nvidia-smi, %d NVML GPUs in gpuwise" % ("OK" if len(smi) == len(gpus) else "FAIL", len(smi), len(gpus)))
def num(s):
    try:
        return float(s)
    except ValueError:
        return None
for i, line in enumerate(smi):
    f = [x.strip() for x in line.rsplit(",", 4)]
    if len(f) != 5:
        print("FAIL: cannot parse nvidia-smi line %r" % line)
        continue
    name, mem, drv, temp, power = f
    g = gpus.get(i)
    if g is None:
        print("FAIL: gpu %d missing from gpuwise" % i)
        continue
    def cmp(what, ok, a, b):
        print("%s: gpu %d %s: nvidia-smi %s, gpuwise %s" % ("OK" if ok else "FAIL", i, what, a, b))
    cmp("name", name == g["name"], name, g["name"])
    gm = g["memory_total_bytes"]
    cmp("memory.total (MiB)", num(mem) is not None and gm is not None and int(num(mem)) == gm // 1048576,
        mem, None if gm is None else gm // 1048576)
    cmp("driver_version", drv == doc["driver_version"], drv, doc["driver_version"])
    t, gt = num(temp), g["temperature_c"]
    cmp("temperature.gpu (C, +-3)", (t is None and gt is None) or (t is not None and gt is not None and abs(t - gt) <= 3), temp, gt)
    p, gp = num(power), g["power_w"]
    cmp("power.draw (W, +-max(15 W, 15%))",
        (p is None and gp is None) or (p is not None and gp is not None and abs(p - gp) <= max(15, 0.15 * p)), power, gp)
PY
	tee -a "$report" < "$report.cmp"
	n=$(grep -c '^FAIL' "$report.cmp")
	failures=$((failures + n))
	rm -f "$report.cmp"
else
	say "python3 absent: field comparison skipped"
fi

say ""
say "gpuwise status --all:"
"$GW" status --all >> "$report" 2>&1
say "gpuwise status --prometheus (first 12 lines):"
"$GW" status --prometheus 2>&1 | head -12 >> "$report"
t0=$(ms_now)
"$GW" status --watch 200ms --count 5 --json > "$report.watch" 2>&1
wrc=$?
lines=$(wc -l < "$report.watch" | tr -d ' ')
[ "$wrc" -eq 0 ] && [ "$lines" -eq 5 ] && check OK "status --watch 200ms --count 5: 5 documents in $(( $(ms_now) - t0 )) ms" ||
	check FAIL "status --watch: exit $wrc, $lines lines"
rm -f "$report.watch" "$report.smi" "$report.status.err"
# issue 10: compute mode, P-state, encoder/decoder and SM clock against nvidia-smi
# (each field queried alone, so a field this nvidia-smi lacks skips only itself)
for f in compute_mode pstate utilization.encoder utilization.decoder clocks.sm; do
	nvidia-smi --query-gpu=$f --format=csv,noheader,nounits > "$report.f" 2>/dev/null || { say "skip: nvidia-smi has no field $f"; continue; }
	python3 - "$f" "$report.f" "$report.status.json" >> "$report.cmp" 2>&1 <<'PY'
import json, sys
f, vals = sys.argv[1], [l.strip() for l in open(sys.argv[2]) if l.strip()]
gpus = {g["nvml_index"]: g for g in json.load(open(sys.argv[3]))["gpus"] if g.get("nvml_index") is not None}
modes = {"Default": "default", "Exclusive_Thread": "exclusive_thread", "Prohibited": "prohibited",
         "Exclusive_Process": "exclusive_process"}
for i, v in enumerate(vals):
    g = gpus.get(i, {})
    if f == "compute_mode":
        ours, ok = g.get("compute_mode"), modes.get(v) == g.get("compute_mode")
    elif f == "pstate":
        ours = g.get("performance_state")
        ok = ("P%s" % ours) == v if ours is not None else v in ("[N/A]", "[Not Supported]")
    else:
        key = {"utilization.encoder": "encoder_utilization_pct", "utilization.decoder": "decoder_utilization_pct",
               "clocks.sm": "clock_sm_mhz"}[f]
        ours = g.get(key)
        try:
            theirs = float(v)
        except ValueError:
            theirs = None
        tol = 0.1 * theirs + 50 if f == "clocks.sm" and theirs is not None else 10
        ok = (theirs is None and ours is None) or (theirs is not None and ours is not None and abs(theirs - ours) <= tol)
    print("%s: gpu %d %s: nvidia-smi %s, gpuwise %s" % ("OK" if ok else "FAIL", i, f, v, ours))
PY
done
rm -f "$report.f"
if [ -s "$report.cmp" ]; then
	tee -a "$report" < "$report.cmp"
	failures=$((failures + $(grep -c '^FAIL' "$report.cmp")))
	rm -f "$report.cmp"
fi
# --serve: a real scrape of the endpoint, dcgm-exporter names, one temperature per GPU
if command -v curl >/dev/null 2>&1; then
	"$GW" status --serve 127.0.0.1:0 > "$report.serve" 2>&1 &
	spid=$!
	port=
	for _ in $(seq 1 50); do
		port=$(sed -n 's|^serving http://[^ ]*:\([0-9]*\)/metrics.*|\1|p' "$report.serve")
		[ -n "$port" ] && break
		sleep 0.1
	done
	n_smi=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
	body=$(curl -s "http://127.0.0.1:${port:-1}/metrics")
	kill -TERM "$spid" 2>/dev/null
	wait "$spid"
	n_temp=$(printf '%s\n' "$body" | grep -c '^DCGM_FI_DEV_GPU_TEMP{')
	[ -n "$port" ] && [ "$n_temp" -eq "$n_smi" ] && printf '%s\n' "$body" | grep -q '^gpuwise_nvml_up{.*} 1$' &&
		check OK "status --serve: /metrics answers, $n_temp DCGM_FI_DEV_GPU_TEMP series for $n_smi GPUs, NVML up" ||
		check FAIL "status --serve: port '${port}', $n_temp temperature series for $n_smi GPUs: $(head -c 300 "$report.serve")"
	if command -v promtool >/dev/null 2>&1; then
		printf '%s\n' "$body" | promtool check metrics > "$report.lint" 2>&1
		say "promtool check metrics (dcgm names): exit $? ($(grep -vc -e camelCase -e '_total' "$report.lint") findings beyond dcgm-exporter's naming)"
		rm -f "$report.lint"
	fi
	rm -f "$report.serve"
else
	say "skip: curl absent, status --serve not scraped"
fi
# pynvml (if this machine has it) against gpuwise, as tests/e2e/peers.t does on the fakes
if python3 -c 'import pynvml' 2>/dev/null; then
	python3 tests/e2e/peers.py read pynvml > "$report.pynvml.json" 2>&1 &&
		python3 tests/e2e/peers.py compare "$report.status.json" "$report.pynvml.json" pynvml device > "$report.cmp"
	say "pynvml vs gpuwise status --json on the real GPU (client, field, agree, total):"
	tee -a "$report" < "$report.cmp" > /dev/null
	say "$(awk -F '\t' '!/^#/ {a += $3; t += $4} END {printf "pynvml agrees on %d of %d readings (live values such as power and utilisation may move between the two reads)", a, t}' "$report.cmp")"
	rm -f "$report.cmp" "$report.pynvml.json"
else
	say "skip: pynvml not importable here; the peer comparison runs on the fakes (tests/e2e/peers.t)"
fi


# ---- later sections (doctor, run) are appended below by their owners -------------

# ---- run: a real PyTorch job that leaks GPU memory on purpose -------------------
section "run"
if command -v python3 >/dev/null 2>&1 && python3 -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' 2>/dev/null; then
	# 64 MiB kept every 0.5 s: 128 MiB/s of job GPU memory once CUDA is up.
	leak_py='import torch, time
keep = []
for i in range(240):
    keep.append(torch.empty(64 << 20, dtype=torch.uint8, device="cuda"))
    time.sleep(0.5)'
	t0=$(ms_now)
	timeout 90 "$GW" run --interval 500ms --leak-warmup 5s --leak-window 2s --on-leak stop --grace 5s \
		--json --report "$report.run.html" -- python3 -c "$leak_py" > "$report.run.json" 2> "$report.run.err"
	rrc=$?
	run_ms=$(( $(ms_now) - t0 ))
	say "gpuwise run exited $rrc after $run_ms ms; its events:"
	grep '^gpuwise: ' "$report.run.err" | tee -a "$report" > /dev/null
	python3 - "$report.run.json" "$run_ms" > "$report.cmp" 2>&1 <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("FAIL: gpuwise run --json is not JSON: %s" % e)
    sys.exit(0)
ms = int(sys.argv[2])
leaks = [e for e in d["events"] if e["event"] == "leak"]
print("%s: the leak event was raised%s" % ("OK" if leaks else "FAIL",
      " after %.1f s" % leaks[0]["t_s"] if leaks else ""))
print("%s: caught within 60 s (the run took %.1f s)" % ("OK" if leaks and leaks[0]["t_s"] < 60 else "FAIL", ms / 1000))
if leaks:
    s = leaks[0]["slope_bytes_per_s"] / 2**20
    print("%s: slope %.1f MiB/s against the 128 MiB/s the job allocates (+-30%%); time to OOM %s s"
          % ("OK" if abs(s - 128) <= 0.3 * 128 else "FAIL", s, leaks[0]["time_to_oom_s"]))
a = d["attempts"][0] if d["attempts"] else {}
print("%s: the job was stopped by gpuwise (class %s, reason %s)" % (
      "OK" if a.get("class") == "stopped-by-gpuwise" and a.get("reason") == "leak" else "FAIL",
      a.get("class"), a.get("reason")))
peak = d["peaks"]["job_gpu_mem_bytes"]
print("%s: job GPU memory from NVML's per-process figures, peak %s MiB" % (
      "OK" if peak and peak > 256 * 2**20 else "FAIL", None if peak is None else peak // 2**20))
print("INFO: gpuwise's own CPU time %.3f s for %d samples" % (d["gpuwise_cpu_s"], d["samples"]))
PY
	# issue 10: the report draws the card's total; one summary line ends the run
	if grep -q 'GPU [0-9]* total ' "$report.run.html"; then echo "OK: the report's GPU memory chart has the card's total line"
	else echo "FAIL: no card total line in $report.run.html"; fi >> "$report.cmp"
	if tail -1 "$report.run.err" | grep -q '^gpuwise: run: 1 attempt, stopped-by-gpuwise'; then echo "OK: one summary line at the end"
	else echo "FAIL: no summary line at the end of stderr"; fi >> "$report.cmp"
	tee -a "$report" < "$report.cmp"
	n=$(grep -c '^FAIL' "$report.cmp")
	failures=$((failures + n))
	rm -f "$report.cmp"
	if pgrep -f 'keep.append\(torch.empty' >/dev/null 2>&1; then
		check FAIL "a process of the leaking job outlived gpuwise"
	else
		check OK "no process of the job is left after gpuwise exits"
	fi
else
	say "skip: PyTorch with CUDA is not importable by python3 here, so the leak job cannot run"
fi

# ---- vram-cap: PyTorch under gpuwise run --vram-cap 10G (issue 14) -------------------
section "vram-cap"
if [ ! -f "$top/libgpuwise-cap.so" ]; then
	check FAIL "libgpuwise-cap.so was not built next to ./gpuwise"
elif command -v python3 >/dev/null 2>&1 && python3 -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' 2>/dev/null; then
	# torch.cuda.mem_get_info is cudaMemGetInfo (cuMemGetInfo_v2 through cuGetProcAddress);
	# a refused cudaMalloc or cuMemCreate (expandable segments) raises torch.OutOfMemoryError
	# once the caching allocator has freed its cache and retried (PyTorch "CUDA semantics").
	cap_py='import os, subprocess, torch
oom = getattr(torch, "OutOfMemoryError", None) or torch.cuda.OutOfMemoryError
print("oom_class", oom.__module__ + "." + oom.__name__)
free, total = torch.cuda.mem_get_info()
print("mem_get_info total=%d free=%d" % (total, free))
try:
    x = torch.empty(12 << 30, dtype=torch.uint8, device="cuda")
    print("alloc12 granted")
    del x
except oom:
    print("alloc12 OutOfMemoryError")
keep = []
try:
    for i in range(16):
        keep.append(torch.ones(1 << 30, dtype=torch.uint8, device="cuda"))
except oom:
    pass
torch.cuda.synchronize()
print("filled_gib=%d checksum_ok=%s" % (len(keep), all(int(t[-1]) == 1 for t in keep)))
out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
                     capture_output=True, text=True).stdout
mine = [int(l.split(",")[1]) for l in out.splitlines() if l.split(",")[0].strip() == str(os.getpid())]
print("nvml_used_mib=%s" % (mine[0] if mine else "none"))'
	for conf in "" "expandable_segments:True"; do
		t0=$(ms_now)
		PYTORCH_CUDA_ALLOC_CONF=$conf timeout 180 "$GW" run --vram-cap 10G -- python3 -c "$cap_py" \
			> "$report.cap.out" 2> "$report.cap.err"
		crc=$?
		say "PYTORCH_CUDA_ALLOC_CONF='$conf': gpuwise run --vram-cap 10G exited $crc in $(( $(ms_now) - t0 )) ms; the job said:"
		sed 's/^/    /' "$report.cap.out" >> "$report"
		grep 'gpuwise-cap' "$report.cap.err" | head -5 | sed 's/^/    /' >> "$report"
		python3 - "$report.cap.out" "$conf" > "$report.cmp" 2>&1 <<'PY'
import sys
lines = open(sys.argv[1]).read().split("\n")
conf = sys.argv[2] or "default"
kv = {}
for l in lines:
    for w in l.split():
        if "=" in w:
            k, v = w.split("=", 1)
            kv[k] = v
cap = 10 << 30
t = int(kv.get("total", -1))
print("%s: [%s] torch.cuda.mem_get_info total %d bytes (the cap is %d)" % ("OK" if t == cap else "FAIL", conf, t, cap))
f = int(kv.get("free", -1))
print("%s: [%s] free %d <= total" % ("OK" if 0 <= f <= cap else "FAIL", conf, f))
print("%s: [%s] a 12 GiB tensor raises torch.OutOfMemoryError" % (
      "OK" if "alloc12 OutOfMemoryError" in lines else "FAIL", conf))
g = int(kv.get("filled_gib", -1))
print("%s: [%s] 1 GiB tensors until out of memory: %d GiB fit (expected 8-9: the cap less the context)" % (
      "OK" if 8 <= g <= 9 and kv.get("checksum_ok") == "True" else "FAIL", conf, g))
m = kv.get("nvml_used_mib", "none")
ok = m != "none" and int(m) <= 10240
print("%s: [%s] NVML per-process figure %s MiB stays under the 10240 MiB cap" % ("OK" if ok else "FAIL", conf, m))
PY
		tee -a "$report" < "$report.cmp"
		failures=$((failures + $(grep -c '^FAIL' "$report.cmp")))
		rm -f "$report.cmp" "$report.cap.out" "$report.cap.err"
	done
else
	say "skip: PyTorch with CUDA is not importable by python3 here, so the capped job cannot run"
fi

# ---- doctor -----------------------------------------------------------------------
section "doctor"
t0=$(ms_now)
"$GW" doctor > "$report.doctor" 2>&1
drc=$?
say "gpuwise doctor: exit $drc in $(( $(ms_now) - t0 )) ms (0 ok, 3/4 findings, 1/2 a gpuwise error)"
cat "$report.doctor" >> "$report"
case $drc in 0 | 3 | 4) check OK "gpuwise doctor ran" ;; *) check FAIL "gpuwise doctor exited $drc" ;; esac
t0=$(ms_now)
"$GW" doctor --deep --json > "$report.deep.json" 2> "$report.deep.err"
drc=$?
say "gpuwise doctor --deep --json: exit $drc in $(( $(ms_now) - t0 )) ms"
"$GW" doctor --deep 2>&1 | sed -n '/^CUDA$/,/^$/p;/^Python and PyTorch$/,/^$/p' >> "$report"
if command -v python3 >/dev/null 2>&1; then
	python3 - "$report.deep.json" "$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)" > "$report.cmp" 2>&1 <<'PY'
import json, sys
try:
    f = json.load(open(sys.argv[1]))["findings"]
except Exception as e:
    print("FAIL: doctor --deep --json is not JSON: %s" % e); sys.exit(0)
smi_driver = sys.argv[2].strip()
drv = [x for x in f if x["id"] == "driver"]
print("%s: driver finding %r, nvidia-smi %s" % ("OK" if drv and smi_driver in drv[0]["title"] else "FAIL",
      drv[0]["title"] if drv else None, smi_driver))
cuda = [x for x in f if x["id"] in ("deep-cuda", "deep-cuda-failed")]
good = [x for x in cuda if x["id"] == "deep-cuda" and "checksum" in x["title"]]
print("%s: CUDA driver tests on %d device(s): %s" % ("OK" if good and len(good) == len(cuda) else "FAIL", len(cuda),
      " | ".join(x["title"] + " -- " + x["evidence"] for x in cuda)))
torch = [x for x in f if x["id"] in ("deep-torch", "deep-torch-failed")]
if torch:
    bad = [x for x in torch if x["id"] != "deep-torch"]
    print("%s: PyTorch tests: %s" % ("OK" if not bad else "FAIL", " | ".join(x["title"] + " -- " + x["evidence"] for x in torch)))
else:
    print("OK: no Python with a CUDA PyTorch found (PyTorch test skipped)")
PY
	tee -a "$report" < "$report.cmp"
	failures=$((failures + $(grep -c '^FAIL' "$report.cmp")))
	rm -f "$report.cmp"
fi
# issue 10: every severity is one of the five, and no finding is printed twice
python3 - "$report.deep.json" > "$report.sev" 2>&1 <<'PY'
import collections, json, sys
try:
    f = json.load(open(sys.argv[1]))["findings"]
except Exception as e:
    print("FAIL: doctor --deep --json is not JSON: %s" % e); sys.exit(0)
bad = sorted({x["severity"] for x in f} - {"ok", "info", "skip", "warn", "fail"})
dup = [k for k, v in collections.Counter((x["id"], x["title"], x["evidence"]) for x in f).items() if v > 1]
print("%s: doctor severities %s" % ("FAIL" if bad else "OK", bad if bad else "all in ok/info/skip/warn/fail"))
print("%s: no finding repeated (%d findings)%s" % ("FAIL" if dup else "OK", len(f), (": %s" % dup[0][1]) if dup else ""))
PY
tee -a "$report" < "$report.sev"
failures=$((failures + $(grep -c '^FAIL' "$report.sev")))
rm -f "$report.sev"
rm -f "$report.doctor" "$report.deep.err"

# ---- bench: memory, copies and tensor cores against their peaks ----------------
section "bench"
t0=$(ms_now)
timeout 120 "$GW" bench --quick --json > "$report.bench.json" 2> "$report.bench.err"
rc=$?
say "gpuwise bench --quick: exit $rc in $(( $(ms_now) - t0 )) ms"
timeout 120 "$GW" bench --quick --no-opencl 2>/dev/null | tee -a "$report" >/dev/null
python3 - "$report.bench.json" > "$report.cmp" 2>&1 <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("FAIL: bench --json is not JSON: %s" % e); sys.exit(0)
cuda = [x for x in d["devices"] if x["kind"] == "cuda"]
if not cuda:
    print("FAIL: bench measured no CUDA device: %s" % d["cuda_note"]); sys.exit(0)
for dev in cuda:
    f = {x["id"]: x for x in dev["figures"]}
    def val(i): return (f.get(i) or {}).get("value_gbs") or (f.get(i) or {}).get("value_tflops")
    def peak(i): return (f.get(i) or {}).get("peak_gbs") or (f.get(i) or {}).get("peak_tflops")
    bad = [i for i, x in f.items() if (x.get("value_gbs") or x.get("value_tflops")) and not x["validated"]]
    print("%s: %s: every figure validated%s" % ("FAIL" if bad else "OK", dev["name"], " (wrong: %s)" % bad if bad else ""))
    # targets (issue 15, H200): Triad >= 90% of the 4.8 TB/s spec; pinned H2D >= 80% of the PCIe link
    t = val("triad")
    spec = 4800.0 if "H200" in dev["name"] else (peak("triad") or 0)
    print("%s: device Triad %.0f GB/s = %.1f%% of %.0f GB/s (%s; attribute peak %s GB/s)" % (
        "OK" if t and spec and t >= 0.9 * spec else "FAIL", t or 0, 100 * (t or 0) / spec if spec else 0, spec,
        "H200 spec sheet" if "H200" in dev["name"] else "device attributes", peak("triad")))
    h = val("h2d_pinned"); p = peak("h2d_pinned")
    print("%s: pinned host to device %.1f GB/s = %s of the %s (%s GB/s)" % (
        "OK" if h and p and h >= 0.8 * p else "FAIL", h or 0, "%.1f%%" % (100 * h / p) if h and p else "?",
        f.get("h2d_pinned", {}).get("peak_from"), p))
    for k in ("d2h_pinned", "h2d_pageable", "d2h_pageable", "copy", "dot", "fp32_fma", "mma_fp16", "mma_bf16", "mma_tf32"):
        print("INFO: %-13s %10s %-7s peak %s (%s)" % (k, val(k), (f.get(k) or {}).get("unit"), peak(k), (f.get(k) or {}).get("peak_pct")))
    b = val("mma_bf16")
    print("%s: bf16 mma.sync %s TFLOPS against the dense bf16 peak %s TFLOPS (%s%%)" % (
        "OK" if b and peak("mma_bf16") else "FAIL", b, peak("mma_bf16"), (f.get("mma_bf16") or {}).get("peak_pct")))
    print("INFO: sum of squares crossover: %s numbers; lessons %s" % (dev["crossover_n"], d["lessons"]))
PY
tee -a "$report" < "$report.cmp"
failures=$((failures + $(grep -c '^FAIL' "$report.cmp")))
rm -f "$report.cmp"

# ---- plan on this machine (issue 13): the GPU, host RAM, other processes -------
section "plan"
"$GW" plan llama-3.1-8b --ctx 8192 --json > "$report.plan.json" 2> "$report.plan.err"
plan_rc=$?
nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits > "$report.smimem" 2>/dev/null
nvidia-smi --query-compute-apps=pid --format=csv,noheader > "$report.smipids" 2>/dev/null
python3 - "$report.plan.json" "$report.smimem" "$report.smipids" "$plan_rc" > "$report.cmp" 2>&1 <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("FAIL: plan --json on this machine is not JSON (exit %s): %s" % (sys.argv[4], e)); sys.exit(0)
mib = float(open(sys.argv[2]).read().split()[0])
dev = d["devices"][0]["vram_total_bytes"]
print("%s: plan sees GPU 0 with %.0f MiB (nvidia-smi %.0f MiB), verdict %s, exit %s" % (
    "OK" if abs(dev / 2**20 - mib) <= mib * 0.01 else "FAIL", dev / 2**20, mib, d["verdict"], sys.argv[4]))
tot = [int(l.split()[1]) * 1024 for l in open("/proc/meminfo") if l.startswith("MemTotal:")][0]
h = d["host"]
print("%s: host RAM from %s: total %s (MemTotal %d), usable %s" % (
    "OK" if h["ram_from"] == "/proc/meminfo" and h["ram_total_bytes"] == tot else "FAIL",
    h["ram_from"], h["ram_total_bytes"], tot, h["ram_bytes"]))
smi = {int(x) for x in open(sys.argv[3]).read().split() if x.strip().isdigit()}
ours = {p["pid"] for p in d["gpu_processes"]}
print("%s: processes holding GPU memory: gpuwise %s, nvidia-smi compute apps %s" % (
    "OK" if smi <= ours or not smi else "FAIL", sorted(ours), sorted(smi)))
PY
tee -a "$report" < "$report.cmp"
failures=$((failures + $(grep -c '^FAIL' "$report.cmp")))
rm -f "$report.cmp" "$report.smimem" "$report.smipids" "$report.plan.err"
# ---- queue (issue 11): a personal daemon places a job on a real GPU ---------------
section "queue"
qdir=$(mktemp -d)
"$GW" daemon --state "$qdir/state" --socket "$qdir/sock" 2>"$qdir/daemon.log" &
qpid=$!
for _i in $(seq 100); do "$GW" queue --socket "$qdir/sock" >/dev/null 2>&1 && break; sleep 0.1; done
qid=$("$GW" submit --socket "$qdir/sock" --vram 1G --run-opt --interval --run-opt 200ms -- \
	sh -c 'echo "cvd=$CUDA_VISIBLE_DEVICES order=$CUDA_DEVICE_ORDER"; nvidia-smi -L; sleep 1' 2>"$qdir/submit.err")
for _i in $(seq 150); do "$GW" show --socket "$qdir/sock" "$qid" 2>/dev/null | grep -q '(done)\|(failed)' && break; sleep 0.2; done
"$GW" show --socket "$qdir/sock" "$qid" >> "$report" 2>&1
cvd=$("$GW" logs --socket "$qdir/sock" "$qid" 2>/dev/null | sed -n 's/^cvd=\([^ ]*\) .*/\1/p')
say "job $qid got CUDA_VISIBLE_DEVICES=$cvd"
if [ -n "$cvd" ] && nvidia-smi --query-gpu=uuid --format=csv,noheader | grep -qx "$cvd"; then
	check OK "the queue's job got a real GPU's UUID in CUDA_VISIBLE_DEVICES"
else
	check FAIL "the queue's job got '$cvd', not a UUID nvidia-smi lists ($(head -c 300 "$qdir/submit.err"))"
fi
"$GW" queue --all --socket "$qdir/sock" >> "$report" 2>&1
kill "$qpid" 2>/dev/null; wait "$qpid" 2>/dev/null
sed 's/^/daemon: /' "$qdir/daemon.log" | tail -5 >> "$report"
rm -rf "$qdir"

# ---- train: three rows of the MemTracker grid under CUDA (issue 25) -----------------
section "train"
# tests/validation/train-oracle.tsv was written on the CPU under FakeTensorMode;
# here the same steps run on the GPU: torch.cuda.max_memory_allocated against
# the tracker's peak and gpuwise's allocator peak, memory_reserved for the
# caching allocator's slack (gpuwise assumes 5% of the dynamic tensors).
if command -v python3 >/dev/null 2>&1 &&
   python3 -c 'import torch, transformers, peft, sys; sys.exit(not torch.cuda.is_available())' 2>/dev/null; then
	(cd tests/oracle && timeout 240 python3 train_oracle.py --cuda llama-01 llama-16 mixtral-05) > "$report.train" 2>> "$report"
	python3 - "$report.train" tests/validation/train-oracle.tsv "$GW" tests/validation/train-oracle > "$report.cmp" 2>&1 <<'PY'
import json, subprocess, sys
sys.path.insert(0, "tests/oracle")
import train_compare as C
live = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
table = {r["id"]: r for r in C.read_table(sys.argv[2])}
bad = 0
for lv in live:
    r = table[lv["id"]]
    p = subprocess.run([sys.argv[3]] + C.args_of(r, sys.argv[4]), capture_output=True, text=True)
    d = json.loads(p.stdout)
    tr, cu, pl = int(r["peak_bytes"]), lv["max_allocated"], d["peak"]["allocated_bytes"]
    print("%s: CUDA max_allocated %.1f MiB, tracker %.1f MiB (CUDA/tracker %+.1f%%), plan %.1f MiB (plan/CUDA %+.1f%%), "
          "reserved %.1f MiB (slack %.1f%% of allocated), trainable %d (table %s)" %
          (lv["id"], cu / 2**20, tr / 2**20, (cu / tr - 1) * 100, pl / 2**20, (pl / cu - 1) * 100,
           lv["max_reserved"] / 2**20, (lv["max_reserved"] / cu - 1) * 100, lv["trainable"], r["trainable"]))
    if abs(pl / cu - 1) > 0.15 or str(lv["trainable"]) != r["trainable"]:
        bad += 1
sys.exit(1 if bad or len(live) != 3 else 0)
PY
	if [ $? -eq 0 ]; then
		check OK "plan --train within 15% of torch.cuda.max_memory_allocated on 3 grid rows ($(tr '\n' ' ' < "$report.cmp" | head -c 600))"
	else
		check FAIL "plan --train vs CUDA: $(tr '\n' ' ' < "$report.cmp" | head -c 900)"
	fi
	cat "$report.cmp" >> "$report"
else
	say "skip: PyTorch with CUDA, transformers and peft are not importable by python3 here"
fi

section "summary"
say "failures: $failures"
[ "$failures" -eq 0 ]
