#!/usr/bin/env python3
"""Write the fake Hub's and registry's models for tests/e2e/hub.t: real
headers over sparse data (the weights are holes: the files claim about
11 GB and take a few MiB of disk).

usage: mkmodels.py ROOT

ROOT/hf/acme/Big/                 config.json, model.safetensors.index.json,
                                  model-00001-of-00002.safetensors, -00002-: BF16, 5.5B
ROOT/hf/acme/Big-GGUF/            Big-F16.gguf (F16, 11 GB), Big-Q8_0.gguf, mmproj-Big-F16.gguf
ROOT/hf/{gated,slow,slowok,trunc,loop,norange}/Big-GGUF/   the same GGUF files
ROOT/hf/acme/Liar-GGUF/Liar-F16.gguf  a header whose string claims to run past 64 MiB
ROOT/ollama/library/big/11b.json  a manifest naming the GGUF as its model blob and a params blob
Prints the shape as JSON (hidden, layers, vocab, tensor bytes).
"""
import json
import os
import struct
import sys

HIDDEN, LAYERS, HEADS, KV_HEADS, FFN, VOCAB, CTX = 4096, 24, 32, 8, 14336, 32000, 8192
KV_DIM = HIDDEN // HEADS * KV_HEADS


def tensors(prefix_hf):
    """(name, shape as [rows, cols] in the HF order, is_norm) of the model."""
    out = []
    if prefix_hf:
        out.append(("model.embed_tokens.weight", [VOCAB, HIDDEN], False))
        for i in range(LAYERS):
            p = "model.layers.%d." % i
            out += [(p + "input_layernorm.weight", [HIDDEN], True),
                    (p + "self_attn.q_proj.weight", [HIDDEN, HIDDEN], False),
                    (p + "self_attn.k_proj.weight", [KV_DIM, HIDDEN], False),
                    (p + "self_attn.v_proj.weight", [KV_DIM, HIDDEN], False),
                    (p + "self_attn.o_proj.weight", [HIDDEN, HIDDEN], False),
                    (p + "post_attention_layernorm.weight", [HIDDEN], True),
                    (p + "mlp.gate_proj.weight", [FFN, HIDDEN], False),
                    (p + "mlp.up_proj.weight", [FFN, HIDDEN], False),
                    (p + "mlp.down_proj.weight", [HIDDEN, FFN], False)]
        out += [("model.norm.weight", [HIDDEN], True), ("lm_head.weight", [VOCAB, HIDDEN], False)]
    else:
        out.append(("token_embd.weight", [VOCAB, HIDDEN], False))
        for i in range(LAYERS):
            p = "blk.%d." % i
            out += [(p + "attn_norm.weight", [HIDDEN], True),
                    (p + "attn_q.weight", [HIDDEN, HIDDEN], False),
                    (p + "attn_k.weight", [KV_DIM, HIDDEN], False),
                    (p + "attn_v.weight", [KV_DIM, HIDDEN], False),
                    (p + "attn_output.weight", [HIDDEN, HIDDEN], False),
                    (p + "ffn_norm.weight", [HIDDEN], True),
                    (p + "ffn_gate.weight", [FFN, HIDDEN], False),
                    (p + "ffn_up.weight", [FFN, HIDDEN], False),
                    (p + "ffn_down.weight", [HIDDEN, FFN], False)]
        out += [("output_norm.weight", [HIDDEN], True), ("output.weight", [VOCAB, HIDDEN], False)]
    return out


def nel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def sparse(path, header, size):
    with open(path, "wb") as f:
        f.write(header)
        f.truncate(size)


def write_safetensors(d):
    os.makedirs(d, exist_ok=True)
    ts = tensors(True)
    half = len(ts) // 2
    shards = [ts[:half], ts[half:]]
    weight_map, total = {}, 0
    for k, part in enumerate(shards):
        fname = "model-%05d-of-%05d.safetensors" % (k + 1, len(shards))
        hdr, off = {"__metadata__": {"format": "pt"}}, 0
        for name, shape, _ in part:
            n = nel(shape) * 2
            hdr[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [off, off + n]}
            off += n
            weight_map[name] = fname
        js = json.dumps(hdr).encode()
        js += b" " * ((8 - len(js) % 8) % 8)
        sparse(os.path.join(d, fname), struct.pack("<Q", len(js)) + js, 8 + len(js) + off)
        total += off
    with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f)
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": HIDDEN,
           "num_hidden_layers": LAYERS, "num_attention_heads": HEADS, "num_key_value_heads": KV_HEADS,
           "intermediate_size": FFN, "vocab_size": VOCAB, "max_position_embeddings": CTX,
           "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f)
    with open(os.path.join(d, "README.md"), "w") as f:
        f.write("a fake model for gpuwise's tests\n")
    return total


