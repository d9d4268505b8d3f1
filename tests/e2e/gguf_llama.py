#!/usr/bin/env python3
"""Write a llama-shaped GGUF v3 file (header and tensor infos; the tensor
data is a sparse zero tail), standard library only.

Usage: gguf_llama.py PATH LAYERS HIDDEN HEADS KV_HEADS FFN VOCAB
Prints the bytes of tensor data it describes, then the token_embd bytes.
Q4_K (type 12) for matrices, F32 for norms, Q6_K (14) for output.weight.
"""
import struct
import sys

path = sys.argv[1]
L, E, H, KV, FF, V = (int(x) for x in sys.argv[2:8])
HD = E // H


def s(x):
    b = x.encode()
    return struct.pack("<Q", len(b)) + b


kvs = [("general.architecture", 8, s("llama")), ("general.file_type", 4, struct.pack("<I", 15)),
       ("llama.block_count", 4, struct.pack("<I", L)), ("llama.embedding_length", 4, struct.pack("<I", E)),
       ("llama.feed_forward_length", 4, struct.pack("<I", FF)),
       ("llama.attention.head_count", 4, struct.pack("<I", H)),
       ("llama.attention.head_count_kv", 4, struct.pack("<I", KV)),
       ("llama.context_length", 4, struct.pack("<I", 8192))]
tensors = [("token_embd.weight", [E, V], 12)]
for i in range(L):
    p = f"blk.{i}."
    tensors += [(p + "attn_norm.weight", [E], 0), (p + "attn_q.weight", [E, E], 12),
                (p + "attn_k.weight", [E, KV * HD], 12), (p + "attn_v.weight", [E, KV * HD], 12),
                (p + "attn_output.weight", [E, E], 12), (p + "ffn_norm.weight", [E], 0),
                (p + "ffn_gate.weight", [E, FF], 12), (p + "ffn_up.weight", [E, FF], 12),
                (p + "ffn_down.weight", [FF, E], 12)]
tensors += [("output_norm.weight", [E], 0), ("output.weight", [E, V], 14)]


def nbytes(dims, t):
    n = 1
    for d in dims:
        n *= d
    return {0: n * 4, 12: n // 256 * 144, 14: n // 256 * 210}[t]


out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)))
for k, t, v in kvs:
    out += s(k) + struct.pack("<I", t) + v
off = 0
total = 0
for name, dims, t in tensors:
    out += s(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
    out += struct.pack("<IQ", t, off)
    off += (nbytes(dims, t) + 31) // 32 * 32
    total += nbytes(dims, t)
start = (len(out) + 31) // 32 * 32
with open(path, "wb") as f:
    f.write(out)
    f.truncate(start + off)
print(total, nbytes([E, V], 12))
