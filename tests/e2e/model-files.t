#!/bin/sh
# Model files through the real binary: a GGUF written by the independent
# writer (PyPI gguf) is planned with exactly its tensor bytes, a truncated
# copy and hostile headers are refused with one clear line, safetensors
# directories and config.json files load.
. "$(dirname "$0")/lib.sh"

le64() { python3 -c 'import struct,sys; sys.stdout.buffer.write(struct.pack("<Q", int(sys.argv[1])))' "$1"; }

# ---- GGUF from the independent writer ------------------------------------
if exp=$(python3 "$GW_TOP/tests/tools/gguf_py_write.py" "$TMP/py.gguf" qwen3 2>&1); then
	run_gw plan "$TMP/py.gguf" --vram 80G --json
	is "$rc" 0 "gguf-py file plans (exit 0)"
	is "$(printf '%s' "$out" | jget 'd["model_source"]')" gguf "source is gguf"
	is "$(printf '%s' "$out" | jget 'd["weights_exact"]')" True "weights are exact"
	want=$(printf '%s' "$exp" | jget 'd["total_bytes"]')
	is "$(printf '%s' "$out" | jget 'd["model_bytes"]')" "$want" "model_bytes = the writer's tensor bytes ($want)"
	want=$(printf '%s' "$exp" | jget 'd["embd_bytes"]')
	is "$(printf '%s' "$out" | jget 'd["embd_bytes"]')" "$want" "embd_bytes = token_embd bytes"
	is "$(printf '%s' "$out" | jget 'd["total_layers"]')" 13 "12 blocks + output layer"

	size=$(stat -c %s "$TMP/py.gguf")
	head -c $((size / 2)) "$TMP/py.gguf" > "$TMP/cut.gguf"
	run_gw plan "$TMP/cut.gguf" --vram 80G --json
	is "$rc" 1 "truncated copy: exit 1"
	like "$err" "^gpuwise: cannot read '$TMP/cut.gguf': truncated" "truncated copy: one clear line"
	is "$(printf '%s\n' "$err" | wc -l)" 1 "truncated copy: a single line on stderr"
	is "$out" "" "truncated copy: nothing on stdout"
else
	for i in 1 2 3 4 5 6 7 8 9 10; do skip "independent GGUF writer unavailable: $exp"; done
fi

# ---- hostile GGUF headers --------------------------------------------------
printf 'GGML\003\000\000\000' > "$TMP/magic.gguf"
run_gw plan "$TMP/magic.gguf" --vram 8G
is "$rc" 1 "bad magic: exit 1"
like "$err" "cannot read '$TMP/magic.gguf': not a GGUF file \\(bad magic" "bad magic named"

{ printf 'GGUF\001\000\000\000'; le64 0; le64 0; } > "$TMP/v1.gguf"
run_gw plan "$TMP/v1.gguf" --vram 8G
is "$rc" 1 "GGUF v1: exit 1"
like "$err" "GGUF version 1 is not supported" "GGUF v1 refused with a reason"

{ printf 'GGUF\003\000\000\000'; le64 1152921504606846976; le64 0; } > "$TMP/count.gguf"
run_gw plan "$TMP/count.gguf" --vram 8G
is "$rc" 1 "2^60 tensors: exit 1"
like "$err" "impossible tensor count 1152921504606846976" "2^60 tensors refused"

{ printf 'GGUF\003\000\000\000'; le64 0; le64 1; le64 4611686018427387904; printf 'general'; } > "$TMP/str.gguf"
run_gw plan "$TMP/str.gguf" --vram 8G
is "$rc" 1 "huge string length: exit 1"
like "$err" "runs past the end of the file" "huge string length refused"

# ---- safetensors directory with config.json --------------------------------
mkdir -p "$TMP/tiny"
cat > "$TMP/tiny/config.json" <<'EOF'
{"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2,
 "num_hidden_layers": 2, "intermediate_size": 512, "vocab_size": 1000, "max_position_embeddings": 2048,
 "tie_word_embeddings": false}
EOF
st_bytes=$(python3 - "$TMP/tiny/model.safetensors" <<'EOF'
import json, struct, sys
t, off = {}, 0
def add(name, shape, dtype="BF16", size=2):
    global off
    n = size
    for d in shape: n *= d
    t[name] = {"dtype": dtype, "shape": shape, "data_offsets": [off, off + n]}
    off += n
add("model.embed_tokens.weight", [1000, 256])
for i in range(2):
    for p, s in (("self_attn.q_proj", [256, 256]), ("self_attn.k_proj", [128, 256]), ("self_attn.v_proj", [128, 256]),
                 ("self_attn.o_proj", [256, 256]), ("mlp.gate_proj", [512, 256]), ("mlp.up_proj", [512, 256]),
                 ("mlp.down_proj", [256, 512])):
        add(f"model.layers.{i}.{p}.weight", s)
    add(f"model.layers.{i}.input_layernorm.weight", [256])
    add(f"model.layers.{i}.post_attention_layernorm.weight", [256])
add("model.norm.weight", [256])
add("lm_head.weight", [1000, 256])
h = json.dumps(t).encode()
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h)
    f.truncate(8 + len(h) + off)
print(off)
EOF
)
run_gw plan "$TMP/tiny" --vram 8G --json
is "$rc" 0 "safetensors directory plans"
is "$(printf '%s' "$out" | jget 'd["model_source"]')" safetensors "source is safetensors"
is "$(printf '%s' "$out" | jget 'd["model_bytes"]')" "$st_bytes" "model_bytes = the BF16 tensor bytes ($st_bytes)"

# a header length beyond the file
{ le64 4096; printf '{}'; } > "$TMP/short.safetensors"
run_gw plan "$TMP/short.safetensors" --vram 8G
is "$rc" 1 "safetensors header past EOF: exit 1"
like "$err" "cannot read '$TMP/short.safetensors': header length 4096 runs past the end" "header past EOF named"

# ---- config.json alone ------------------------------------------------------
run_gw plan "$TMP/tiny/config.json" --vram 8G --json
is "$rc" 0 "config.json alone plans"
is "$(printf '%s' "$out" | jget 'd["model_source"]')" config "source is config"

printf '{"num_hidden_layers": "many"}' > "$TMP/bad.json"
run_gw plan "$TMP/bad.json" --vram 8G
is "$rc" 1 "bad config.json: exit 1"
like "$err" "\"num_hidden_layers\" must be an integer" "bad field named"

done_testing
