#!/bin/sh
# `submit --vram auto` against a real daemon on fake NVML servers: it plans
# for the GPUs the job will get (8B Q4, 70B Q4 and 70B F16 on the 8 x H100
# server; one H100 rather than two 24 GiB cards on a mixed server), the
# breakdown `show` prints adds up to the request, and it works without NVML
# in the client.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/queue-lib.sh"

SCN=$FIX/scenarios
GiB=1073741824
conf() { printf 'context_reserve = 512M\nclient_timeout = 5s\n%s' "$1" > "$TMP/daemon.conf"; }

# ---- --vram auto on a multi-GPU server -------------------------------------------------
export GPUWISE_FAKE_SCENARIO="$SCN/server-8xh100.json"
conf ""
q_start
# what the planner says for one H100 of this server (80 GiB: 81559 MiB)
total=$(python3 -c 'import json,sys; print(min(g["memory_total_bytes"] for g in json.load(open(sys.argv[1]))["gpus"]) // 1048576)' "$GPUWISE_FAKE_SCENARIO")
need() { # MODEL QUANT N: the largest per-GPU total of the plan on N of this server's GPUs
	"$GW" plan "$1" --quant "$2" --gpu "$3xh100-sxm" --vram "${total}M" --json | jget "max(x['total_bytes'] for x in d['devices'])"
}
# the client has no NVML at all (a login node, a container without the driver)
run_gw_nonvml() { out=$(GPUWISE_NVML_LIB=/nonexistent/libnvidia-ml.so.1 "$GW" "$@" 2>"$TMP/stderr"); rc=$?; err=$(cat "$TMP/stderr"); }
run_gw_nonvml submit --vram auto --name small -- llama3.1:8b --quant q4_k_m -- sleep 30
is "$rc" 0 "--vram auto without NVML in the client: submitted (exit 0)"
small=$out
run_gw show --json "$small"
is "$(printf '%s' "$out" | jget "[d['gpus_requested'], d['vram_request_bytes']]")" "[1, $(need llama3.1:8b q4_k_m 1)]" "8B Q4: one GPU, the planner's total on one H100 (5.51 GiB, not 4.84)"
like "$(printf '%s' "$out" | jget "d['vram_request_bytes'] / $GiB")" "^5\\.5[01]" "... which is 5.51 GiB"
run_gw show "$small"
plan_line=$(printf '%s\n' "$out" | grep '^  planner')
like "$plan_line" "per GPU = weights .* \\+ KV cache .* \\+ compute .* \\+ overhead " "show prints the planner's breakdown"
sum=$(printf '%s' "$plan_line" | python3 -c '
import re, sys
t = sys.stdin.read()
u = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}
v = [float(a) * u[b] for a, b in re.findall(r"([0-9.]+) (B|KiB|MiB|GiB)", t)]
print("ok" if abs(v[0] - sum(v[1:5])) <= 0.02 * 2**30 else "total %s parts %s" % (v[0], v[1:5]))')
is "$sum" "ok" "... and its parts add up to the per-GPU request"
like "$(printf '%s\n' "$out" | grep '^  request')" "VRAM 5\\.5[01] GiB per GPU \\(planner\\)" "... the request it prints is the planner's total"
run_gw_nonvml submit --vram auto --name big -- llama3.1:70b --quant q4_k_m -- sleep 30
big=$out
run_gw show --json "$big"
is "$(printf '%s' "$out" | jget "[d['gpus_requested'], d['vram_request_bytes']]")" "[1, $(need llama3.1:70b q4_k_m 1)]" "70B Q4: one H100, the planner's total on it (41.01 GiB, not 34.94)"
like "$(printf '%s' "$out" | jget "d['vram_request_bytes'] / $GiB")" "^41\\.0[01]" "... which is 41.01 GiB"
run_gw_nonvml submit --vram auto --name huge -- llama3.1:70b --quant f16 -- sleep 30
huge=$out
run_gw show --json "$huge"
is "$(printf '%s' "$out" | jget "[d['gpus_requested'], d['vram_request_bytes']]")" "[2, $(need llama3.1:70b f16 2)]" "70B F16 (over one H100): two GPUs, the larger share of the planner's split on two"
run_gw_nonvml submit --vram auto --gpus 3 --name three -- llama3.1:70b --quant f16 -- true
three=$out
run_gw show --json "$three"
is "$(printf '%s' "$out" | jget "[d['gpus_requested'], d['vram_request_bytes']]")" "[3, $(need llama3.1:70b f16 3)]" "--gpus 3 given: the plan is for three GPUs"
run_gw_nonvml submit --vram auto -- llama3.1:405b --quant f16 -- true
is "$rc" 3 "a model over all the server's GPUs: refused (exit 3)"
like "$err" "^gpuwise: --vram auto: the model does not fit on up to 6 x NVIDIA H100 80GB HBM3 \\(79\\.65 GiB each\\) of this server" "... says so"
"$GW" cancel "$small" "$big" "$huge" "$three" >/dev/null 2>&1
q_cleanup

# a mixed server (2 x 24 GiB RTX 4090, 2 x H100): one GPU of the smallest type
# that holds the model, not two of the small ones
export GPUWISE_FAKE_SCENARIO="$SCN/server-mixed-4gpu.json"
q_start
run_gw_nonvml submit --vram auto --name mixed -- llama3.1:70b --quant q4_k_m -- true
mixed=$out
run_gw show --json "$mixed"
is "$(printf '%s' "$out" | jget "[d['gpus_requested'], d['vram_request_bytes']]")" "[1, $(need llama3.1:70b q4_k_m 1)]" "mixed server, 70B Q4: one H100 (41.01 GiB), not two 24 GiB cards"
run_gw_nonvml submit --vram auto --name small2 -- llama3.1:8b --quant q4_k_m -- true
is "$rc" 0 "... 8B Q4 is planned for one 24 GiB card"
q_wait_state "$mixed" done 30
run_gw show --json "$mixed"
like "$(printf '%s' "$out" | jget "d['gpus']")" "^\\[[23]\\]$" "... and the 41 GiB job ran on an H100 (GPU 2 or 3)"
q_cleanup

done_testing
