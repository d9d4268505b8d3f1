#!/bin/sh
# gpuwise plan --train and --image: verdicts, exit codes, advice, JSON, bad input.
. "$(dirname "$0")/lib.sh"

# Our users' case: LoRA of a 7B model on an 8 GB card
run_gw plan llama-2-7b --train lora --vram 8G
is "$rc" 4 "7B LoRA on 8G does not fit (exit 4)"
like "$out" "does not fit" "says it does not fit"
like "$out" "QLoRA" "advice names a 4-bit base (QLoRA)"
like "$out" "--micro-batch 1" "advice names micro-batch 1"
like "$out" "checkpointing" "advice names gradient checkpointing"
like "$out" "fits" "the last change fits"

like "$out" "peak at the loss-backward phase" "the peak's phase is named: the loss backward"
like "$out" "total .*loss-backward" "the total row names the phase"
like "$out" "-> 5\.[0-9]+ GiB per GPU \(-[0-9.]+ GiB; peak at the loss-backward phase\), fits" "the QLoRA remedy names its peak's phase"

run_gw plan llama-2-7b --train qlora --micro-batch 1 --checkpointing full --seq 512 --vram 8G
is "$rc" 0 "QLoRA, micro-batch 1, checkpointing, seq 512 on 8G fits (exit 0)"
like "$out" "fits" "says it fits"
like "$out" "peak at the [a-z-]+ phase" "the remedy names its peak's phase too"

run_gw plan llama-2-7b --train lora --vram 8G --json
is "$rc" 4 "json exit 4"
is "$(printf '%s' "$out" | jget 'd["verdict"]')" "no-fit" "json verdict no-fit"
is "$(printf '%s' "$out" | jget 'd["workload"]')" "train" "json workload train"
for k in gradients_bytes optimizer_bytes activations_bytes adapter_bytes weights_bytes; do
	v=$(printf '%s' "$out" | jget "d['breakdown']['$k']")
	like "$v" '^[0-9]+$' "breakdown has $k"
done
is "$(printf '%s' "$out" | jget 'd["effective_batch"]')" "4" "effective batch = micro-batch x accum"
n=$(printf '%s' "$out" | jget 'len(d["advice"])')
ok "$([ "$n" -ge 2 ] && echo 0 || echo 1)" "at least two advice steps"
is "$(printf '%s' "$out" | jget 'd["advice"][-1]["fits"]')" "True" "last advice fits"
is "$(printf '%s' "$out" | jget 'd["peak_phase"]')" "loss-backward" "json peak_phase: the loss backward"
is "$(printf '%s' "$out" | jget 'd["peak"]["phase"] == d["peak_phase"] and d["peak"]["allocated_bytes"] == max(d["phases"].values())')" "True" "the peak is the largest phase"
is "$(printf '%s' "$out" | jget 'd["per_gpu_bytes"] - d["peak"]["allocated_bytes"] == d["breakdown"]["overhead_bytes"]')" "True" "per GPU = allocator peak + overhead"
is "$(printf '%s' "$out" | jget 'sum(d["peak"][k] for k in ("parameters_bytes", "gradients_bytes", "optimizer_bytes", "activations_bytes")) == d["peak"]["allocated_bytes"]')" "True" "the peak's categories add up"
is "$(printf '%s' "$out" | jget 'd["amp_layout"]')" "autocast" "the Trainer's mixed precision: autocast"

# grad accumulation: the gradients stay through the next micro-batch's
# forward (zero_grad only after the step): LoRA's are small, full
# fine-tuning's are 4 bytes per parameter more in the forward phase
run_gw plan llama-2-7b --train qlora --micro-batch 1 --grad-accum 16 --checkpointing full --seq 512 --vram 8G --json
a=$(printf '%s' "$out" | jget 'd["per_gpu_bytes"]')
is "$(printf '%s' "$out" | jget 'd["effective_batch"]')" "16" "effective batch 16"
run_gw plan llama-2-7b --train qlora --micro-batch 1 --checkpointing full --seq 512 --vram 8G --json
b=$(printf '%s' "$out" | jget 'd["per_gpu_bytes"]')
ok "$([ "$a" -ge "$b" ] && [ $((a - b)) -lt $((b / 100)) ] && echo 0 || echo 1)" "QLoRA grad-accum: the adapters' gradients only (< 1%)"
run_gw plan llama-2-7b --train full --micro-batch 1 --seq 512 --json
f1=$(printf '%s' "$out" | jget 'd["phases"]["forward_bytes"]')
run_gw plan llama-2-7b --train full --micro-batch 1 --seq 512 --grad-accum 8 --json
f8=$(printf '%s' "$out" | jget 'd["phases"]["forward_bytes"]')
is "$((f8 - f1))" "$(printf '%s' "$out" | jget 'd["params"] * 4')" "full grad-accum: fp32 gradients held in the forward phase"