def gguf_str(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def gguf_kv(key, t, val):
    out = gguf_str(key) + struct.pack("<I", t)
    if t == 4:
        out += struct.pack("<I", val)
    elif t == 6:
        out += struct.pack("<f", val)
    elif t == 8:
        out += gguf_str(val)
    elif t == 9:  # array of strings
        out += struct.pack("<IQ", 8, len(val)) + b"".join(gguf_str(x) for x in val)
    return out


def gguf_header(ftype=1, liar=False):
    kvs = [gguf_kv("general.architecture", 8, "llama"), gguf_kv("general.name", 8, "Big"),
           gguf_kv("general.file_type", 4, ftype), gguf_kv("llama.block_count", 4, LAYERS),
           gguf_kv("llama.context_length", 4, CTX), gguf_kv("llama.embedding_length", 4, HIDDEN),
           gguf_kv("llama.feed_forward_length", 4, FFN), gguf_kv("llama.attention.head_count", 4, HEADS),
           gguf_kv("llama.attention.head_count_kv", 4, KV_HEADS),
           gguf_kv("llama.attention.layer_norm_rms_epsilon", 6, 1e-5),
           gguf_kv("tokenizer.ggml.model", 8, "llama"),
           gguf_kv("tokenizer.ggml.tokens", 9, ["<tok%05d>" % i for i in range(VOCAB)])]
    if liar:
        # a string value whose length runs 100 MiB past the header (the file is 11 GB: it "fits")
        kvs.append(gguf_str("general.description") + struct.pack("<I", 8) + struct.pack("<Q", 100 << 20))
    ts = tensors(False)
    infos, off = b"", 0
    for name, shape, norm in ts:
        ne = list(reversed(shape))  # ggml: ne[0] is the row length
        t = 0 if norm else 1  # F32 norms, F16 weights
        n = nel(shape) * (4 if norm else 2)
        infos += gguf_str(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", x) for x in ne)
        infos += struct.pack("<IQ", t, off)
        off += (n + 31) // 32 * 32
    head = b"GGUF" + struct.pack("<IQQ", 3, len(ts), len(kvs)) + b"".join(kvs) + infos
    head += b"\0" * ((32 - len(head) % 32) % 32)
    return head, len(head) + off


def main():
    root = sys.argv[1]
    st_bytes = write_safetensors(os.path.join(root, "hf", "acme", "Big"))
    head, size = gguf_header()
    for org in ("acme", "gated", "slow", "slowok", "trunc", "loop", "norange"):
        d = os.path.join(root, "hf", org, "Big-GGUF")
        os.makedirs(d, exist_ok=True)
        sparse(os.path.join(d, "Big-F16.gguf"), head, size)
        if org == "acme":
            h8, s8 = gguf_header(ftype=7)
            sparse(os.path.join(d, "Big-Q8_0.gguf"), h8, s8)
            sparse(os.path.join(d, "mmproj-Big-F16.gguf"), head, size)
    liar, lsize = gguf_header(liar=True)
    d = os.path.join(root, "hf", "acme", "Liar-GGUF")
    os.makedirs(d, exist_ok=True)
    sparse(os.path.join(d, "Liar-F16.gguf"), liar, lsize)
    # Ollama: the same GGUF as the model blob of big:11b, num_ctx 16384 in its params blob
    blobs = os.path.join(root, "ollama", "blobs")
    os.makedirs(blobs, exist_ok=True)
    model_digest = "sha256:" + "ab" * 32
    params_digest = "sha256:" + "cd" * 32
    sparse(os.path.join(blobs, model_digest.replace(":", "-")), head, size)
    params = json.dumps({"num_ctx": 16384, "stop": ["<end>"]}).encode()
    with open(os.path.join(blobs, params_digest.replace(":", "-")), "wb") as f:
        f.write(params)
    man = {"schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
           "config": {"mediaType": "application/vnd.docker.container.image.v1+json",
                      "digest": "sha256:" + "ef" * 32, "size": 10},
           "layers": [{"mediaType": "application/vnd.ollama.image.model", "digest": model_digest, "size": size},
                      {"mediaType": "application/vnd.ollama.image.params", "digest": params_digest,
                       "size": len(params)}]}
    d = os.path.join(root, "ollama", "library", "big")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "11b.json"), "w") as f:
        json.dump(man, f)
    print(json.dumps({"safetensors_bytes": st_bytes, "gguf_size": size, "gguf_header": len(head)}))


if __name__ == "__main__":
    main()
