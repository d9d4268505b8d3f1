#!/usr/bin/env python3
"""Write a GGUF file with the independent writer from PyPI (gguf.GGUFWriter)
and print, as JSON, the numbers gpuwise's reader must find in it.

Usage: gguf_py_write.py OUT.gguf ARCH
Exit 3 (with the reason on stdout) when the gguf package is missing.
Expected bytes come from the numpy buffers handed to the writer, never
from gpuwise's own tables.
"""
import json
import sys

try:
    import numpy as np
    import gguf
    from gguf import GGMLQuantizationType as Q
except Exception as e:  # noqa: BLE001 - any import failure means skip
    print(f"python gguf package not importable: {e}")
    sys.exit(3)

out, arch = sys.argv[1], sys.argv[2]
L, H, HEADS, KV, HD, FFN, VOCAB, CTX, SWA = 12, 256, 4, 2, 128, 512, 320, 4096, 64
moe = arch == "qwen3moe"
EXPERTS, USED = 8, 2

w = gguf.GGUFWriter(out, arch)
w.add_name("py-" + arch)
w.add_block_count(L)
w.add_context_length(CTX)
w.add_embedding_length(H)
w.add_feed_forward_length(FFN)
w.add_head_count(HEADS)
w.add_head_count_kv(KV)
w.add_key_length(HD)
w.add_value_length(HD)
w.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_K_M)
w.add_token_list([f"t{i}" for i in range(VOCAB)])
w.add_token_scores([0.0] * VOCAB)
if arch == "gemma3":
    w.add_sliding_window(SWA)
if moe:
    w.add_expert_count(EXPERTS)
    w.add_expert_used_count(USED)
    w.add_expert_feed_forward_length(FFN)

sizes = dict(gguf.GGML_QUANT_SIZES)
exp = {"layer": [0] * L, "expert": [0] * L, "embd": 0, "output": 0, "other": 0,
       "total": 0, "n": 0, "params": 0}


def tensor(name, qtype, shape, layer=None, group="other", expert=False):
    """shape in ggml order (ne0 first); the buffer is built in numpy order."""
    block, tsize = sizes[qtype]
    rows = 1
    for d in shape[1:]:
        rows *= d
    if qtype == Q.F32:
        arr = np.zeros(list(reversed(shape)), dtype=np.float32)
        w.add_tensor(name, arr)
    elif qtype == Q.F16:
        arr = np.zeros(list(reversed(shape)), dtype=np.float16)
        w.add_tensor(name, arr)
    else:
        byte_shape = list(reversed(shape[1:])) + [shape[0] // block * tsize]
        arr = np.zeros(byte_shape, dtype=np.uint8)
        w.add_tensor(name, arr, raw_dtype=qtype)
    n = int(arr.nbytes)
    nel = 1
    for d in shape:
        nel *= d
    exp["total"] += n
    exp["n"] += 1
    exp["params"] += nel
    if layer is not None:
        exp["layer"][layer] += n
        if expert:
            exp["expert"][layer] += n
    else:
        exp[group] += n


tensor("token_embd.weight", Q.Q4_K, [H, VOCAB], group="embd")
for i in range(L):
    tensor(f"blk.{i}.attn_norm.weight", Q.F32, [H], i)
    tensor(f"blk.{i}.attn_q.weight", Q.Q4_K, [H, HEADS * HD], i)
    tensor(f"blk.{i}.attn_k.weight", Q.Q4_K, [H, KV * HD], i)
    tensor(f"blk.{i}.attn_v.weight", Q.Q6_K if i % 3 == 2 else Q.Q4_K, [H, KV * HD], i)
    tensor(f"blk.{i}.attn_output.weight", Q.Q4_K, [HEADS * HD, H], i)
    tensor(f"blk.{i}.attn_q_norm.weight", Q.F32, [HD], i)
    tensor(f"blk.{i}.ffn_norm.weight", Q.F32, [H], i)
    if moe:
        tensor(f"blk.{i}.ffn_gate_inp.weight", Q.F32, [H, EXPERTS], i)
        tensor(f"blk.{i}.ffn_gate_exps.weight", Q.Q4_K, [H, FFN, EXPERTS], i, expert=True)
        tensor(f"blk.{i}.ffn_up_exps.weight", Q.Q4_K, [H, FFN, EXPERTS], i, expert=True)
        tensor(f"blk.{i}.ffn_down_exps.weight", Q.Q8_0, [FFN, H, EXPERTS], i, expert=True)
    else:
        tensor(f"blk.{i}.ffn_gate.weight", Q.Q4_K, [H, FFN], i)
        tensor(f"blk.{i}.ffn_up.weight", Q.Q5_K, [H, FFN], i)
        tensor(f"blk.{i}.ffn_down.weight", Q.Q6_K, [FFN, H], i)
tensor("output_norm.weight", Q.F32, [H], group="output")
tensor("output.weight", Q.Q6_K, [H, VOCAB], group="output")
tensor("rope_freqs.weight", Q.F32, [HD // 2])

w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()

swa = [(i % 6) < 5 for i in range(L)] if arch == "gemma3" else []
print(json.dumps({
    "arch": arch, "name": "py-" + arch, "layers": L, "hidden": H, "heads": HEADS, "kv_heads": KV,
    "head_dim": HD, "ffn": FFN, "vocab": VOCAB, "ctx": CTX, "swa_window": SWA if swa else 0,
    "swa": swa, "experts": EXPERTS if moe else 0, "experts_used": USED if moe else 0,
    "layer_bytes": exp["layer"], "expert_bytes": exp["expert"], "embd_bytes": exp["embd"],
    "output_bytes": exp["output"], "other_bytes": exp["other"], "total_bytes": exp["total"],
    "n_tensors": exp["n"], "params": exp["params"], "gguf_version": gguf.GGUF_VERSION,
}))
