#!/bin/sh
# Hostile inputs that used to hang gpuwise or be skipped in silence
# (issue 10): FIFOs where a file is read, symlink loops and broken tables
# in a data directory, model shapes that only config.json refused, a
# byte-order mark, a huge safetensors header.  Every command runs under
# `timeout` so that a hang is a failure, not a stuck test run.
. "$(dirname "$0")/lib.sh"

gw_t() { # gw_t SECONDS ARGS...: run_gw under a time limit (124 = it hung)
	_s=$1
	shift
	out=$(timeout "$_s" "$GW" "$@" 2>"$TMP/stderr" </dev/null); rc=$?
	err=$(cat "$TMP/stderr")
}

# A small Llama-shaped safetensors model and its config.json.
mkmodel() { # mkmodel DIR
	mkdir -p "$1"
	cat > "$1/config.json" <<'EOF'
{"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2,
 "num_hidden_layers": 2, "intermediate_size": 512, "vocab_size": 1000, "max_position_embeddings": 2048}
EOF
	python3 - "$1/model.safetensors" <<'EOF'
import json, struct, sys
t, off = {}, 0
def add(name, shape):
    global off
    n = 2
    for d in shape: n *= d
    t[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [off, off + n]}
    off += n
add("model.embed_tokens.weight", [1000, 256])
for i in range(2):
    add(f"model.layers.{i}.self_attn.q_proj.weight", [256, 256])
    add(f"model.layers.{i}.mlp.up_proj.weight", [512, 256])
h = json.dumps(t).encode()
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h)
    f.truncate(8 + len(h) + off)
EOF
}

# ---- FIFOs where a regular file is read -------------------------------------
mkdir -p "$TMP/fifo"
mkfifo "$TMP/fifo/config.json"
gw_t 10 plan "$TMP/fifo/config.json" --vram 8G
is "$rc" 1 "a FIFO as config.json: exit 1, no hang"
like "$err" "^gpuwise: cannot read '$TMP/fifo/config.json': not a regular file" "a FIFO as config.json: named"

mkmodel "$TMP/m1"
gw_t 20 plan "$TMP/m1" --vram 8G
is "$rc" 0 "the model directory plans"
rm "$TMP/m1/config.json"
mkfifo "$TMP/m1/config.json"
gw_t 10 plan "$TMP/m1" --vram 8G
is "$rc" 1 "a FIFO as config.json in a model directory: exit 1, no hang"
like "$err" "config.json': not a regular file" "  ... and said so"

mkmodel "$TMP/m2"
mkfifo "$TMP/m2/model-00002-of-00002.safetensors"
gw_t 10 plan "$TMP/m2" --vram 8G
is "$rc" 1 "a FIFO as a *.safetensors shard: exit 1, no hang"
like "$err" "model-00002-of-00002.safetensors': not a regular file" "  ... and said so"

mkfifo "$TMP/fifo/model.gguf"
gw_t 10 plan "$TMP/fifo/model.gguf" --vram 8G
is "$rc" 1 "a FIFO as a GGUF file: exit 1, no hang"

mkdir -p "$TMP/dd1"
mkfifo "$TMP/dd1/gpus.tsv"
gw_t 10 --data-dir "$TMP/dd1" plan llama3.1:8b --gpu rtx-4090
is "$rc" 1 "a FIFO as a --data-dir table: exit 1, no hang"
like "$err" "^gpuwise: cannot read '$TMP/dd1/gpus.tsv': not a regular file" "  ... named"

# ---- a symlink loop as a table ------------------------------------------------
mkdir -p "$TMP/dd2"
ln -s gpus.tsv "$TMP/dd2/gpus.tsv"
gw_t 10 --data-dir "$TMP/dd2" plan llama3.1:8b --gpu rtx-4090
is "$rc" 1 "a symlink loop as gpus.tsv: exit 1 (it used to be skipped)"
like "$err" "^gpuwise: cannot open '$TMP/dd2/gpus.tsv': Too many levels of symbolic links" "  ... named"

# ---- broken tables the lookups used to ignore -------------------------------
mkdir -p "$TMP/dd3"
{ grep -v '^#' "$GW_TOP/data/used-prices.tsv" | head -3
  printf 'rtx-3060\tabout 200\tUSD\t2026\tsecondary\thttps://example.org\n'; } > "$TMP/dd3/used-prices.tsv"
