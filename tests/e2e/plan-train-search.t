#!/bin/sh
# gpuwise plan --train: the change search (issue 34).  On one GPU the
# advice ends on a single-GPU set of changes that fits, cheapest first,
# each re-planned; sharding is advised only where the plan has several
# GPUs (or, on one, only when no single-GPU set fits).
. "$(dirname "$0")/lib.sh"

# The cases of issue 34: a 7B LoRA on an RTX 4060 Laptop (8 GB)
for args in "qwen2.5-7b --train lora" "qwen2.5-7b --train lora --framework unsloth" "llama-2-7b --train lora"; do
	run_gw plan $args --gpu 4060-laptop --json
	is "$rc" 4 "$args on a 4060 Laptop: does not fit as asked (exit 4)"
	last=$(printf '%s' "$out" | jget 'd["advice"][-1]')
	is "$(printf '%s' "$out" | jget 'd["advice"][-1]["fits"]')" "True" "$args: the last change fits"
	unlike "$(printf '%s' "$out" | jget '" | ".join(a["action"] for a in d["advice"])')" "GPUs|--gpus|--shard" \
		"$args: no second GPU in the advice"
	is "$(printf '%s' "$out" | jget 'sum(1 for a in d["advice"] if a["fits"])')" "1" "$args: only the last change fits (a minimal set)"
	is "$(printf '%s' "$out" | jget 'all(a["per_gpu_bytes"] < b["per_gpu_bytes"] for a, b in zip(d["advice"][1:], d["advice"]))')" \
		"True" "$args: each step lowers the total"
	done_at=$(printf '%s' "$out" | jget 'd["advice"][-1]["per_gpu_bytes"]')
	# the advice's own end, re-planned with its options, fits as it said
	opts=$(printf '%s' "$out" | python3 -c '
import json, re, sys
d = json.load(sys.stdin)
o = []
for a in d["advice"]:
    for m in re.finditer(r"(--[a-z-]+)(?: ([0-9a-z-]+))?", a["action"]):
        if m.group(1) in ("--precision",): continue
        o += [m.group(1)] + ([m.group(2)] if m.group(2) and m.group(1) not in ("--fused-ce",) else [])
print(" ".join(o))')
	run_gw plan $args $opts --gpu 4060-laptop --json
	planned=$out
	is "$rc" 0 "$args with the advice ($opts): fits (exit 0)"
	is "$(printf '%s' "$out" | jget 'd["per_gpu_bytes"]')" "$done_at" "$args with the advice: the total the advice said"
	# no worse than the plan's own QLoRA, micro-batch 1, checkpointing at
	# --seq 1024: the advice keeps longer samples, or fits in no more
	seq=$(printf '%s' "$planned" | jget 'd["seq"]')
	run_gw plan $args --train qlora --micro-batch 1 --checkpointing full --seq 1024 --gpu 4060-laptop --json
	ref=$(printf '%s' "$out" | jget 'd["per_gpu_bytes"]')
	ok "$({ [ "$seq" -gt 1024 ] || [ "$done_at" -le "$ref" ]; } && echo 0 || echo 1)" \
		"$args: the advice (seq $seq, $done_at B) is no worse than QLoRA at --seq 1024 ($ref B)"
done

# the text names the changes, cheapest first: the free fused loss before
# the 4-bit base
run_gw plan qwen2.5-7b --train lora --gpu 4060-laptop
like "$out" "1\. fused cross-entropy \(--fused-ce" "first: the fused loss (free)"
like "$out" "QLoRA: --train qlora\)
     -> [0-9.]+ GiB per GPU \(-[0-9.]+ GiB; peak at the [a-z-]+ phase\), fits" "last: QLoRA, which fits"
unlike "$out" "second GPU" "no second GPU"

# a two-GPU plan may still shard
run_gw plan llama-3.1-70b --train lora --vram 24G --gpus 2 --json
ok "$(printf '%s' "$out" | jget '0 if any("--shard fsdp" in a["action"] for a in d["advice"]) else 1')" \
	"70B LoRA on 2 x 24G: sharding over the two GPUs is advised"
is "$(printf '%s' "$out" | jget 'd["advice"][-1]["fits"]')" "True" "70B LoRA on 2 x 24G: the last change fits"

# nothing fits one small GPU: more GPUs come last, after the single-GPU changes
run_gw plan llama-3.1-70b --train full --vram 8G --json
is "$(printf '%s' "$out" | jget '"GPUs" in d["advice"][-1]["action"]')" "True" "70B full on 8G: more GPUs, last"
is "$(printf '%s' "$out" | jget 'sum(1 for a in d["advice"] if "GPUs" in a["action"])')" "1" "70B full on 8G: only the last step adds GPUs"

# a plan that fits gets no advice
run_gw plan llama-2-7b --train qlora --micro-batch 1 --checkpointing full --seq 512 --vram 8G --json
is "$rc" 0 "QLoRA at 512 fits 8G"
is "$(printf '%s' "$out" | jget 'len(d["advice"])')" "0" "no advice when it fits"

done_testing
