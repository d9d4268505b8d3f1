#!/usr/bin/env python3
"""Write the seed corpus for the fuzzers (tests/fuzz/corpus/*): small valid
GGUF v2/v3 and safetensors files plus a few hostile ones.  Run once; the
files are committed.  Uses only the standard library."""
import json
import os
import struct

here = os.path.dirname(os.path.abspath(__file__))


def gstr(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def kv(key, vtype, payload):
    return gstr(key) + struct.pack("<I", vtype) + payload


U32, I32, F32, BOOL, STR, ARR, U64 = 4, 5, 6, 7, 8, 9, 10


def gguf(version, kvs, tensors, align=32):
    """tensors: (name, dims, type, nbytes)"""
    head = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kvs)) + b"".join(kvs)
    off, infos, data_len = 0, b"", 0
    for name, dims, t, nbytes in tensors:
        infos += gstr(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        infos += struct.pack("<IQ", t, off)
        off += (nbytes + align - 1) // align * align
    body = head + infos
    body += b"\0" * ((-len(body)) % align)
    return body + b"\0" * off


def llama_kvs(arch, layers, extra=()):
    return [kv("general.architecture", STR, gstr(arch)),
            kv("general.name", STR, gstr("seed")),
            kv(f"{arch}.block_count", U32, struct.pack("<I", layers)),
            kv(f"{arch}.embedding_length", U32, struct.pack("<I", 32)),
            kv(f"{arch}.attention.head_count", U32, struct.pack("<I", 4)),
            kv(f"{arch}.attention.head_count_kv", U32, struct.pack("<I", 2)),
            kv(f"{arch}.context_length", U64, struct.pack("<Q", 2048)),
            kv("general.file_type", U32, struct.pack("<I", 7)),
            kv("tokenizer.ggml.tokens", ARR, struct.pack("<IQ", STR, 3) + gstr("a") + gstr("b") + gstr("c"))] + list(extra)


def tensors(layers, experts=0):
    t = [("token_embd.weight", [32, 3], 8, 32 * 3 // 32 * 34)]
    for i in range(layers):
        t.append((f"blk.{i}.attn_q.weight", [32, 32], 8, 32 * 32 // 32 * 34))
        t.append((f"blk.{i}.attn_norm.weight", [32], 0, 128))
        if experts:
            t.append((f"blk.{i}.ffn_up_exps.weight", [32, 8, experts], 1, 32 * 8 * experts * 2))
    t.append(("output_norm.weight", [32], 0, 128))
    t.append(("output.weight", [64, 3], 14 - 6, 64 * 3 // 32 * 34))
    return t


def write(sub, name, data):
    d = os.path.join(here, "corpus", sub)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


write("gguf", "llama-v3.gguf", gguf(3, llama_kvs("llama", 2), tensors(2)))
write("gguf", "llama-v2.gguf", gguf(2, llama_kvs("llama", 1), tensors(1)))
write("gguf", "gemma3-swa.gguf", gguf(3, llama_kvs("gemma3", 2, [
    kv("gemma3.attention.sliding_window", U32, struct.pack("<I", 512)),
    kv("gemma3.attention.sliding_window_pattern", ARR, struct.pack("<IQ", BOOL, 2) + b"\1\0")]), tensors(2)))
write("gguf", "moe-kvarr.gguf", gguf(3, llama_kvs("qwen3moe", 2, [
    kv("qwen3moe.expert_count", U32, struct.pack("<I", 4)),
    kv("qwen3moe.expert_used_count", U32, struct.pack("<I", 2)),
    kv("qwen3moe.attention.head_count_kv", ARR, struct.pack("<IQii", I32, 2, 2, 0)),
    kv("nested", ARR, struct.pack("<IQ", ARR, 1) + struct.pack("<IQ", F32, 1) + struct.pack("<f", 1.0)),
    kv("general.alignment", U32, struct.pack("<I", 64))]), tensors(2, 4), align=64))
write("gguf", "bad-count.gguf", b"GGUF" + struct.pack("<IQQ", 3, 1 << 60, 0))
write("gguf", "v1.gguf", b"GGUF" + struct.pack("<III", 1, 0, 0))
write("gguf", "long-string.gguf", b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 1 << 62))


def st(tensors, meta=True, extra=b""):
    hdr, off = {}, 0
    if meta:
        hdr["__metadata__"] = {"format": "pt"}
    for name, dtype, shape, size in tensors:
        hdr[name] = {"dtype": dtype, "shape": shape, "data_offsets": [off, off + size]}
        off += size
    j = json.dumps(hdr).encode()
    return struct.pack("<Q", len(j)) + j + b"\0" * off + extra


write("safetensors", "small.safetensors", st([
    ("model.embed_tokens.weight", "BF16", [4, 8], 64),
    ("model.layers.0.self_attn.q_proj.weight", "BF16", [8, 8], 128),
    ("model.layers.0.mlp.experts.0.up_proj.weight", "F8_E4M3", [8, 8], 64),
    ("model.layers.1.input_layernorm.weight", "F32", [8], 32),
    ("model.norm.weight", "F32", [8], 32),
    ("lm_head.weight", "F4", [4, 8], 16)]))
write("safetensors", "empty-meta.safetensors", st([], meta=True))
write("safetensors", "config.json", json.dumps({
    "model_type": "gemma3", "text_config": {"hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2,
    "head_dim": 16, "num_hidden_layers": 4, "intermediate_size": 128, "vocab_size": 100, "sliding_window": 32,
    "layer_types": ["sliding_attention", "sliding_attention", "sliding_attention", "full_attention"],
    "num_local_experts": 4, "num_experts_per_tok": 2}}).encode())
write("safetensors", "header-only.json", json.dumps({
    "__metadata__": {"format": "pt"},
    "model.embed_tokens.weight": {"dtype": "BF16", "shape": [4, 8], "data_offsets": [0, 64]},
    "model.layers.0.self_attn.q_proj.weight": {"dtype": "BF16", "shape": [8, 8], "data_offsets": [64, 192]},
    "model.layers.1.mlp.experts.0.up_proj.weight": {"dtype": "F4", "shape": [8, 8], "data_offsets": [192, 224]},
    "lm_head.weight": {"dtype": "F32", "shape": [4, 8], "data_offsets": [224, 352]}}).encode())
write("safetensors", "huge-len.safetensors", struct.pack("<Q", 1 << 40) + b"{}")
