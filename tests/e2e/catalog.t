#!/bin/sh
# gpuwise plan on the catalog rows that need more than one kind of block:
# Llama 4 Maverick (MoE every other block), OLMo 3 (a sliding window on 3
# of 4 layers), Phi-4 (fused attn_qkv), by the names people type.
. "$(dirname "$0")/lib.sh"

# Maverick on one H100: 400.71 B params, Q4_K_M ~243 GB as the common GGUF;
# the experts live in the odd blocks only, so --n-cpu-moe is the advice.
run_gw plan llama4:maverick --gpu h100 --json
is "$rc" 3 "Maverick on one H100: exit 3 (offload)"
is "$(printf '%s' "$out" | jget 'd["model"]')" llama-4-maverick "llama4:maverick is the Maverick row"
is "$(printf '%s' "$out" | jget 'd["quant"]')" Q4_K_M "default quantization Q4_K_M"
is "$(printf '%s' "$out" | jget 'abs(d["model_bytes"] / 243e9 - 1) < 0.03')" True "Q4_K_M weights within 3% of 243 GB"
diag "Maverick Q4_K_M: $(printf '%s' "$out" | jget 'round(d["model_bytes"] / 1e9, 1)') GB estimated"
# llama.cpp's automatic fit (the default placement since issue 30): experts to RAM first
is "$(printf '%s' "$out" | jget 'd["fit_moe"] and d["n_cpu_moe"] > 0')" True \
	"the default plan keeps experts in RAM (--n-cpu-moe), as llama.cpp's fit does"
is "$(printf '%s' "$out" | jget 'd["gpu_layers"] >= 48')" True \
	"with --n-cpu-moe every one of the 48 blocks is on the GPU"
run_gw plan llama4:maverick --gpu h100
like "$out" '^llama-4-maverick: 48 layers, 400\.71B params' "text names 48 layers and 400.71B params"

# A GGUF repository id resolves to the base model.
run_gw plan bartowski/meta-llama_Llama-4-Maverick-17B-128E-Instruct-GGUF --gpu h100 --json
is "$(printf '%s' "$out" | jget 'd["model"]')" llama-4-maverick "bartowski repo id -> Maverick"

# The same model from a config.json: the same shape and count.
cat > "$TMP/config.json" <<'JSON'
{"architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
 "text_config": {"model_type": "llama4_text", "attention_chunk_size": 8192, "head_dim": 128,
  "hidden_size": 5120, "interleave_moe_layer_step": 2, "intermediate_size": 8192,
  "intermediate_size_mlp": 16384, "max_position_embeddings": 1048576, "num_attention_heads": 40,
  "num_experts_per_tok": 1, "num_hidden_layers": 48, "num_key_value_heads": 8,
  "num_local_experts": 128, "tie_word_embeddings": false, "vocab_size": 202048}}
JSON
run_gw plan "$TMP/config.json" --gpu h100
like "$out" '48 layers, 400\.71B params, Q4_K_M 226 GiB' "config.json: 400.71B params, the catalog's Q4_K_M size"

# OLMo 3 7B at its 65536 context: 8 full layers x 65536 cells + 24 sliding
# layers x (4096 + 512) cells, 256 KiB per cell and layer in f16.
run_gw plan olmo-3:7b --ctx 65536 --gpu rtx-4090 --json
is "$rc" 0 "OLMo 3 7B at 65536 fits a 4090"
is "$(printf '%s' "$out" | jget 'd["breakdown"]["kv_cache_bytes"]')" 10401873920 "KV 9.6875 GiB with the SWA pattern"
run_gw plan bartowski/allenai_Olmo-3-7B-Instruct-GGUF --ctx 65536 --gpu rtx-4090 --json
is "$(printf '%s' "$out" | jget 'd["model"]')" olmo-3-7b "bartowski repo id -> OLMo 3 7B"
run_gw plan allenai/Olmo-3-1125-32B --ctx 65536 --gpu h100 --json
is "$(printf '%s' "$out" | jget 'd["kv_total_bytes"]')" 5200936960 "OLMo 3 32B KV 4.84 GiB at 65536"

# Phi-4 Q4_K_M: bartowski/phi-4-GGUF ships 9.05 GB.
run_gw plan microsoft/phi-4 --gpu rtx-4090 --json
is "$(printf '%s' "$out" | jget 'abs(d["model_bytes"] / 9.05e9 - 1) < 0.01')" True "Phi-4 Q4_K_M within 1% of 9.05 GB"
# The GPUs issue 19 adds: each plans by its id and by the name its driver
# reports (NVML, ROCm, Level Zero), and gpuwise list gpus shows them.
run_gw list gpus --json
ids=$(printf '%s' "$out" | jget '",".join(r["id"] for r in d["rows"])')
for id in rtx-4090-d rtx-pro-6000-max-q rtx-pro-4000 a30 a40 quadro-rtx-6000 quadro-rtx-8000 dgx-spark \
	mi50 mi60 mi100 mi210 mi300x radeon-pro-w7900 rx-9070 radeon-ai-pro-r9700 arc-a770 m3 m3-pro m3-max m3-ultra \
	m4 m4-pro m4-max; do
	case ",$ids," in *",$id,"*) ok 0 "list gpus has $id" ;; *) ok 1 "list gpus has $id" ;; esac
