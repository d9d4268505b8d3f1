#!/bin/sh
# Every key of docs/json-*.md is in a real --json output and back, and
# unit-suffixed keys hold numbers or null (conventions: docs/json-conventions.md);
# the checker itself catches drift.  --help against man/gpuwise.1: docs.t.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/docs-lib.sh"

# ---- JSON keys against docs/json-*.md ---------------------------------------

run_gw plan llama-2-13b --vram 10G --json
is "$rc" 3 "plan llama-2-13b --vram 10G: exit 3 (offload)"
jcheck plan json-plan.md
run_gw plan llama-3.1-8b --gpu rtx-4090 --engine vllm --parallel 4 --per-user-tps 20 --json
jcheck plan-serve json-plan.md
run_gw plan llama-2-7b --train lora --vram 8G --json
is "$rc" 4 "plan --train lora --vram 8G: exit 4"
jcheck plan-train "json-plan-workloads.md#fine-tuning-train-full-lora-qlora"
run_gw plan sdxl --image 1024x1024 --vram 6G --json
is "$rc" 4 "plan --image 1024x1024 --vram 6G: exit 4"
jcheck plan-image "json-plan-workloads.md#image-generation-image-wxh"
run_gw cards llama-3.1-8b --quant q4_k_m --json
is "$rc" 0 "cards: exit 0"
jcheck cards json-cards.md
run_gw cost --gpu rtx-4090 --json
is "$rc" 0 "cost --gpu rtx-4090: exit 0"
jcheck cost json-cost.md
run_gw cards llama-3.1-70b --budget 1000 --json
is "$rc" 0 "cards 70B within 1000 USD: exit 0"
is "$(printf '%s' "$out" | jget 'd["cheapest_over_budget"] is not None and any(r["remedy"] for r in d["rows"])')" True "with remedies and a configuration over budget"
jcheck cards-over json-cards.md
for t in gpus models quants; do
	run_gw list "$t" --json
	is "$rc" 0 "list $t --json: exit 0"
	jcheck "list-$t" json-list.md
done
GPUWISE_ROOT="$FIX/roots/nogpu" GPUWISE_NVML_LIB=/nonexistent/libnvidia-ml.so.1 run_gw plan llama-3.1-8b --json
is "$rc" 0 "plan without a GPU: exit 0"
jcheck plan-need "json-plan.md#without-a-gpu"
out=$(printf '%s' 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.78 GiB. GPU 0 has a total capacity of 31.47 GiB of which 12.73 GiB is free. Process 608946 has 14.91 GiB memory in use. Including non-PyTorch memory, this process has 18.73 GiB memory in use. Of the allocated memory 9.08 GiB is allocated by PyTorch, and 9.35 GiB is reserved by PyTorch but unallocated.' |
	"$GW" explain --no-probe --json - 2>/dev/null); rc=$?