gw_t 20 --data-dir "$TMP/dd3" cards llama3.1:8b --used
is "$rc" 1 "a broken used-prices.tsv: exit 1"
like "$err" "^gpuwise: table 'used-prices' line 4, column 'price': 'about 200' is not a number" \
	"  ... table, line and column named"
{ grep -v '^#' "$GW_TOP/data/used-prices.tsv" | head -3
  printf 'rtx-9999\t100\tUSD\t2026\tsecondary\thttps://example.org\n'; } > "$TMP/dd3/used-prices.tsv"
gw_t 20 --data-dir "$TMP/dd3" cards llama3.1:8b --used
is "$rc" 1 "a used price for a GPU the tables do not know: exit 1"
like "$err" "line 4, column 'gpu': 'rtx-9999' is not a GPU" "  ... named"

mkdir -p "$TMP/dd4"
{ grep -v '^#' "$GW_TOP/data/xid.tsv" | head -3
  grep -v '^#' "$GW_TOP/data/xid.tsv" | sed -n 4p | sed 's/^[0-9]*/79x/'; } > "$TMP/dd4/xid.tsv"
gw_t 20 --data-dir "$TMP/dd4" explain 'NVRM: Xid (PCI:0000:01:00): 79, pid=1, GPU has fallen off the bus.'
is "$rc" 1 "a broken xid.tsv: exit 1"
like "$err" "^gpuwise: table 'xid' line 4, column 'xid': '79x' is not an integer" "  ... table, line and column named"
{ grep -v '^#' "$GW_TOP/data/xid.tsv" | head -3
  grep -v '^#' "$GW_TOP/data/xid.tsv" | sed -n 4p | awk -F'\t' 'BEGIN{OFS="\t"} {$3="fatal"; print}'; } > "$TMP/dd4/xid.tsv"
gw_t 20 --data-dir "$TMP/dd4" doctor
is "$rc" 1 "an unknown Xid severity: exit 1"
like "$err" "line 4, column 'severity': 'fatal' is not fail, warn or none" "  ... named"

# the doctor's tables: a user's copy is checked column by column
mkdir -p "$TMP/dd5"
for t in cuda-drivers cuda-compat torch-builds cuda-arch; do cp "$GW_TOP/data/$t.tsv" "$TMP/dd5/"; done
gw_t 30 --data-dir "$TMP/dd5" doctor
like "$rc" '^[034]$' "unchanged copies of the doctor's tables are accepted (exit $rc)"
sed -i '0,/^13\.2\t/s/^13\.2\t/13.x\t/' "$TMP/dd5/cuda-drivers.tsv"
gw_t 30 --data-dir "$TMP/dd5" doctor
is "$rc" 1 "a CUDA version that is not one in cuda-drivers.tsv: exit 1"
like "$err" "^gpuwise: table 'cuda-drivers' line [0-9]+, column 'cuda': '13.x' is not a version" "  ... named"

# ---- one shape check for every source ------------------------------------------
mkgguf() { # mkgguf FILE HEADS KV_HEADS EXPERTS: a GGUF v3 header with one tensor
	python3 - "$@" <<'EOF'
import struct, sys
def s(x): b = x.encode(); return struct.pack('<Q', len(b)) + b
def u32(k, v): return s(k) + struct.pack('<II', 4, v)
out, heads, kv, experts = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
kvs = [s('general.architecture') + struct.pack('<I', 8) + s('llama'), u32('llama.block_count', 2),
       u32('llama.embedding_length', 4096), u32('llama.attention.head_count', heads),
       u32('llama.attention.head_count_kv', kv), u32('llama.context_length', 4096)]
if experts:
    kvs += [u32('llama.expert_count', experts), u32('llama.expert_used_count', 2)]
ti = s('blk.0.attn_q.weight') + struct.pack('<IQQIQ', 2, 4, 4, 0, 0)
hdr = b'GGUF' + struct.pack('<IQQ', 3, 1, len(kvs)) + b''.join(kvs) + ti
open(out, 'wb').write(hdr + b'\0' * ((-len(hdr)) % 32) + b'\0' * 64)
EOF
}
mkgguf "$TMP/ok.gguf" 32 8 0
gw_t 20 plan "$TMP/ok.gguf" --vram 24G
is "$rc" 0 "a well-formed GGUF header plans"
mkgguf "$TMP/kv0.gguf" 32 0 0
gw_t 20 plan "$TMP/kv0.gguf" --vram 24G
is "$rc" 1 "GGUF with 0 KV heads: exit 1"
is "$err" "gpuwise: cannot read '$TMP/kv0.gguf': 32 attention heads cannot be shared by 0 key-value heads" \
	"  ... the words config.json uses"
