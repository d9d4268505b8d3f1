#!/bin/sh
# gpuwise plan --train: presets as each framework's published numbers were
# measured (issue 34): torchtune's compiled loss (its README table,
# tests/validation/plan-measurements.tsv), --compile, --weights-dtype.
. "$(dirname "$0")/lib.sh"

table="$GW_TOP/tests/validation/plan-measurements.tsv"
# torchtune's published peaks (PyTorch allocator: the plan less the CUDA
# context) for Llama-3.1-8B on the 4090 under its recipes' settings:
# batch 2, packed 2048, compile on
for m in lora qlora; do
	q=$([ $m = lora ] && echo "BF16 LoRA" || echo "NF4 QLoRA")
	pub=$(awk -F'\t' -v q="$q" '$1 == "Llama-3.1-8B" && $4 == q && $8 ~ /4090/ && $11 ~ /torchtune/ { print $9 }' "$table")
	like "$pub" '^[0-9.]+$' "torchtune's published 8B $m row on the 4090 is in the table ($pub GiB)"
	run_gw plan llama-3.1-8b --train $m --framework torchtune --seq 2048 --micro-batch 2 --gpu rtx-4090 --json
	is "$(printf '%s' "$out" | jget 'd["fused_ce"]')" "True" "torchtune $m: the compiled loss is the preset's"
	e=$(printf '%s' "$out" | jget "round(((d['per_gpu_bytes'] - 457 * 2**20) / 2**30 / $pub - 1) * 100, 1)")
	diag "torchtune preset, 8B $m on the 4090: $e% against the published $pub GiB"
	ok "$(python3 -c "import sys; sys.exit(0 if abs($e) <= 10 else 1)" && echo 0 || echo 1)" "torchtune $m: within 10% of the published $pub GiB ($e%)"
	run_gw plan llama-3.1-8b --train $m --framework torchtune --compile off --seq 2048 --micro-batch 2 --gpu rtx-4090 --json
	is "$(printf '%s' "$out" | jget 'd["fused_ce"]')" "False" "torchtune $m --compile off: the eager chunked loss"
	e2=$(printf '%s' "$out" | jget "round(((d['per_gpu_bytes'] - 457 * 2**20) / 2**30 / $pub - 1) * 100, 1)")
	ok "$(python3 -c "import sys; sys.exit(0 if $e2 > $e + 5 else 1)" && echo 0 || echo 1)" "torchtune $m --compile off: the eager loss costs more ($e2%)"
done
run_gw plan llama-3.1-8b --train lora --framework torchtune --gpu rtx-4090
like "$out" "compile: True" "the torchtune note says the loss is compiled"
run_gw plan llama-3.1-8b --train lora --compile maybe
is "$rc" 2 "--compile maybe: usage error (exit 2)"

# the frozen base's dtype: 16-bit by default (the checkpoint's), fp32 on demand
run_gw plan qwen2.5-7b --train lora --gpu rtx-4090 --json
a=$(printf '%s' "$out" | jget 'd["breakdown"]["weights_bytes"]')
is "$(printf '%s' "$out" | jget 'd["weights_dtype"]')" "16-bit" "LoRA: the base in 16-bit by default"
ok "$(printf '%s' "$out" | jget '0 if any("dtype=\"auto\"" in n for n in d["notes"]) else 1')" "the note names transformers' dtype=\"auto\""
run_gw plan qwen2.5-7b --train lora --weights-dtype fp32 --gpu rtx-4090 --json
is "$(printf '%s' "$out" | jget 'd["weights_dtype"]')" "fp32" "--weights-dtype fp32"
is "$(printf '%s' "$out" | jget "d['breakdown']['weights_bytes'] == 2 * $a")" "True" "--weights-dtype fp32: twice the base's bytes"
run_gw plan qwen2.5-7b --train full --json
is "$(printf '%s' "$out" | jget 'd["weights_dtype"]')" "None" "full fine-tuning: no frozen base (null)"
run_gw plan qwen2.5-7b --train lora --weights-dtype fp64
is "$rc" 2 "--weights-dtype fp64: usage error (exit 2)"
like "$err" "auto, bf16, fp16, fp32" "it names the choices"
run_gw plan qwen2.5-7b --weights-dtype fp32
is "$rc" 2 "--weights-dtype without --train: usage error"

done_testing
