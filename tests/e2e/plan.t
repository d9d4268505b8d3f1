#!/bin/sh
# gpuwise plan: the must-show cases, JSON schema, exit codes, bad input.
. "$(dirname "$0")/lib.sh"

# The users' story: 13B Q4 at 2048 on an 8 GB laptop GPU with 16 GB RAM
# (reported on 2024 builds: planned as llama.cpp b2824).
run_gw plan llama-2-13b --quant q4_k_m --ctx 2048 --gpu 4060-laptop --ram 16G --engine llama.cpp@b2824
is "$rc" 3 "13B on a 4060 Laptop: exit 3 (offload)"
like "$out" 'verdict: offload: [0-9]+ of 41 layers on the GPU \(-ngl [0-9]+\), [0-9]+ in host RAM' "says offload with the layer split"
like "$out" 'GPU 0: GeForce RTX 4060 Laptop GPU' "names the card"
like "$out" 'decode: ~[0-9.]+ tok/s' "predicts decode speed"
run_gw plan llama-2-13b --quant q4_k_m --ctx 2048 --gpu 4060-laptop --ram 16G --engine llama.cpp@b2824 --json
is "$rc" 3 "--json keeps the exit status"
is "$(printf '%s' "$out" | jget 'd["verdict"]')" offload "json verdict offload"
tok=$(printf '%s' "$out" | jget 'd["decode_tok_s"]')
diag "predicted decode: $tok tok/s (users report 6-8)"
is "$(printf '%s' "$out" | jget '6 <= d["decode_tok_s"] <= 8')" True "decode tok/s within 6..8"
is "$(printf '%s' "$out" | jget 'd["total_layers"]')" 41 "total layers 40 + output"
is "$(printf '%s' "$out" | jget '0 < d["gpu_layers"] < 41')" True "some but not all layers on the GPU"
is "$(printf '%s' "$out" | jget 'd["host"]["ram_ok"]')" True "16 GB RAM is enough"
is "$(printf '%s' "$out" | jget 'sum(d["breakdown"][k] for k in ("weights_bytes","kv_cache_bytes","compute_bytes","overhead_bytes")) == d["vram_bytes"]')" True "breakdown sums to vram_bytes"
is "$(printf '%s' "$out" | jget 'd["devices"][0]["vram_total_bytes"] > 8e9')" True "device total memory"
is "$(printf '%s' "$out" | jget 'len(d["advice"]) >= 3 and all("action" in a and "effect" in a for a in d["advice"])')" True "advice list with action and effect"
is "$(printf '%s' "$out" | jget 'not any(a["action"].startswith("offload: ") for a in d["advice"])')" True "no advice restates the plan's own -ngl split (issue 34)"
is "$(printf '%s' "$out" | jget '"quant" in [a for a in d["advice"] if not a["placement"]][0]["action"]')" True "first other change: a lower quantization step"
is "$(printf '%s' "$out" | jget 'isinstance(d["assumptions"], list) and len(d["assumptions"]) > 3')" True "assumptions listed"

# 8B Q4_K_M at 8k fits an 8 GB card fully (buffers as llama.cpp b2824 logged them).
run_gw plan llama3.1:8b --quant q4_k_m --ctx 8192 --gpu rtx-4060 --engine llama.cpp@b2824 --json
is "$rc" 0 "8B Q4_K_M at 8k on 8 GB: exit 0"
is "$(printf '%s' "$out" | jget 'd["verdict"]')" fits "verdict fits"
is "$(printf '%s' "$out" | jget 'd["gpu_layers"] == d["total_layers"] == 33')" True "all 33 layers on the GPU"
is "$(printf '%s' "$out" | jget 'd["breakdown"]["kv_cache_bytes"]')" 1073741824 "KV 1024 MiB at 8192"
is "$(printf '%s' "$out" | jget 'd["breakdown"]["compute_bytes"]')" 587204608 "compute 560.00 MiB"
is "$(printf '%s' "$out" | jget 'd["max_ctx"] >= 8192')" True "max context at least 8192"
run_gw plan llama3.1:8b --quant q4_k_m --ctx 8192 --vram 8G
is "$rc" 0 "--vram 8G works too"

