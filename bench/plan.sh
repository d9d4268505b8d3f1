#!/bin/sh
# Wall time of `gpuwise plan` on a catalog model and on a GGUF whose header
# describes 40 GB of tensors (a sparse file: header only, no data written).
# Targets: under 5 ms and under 20 ms per run.  Prints measured vs target.
set -u
GW=${GW:-./gpuwise}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gw-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
gguf=$tmp/llama-70b-q4_k.gguf

# A GGUF v3 header for a Llama-3-70B shape with Q4_K tensors (stdlib only).
python3 - "$gguf" <<'PY'
import struct, sys
path = sys.argv[1]
L, E, H, KV, FF, V = 80, 8192, 64, 8, 28672, 128256
def s(x):
    b = x.encode(); return struct.pack("<Q", len(b)) + b
kvs = [("general.architecture", 8, s("llama")), ("general.file_type", 4, struct.pack("<I", 15)),
       ("llama.block_count", 4, struct.pack("<I", L)), ("llama.embedding_length", 4, struct.pack("<I", E)),
       ("llama.feed_forward_length", 4, struct.pack("<I", FF)), ("llama.attention.head_count", 4, struct.pack("<I", H)),
       ("llama.attention.head_count_kv", 4, struct.pack("<I", KV)), ("llama.context_length", 4, struct.pack("<I", 8192))]
tensors = [("token_embd.weight", [E, V], 12)]
for i in range(L):
    p = f"blk.{i}."
    tensors += [(p + "attn_norm.weight", [E], 0), (p + "attn_q.weight", [E, E], 12), (p + "attn_k.weight", [E, 1024], 12),
                (p + "attn_v.weight", [E, 1024], 12), (p + "attn_output.weight", [E, E], 12), (p + "ffn_norm.weight", [E], 0),
                (p + "ffn_gate.weight", [E, FF], 12), (p + "ffn_up.weight", [E, FF], 12), (p + "ffn_down.weight", [FF, E], 12)]
tensors += [("output_norm.weight", [E], 0), ("output.weight", [E, V], 12)]
def nbytes(dims, t):
    n = 1
    for d in dims: n *= d
    return n * 4 if t == 0 else n // 256 * 144
out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)))
for k, t, v in kvs:
    out += s(k) + struct.pack("<I", t) + v
off = 0
for name, dims, t in tensors:
    out += s(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
    out += struct.pack("<IQ", t, off)
    off += (nbytes(dims, t) + 31) // 32 * 32
start = (len(out) + 31) // 32 * 32
with open(path, "wb") as f:
    f.write(out)
    f.truncate(start + off)
print(f"# GGUF header {len(out)} bytes describing {off / 1e9:.1f} GB of tensors")
PY

run() { # run LABEL TARGET_MS N ARGS...
	label=$1 target=$2 n=$3
	shift 3
	"$GW" plan "$@" >/dev/null 2>&1
	rc=$?
	if [ "$rc" -gt 4 ] || [ "$rc" -eq 1 ] || [ "$rc" -eq 2 ]; then
		echo "plan $label: gpuwise failed (exit $rc)"
		return 1
	fi
	t0=$(date +%s%N)
	i=0
	while [ "$i" -lt "$n" ]; do
		"$GW" plan "$@" >/dev/null 2>&1
		i=$((i + 1))
	done
	t1=$(date +%s%N)
	awk -v l="$label" -v ns=$((t1 - t0)) -v n="$n" -v t="$target" \
		'BEGIN { ms = ns / n / 1e6; printf "plan %-34s %7.2f ms per run (target < %d ms) %s\n", l, ms, t, (ms < t ? "ok" : "SLOWER") }'
}

run "catalog llama3.1:8b (rtx-4090)" 5 50 llama3.1:8b --gpu rtx-4090
run "catalog llama-3-70b (offload)" 5 50 llama-3-70b --gpu rtx-4090 --ram 64G
run "GGUF header of 40 GB (rtx-4090)" 20 50 "$gguf" --gpu rtx-4090 --ram 64G
run "GGUF header of 40 GB, --json" 20 50 "$gguf" --gpu 2x3090 --json