# full fine-tuning: gradients and optimizer states appear
# no --gpu/--vram and no GPU on this machine (NVML and libcuda kept away): no verdict
GPUWISE_NVML_LIB=/nonexistent GPUWISE_CUDA_LIB=/nonexistent run_gw plan llama-3.1-8b --train full --json
is "$rc" 0 "no budget: exit 0"
is "$(printf '%s' "$out" | jget 'd["verdict"]')" "None" "no budget: verdict null"
g=$(printf '%s' "$out" | jget 'd["phases"]["optimizer_step_bytes"] - d["phases"]["forward_bytes"] + d["breakdown"]["activations_bytes"] + d["breakdown"]["logits_bytes"]')
ok "$([ "$g" -gt 0 ] && echo 0 || echo 1)" "full fine-tuning: the optimizer step holds the gradients"
run_gw plan llama-3.1-8b --train full --checkpointing full --micro-batch 1 --seq 512 --optimizer adamw --json
is "$(printf '%s' "$out" | jget 'd["peak_phase"]')" "optimizer-step" "checkpointed full fine-tuning peaks at the optimizer step (foreach temporaries)"
is "$(printf '%s' "$out" | jget 'd["peak"]["gradients_bytes"] == d["params"] * 4 and d["peak"]["optimizer_bytes"] == d["params"] * 12')" "True" "there: fp32 gradients, m, v and the sqrt(v) list"

# explicit numbers and a config.json work too
run_gw plan --params 7b --layers 32 --hidden 4096 --heads 32 --kv-heads 32 --ffn 11008 --vocab 32000 --train qlora --micro-batch 1 --checkpointing full --seq 512 --vram 8G
is "$rc" 0 "explicit numbers: QLoRA fits 8G"

# the other model inputs: a config.json and a GGUF header (sparse file)
cat > "$TMP/config.json" <<'JSON'
{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
 "intermediate_size": 11008, "num_attention_heads": 32, "num_hidden_layers": 32,
 "num_key_value_heads": 32, "vocab_size": 32000, "max_position_embeddings": 4096,
 "torch_dtype": "float16", "tie_word_embeddings": false}
JSON
run_gw plan "$TMP/config.json" --train qlora --micro-batch 1 --checkpointing full --seq 512 --vram 8G --json
is "$rc" 0 "config.json: QLoRA fits 8G"
p=$(printf '%s' "$out" | jget 'round(d["params"] / 1e9, 1)')
is "$p" "6.7" "config.json: 6.7 B parameters from the shape"
python3 - "$TMP/tiny.gguf" <<'PY'
import struct, sys
L, E, H, FF, V = 4, 256, 4, 512, 1000
def s(x):
    b = x.encode(); return struct.pack("<Q", len(b)) + b
kv = [("general.architecture", 8, s("llama")), ("llama.block_count", 4, struct.pack("<I", L)),
      ("llama.embedding_length", 4, struct.pack("<I", E)), ("llama.feed_forward_length", 4, struct.pack("<I", FF)),
      ("llama.attention.head_count", 4, struct.pack("<I", H)), ("llama.attention.head_count_kv", 4, struct.pack("<I", H)),
      ("llama.context_length", 4, struct.pack("<I", 2048))]
t = [("token_embd.weight", [E, V])]
for i in range(L):
    t += [(f"blk.{i}.{n}", d) for n, d in (("attn_norm.weight", [E]), ("attn_q.weight", [E, E]), ("attn_k.weight", [E, E]),
          ("attn_v.weight", [E, E]), ("attn_output.weight", [E, E]), ("ffn_norm.weight", [E]),
          ("ffn_gate.weight", [E, FF]), ("ffn_up.weight", [E, FF]), ("ffn_down.weight", [FF, E]))]
t += [("output_norm.weight", [E]), ("output.weight", [E, V])]
out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, len(t), len(kv)))
for k, ty, v in kv:
    out += s(k) + struct.pack("<I", ty) + v
off = 0
for n, d in t:
    cnt = 1
    for x in d: cnt *= x
    out += s(n) + struct.pack("<I", len(d)) + b"".join(struct.pack("<Q", x) for x in d) + struct.pack("<IQ", 0, off)
    off += (cnt * 4 + 31) // 32 * 32
