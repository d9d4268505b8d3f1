#!/bin/sh
# plan --train against PyTorch's own accounting of a fine-tuning step:
# tests/validation/train-oracle.tsv, written by tests/oracle/train_oracle.py
# (torch.distributed._tools.mem_tracker.MemTracker under FakeTensorMode on
# the CPU, real transformers + peft models built from config: Llama, Qwen2,
# Mixtral), 75 scenarios over every plan --train option the CPU can run
# (three with bitsandbytes' 8-bit AdamW, run for real on the CPU).
# The table is asserted always; when torch, transformers and peft are
# installed (.ci/run: build/venv-train; or GW_TORCH_PY=/path/to/python) a
# two rows are re-run live and must give the table's bytes again.
. "$(dirname "$0")/lib.sh"

table="$GW_TOP/tests/validation/train-oracle.tsv"
cfg="$GW_TOP/tests/validation/train-oracle"
n=$(grep -vc '^#' "$table")
ok "$([ "$n" -ge 61 ] && echo 0 || echo 1)" "the table has at least 60 scenarios ($((n - 1)))"
for a in llama qwen2 mixtral; do
	ok "$(cut -f3 "$table" | grep -qx "$a" && echo 0 || echo 1)" "architecture $a is in the grid"
done
ok "$(cut -f2 "$table" | grep -qx holdout && echo 0 || echo 1)" "a held-out part is marked"

report=$(python3 "$GW_TOP/tests/oracle/train_compare.py" "$GW" "$table" "$cfg" 2>&1)
status=$?
printf '%s\n' "$report" | sed 's/^/# /'
is "$status" 0 "every total within 10%, every part of >= 2% of the peak within 15%, trainable parameters exact"
like "$report" '# fit: [0-9]+ rows' "the fitted part's error is printed"
like "$report" '# holdout: [0-9]+ rows' "the held-out part's error is printed apart"
like "$report" '# 75 rows, 0 out of bounds' "all 75 rows compared"

# fp32 full fine-tuning is counted to the tensor: within 0.5% of the tracker
run_gw plan "$cfg/llama.json" --train full --precision fp32 --optimizer adamw --checkpointing none --flash-attn on --seq 512 --micro-batch 2 --json
want=$(awk -F'\t' '$1 == "llama-01" { print $17 }' "$table")
is "$(printf '%s' "$out" | jget "abs(d['peak']['allocated_bytes'] / $want - 1) < 0.005 and d['peak_phase'] == 'loss-backward'")" True "llama-01 (fp32 AdamW): within 0.5%, in the loss backward"

py=${GW_TORCH_PY:-$GW_TOP/build/venv-train/bin/python}
if [ -x "$py" ] && "$py" -c 'import torch, transformers, peft' >/dev/null 2>&1; then
	live=$(cd "$GW_TOP/tests/oracle" && "$py" train_oracle.py --check "$table" llama-16 mixtral-12 2>&1)
	st=$?
	printf '%s\n' "$live" | grep -v '^Failed to load' | sed 's/^/# live: /'
	is "$st" 0 "live MemTracker runs give the table's bytes again (llama-16 LoRA, mixtral-12 MoE bf16 chunked)"
else
	skip "torch, transformers and peft are not installed (build/venv-train by .ci/run, or GW_TORCH_PY): the table is asserted, the live re-run is skipped"
fi
done_testing