# Today's llama.cpp defaults to -fa auto: 8B at 131072 fits a 4090 with flash
# attention, and says that it assumed it; --flash-attn off gives the non-FA plan.
run_gw plan llama3.1:8b --ctx 131072 --gpu rtx-4090 --json
is "$rc" 0 "8B at 128k on a 4090: fits with today's llama.cpp"
is "$(printf '%s' "$out" | jget 'd["flash_attn"] and d["flash_attn_assumed"]')" True "flash attention on, assumed"
is "$(printf '%s' "$out" | jget 'd["engine_build"]')" 0c1e570 "the newest llama.cpp profile"
is "$(printf '%s' "$out" | jget 'any("-fa auto" in a for a in d["assumptions"])')" True "the assumption is stated"
run_gw plan llama3.1:8b --ctx 131072 --gpu rtx-4090 --flash-attn off --json
is "$rc" 3 "--flash-attn off: the f32 KQ buffer forces an offload"
is "$(printf '%s' "$out" | jget 'd["flash_attn"] or d["flash_attn_assumed"]')" False "flash attention off, as asked"
run_gw plan llama3.1:8b --ctx 131072 --gpu rtx-4090 --flash-attn=off --engine llama.cpp@b2824 --json
is "$rc" 3 "--flash-attn=off form"
run_gw plan llama3.1:8b --ctx 131072 --gpu rtx-4090 --engine llama.cpp@b2824 --json
is "$(printf '%s' "$out" | jget 'd["flash_attn"]')" False "b2824: flash attention off by default"
run_gw plan llama3.1:8b --ctx 8192 --gpu rtx-4090 --flash-attn --json
is "$(printf '%s' "$out" | jget 'd["flash_attn"] and not d["flash_attn_assumed"]')" True "bare --flash-attn: on"
run_gw plan llama3.1:8b --gpu rtx-4090 --flash-attn maybe
is "$rc" 2 "--flash-attn maybe: usage error"
run_gw plan llama3.1:8b --gpu rtx-4090 --engine llama.cpp@b1
is "$rc" 2 "unknown llama.cpp build: usage error"
like "$err" 'b2824' "names the known builds"
run_gw plan llama3.1:8b --gpu rtx-4090 --kv-type q8_0 --flash-attn off
is "$rc" 2 "quantized KV with flash attention off: usage error"
run_gw plan llama3.1:8b --quant q4_k_m --ctx 8192 --vram 8G
is "$rc" 0 "--vram 8G works too"
like "$out" 'verdict: fits' "text verdict fits"

# Llama-3-70B Q4_K_M does not fit one 24 GB card: offload.
run_gw plan llama-3-70b --quant q4_k_m --gpu rtx-4090 --ram 64G --json
is "$rc" 3 "70B on one 4090: exit 3"
is "$(printf '%s' "$out" | jget 'd["verdict"]')" offload "70B verdict offload"
is "$(printf '%s' "$out" | jget 'd["gpu_layers"] < d["total_layers"]')" True "70B: part of the layers on the CPU"
run_gw plan llama-3-70b --quant q4_k_m --gpu rtx-4090 --ram 8G --json
is "$rc" 4 "70B with 8 GB RAM: exit 4 (no-fit)"
is "$(printf '%s' "$out" | jget 'd["verdict"]')" no-fit "verdict no-fit"
run_gw plan llama-3-70b --quant q4_k_m --gpu 2x4090 --ctx 1024 --json
is "$rc" 0 "70B on 2x4090 fits"
is "$(printf '%s' "$out" | jget 'len(d["devices"])')" 2 "two devices"
run_gw plan llama-3-70b --quant q4_k_m --gpu rtx-4090,rtx-3090 --ctx 1024
is "$rc" 0 "a list of different GPUs"
like "$out" 'GPU 1: GeForce RTX 3090' "second GPU named"

