#!/bin/sh
# The speed model (data/speed.tsv, src/plan/speed.c): the orders a buyer
# relies on, --backend, the build and backend named, this machine's measured
# bandwidth (speed-validation.t checks the numbers against llama-bench rows).
. "$(dirname "$0")/lib.sh"

dec() { # dec GPU [ARGS...]: Llama-2-7B Q4_0 decode tok/s
	g=$1; shift
	"$GW" plan llama-2-7b --quant q4_0 --ctx 512 --gpu "$g" "$@" --json | jget 'd["decode_tok_s"]'
}
pre() {
	g=$1; shift
	"$GW" plan llama-2-7b --quant q4_0 --ctx 512 --gpu "$g" "$@" --json | jget 'd["prefill_tok_s"]'
}
d5090=$(dec rtx-5090); d4090=$(dec rtx-4090); d3090=$(dec rtx-3090); d4070=$(dec rtx-4070)
diag "Llama-2-7B Q4_0 decode: 5090 $d5090, 4090 $d4090, 3090 $d3090, 4070 $d4070 tok/s"
is "$(python3 -c "print($d5090 > $d4090 > $d3090 > $d4070)")" True "decode ranks RTX 5090 > 4090 > 3090 > 4070"
dh=$(dec h100-sxm); da=$(dec a100-80g-sxm)
diag "H100 SXM $dh, A100 SXM $da tok/s"
is "$(python3 -c "print($dh > $da)")" True "decode ranks H100 above A100"
pc=$(pre rtx-5090); pv=$(pre rtx-5090 --backend vulkan)
diag "RTX 5090 prefill: CUDA $pc, Vulkan $pv tok/s"
is "$(python3 -c "print($pv < $pc)")" True "--backend vulkan on an RTX 5090 prefills below CUDA"
fon=$("$GW" plan llama3.1:8b --ctx 32768 --gpu rtx-4090 --flash-attn on --json | jget 'd["decode_tok_s"]')
foff=$("$GW" plan llama3.1:8b --ctx 32768 --gpu rtx-4090 --flash-attn off --json | jget 'd["decode_tok_s"]')
diag "Llama 3.1 8B at 32k on an RTX 4090: flash attention on $fon, off $foff tok/s"
is "$(python3 -c "print($fon > $foff)")" True "--flash-attn on decodes faster than off at 32k"
b24=$("$GW" plan llama-2-7b --quant q4_0 --ctx 512 --gpu rtx-5090 --engine llama.cpp@b2824 --json | jget 'd["decode_tok_s"]')
is "$(python3 -c "print(abs($b24 - $d5090) > 1)")" True "the engine build changes the prediction (b2824 $b24 vs today $d5090)"

# the output names the build and backend the speed models
run_gw plan llama-2-7b --quant q4_0 --gpu rx-7900-xtx --json
is "$(printf '%s' "$out" | jget 'd["backend"]')" rocm "AMD defaults to ROCm"
is "$(printf '%s' "$out" | jget 'd["speed_model"]["family"]')" rdna3 "speed_model names the family"
is "$(printf '%s' "$out" | jget 'd["speed_model"]["build"]')" latest "speed_model names the build row"
is "$(printf '%s' "$out" | jget 'any("on rocm" in a and "0c1e570" in a for a in d["assumptions"])')" True "assumptions name the build and backend"
run_gw plan llama-2-7b --quant q4_0 --gpu m3-max --json
is "$(printf '%s' "$out" | jget 'd["backend"]')" metal "Apple defaults to Metal"
# Apple chip tiers: a Max and an Ultra take their own rows, base and Pro chips apple's
is "$(printf '%s' "$out" | jget 'd["speed_model"]["family"]')" apple-max "an M3 Max plans with the apple-max row"
fu=$("$GW" plan llama-2-7b --quant q4_0 --gpu m2-ultra --json | jget 'd["speed_model"]["family"]')
fb=$("$GW" plan llama-2-7b --quant q4_0 --gpu m4-pro --json | jget 'd["speed_model"]["family"]')
is "$fu $fb" "apple-ultra apple" "an M2 Ultra plans with apple-ultra, an M4 Pro with apple"
# same 800 GB/s class of memory: the Ultra's decode stays below twice the Max's
# (the tier rows: a smaller share of a wider memory system, a per-block cost)
du=$(dec m2-ultra); dm=$(dec m2-max); dpro=$(dec m4-pro)
diag "Llama-2-7B Q4_0 decode: M2 Ultra $du, M2 Max $dm, M4 Pro $dpro tok/s"
is "$(python3 -c "print($dm < $du < 2 * $dm)")" True "M2 Ultra decodes faster than an M2 Max, less than twice as fast"
fo=$("$GW" plan llama-2-7b --quant q4_0 --gpu m2-ultra --engine llama.cpp@b2824 --json | jget 'd["speed_model"]["family"]')
is "$fo" "*" "the b2824 profile keeps its one 2024 row for every chip"
run_gw plan llama-2-7b --quant q4_0 --gpu rtx-4090 --backend vulkan
is "$rc" 0 "--backend vulkan on NVIDIA is accepted"
like "$out" 'speed model: llama.cpp 0c1e570 on vulkan' "text output names the backend"

