#!/bin/sh
# gpuwise cards --backend: every card planned on one llama.cpp backend, the
# cards it does not run on left out and counted; the speeds are plan's own
# for that backend; refusals with their exit code and message.
. "$(dirname "$0")/lib.sh"

run_gw cards llama-2-7b --quant q4_0 --json
is "$rc" 0 "cards without --backend: exit 0"
printf '%s\n' "$out" > "$TMP/auto.json"
is "$(jget '"%s %d" % (d["backend"], d["no_backend"])' < "$TMP/auto.json")" "auto 0" "no --backend: each vendor's default, nothing left out"
like "$(jget 'sorted(set(r["vendor"] for r in d["rows"]))' < "$TMP/auto.json")" "AMD.*NVIDIA" "no --backend: AMD and NVIDIA cards are ranked"

run_gw cards llama-2-7b --quant q4_0 --backend cuda --json
is "$rc" 0 "cards --backend cuda: exit 0"
printf '%s\n' "$out" > "$TMP/cuda.json"
is "$(jget 'sorted(set(r["vendor"] for r in d["rows"]))' < "$TMP/cuda.json")" '["NVIDIA"]' "--backend cuda: only NVIDIA cards are ranked"
n_other=$("$GW" list gpus --json | jget 'sum(1 for x in d["rows"] if x["vendor"] != "NVIDIA")')
is "$(jget 'd["no_backend"]' < "$TMP/cuda.json")" "$n_other" "--backend cuda: every non-NVIDIA catalog card counted as left out ($n_other)"
is "$(jget 'd["backend"]' < "$TMP/cuda.json")" cuda "--backend cuda: the JSON names the backend"

# the same card on Vulkan: the speed is plan's own for that backend
run_gw cards llama-2-7b --quant q4_0 --backend vulkan --json
is "$rc" 0 "cards --backend vulkan: exit 0"
printf '%s\n' "$out" > "$TMP/vk.json"
sp_vk=$(jget '[r["speed"] for r in d["rows"] if r["gpu"] == "rtx-4090"][0]' < "$TMP/vk.json")
sp_cu=$(jget '[r["speed"] for r in d["rows"] if r["gpu"] == "rtx-4090"][0]' < "$TMP/cuda.json")
plan_vk=$("$GW" plan llama-2-7b --quant q4_0 --gpu rtx-4090 --backend vulkan --json | jget 'd["decode_tok_s"]')
plan_cu=$("$GW" plan llama-2-7b --quant q4_0 --gpu rtx-4090 --json | jget 'd["decode_tok_s"]')
diag "RTX 4090, Llama-2-7B Q4_0 decode: cards vulkan $sp_vk / cuda $sp_cu tok/s; plan vulkan $plan_vk / cuda $plan_cu"
ok "$(python3 -c "print(0 if abs($sp_vk - $plan_vk) < 0.01 and abs($sp_cu - $plan_cu) < 0.01 else 1)")" \
	"cards' RTX 4090 speed is plan's, on Vulkan and on CUDA"
ok "$(python3 -c "print(0 if abs($sp_vk - $sp_cu) > 0.01 else 1)")" "the backend changes the RTX 4090's speed"

run_gw cards llama-2-7b --quant q4_0 --backend vulkan
like "$out" "not run by the vulkan backend" "text: the left-out count names the backend"
like "$out" "on the vulkan backend" "text: the speed line names the backend"

# refusals
run_gw cards llama-2-7b --backend opengl
is "$rc" 2 "--backend opengl: usage error"
like "$err" "unknown --backend 'opengl' \(cuda, rocm, vulkan, metal, sycl, cpu\)" "--backend opengl: names the choices"
run_gw cards llama-2-7b --backend cpu
is "$rc" 2 "--backend cpu: usage error"
like "$err" "--backend cpu ranks no card \(plan MODEL --gpu none plans the CPU\)" "--backend cpu: points to plan --gpu none"
run_gw cards llama-2-7b --backend cuda --engine vllm
is "$rc" 2 "--backend with vLLM: usage error"
like "$err" "--backend applies to llama.cpp and ollama, not vllm" "--backend with vLLM: says why"
run_gw cards sdxl --image 1024x1024 --backend cuda
is "$rc" 2 "--backend with --image: usage error"
like "$err" "--backend is for LLM inference with llama.cpp or ollama, not image generation" "--backend with --image: says why"
done_testing
