#!/bin/sh
# gpuwise run: CPU time the supervisor spends per sample, with 8 GPUs from
# the fake NVML (tests/fixtures/scenarios/server-8xh100.json) and with none.
# Prints figures; asserts nothing.  Target: under 1% of one core at the
# default 1 s interval, under 0.1% preferred (issue 5).
# Env: GW (the binary), GW_BUILD (its build dir, with fake/), BENCH_SECONDS.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
GW=${GW:-$top/gpuwise}
build=${GW_BUILD:-build/release}
case $build in /*) ;; *) build=$top/$build ;; esac
secs=${BENCH_SECONDS:-10}
fake=$build/fake/libnvidia-ml.so
scen=$top/tests/fixtures/scenarios/server-8xh100.json

# measure LABEL ENV... : run a sleep job at a 100 ms interval, read
# gpuwise's own CPU time and sample count from its --json summary.
measure() {
	label=$1
	shift
	json=$(env "$@" GPUWISE_NO_STATUS_LINE=1 "$GW" run --interval 100ms --json -- sleep "$secs" 2>/dev/null)
	echo "$json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
label = sys.argv[1]
n, cpu = d["samples"], d["gpuwise_cpu_s"]
gpus = len(d["peaks"]["gpus"])
per = cpu / n if n else float("nan")
pct = per / 1.0 * 100  # one sample per second at the default interval
verdict = "meets 0.1%" if pct < 0.1 else ("meets 1%" if pct < 1 else "OVER the 1% target")
print("run %-22s %d GPUs, %4d samples, %.3f s CPU: %7.1f us/sample = %.4f%% of a core at 1 s (%s)"
      % (label, gpus, n, cpu, per * 1e6, pct, verdict))
' "$label"
}

if [ -e "$fake" ] && [ -e "$scen" ]; then
	measure "8 GPUs (fake NVML)" GPUWISE_NVML_LIB="$fake" GPUWISE_FAKE_SCENARIO="$scen"
else
	echo "run: fake NVML or scenario missing ($fake, $scen); skipping the 8-GPU figure"
fi
measure "host only" GPUWISE_NVML_LIB=/nonexistent/libnvidia-ml.so.1
echo "run: (includes start-up; the fake NVML's JSON lookups run inside gpuwise, a real driver costs ioctls instead)"