mkgguf "$TMP/kv5.gguf" 32 5 0
gw_t 20 plan "$TMP/kv5.gguf" --vram 24G
is "$rc" 1 "GGUF with KV heads not dividing the heads: exit 1"
like "$err" "32 attention heads cannot be shared by 5 key-value heads" "  ... named"
mkgguf "$TMP/heads.gguf" 4294967295 8 0
gw_t 20 plan "$TMP/heads.gguf" --vram 24G
is "$rc" 1 "GGUF with 2^32-1 heads: exit 1 (it planned 512 TiB of KV)"
like "$err" "4294967295 attention heads \\(at most 65536\\)" "  ... named"
mkgguf "$TMP/experts.gguf" 32 8 4294967295
gw_t 20 plan "$TMP/experts.gguf" --vram 24G
is "$rc" 1 "GGUF with 2^32-1 experts: exit 1"
like "$err" "4294967295 experts \\(at most 65536\\)" "  ... named"

gw_t 20 plan --layers 32 --hidden 4096 --heads 32 --kv-heads 5 --vram 24G
is "$rc" 2 "explicit numbers with KV heads not dividing the heads: usage error"
like "$err" "32 attention heads cannot be shared by 5 key-value heads" "  ... the same words"
gw_t 20 plan "$TMP/ok.gguf" --kv-heads 12 --vram 24G
is "$rc" 1 "a file's shape overridden into an impossible one: refused"

mkdir -p "$TMP/big"
cat > "$TMP/big/config.json" <<'EOF'
{"model_type": "qwen3_moe", "hidden_size": 2048, "num_attention_heads": 32, "num_key_value_heads": 4,
 "num_hidden_layers": 4, "intermediate_size": 6144, "vocab_size": 1000, "num_experts": 4294967295,
 "num_experts_per_tok": 8, "moe_intermediate_size": 768}
EOF
gw_t 20 plan "$TMP/big/config.json" --vram 24G
is "$rc" 1 "config.json with 2^32-1 experts: exit 1"

# ---- a UTF-8 byte-order mark -----------------------------------------------------
mkdir -p "$TMP/bom"
printf '\357\273\277' > "$TMP/bom/config.json"
cat >> "$TMP/bom/config.json" <<'EOF'
{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
 "num_hidden_layers": 32, "intermediate_size": 14336, "vocab_size": 128256}
EOF
gw_t 20 plan "$TMP/bom/config.json" --vram 24G --json
is "$rc" 0 "config.json with a byte-order mark plans"
is "$(printf '%s' "$out" | jget 'd["total_layers"]')" 33 "  ... with its 32 blocks + output layer"

# ---- the safetensors header in bounded time and memory ------------------------------
# A 50 MB header of 490,000 tensors (the format allows 100 MB).  The release
# binary reads it under a 400 MB address-space limit and 20 s: the header is
# read once, with no JSON tree (a general parser took 30 s and 1.2 GB for 99 MB).
rel=$GW_TOP/gpuwise
if [ -x "$rel" ]; then
	python3 - "$TMP/huge.safetensors" 50000000 <<'EOF'
import struct, sys
out, target = sys.argv[1], int(sys.argv[2])
parts, n, off, i = [], 0, 0, 0
while n < target - 200:
    e = '"model.layers.%d.mlp.up_proj.weight":{"dtype":"BF16","shape":[1],"data_offsets":[%d,%d]}' % (i, off, off + 2)
    parts.append(e); n += len(e) + 1; off += 2; i += 1
h = ('{' + ','.join(parts) + '}').encode()
with open(out, 'wb') as f:
    f.write(struct.pack('<Q', len(h)) + h)
    f.truncate(8 + len(h) + off)
EOF
	out=$( (ulimit -v 400000; timeout 20 "$rel" plan "$TMP/huge.safetensors" --layers 4 --hidden 4096 --heads 32 \
		--ffn 11008 --vocab 32000 --vram 8G --json) 2>"$TMP/huge.err"); rc=$?
	like "$rc" '^[034]$' "a 50 MB safetensors header is read within 400 MB and 20 s (exit $rc)"
	[ "$rc" = 0 ] || [ "$rc" = 3 ] || [ "$rc" = 4 ] || diag "$(cat "$TMP/huge.err")"
	rm -f "$TMP/huge.safetensors"
else
	skip "no release binary at $rel (make gpuwise)"
fi

done_testing