is "$rc" 0 "explain (CUDA OOM message): exit 0"
jcheck explain json-explain.md
out=$(printf 'RuntimeError: CUDA error: no kernel image is available for execution on the device\n' | "$GW" explain --no-probe --json - 2>/dev/null); rc=$?
is "$rc" 0 "explain (no kernel image): exit 0"
jcheck explain-arch json-explain.md
# --batch: the envelope of each line (its matches are explain --json's, checked above and in explain-batch.t)
out=$(printf '%s\n' '"CUDA error: out of memory"' '{"message": "nothing"}' 'not json' |
	"$GW" explain --no-probe --batch - 2>/dev/null | python3 -c 'import json,sys
for l in sys.stdin:
    o = json.loads(l)
    if "matches" in o:
        o["matches"] = []
    print(json.dumps(o))')
jcheck explain-batch json-explain-batch.md

fake() { # fake ROOT: env for a fixture root and its scenario
	export GPUWISE_ROOT="$FIX/roots/$1" GPUWISE_FAKE_SCENARIO="$FIX/scenarios/$1.json" GPUWISE_NVML_LIB="$GW_FAKE/libnvidia-ml.so"
}
fake laptop-5070
run_gw doctor --json --no-exec
like "$rc" '^[034]$' "doctor --json on laptop-5070: a verdict exit status"
jcheck doctor json-doctor.md
fake server-8xh100
run_gw status --json
is "$rc" 0 "status --json on 8xH100: exit 0"
is "$(printf '%s' "$out" | jget 'len([g for g in d["gpus"] if g["vendor"] == "NVIDIA"])')" 8 "status: 8 NVIDIA GPUs"
jcheck status json-status.md
run_gw status --all --json --watch 100ms --count 2
is "$rc" 0 "status --all --json --watch: exit 0"
is "$(printf '%s\n' "$out" | grep -c '^{')" 2 "status --watch --count 2: two JSON lines"
jcheck status-watch json-status.md
fake wsl2-laptop
run_gw doctor --json --no-exec
jcheck doctor-wsl json-doctor.md
run_gw plan llama-3.1-8b --json
jcheck plan-wsl json-plan.md
fake desktop-4090
run_gw run --interval 100ms --json -- sleep 0.3
is "$rc" 0 "run --json -- sleep 0.3: exit 0"
jcheck run json-run.md
unset GPUWISE_ROOT GPUWISE_FAKE_SCENARIO
GPUWISE_NVML_LIB=/nonexistent/libnvidia-ml.so.1 run_gw run --json -- sh -c 'exit 3'
is "$rc" 3 "run --json without a GPU: the job's exit status"
jcheck run-nogpu json-run.md
# the keys only: the trace's first 200 GPU nodes and (for the replay) its first
# 2,000 pods give the same keys as the whole trace in a hundredth of the time
# (the whole trace is sim.t's)
head -n 201 "$FIX/openb/openb_node_list_gpu_node.csv" > "$TMP/nodes200.csv"
head -n 2001 "$FIX/openb/openb_pod_list_default.csv" > "$TMP/pods2000.csv"
run_gw sim --pods "$FIX/openb/openb_pod_list_default.csv" --nodes "$TMP/nodes200.csv" --seeds 2 --stop 101 --json
is "$rc" 0 "sim --json: exit 0"
jcheck sim "json-sim.md#inflation-the-default-mode"
run_gw sim --pods "$TMP/pods2000.csv" --nodes "$TMP/nodes200.csv" --replay times --json
is "$rc" 0 "sim --replay times --json: exit 0"
jcheck sim-replay "json-sim.md#replay-replay-times"

GPUWISE_OPENCL_LIB=/nonexistent/libOpenCL.so.1 GPUWISE_CUDA_LIB="$GW_FAKE/cudadeep.so" run_gw bench --quick --no-opencl --max-n 100000 --json
is "$rc" 0 "bench --quick --json (fake CUDA device): exit 0"
jcheck bench json-bench.md

# ---- the queue (issue 11): --json against docs ------------
qsock=$TMP/queue.sock
GPUWISE_FAKE_SCENARIO="$FIX/scenarios/server-2gpu-queue.json" GPUWISE_NVML_LIB="$GW_FAKE/libnvidia-ml.so" \
	"$GW" daemon --state "$TMP/qstate" --socket "$qsock" 2>"$TMP/qdaemon.log" &
qpid=$!
for _i in $(seq 100); do "$GW" queue --socket "$qsock" >/dev/null 2>&1 && break; sleep 0.05; done
"$GW" quota set lab --vram 40G --members root --socket "$qsock" >/dev/null
run_gw submit --project lab --vram 1G --name docs --env A=1 --time-limit 1h --socket "$qsock" --json -- sh -c 'echo hi'
is "$rc" 0 "submit --json: exit 0"
jcheck submit json-submit.md
qid=$(printf '%s' "$out" | jget "d['id']")
for _i in $(seq 100); do "$GW" show --socket "$qsock" "$qid" | grep -q '(done)' && break; sleep 0.05; done
"$GW" submit --mode exclusive --gpus 2 --socket "$qsock" -- sleep 1 >/dev/null
"$GW" submit --vram 2G --socket "$qsock" -- true >/dev/null
run_gw queue --all --json --socket "$qsock"
is "$rc" 0 "queue --all --json: exit 0"
jcheck queue json-queue.md
run_gw show --json --socket "$qsock" "$qid"
jcheck show json-show.md
run_gw quota --json --socket "$qsock"
jcheck quota json-quota.md
kill "$qpid"; wait "$qpid"
for d in queue-protocol.md json-queue.md json-show.md json-quota.md json-submit.md; do
	[ -s "$DOCS/$d" ]; ok $? "docs/$d exists"
done

# the checker itself catches drift: an undocumented key, a string in a unit key
printf '{"model":"x","extra_key":1}\n' > "$TMP/bad.json"
python3 "$TMP/jsondoc.py" "$DOCS/json-cost.md" "$TMP/bad.json" > "$TMP/res"
ok $((! $?)) "checker: a bad output fails"
like "$(cat "$TMP/res")" "undocumented key: extra_key" "checker: names the undocumented key"
like "$(cat "$TMP/res")" "missing from the output: price_usd" "checker: names a missing documented key"
printf '{"gpu":null,"price_usd":"100"}\n' > "$TMP/bad.json"
like "$(python3 "$TMP/jsondoc.py" "$DOCS/json-cost.md" "$TMP/bad.json")" 'price_usd is "100", not a number' "checker: a string in a _usd key fails"
done_testing