done
# (every name of every new row resolves in test_catalog; here one per driver's spelling)
names=$(printf '%s' "$out" | jget 'json.dumps({r["id"]: r["name"] for r in d["rows"]})')
for pair in "NVIDIA GeForce RTX 4090 D|rtx-4090-d" "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition|rtx-pro-6000-max-q" \
	"Quadro RTX 8000|quadro-rtx-8000" "AMD Instinct MI210|mi210" "AMD Radeon AI PRO R9700|radeon-ai-pro-r9700" \
	"Intel(R) Arc(TM) A770 Graphics|arc-a770" "Apple M4 Pro|m4-pro"; do
	name=${pair%|*} id=${pair#*|}
	run_gw plan llama3.1:8b --gpu "$name" --json
	is "$rc:$(printf '%s' "$out" | jget 'd["devices"][0]["name"]')" "0:$(printf '%s' "$names" | jget "d['$id']")" "--gpu '$name' plans the $id row"
done
run_gw plan llama3.1:70b --gpu dgx-spark --json
is "$(printf '%s' "$out" | jget 'd["verdict"]')" fits "Llama 3.1 70B Q4_K_M fits the GB10's 128 GB unified memory"
run_gw plan llama3.1:8b --gpu "AMD Radeon RX 9070 XT" --json
is "$(printf '%s' "$out" | jget 'd["devices"][0]["name"]')" "AMD Radeon RX 9070 XT" "the RX 9070 XT keeps its own row"
# The language-model catalog (issue 32): at least 150 rows, each citing the
# config.json (or its copy) its shape comes from.
run_gw list models --json
is "$rc" 0 "list models --json: exit 0"
is "$(printf '%s' "$out" | jget 'sum(1 for r in d["rows"] if r["kind"] == "llm") >= 150')" True \
	"at least 150 language models in the catalog"
is "$(printf '%s' "$out" | jget '[r["id"] for r in d["rows"] if r["kind"] == "llm" and not (r.get("source") or "").strip()]')" "[]" \
	"every language model cites a source"
for id in glm-4.5 glm-4.5-air glm-4.6 minimax-m2 smollm3-3b phi-4-mini ernie-4.5-21b-a3b \
	qwen3-4b-2507 qwen3-30b-a3b-2507 qwen3-coder-30b-a3b qwq-32b qwen3-vl-8b qwen3-vl-30b-a3b qwen2.5-coder-7b \
	glm-4-32b-0414 glm-4-9b gemma-3-270m deepseek-v2-lite deepseek-coder-v2-lite codestral-22b mixtral-8x22b magistral-small devstral-small \
	deepseek-v2.5 deepseek-coder-v2-236b deepseek-v3.1 deepseek-r1-0528 qwen2.5-vl-7b qwen3.5-35b-a3b \
	hunyuan-a13b deepseek-r1-distill-qwen-1.5b seed-oss-36b; do
	case " $(printf '%s' "$out" | jget '" ".join(r["id"] for r in d["rows"])') " in
	*" $id "*) ok 0 "list models has $id" ;; *) ok 1 "list models has $id" ;; esac
done
# `list models` sorts the language models by release, newest first (rows
# without a date last), and prints the catalog's date: its count and its
# newest release month, the same figures --json gives.
is "$(printf '%s' "$out" | jget '(lambda r: r == sorted(r, key=lambda x: x or "", reverse=True))([x["released"] for x in d["rows"] if x["kind"] == "llm"])')" True \
	"list models --json: language models newest release first"
is "$(printf '%s' "$out" | jget 'd["catalog_newest_release"] == max(x["released"] for x in d["rows"] if x["kind"] == "llm" and x["released"])')" True \
	"catalog_newest_release is the newest row's month"
json_count=$(printf '%s' "$out" | jget 'd["catalog_models"]')
json_newest=$(printf '%s' "$out" | jget 'd["catalog_newest_release"]')
run_gw list models
like "$out" "The catalog: $json_count language models, newest released $json_newest" "list models prints the catalog's count and date"
first=$(printf '%s\n' "$out" | sed -n 2p | awk '{print $1}')
is "$first" "$(run_gw list models --json; printf '%s' "$out" | jget '[x["id"] for x in d["rows"] if x["kind"] == "llm"][0]')" \
	"the text table starts with the newest model"
done_testing