start = (len(out) + 31) // 32 * 32
with open(sys.argv[1], "wb") as f:
    f.write(out); f.truncate(start + off)
PY
run_gw plan "$TMP/tiny.gguf" --train full --micro-batch 1 --checkpointing full --vram 1G --json
is "$rc" 0 "GGUF: full fine-tuning of a tiny model fits 1G"
is "$(printf '%s' "$out" | jget 'd["workload"]')" "train" "GGUF: planned as training"

# image generation
run_gw plan sdxl --image 1024x1024 --vram 16G --ui diffusers
is "$rc" 0 "SDXL 1024 fits 16G (diffusers: fp32 VAE decode)"
like "$out" "little headroom" "with little headroom"
run_gw plan sdxl --image 1024x1024 --vram 24G
is "$rc" 0 "SDXL 1024 fits 24G"
like "$out" "comfortably" "comfortably"
run_gw plan flux.1-dev --image 1024x1024 --vram 16G
is "$rc" 4 "FLUX.1-dev fp16 does not fit 16G"
like "$out" "fp8" "advice names fp8"
run_gw plan flux.1-dev --image 1024x1024 --vram 16G --quant fp8 --offload text-encoders
is "$rc" 0 "FLUX.1-dev fp8 with text encoders offloaded fits 16G"
run_gw plan flux.1-dev --image 1024x1024 --vram 16G --offload sequential --json
is "$rc" 0 "FLUX.1-dev sequential offload fits 16G"
is "$(printf '%s' "$out" | jget 'd["workload"]')" "image" "json workload image"
run_gw plan flux.1-dev --image 1024x1024 --gpu rtx-4090 --json
s=$(printf '%s' "$out" | jget 'd["s_per_image"]')
like "$s" '^[0-9.]+$' "seconds per image with a catalog GPU"