# bad input: exact exit code and message
run_gw plan llama-2-7b --gpu rtx-4090 --backend opencl
is "$rc" 2 "unknown --backend: exit 2"
like "$err" "gpuwise: unknown --backend 'opencl' \(cuda, rocm, vulkan, metal, sycl, cpu\)" "unknown --backend message"
run_gw plan llama-2-7b --gpu rtx-4090 --backend rocm
is "$rc" 2 "--backend rocm on an NVIDIA card: exit 2"
like "$err" "gpuwise: --backend rocm needs an AMD GPU \('GeForce RTX 4090' is NVIDIA\)" "wrong-vendor message"
run_gw plan llama-2-7b --gpu rtx-4090 --backend cuda --engine vllm
is "$rc" 2 "--backend with vllm: exit 2"
like "$err" "gpuwise: --backend applies to llama.cpp and ollama, not vllm" "engine message"
# this machine's measured bandwidth: gpuwise bench caches it, plan uses it and says so
FIX="$GW_TOP/tests/fixtures"
export GPUWISE_NVML_LIB=/nonexistent/libnvidia-ml.so.1
GPUWISE_CUDA_LIB="$GW_FAKE/cudadeep.so" run_gw bench --quick --no-opencl --max-n 100000
is "$rc" 0 "bench through the fake libcuda: exit 0"
cache="$GPUWISE_CACHE_DIR/bench.tsv"
like "$(cat "$cache" 2>/dev/null)" "cpu	[^	]+	[0-9.]+	[0-9]{4}-[0-9]{2}-[0-9]{2}	[0-9.]+" "bench cached the host Triad with its date and bench version"
like "$(cat "$cache" 2>/dev/null)" "gpu	Fake Deep GPU	[0-9.]+	" "bench cached the GPU's Triad under the driver's device name"
# on a real machine CUDA and NVML name the card alike; the fake libcuda has its own name
sed 's/Fake Deep GPU/NVIDIA GeForce RTX 4090/' "$cache" > "$cache.new" && mv "$cache.new" "$cache"
gbs=$(awk -F'	' '$1 == "gpu" {print $3}' "$cache")
export GPUWISE_ROOT="$FIX/roots/desktop-4090" GPUWISE_FAKE_SCENARIO="$FIX/scenarios/desktop-4090.json"
export GPUWISE_NVML_LIB="$GW_FAKE/libnvidia-ml.so" GPUWISE_CUDA_LIB="$GW_FAKE/libcuda.so"
run_gw plan llama3.1:8b --ctx 8192 --json
is "$(printf '%s' "$out" | jget 'any("bandwidth measured here by gpuwise bench" in a for a in d["assumptions"])')" True \
	"plan on this machine says it uses the measured bandwidth"
is "$(printf '%s' "$out" | jget 'any(("GPU %.0f GB/s (spec sheet 1008)" % '"$gbs"') in a for a in d["assumptions"])')" True \
	"the measured GPU figure, with the spec sheet's beside it"
slow=$(printf '%s' "$out" | jget 'd["decode_tok_s"] or 0')
run_gw plan llama3.1:8b --ctx 8192 --gpu rtx-4090 --json
spec=$(printf '%s' "$out" | jget 'd["decode_tok_s"]')
is "$(printf '%s' "$out" | jget 'any("measured here" in a for a in d["assumptions"])')" False "--gpu plans a catalog card: the spec sheet"
diag "decode with the measured bandwidth $slow, with the spec sheet $spec tok/s"
is "$(python3 -c "print($slow < $spec)")" True "the (slow, fake) measured bandwidth lowers the prediction"
rm -f "$cache"
run_gw plan llama3.1:8b --ctx 8192 --json
is "$(printf '%s' "$out" | jget 'any("measured here" in a for a in d["assumptions"])')" False "no cache: the spec sheet"
unset GPUWISE_ROOT GPUWISE_FAKE_SCENARIO GPUWISE_NVML_LIB GPUWISE_CUDA_LIB

# MoE prefill goes through the expert GEMMs: at -ub 512 gpt-oss-20b's 32 experts
# (top 4) get 64 tokens each, gpt-oss-120b's 128 experts 16, so the 120b prefills
# slower than its active parameters alone say (measured on an RTX PRO 6000:
# 11522 / 5518 = 2.09, tests/validation/llamabench-current.tsv).
run_gw plan gpt-oss-20b --gpu rtx-pro-6000 --gpu-layers 999 --flash-attn on --ctx 2048 --json
p20=$(printf '%s' "$out" | jget 'd["prefill_tok_s"]')
run_gw plan gpt-oss-120b --gpu rtx-pro-6000 --gpu-layers 999 --flash-attn on --ctx 2048 --json
p120=$(printf '%s' "$out" | jget 'd["prefill_tok_s"]')
diag "gpt-oss prefill on an RTX PRO 6000: 20b $p20, 120b $p120 tok/s (measured 11522, 5518)"
is "$(python3 -c "print(1.7 < $p20 / $p120 < 2.5)")" True "gpt-oss-120b prefills at under 1/1.7 of the 20b's rate (sparser experts)"
run_gw plan gpt-oss-120b --gpu rtx-pro-6000 --gpu-layers 999 --flash-attn on --ctx 2048 --batch 2048 --json
is "$(python3 -c "print($(printf '%s' "$out" | jget 'd["prefill_tok_s"]') > 1.2 * $p120)")" True \
	"a 4x larger ubatch fills the expert GEMMs: faster prefill"
done_testing