# KV quantization and flash attention shrink the GPU side.
run_gw plan llama3.1:8b --ctx 32768 --gpu rtx-4090 --json
f16=$(printf '%s' "$out" | jget 'd["breakdown"]["kv_cache_bytes"]')
run_gw plan llama3.1:8b --ctx 32768 --gpu rtx-4090 --kv-type q8_0 --json
q8=$(printf '%s' "$out" | jget 'd["breakdown"]["kv_cache_bytes"]')
is "$((q8 * 64))" "$((f16 * 34))" "q8_0 KV is 34/64 of f16"
like "$out" 'needs flash attention' "quantized KV says it needs flash attention"
is "$(printf '%s' "$out" | jget 'd["flash_attn"]')" True "planned with flash attention"

# engines
run_gw plan llama3.1:8b --engine vllm --ctx 8192 --gpu h100-sxm --json
is "$rc" 0 "vllm on an H100 fits"
is "$(printf '%s' "$out" | jget 'abs(d["vram_bytes"] - 0.9 * d["devices"][0]["vram_total_bytes"]) < 2**20')" True "vllm reports the pre-allocated 0.9"
run_gw plan llama3.1:8b --engine ollama --parallel 4 --ctx 2048 --gpu rtx-4090 --json
is "$(printf '%s' "$out" | jget 'd["kv_cells"]')" 8192 "ollama num_parallel multiplies the context"

# MoE: experts in RAM instead of whole layers
run_gw plan qwen3:30b --gpu rtx-3060 --ram 32G --json
is "$rc" 3 "Qwen3-30B-A3B on 12 GB: offload"
is "$(printf '%s' "$out" | jget 'any("--n-cpu-moe" in a["action"] for a in d["advice"])')" True "advises --n-cpu-moe"
run_gw plan qwen3:30b --gpu rtx-3060 --ram 32G --n-cpu-moe 24 --gpu-layers 99
is "$rc" 3 "--n-cpu-moe 24: still offload (experts in RAM)"
like "$out" 'all 49 layers on the GPU, the experts of 24 layers in host RAM' "says where the experts are"

# explicit numbers
run_gw plan --params 13b --layers 40 --hidden 5120 --heads 40 --kv-heads 40 --head-dim 128 --ffn 13824 --vocab 32000 --quant q4_0 --ctx 512 --gpu rtx-4090 --json
is "$rc" 0 "explicit numbers plan"
is "$(printf '%s' "$out" | jget 'd["breakdown"]["kv_cache_bytes"]')" 419430400 "13B MHA KV at 512 = 400 MiB"

# absurd shapes are refused, not overflowed
run_gw plan --params 99t --layers 10000 --hidden 9961472 --heads 65536 --ffn 10000000 --vocab 10000000 --ctx 100000000 --vram 8G
is "$rc" 2 "an impossible model: usage error"
like "$err" 'too large to plan' "says why"

# a GGUF written here is planned with exactly its tensor bytes; a truncated copy is refused
set -- $(python3 "$GW_TOP/tests/e2e/gguf_llama.py" "$TMP/m.gguf" 4 1024 16 4 2816 32000)
data=$1 embd=$2
run_gw plan "$TMP/m.gguf" --gpu rtx-4060 --ctx 2048 --json
is "$rc" 0 "GGUF planned"
is "$(printf '%s' "$out" | jget 'd["model_bytes"]')" "$data" "model_bytes = the file's tensor data"
is "$(printf '%s' "$out" | jget 'd["embd_bytes"]')" "$embd" "token embedding bytes from the file"
is "$(printf '%s' "$out" | jget 'd["breakdown"]["weights_bytes"] + d["embd_bytes"]')" "$data" "GPU weights + host embedding = all tensors"
is "$(printf '%s' "$out" | jget 'd["weights_exact"]')" True "weights exact"
head -c 3000 "$TMP/m.gguf" > "$TMP/cut.gguf"
run_gw plan "$TMP/cut.gguf" --gpu rtx-4060
is "$rc" 1 "truncated GGUF: exit 1"
like "$err" "cut.gguf" "the error names the file"
unlike "$err" "Sanitizer|Segmentation" "no crash"