# bad input
# Framework presets: the framework's defaults, overridable afterwards.
run_gw plan llama-3.1-8b --train lora --framework torchtune --vram 24G --json
is "$(printf '%s' "$out" | jget 'd["checkpointing"] == "full" and d["flash_attn"] and d["lora_targets"] == "attn+mlp" and d["lora_rank"] == 8')" True "--framework torchtune: its checkpointing, SDPA, LoRA on attention and MLP"
t1=$(printf '%s' "$out" | jget 'd["breakdown"]["logits_bytes"]')
run_gw plan llama-3.1-8b --train lora --framework transformers --vram 24G --json
is "$(printf '%s' "$out" | jget 'd["checkpointing"] == "none" and d["flash_attn"] and d["lora_targets"] == "qv"')" True "--framework transformers: no checkpointing, SDPA, PEFT's q/v targets"
is "$(printf '%s' "$out" | jget "d['breakdown']['logits_bytes'] > $t1")" True "transformers upcasts the full logits; torchtune chunks them"
run_gw plan llama-3.1-8b --train lora --framework unsloth --vram 24G --json
is "$(printf '%s' "$out" | jget 'd["method"]')" qlora "--framework unsloth: a 4-bit base"
run_gw plan llama-3.1-8b --train lora --framework unsloth --checkpointing none --vram 24G --json
is "$(printf '%s' "$out" | jget 'd["checkpointing"]')" none "options after --framework override it"
run_gw plan llama-3.1-8b --train lora --framework deepspeed --gpus 4 --vram 24G --json
is "$(printf '%s' "$out" | jget 'd["shard"]')" zero2 "--framework deepspeed: ZeRO-2"
# The default is Hugging Face transformers + PEFT as run today: SDPA, full
# fp32 logits, no checkpointing, PEFT's r=8 on attention; the notes name it.
run_gw plan llama-3.1-8b --train lora --vram 24G --json
is "$(printf '%s' "$out" | jget 'd["framework"] == "transformers" and d["flash_attn"] and d["checkpointing"] == "none" and d["lora_rank"] == 8 and d["lora_targets"] == "qv" and d["optimizer"] == "adamw-fused"')" True "no --framework: the transformers preset"
like "$(printf '%s' "$out" | jget 'd["notes"][0]')" "transformers >= 5.*PEFT" "the notes name the framework and version modelled"
d_act=$(printf '%s' "$out" | jget 'd["breakdown"]["activations_bytes"]')
d_tot=$(printf '%s' "$out" | jget 'd["per_gpu_bytes"]')
run_gw plan llama-3.1-8b --train lora --framework transformers --vram 24G --json
is "$(printf '%s' "$out" | jget 'd["per_gpu_bytes"]')" "$d_tot" "the default equals --framework transformers"
run_gw plan llama-3.1-8b --train lora --vram 24G
like "$out" "flash attention|SDPA" "text: the attention kernel is said"
like "$out" "transformers >= 5" "text: the framework and version are said"
run_gw plan llama-3.1-8b --train lora --flash-attn off --vram 24G --json
is "$(printf '%s' "$out" | jget "not d['flash_attn'] and d['breakdown']['activations_bytes'] > $d_act")" True "--flash-attn off: eager attention stores the scores"
run_gw plan llama-3.1-8b --train lora --framework none --vram 24G --json
is "$(printf '%s' "$out" | jget "d['framework'] == 'none' and not d['flash_attn'] and d['breakdown']['activations_bytes'] > $d_act")" True "--framework none: the eager textbook model"
run_gw plan llama-3.1-8b --train lora --framework deepspeed --train full --precision mixed-bf16 --json
is "$(printf '%s' "$out" | jget 'd["amp_layout"]')" "master" "--framework deepspeed: bf16 weights + fp32 master"
like "$(printf '%s' "$out" | jget '" ".join(d["notes"])')" "DeepSpeed/FSDP" "the layout is named in the assumptions"
# LoRA targets: PEFT's names, lists, and what they cost
run_gw plan llama-2-7b --train lora --lora-targets qv --json
is "$(printf '%s' "$out" | jget 'd["trainable_params"]')" "4194304" "qv: 32 x 8 x (8192 + 8192) trainable"
run_gw plan llama-2-7b --train lora --lora-targets q_proj,k_proj,v_proj,o_proj --json
is "$(printf '%s' "$out" | jget 'd["trainable_params"]')" "8388608" "a list of the four attention maps = attn"
run_gw plan llama-2-7b --train lora --lora-targets q,gate --json
is "$(printf '%s' "$out" | jget 'd["lora_targets"] + " " + str(d["trainable_params"])')" "list 5963776" "q and gate: 32 x 8 x (8192 + 15104)"
run_gw plan llama-2-7b --train lora --lora-targets q,lm_head
is "$rc" 2 "an unknown map in --lora-targets exits 2"
is "$(printf '%s\n' "$err" | head -1)" "gpuwise: invalid --lora-targets 'q,lm_head' (one of: qv, attn, attn+mlp, all-linear, or a list of q,k,v,o,gate,up,down)" "and names the list"
# the loss kernels: HF's fp32 log-softmax, torchtune's chunks, fused
run_gw plan llama-3.1-8b --train lora --json
l0=$(printf '%s' "$out" | jget 'd["breakdown"]["logits_bytes"]')
is "$l0" "$((4 * 2048 * 128256 * 12))" "HF loss backward: 12 bytes per logit"
run_gw plan llama-3.1-8b --train lora --fused-ce --json
is "$(printf '%s' "$out" | jget "d['breakdown']['logits_bytes'] < $l0 / 2")" "True" "--fused-ce keeps the 16-bit logits only"
run_gw plan llama-3.1-8b --train lora --framework keras
is "$rc" 2 "unknown --framework: exit 2"
like "$err" "invalid --framework 'keras'" "names the bad framework"
run_gw plan llama-2-7b --train lorra
is "$rc" 2 "bad --train exits 2"
like "$err" "invalid --train 'lorra'" "bad --train is named"
run_gw plan llama-2-7b --train lora --micro-batch 0
is "$rc" 2 "micro-batch 0 exits 2"
run_gw plan llama-2-7b --train lora --seq 12abc
is "$rc" 2 "malformed --seq exits 2"
like "$err" "invalid --seq '12abc'" "malformed --seq is named"
run_gw plan llama-2-7b --micro-batch 2
is "$rc" 2 "a training option without --train exits 2"
like "$err" "needs --train" "says it needs --train"
run_gw plan sdxl --image 1024
is "$rc" 2 "malformed --image exits 2"
like "$err" "invalid --image '1024'" "malformed --image is named"
run_gw plan sdxl --image 1024x1024 --quant q9
is "$rc" 2 "unknown image precision exits 2"
run_gw plan sdxxl --image 1024x1024
is "$rc" 2 "unknown image model exits 2"
like "$err" "did you mean 'sdxl'" "suggests sdxl"
run_gw plan llama-2-7b --train lora --vram 8Q
is "$rc" 2 "malformed --vram exits 2"
run_gw plan llama-2-7b --train lora --offload sequential
is "$rc" 2 "an image option with --train exits 2"

done_testing