# help and bad input
run_gw plan --help
is "$rc" 0 "--help exits 0"
like "$out" 'Exit status: 0 fits' "--help lists exit codes"
like "$out" '--kv-type' "--help lists options"
# without --gpu/--vram: this machine's GPUs (fixture roots + fake NVML)
export GPUWISE_CUDA_LIB="$GW_FAKE/libcuda.so"
export GPUWISE_ROOT="$FIX/roots/nogpu" GPUWISE_NVML_LIB="$TMP/no-such-libnvidia-ml.so.1"
run_gw plan llama3.1:8b
is "$rc" 0 "no GPU given and none on the machine: the need, exit 0"
like "$out" 'needs [0-9.]+ GiB of GPU memory' "says the need (tests/e2e/buy.t checks the rest)"
export GPUWISE_ROOT="$FIX/roots/desktop-4090" GPUWISE_FAKE_SCENARIO="$FIX/scenarios/desktop-4090.json"
export GPUWISE_NVML_LIB="$GW_FAKE/libnvidia-ml.so" GPUWISE_FAKE_LOG="$TMP/calls.log"
run_gw plan llama3.1:8b --ctx 8192 --json
is "$rc" 3 "this machine's RTX 4090, busy with other processes: offload"
is "$(printf '%s' "$out" | jget 'd["devices"][0]["name"]')" "NVIDIA GeForce RTX 4090" "device named as the driver names it"
is "$(printf '%s' "$out" | jget 'd["devices"][0]["usable_bytes"] < d["devices"][0]["vram_total_bytes"]')" True "free memory, not the total, is usable"
is "$(printf '%s' "$out" | jget 'd["verdict"]')" offload "less free memory than the model needs: offload"
is "$(printf '%s' "$out" | jget 'd["decode_tok_s"] is not None')" True "catalog bandwidth found for the machine's card"
unset GPUWISE_ROOT GPUWISE_FAKE_SCENARIO GPUWISE_NVML_LIB GPUWISE_FAKE_LOG GPUWISE_CUDA_LIB
run_gw plan llama3.1:8b --gpu rtx-9999
is "$rc" 2 "unknown GPU: exit 2"
like "$err" "unknown GPU 'rtx-9999'" "unknown GPU named"
run_gw plan nosuchmodel-1b --gpu rtx-4090
is "$rc" 2 "unknown model: exit 2"
like "$err" "unknown model 'nosuchmodel-1b'" "unknown model named"
run_gw plan llama3.1:8b --gpu rtx-4090 --ctx abc
is "$rc" 2 "bad --ctx: exit 2"
like "$err" "invalid --ctx 'abc'" "bad --ctx named"
run_gw plan llama3.1:8b --gpu rtx-4090 --quant q9_x
is "$rc" 2 "unknown quant: exit 2"
like "$err" "unknown quantization 'q9_x'" "unknown quant named"
run_gw plan llama3.1:8b --gpu rtx-4090 --kv-type q3
is "$rc" 2 "unknown kv type: exit 2"
run_gw plan llama3.1:8b --gpu rtx-4090 --engine tgi
is "$rc" 2 "unknown engine: exit 2"
like "$err" "unknown --engine 'tgi'" "unknown engine named"
run_gw plan llama3.1:8b --gpu rtx-4090 --bogus
is "$rc" 2 "unknown option: exit 2"
run_gw plan /nonexistent/model.gguf --gpu rtx-4090
is "$rc" 1 "missing file: exit 1"
like "$err" "cannot read '/nonexistent/model.gguf'" "missing file named"

done_testing
