#!/usr/bin/env python3
"""llama.cpp as the oracle for its own buffers.

Writes small GGUF files with the `gguf` package (an independent writer;
zero weights in a sparse file), loads each with llama-cpp-python on the CPU
(n_gpu_layers=0) at several contexts, KV cache types and flash attention on
and off, reads llama.cpp's printed model / KV / compute buffer sizes from
its log, and compares them with `gpuwise plan FILE --json`.

How the two are compared: with n_gpu_layers=0 llama.cpp keeps every buffer
in host memory, so its CPU "model buffer" holds all tensors, its CPU "KV
buffer" the whole cache and its CPU "compute buffer" the whole graph.  The
plan is run for one large GPU (--vram 1T) so that everything is on the GPU
side; then model_bytes (all tensors), kv_total_bytes and the GPU
compute_bytes are the same quantities.  The graph reserved on a CPU backend
is the one a GPU would get (same ggml graph and allocator).

Usage: llamacpp_oracle.py GPUWISE_BINARY [--quick] [--shard K/N]
Also quantizes the F16 llama file with llama.cpp's own quantizer
(llama_model_quantize) to each common recipe and compares the tensor bytes it
wrote (read back with gguf-py) with the plan's estimate from the shape.

Prints a table (TSV) and exits 1 if a model or KV figure differs from
llama.cpp's printed one (beyond its two decimals) or a quantization recipe
from llama.cpp's quantizer; the compute figures outside 5% are listed and
counted ("# compute outside 5%: N of M loads"), and so are those equal to
llama.cpp's to its two printed decimals ("# compute equal ...: N of M").  The plan follows the newest llama.cpp profile (0c1e570, the
build llama-cpp-python 0.3.36 bundles) with --flash-attn on/off as loaded.
Exit 77 when llama_cpp or gguf is missing.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import gguf
    import llama_cpp
    HAVE = True
except Exception as _e:  # noqa: BLE001
    HAVE, MISSING = False, _e

# the gpuwise binary: the first argument, or $GW when imported by another test
GW = sys.argv[1] if __name__ == "__main__" and len(sys.argv) > 1 else os.environ.get("GW", "./gpuwise")
QUICK = "--quick" in sys.argv
# GW_ORACLE_ONLY=a,b: only these files (while working on one architecture)
ONLY = [a for a in os.environ.get("GW_ORACLE_ONLY", "").split(",") if a]
# --shard K/N: only the files whose place in the whole list (ARCHS, then
# archs.SPECS) is K-1 modulo N, without the quantization recipes when N > 1;
# --shard recipes[:K/N]: the recipes alone (every N-th from the K-th).  So that several test files share the
# sweep (tests/e2e/oracle*.t); default 1/1, everything
SHARD_K, SHARD_N, RECIPES_ONLY = 1, 1, False
for _i, _a in enumerate(sys.argv):
    if _a == "--shard" and _i + 1 < len(sys.argv):
        _v = sys.argv[_i + 1]
        if _v.startswith("recipes"):
            RECIPES_ONLY = True
            _v = _v[len("recipes:"):] or "1/1"
        SHARD_K, SHARD_N = (int(x) for x in _v.split("/"))
        if not 1 <= SHARD_K <= SHARD_N:
            sys.exit(f"--shard {sys.argv[_i + 1]}: K/N with 1 <= K <= N, or recipes")


def in_shard(i):
    """The file at place i of the whole list belongs to this shard."""
    return i % SHARD_N == SHARD_K - 1

if HAVE:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import archs  # noqa: E402
    F32 = gguf.GGMLQuantizationType.F32
    F16 = gguf.GGMLQuantizationType.F16


def arch_spec(name):
    """Small but realistic shapes (every row divisible by 256)."""
    base = dict(layers=4, hidden=1024, heads=16, kv=4, head_dim=64, ffn=2816, vocab=32000, ctx_train=32768)
    if name == "llama":
        return dict(base, arch="llama", tied=False)
    if name == "qwen2":
        return dict(base, arch="qwen2", tied=False, bias=True)
    if name == "gemma2":
        return dict(base, arch="gemma2", tied=True, head_dim=128, swa=512, swa_period=2)
    if name == "gemma3":
        return dict(base, arch="gemma3", tied=True, head_dim=128, swa=512, swa_period=6, layers=6, qknorm=True)
    if name == "qwen3":
        return dict(base, arch="qwen3", tied=False, head_dim=128, qknorm=True)
    if name == "qwen3moe":  # MoE: 16 experts, 4 used
        return dict(base, arch="qwen3moe", tied=False, head_dim=128, qknorm=True, experts=16, used=4, ffn_exp=768)
    if name == "olmo2":  # OLMo 3: sliding window, every 4th layer full (the last of each period)
        return dict(base, arch="olmo2", tied=False, swa=512, layers=8, olmo=True)
    if name == "smallthinker":  # SWA with the full layer first (dense_first), MoE
        return dict(base, arch="smallthinker", tied=False, swa=512, layers=8, experts=8, used=2, ffn_exp=768)
    if name == "deepseek2":  # MLA (K-only latent cache), MoE with a shared expert, one NextN block
        return dict(base, arch="deepseek2", tied=False, layers=5, heads=16, kv=1, head_dim=576, head_dim_v=512,
                    experts=16, used=4, ffn_exp=512, mla=True, nextn=1)
    if name == "gpt-oss":  # attention sinks, QKV and expert biases, OAI swiglu, SWA 1:1 (window 128)
        return dict(base, arch="gpt-oss", tied=False, swa=128, experts=8, used=4, ffn_exp=768, ffn=768, oai=True)
    if name == "llama4":  # Scout: MoE + shared expert every layer, chunked attention 3:1, NoPE on the full layers
        return dict(base, arch="llama4", tied=False, experts=16, used=1, ffn_exp=768, moe_step=1)
    if name == "llama4-interleaved":  # Maverick-like: 128 experts (no QK norm), MoE every 2nd layer
        return dict(base, arch="llama4", tied=False, experts=128, used=1, ffn_exp=256, moe_step=2)
    if name == "phi3":  # Phi-3 / Phi-4: fused QKV and gate/up; the file's window is ignored by llama.cpp
        return dict(base, arch="phi3", tied=False, swa=2047, fused=True,
                    name="oracle-phi-three")  # a "phi3" name makes llama.cpp look up Phi-3's special tokens
    if name == "mamba2":  # pure Mamba-2: attention-free, no KV heads
        return dict(base, arch="mamba2", tied=False, heads=0, kv=0, ssm=True, ffn=0)
    if name == "mamba":  # Mamba-1: attention-free, recurrent state without groups
        return dict(base, arch="mamba", tied=False, heads=0, kv=0, ssm=True, ssm1=True, ffn=0)
    if name == "granitehybrid-moe":  # Granite 4 MoE hybrid (4.0-H Tiny/Small): routed experts + a shared expert
        return dict(base, arch="granitehybrid", tied=False, layers=4, ssm=True, kv_layers=[0, 4, 0, 0],
                    ffn=512, experts=8, used=2, shexp=1024)
    if name == "granitehybrid":  # Mamba-2 hybrid (Granite 4): layers 1 and 3 attention, the rest recurrent
        return dict(base, arch="granitehybrid", tied=False, layers=6, ssm=True, kv_layers=[0, 4, 0, 4, 0, 0])
    if name == "jamba":  # Jamba: Mamba-1 layers (dt/B/C norms) and an attention layer without RoPE; MoE every other layer
        return dict(base, arch="jamba", tied=False, layers=4, ssm=True, ssm1=True, jamba=True, kv_layers=[0, 4, 0, 0],
                    experts=8, used=2, moe_layers=[1, 3])
    if name == "lfm2":  # LFM2: short-convolution layers (conv state only) and attention layers
        return dict(base, arch="lfm2", tied=True, layers=6, shortconv=3, kv_layers=[0, 0, 4, 0, 4, 0], qknorm=True)
    raise ValueError(name)


def write_gguf(path, s):
    if s["arch"] not in ("llama", "qwen2", "gemma2", "gemma3"):
        return write_gguf2(path, s)
    arch = s["arch"]
    w = gguf.GGUFWriter(path, arch)
    L, E, H, KV, HD, FF, V = s["layers"], s["hidden"], s["heads"], s["kv"], s["head_dim"], s["ffn"], s["vocab"]
    w.add_name(f"oracle-{arch}")
    w.add_file_type(1)  # MOSTLY_F16
    w.add_block_count(L)
    w.add_context_length(s["ctx_train"])
    w.add_embedding_length(E)
    w.add_feed_forward_length(FF)
    w.add_head_count(H)
    w.add_head_count_kv(KV)
    w.add_key_length(HD)
    w.add_value_length(HD)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_freq_base(10000.0)
    if "swa" in s:
        w.add_sliding_window(s["swa"])
    if arch == "gemma2":
        w.add_attn_logit_softcapping(50.0)
        w.add_final_logit_softcapping(30.0)
    # a minimal SentencePiece-style vocabulary
    toks = [b"<unk>", b"<s>", b"</s>"] + [f"t{i}".encode() for i in range(3, V)]
    w.add_tokenizer_model("llama")
    w.add_token_list(toks)
    w.add_token_scores([0.0] * V)
    w.add_token_types([2, 3, 3] + [1] * (V - 3))
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)

    tensors = []  # (name, ne0, ne1 or None, type)

    def t2(name, ne0, ne1, typ=F16):
        tensors.append((name, ne0, ne1, typ))

    def t1(name, ne0):
        tensors.append((name, ne0, None, F32))

    t2("token_embd.weight", E, V)
    for i in range(L):
        p = f"blk.{i}."
        t1(p + "attn_norm.weight", E)
        t2(p + "attn_q.weight", E, H * HD)
        t2(p + "attn_k.weight", E, KV * HD)
        t2(p + "attn_v.weight", E, KV * HD)
        t2(p + "attn_output.weight", H * HD, E)
        if s.get("bias"):
            t1(p + "attn_q.bias", H * HD)
            t1(p + "attn_k.bias", KV * HD)
            t1(p + "attn_v.bias", KV * HD)
        if s.get("qknorm"):
            t1(p + "attn_q_norm.weight", HD)
            t1(p + "attn_k_norm.weight", HD)
        if arch.startswith("gemma"):
            t1(p + "post_attention_norm.weight", E)
            t1(p + "post_ffw_norm.weight", E)
        t1(p + "ffn_norm.weight", E)
        t2(p + "ffn_gate.weight", E, FF)
        t2(p + "ffn_up.weight", E, FF)
        t2(p + "ffn_down.weight", FF, E)
    t1("output_norm.weight", E)
    if not s["tied"]:
        t2("output.weight", E, V)

    for name, ne0, ne1, typ in tensors:
        if ne1 is None:
            shape, nbytes, dt = (ne0,), ne0 * 4, np.float32
        else:
            shape, nbytes, dt = (ne1, ne0), ne0 * ne1 * 2, np.float16
        w.add_tensor_info(name, shape, np.dtype(dt), nbytes, raw_dtype=typ)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    w.close()
    # tensor data: zeros, as a sparse tail
    align = 32
    size = os.path.getsize(path)
    data_start = (size + align - 1) // align * align
    total = 0
    for name, ne0, ne1, typ in tensors:
        nb = ne0 * 4 if ne1 is None else ne0 * ne1 * 2
        total += (nb + align - 1) // align * align
    with open(path, "r+b") as f:
        f.truncate(data_start + total)


def write_gguf2(path, s):
    """Architectures beyond the llama family: the tensors llama.cpp 0c1e570
    creates for each (src/models/ARCH.cpp load_arch_tensors)."""
    arch = s["arch"]
    w = gguf.GGUFWriter(path, arch)
    L, E, H, KV, HD, FF, V = s["layers"], s["hidden"], s["heads"], s["kv"], s["head_dim"], s["ffn"], s["vocab"]
    HV = s.get("head_dim_v", HD)
    nx = s.get("nextn", 0)
    w.add_name(s.get("name", f"oracle-{arch}"))
    w.add_file_type(1)
    w.add_block_count(L + nx)
    w.add_context_length(s["ctx_train"])
    w.add_embedding_length(E)
    w.add_feed_forward_length(FF)
    if "kv_layers" in s:
        w.add_head_count(H)
        w.add_head_count_kv(s["kv_layers"])
    else:
        w.add_head_count(H)
        w.add_head_count_kv(KV)
    if H:
        w.add_key_length(HD)
        w.add_value_length(HV)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_freq_base(10000.0)
    if "swa" in s:
        w.add_sliding_window(s["swa"])
    if "experts" in s:
        w.add_expert_count(s["experts"])
        w.add_expert_used_count(s["used"])
        if "ffn_exp" in s:
            w.add_expert_feed_forward_length(s["ffn_exp"])
        if arch in ("smallthinker", "deepseek2"):
            w.add_expert_gating_func(gguf.ExpertGatingFuncType.SOFTMAX)
        if "moe_step" in s:
            w.add_interleave_moe_layer_step(s["moe_step"])
        if "shexp" in s:
            w.add_expert_shared_feed_forward_length(s["shexp"])
    R = 64  # MLA rope part; kv_lora_rank = HD - R
    if s.get("mla"):
        w.add_kv_lora_rank(HD - R)
        w.add_q_lora_rank(256)
        w.add_key_length_mla(128 + R)
        w.add_value_length_mla(128)
        w.add_rope_dimension_count(R)
        w.add_expert_shared_count(1)
        w.add_leading_dense_block_count(1)
        w.add_uint32(f"{arch}.nextn_predict_layers", nx)
    if s.get("shortconv"):
        w.add_uint32(f"{arch}.shortconv.l_cache", s["shortconv"])
    if s.get("ssm"):
        DI, DS, NG, DC, NH = 2 * E, 64, 1, 4, 32
        w.add_ssm_conv_kernel(DC)
        w.add_ssm_inner_size(DI)
        w.add_ssm_state_size(16 if s.get("ssm1") else DS)
        w.add_ssm_time_step_rank(64 if s.get("ssm1") else NH)
        if not s.get("ssm1"):
            w.add_ssm_group_count(NG)
    toks = [b"<unk>", b"<s>", b"</s>"] + [f"t{i}".encode() for i in range(3, V)]
    w.add_tokenizer_model("llama")
    w.add_token_list(toks)
    w.add_token_scores([0.0] * V)
    w.add_token_types([2, 3, 3] + [1] * (V - 3))
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)

    tensors = []  # (name, ne list, type)

    def t(name, *ne, typ=None):
        tensors.append((name, list(ne), typ if typ is not None else (F32 if len(ne) == 1 else F16)))

    t("token_embd.weight", E, V)
    for i in list(range(L)) + ["out"] + list(range(L, L + nx)):
        if i == "out":
            if s.get("shortconv"):
                t("token_embd_norm.weight", E)  # LFM2's output norm; the output is tied
                continue
            t("output_norm.weight", E)
            t("output.weight", E, V)
            continue
        p = f"blk.{i}."
        if not s.get("olmo"):
            t(p + "attn_norm.weight", E)
        if s.get("ssm1") and ("kv_layers" not in s or s["kv_layers"][i] == 0):
            DI, DS, DC, DT = 2 * E, 16, 4, 64
            if s.get("jamba"):
                t(p + "ssm_dt_norm.weight", DT)
                t(p + "ssm_b_norm.weight", DS)
                t(p + "ssm_c_norm.weight", DS)
            t(p + "ssm_in.weight", E, 2 * DI)
            t(p + "ssm_conv1d.weight", DC, DI, typ=F32)
            t(p + "ssm_conv1d.bias", DI)
            t(p + "ssm_x.weight", DI, DT + 2 * DS)
            t(p + "ssm_dt.weight", DT, DI)
            t(p + "ssm_dt.bias", DI)
            t(p + "ssm_a", DS, DI, typ=F32)
            t(p + "ssm_d", DI)
            t(p + "ssm_out.weight", DI, E)
        elif s.get("shortconv") and s["kv_layers"][i] == 0:
            t(p + "shortconv.conv.weight", s["shortconv"], E, typ=F32)
            t(p + "shortconv.in_proj.weight", E, 3 * E)
            t(p + "shortconv.out_proj.weight", E, E)
        elif s.get("ssm") and ("kv_layers" not in s or s["kv_layers"][i] == 0):
            DI, DS, NG, DC, NH = 2 * E, 64, 1, 4, 32
            t(p + "ssm_in.weight", E, 2 * DI + 2 * NG * DS + NH)
            t(p + "ssm_conv1d.weight", DC, DI + 2 * NG * DS, typ=F32)
            t(p + "ssm_conv1d.bias", DI + 2 * NG * DS)
            t(p + "ssm_dt.bias", NH)
            t(p + "ssm_a", 1, NH, typ=F32)
            t(p + "ssm_d", 1, NH, typ=F32)
            t(p + "ssm_norm.weight", DI // NG, NG, typ=F32)
            t(p + "ssm_out.weight", DI, E)
        elif s.get("fused"):
            t(p + "attn_qkv.weight", E, H * HD + 2 * KV * HD)
            t(p + "attn_output.weight", H * HD, E)
        elif s.get("mla"):
            t(p + "attn_q_a_norm.weight", 256)
            t(p + "attn_kv_a_norm.weight", HD - R)
            t(p + "attn_q_a.weight", E, 256)
            t(p + "attn_q_b.weight", 256, H * (128 + R))
            t(p + "attn_kv_a_mqa.weight", E, HD - R + R)
            t(p + "attn_k_b.weight", 128, HD - R, H)
            t(p + "attn_v_b.weight", HD - R, 128, H)
            t(p + "attn_output.weight", H * 128, E)
        else:
            kvh = s["kv_layers"][i] if "kv_layers" in s else KV
            t(p + "attn_q.weight", E, H * HD)
            t(p + "attn_k.weight", E, kvh * HD)
            t(p + "attn_v.weight", E, kvh * HD)
            t(p + "attn_output.weight", H * HD, E)
            if s.get("qknorm"):
                t(p + "attn_q_norm.weight", HD)
                t(p + "attn_k_norm.weight", HD)
            if s.get("oai"):  # gpt-oss: QKV and output biases, sinks, a post-attention norm
                t(p + "attn_q.bias", H * HD)
                t(p + "attn_k.bias", KV * HD)
                t(p + "attn_v.bias", KV * HD)
                t(p + "attn_output.bias", E)
                t(p + "attn_sinks.weight", H)
                t(p + "post_attention_norm.weight", E)
            if s.get("olmo"):
                t(p + "attn_q_norm.weight", H * HD)
                t(p + "attn_k_norm.weight", KV * HD)
                t(p + "post_attention_norm.weight", E)
        if s.get("olmo"):
            t(p + "post_ffw_norm.weight", E)
        elif s.get("oai"):
            pass
        elif FF or "experts" in s:
            t(p + "ffn_norm.weight", E)
        if s.get("mla") and i == 0:
            t(p + "ffn_gate.weight", E, FF)
            t(p + "ffn_up.weight", E, FF)
            t(p + "ffn_down.weight", FF, E)
        elif s.get("fused"):
            t(p + "ffn_up.weight", E, 2 * FF)
            t(p + "ffn_down.weight", FF, E)
        elif "experts" in s and ("moe_layers" not in s or i in s["moe_layers"]) and \
                ("moe_step" not in s or (i + 1) % s["moe_step"] == 0):
            X, FE = s["experts"], s.get("ffn_exp", FF)
            t(p + "ffn_gate_inp.weight", E, X, typ=F32)
            t(p + "ffn_gate_exps.weight", E, FE, X)
            t(p + "ffn_up_exps.weight", E, FE, X)
            t(p + "ffn_down_exps.weight", FE, E, X)
            if s.get("oai"):
                t(p + "ffn_gate_inp.bias", X)
                t(p + "ffn_gate_exps.bias", FE, X)
                t(p + "ffn_up_exps.bias", FE, X)
                t(p + "ffn_down_exps.bias", E, X)
            if "shexp" in s:  # Granite 4's shared expert
                t(p + "ffn_gate_shexp.weight", E, s["shexp"])
                t(p + "ffn_up_shexp.weight", E, s["shexp"])
                t(p + "ffn_down_shexp.weight", s["shexp"], E)
            if "moe_step" in s:  # llama4's shared expert
                t(p + "ffn_gate_shexp.weight", E, FE)
                t(p + "ffn_up_shexp.weight", E, FE)
                t(p + "ffn_down_shexp.weight", FE, E)
            if s.get("mla"):
                t(p + "exp_probs_b.bias", X)
                t(p + "ffn_gate_shexp.weight", E, FE)
                t(p + "ffn_up_shexp.weight", E, FE)
                t(p + "ffn_down_shexp.weight", FE, E)
        elif FF and (s.get("arch") != "mamba" and s.get("arch") != "mamba2"):
            t(p + "ffn_gate.weight", E, FF)
            t(p + "ffn_up.weight", E, FF)
            t(p + "ffn_down.weight", FF, E)
        if i >= L:  # the NextN block llama.cpp skips
            t(p + "nextn.eh_proj.weight", 2 * E, E)
            t(p + "nextn.enorm.weight", E)
            t(p + "nextn.hnorm.weight", E)
            t(p + "nextn.shared_head_norm.weight", E)

    def nbytes(ne, typ):
        n = 1
        for x in ne:
            n *= x
        return n * (4 if typ == F32 else 2)

    for name, ne, typ in tensors:
        dt = np.float32 if typ == F32 else np.float16
        w.add_tensor_info(name, tuple(reversed(ne)), np.dtype(dt), nbytes(ne, typ), raw_dtype=typ)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    w.close()
    align = 32
    size = os.path.getsize(path)
    data_start = (size + align - 1) // align * align
    total = sum((nbytes(ne, typ) + align - 1) // align * align for _, ne, typ in tensors)
    with open(path, "r+b") as f:
        f.truncate(data_start + total)


BUF_RE = re.compile(r"(\S+) (model|KV|RS|compute|output) buffer size =\s*([0-9.]+) MiB")


def llama_buffers(path, ctx, kv_type, fa, ubatch=512):
    """Load with llama.cpp on the CPU; return MiB by buffer kind from its log."""
    fd_log = tempfile.TemporaryFile(mode="w+b")
    saved = os.dup(2)
    os.dup2(fd_log.fileno(), 2)
    try:
        llm = llama_cpp.Llama(model_path=path, n_gpu_layers=0, n_ctx=ctx, n_batch=ubatch, n_ubatch=ubatch,
                              type_k=kv_type, type_v=kv_type, flash_attn=fa, verbose=True, swa_full=False,
                              use_mmap=True, n_threads=1)
        del llm
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
    fd_log.seek(0)
    log = fd_log.read().decode("utf-8", "replace")
    out = {"model": 0.0, "KV": 0.0, "RS": 0.0, "compute": 0.0, "output": 0.0}
    for m in BUF_RE.finditer(log):
        out[m.group(2)] += float(m.group(3))
    out["KV"] += out["RS"]  # recurrent state: the plan counts it with the KV cache
    cells = re.findall(r"(\d+) cells", log)
    out["cells"] = ",".join(cells)
    return out, log


def plan(path, ctx, kv_name, fa, extra=(), ubatch=512):
    cmd = [GW, "plan", path, "--vram", "1T", "--ctx", str(ctx), "--kv-type", kv_name, "--batch", str(ubatch), "--json"]
    cmd += list(extra)
    cmd += ["--flash-attn", "on" if fa else "off"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in (0, 3, 4):
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr}")
    d = json.loads(p.stdout)
    mib = 1024 * 1024
    built = not any("phase model" in a for a in d.get("assumptions", []))
    return {"model": d["model_bytes"] / mib, "KV": d["kv_total_bytes"] / mib, "compute": d["breakdown"]["compute_bytes"] / mib,
            "built": built}


RECIPES = [("q4_k_m", 15), ("q5_k_m", 17), ("q3_k_m", 12), ("q2_k", 10), ("q4_k_s", 14), ("q6_k", 18),
           ("q8_0", 7), ("q4_0", 2)]


def quantize(src, dst, ftype):
    """llama.cpp's own quantizer (llama_model_quantize) on the F16 file."""
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = ftype
    params.nthread = 2
    fd_log = tempfile.TemporaryFile(mode="w+b")
    saved = os.dup(2)
    os.dup2(fd_log.fileno(), 2)
    try:
        rc = llama_cpp.llama_model_quantize(src.encode(), dst.encode(), params)
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    return rc


def recipes(tmp):
    """Weights estimated from the shape with gpuwise's copy of the quantization
    rules against the file llama.cpp's quantizer writes."""
    bad = 0
    s = dict(arch_spec("llama"), layers=8)
    src = os.path.join(tmp, "llama8.gguf")
    write_gguf(src, s)
    print("recipe\tllama_quantize_wrote_mib\tplan_of_that_file_mib\tplan_estimate_from_f16_mib\testimate_error\ttypes")
    for ri, (name, ftype) in enumerate(RECIPES):
        if RECIPES_ONLY and not in_shard(ri):
            continue
        dst = os.path.join(tmp, f"llama8-{name}.gguf")
        if quantize(src, dst, ftype) != 0:
            print(f"{name}\tllama.cpp quantize failed")
            bad += 1
            continue
        # the tensor data llama.cpp wrote, read back with gguf-py (the loaded
        # CPU buffers would count repacked Q4_0/Q4_K tensors twice)
        rd = gguf.GGUFReader(dst)
        wrote = sum(int(t.n_bytes) for t in rd.tensors) / (1024 * 1024)
        types = sorted({t.tensor_type.name for t in rd.tensors})
        del rd
        est = plan(src, 512, "f16", False, ["--quant", name])
        exact = plan(dst, 512, "f16", False)
        e = est["model"] / wrote - 1
        print("%s\t%.2f\t%.2f\t%.2f\t%+.2f%%\t%s" % (name, wrote, exact["model"], est["model"], 100 * e, ",".join(types)))
        if abs(e) > 0.01 or abs(exact["model"] / wrote - 1) > 0.0001:
            bad += 1
        os.remove(dst)
    return bad


def main():
    if not HAVE:
        print(f"skip: {MISSING}")
        return 77
    tmp = tempfile.mkdtemp(prefix="gw-oracle.")
    try:
        return run(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


ARCHS = ["llama", "qwen2", "gemma2", "gemma3", "qwen3", "qwen3moe", "olmo2", "smallthinker", "deepseek2",
         "mamba", "mamba2", "granitehybrid", "granitehybrid-moe", "lfm2", "jamba", "gpt-oss", "llama4", "llama4-interleaved", "phi3"]
WHAT = {"llama": "dense", "qwen2": "dense, QKV bias", "gemma2": "SWA 1:1", "gemma3": "SWA 5:1",
        "qwen3": "dense, wide heads", "qwen3moe": "MoE", "olmo2": "SWA 3:1 (OLMo 3)",
        "smallthinker": "SWA, full layer first; MoE", "deepseek2": "MLA K-only; MoE; NextN skipped",
        "mamba": "Mamba-1, attention-free", "mamba2": "Mamba-2, attention-free",
        "granitehybrid": "Mamba-2 hybrid (Granite 4)",
        "granitehybrid-moe": "Granite 4.0-H MoE + shared expert", "lfm2": "short-conv hybrid (LFM2)",
        "jamba": "Mamba-1 + attention, MoE (Jamba)",
        "gpt-oss": "SWA 1:1, sinks; MoE, expert bias", "llama4": "chunked 3:1, NoPE; MoE + shared",
        "llama4-interleaved": "chunked 3:1; MoE every 2nd block", "phi3": "fused QKV and gate/up"}


def arch_name(a):
    """The llama.cpp architecture a row's file carries."""
    if a in archs.SPECS:
        return archs.SPECS[a]["arch"]
    return arch_spec(a)["arch"]


# ggml type ids of the KV cache types (ggml/include/ggml.h enum ggml_type)
KV_IDS = {"f16": 1, "q4_0": 2, "q5_1": 7, "q8_0": 8}
# issue 22's settings: q4_0 / q5_1 caches, ubatch 1024 / 4096, 65536 cells
NEW_GRID_QUICK = [(4096, "f16", False, 512), (65536, "q4_0", True, 1024), (16384, "q5_1", True, 4096)]
NEW_GRID = NEW_GRID_QUICK + [(65536, "f16", True, 512), (4096, "q8_0", True, 512), (16384, "f16", False, 1024),
                             (65536, "q5_1", True, 4096)]


def child(path, grid):
    """In a child process (a llama.cpp abort ends only this file's loads):
    one JSON line per setting."""
    for ctx, kv, fa, ub in grid:
        try:
            got, _ = llama_buffers(path, ctx, KV_IDS[kv], fa, ub)
        except Exception as e:  # noqa: BLE001
            got = {"error": str(e)}
        print(json.dumps(got), flush=True)


def llama_grid(path, grid):
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", path, json.dumps(grid)],
                       capture_output=True, text=True)
    out = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    while len(out) < len(grid):
        out.append({"error": f"llama.cpp exited {p.returncode}: {p.stderr[-300:]}"})
    return out


def run_new(tmp, rows):
    """The architectures of tests/oracle/archs.py at issue 22's settings."""
    bad, cbad, names = 0, [], []
    for ai, a in enumerate(archs.SPECS):
        if ONLY and a not in ONLY or not in_shard(len(ARCHS) + ai):
            continue
        # --quick: one setting per file, taken in turn, so that every setting
        # is met on a third of the files (the full run loads them all)
        grid = [NEW_GRID_QUICK[ai % len(NEW_GRID_QUICK)]] if QUICK and not ONLY else NEW_GRID_QUICK if QUICK else NEW_GRID
        t = archs.tensors_for(a)
        if t is None:
            print(f"{a}\tno tensor list (run tests/oracle/archs.py --discover {a})")
            bad += 1
            continue
        names.append(a)
        path = os.path.join(tmp, f"{a}.gguf")
        archs.write_arch(path, archs.SPECS[a], t)
        for (ctx, kv, fa, ub), got in zip(grid, llama_grid(path, grid)):
            if "error" in got:
                print(f"{a}\t{ctx}\t{kv}\t{int(fa)}\tllama.cpp failed: {got['error']}")
                bad += 1
                continue
            exp = plan(path, ctx, kv, fa, ubatch=ub)
            cerr = (exp["compute"] / got["compute"] - 1) if got["compute"] else float("nan")
            row = (a, ctx, kv, int(fa), got["model"], exp["model"], got["KV"], exp["KV"], got["compute"], exp["compute"],
                   cerr, got["cells"], ub, exp["built"])
            rows.append(row)
            print("%s\t%d\t%s\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%+.1f%%\t%s\t%d" % (row[:10] + (cerr * 100, row[11], ub)))
            for k in ("model", "KV"):
                if abs(exp[k] - got[k]) > 0.01 + 0.0005 * got[k]:
                    bad += 1
                    print(f"# OUT: {a} {ctx} {kv} fa={int(fa)} ub={ub} {k} {exp[k]:.2f} vs {got[k]:.2f}")
            if got["compute"] and abs(cerr) > 0.05:
                cbad.append(f"{a} {ctx} {kv} fa={int(fa)} ub={ub} {100 * cerr:+.1f}%")
        os.remove(path)
    return bad, cbad, names


def run(tmp):
    if RECIPES_ONLY:
        bad = recipes(tmp)
        n = len([r for r in range(len(RECIPES)) if in_shard(r)])
        print(f"# recipes: {n - bad} of {n} within tolerance of llama.cpp's quantizer (shard {SHARD_K}/{SHARD_N} of {len(RECIPES)})")
        return 1 if bad else 0
    kvs = [("f16", 1), ("q8_0", 8), ("q4_0", 2)]
    # contexts above the sliding windows (512; SmallThinker's 4096) too
    ctxs = [512, 4096, 16384] if QUICK else [512, 1000, 4096, 16384]
    rows = []
    bad = 0
    cbad = []
    print("arch\tctx\tkv\tfa\tllama_model_mib\tplan_model_mib\tllama_kv_mib\tplan_kv_mib\tllama_compute_mib\tplan_compute_mib\tcompute_err\tcells\tubatch")
    # (arch, ctx, kv, kv id, fa, ubatch): the grid at the default ubatch of
    # 512, and a ubatch of 2048 (llama-server's -ub 2048) at 4096 cells
    grid = []
    for ctx in ctxs:
        for kv_name, kv_id in kvs:
            for fa in (False, True):
                if kv_name != "f16" and not fa:
                    continue  # llama.cpp needs flash attention for a quantized V cache
                if QUICK and kv_name == "q4_0":
                    continue
                if QUICK and ctx == 16384 and (kv_name != "f16" or not fa):
                    continue
                if QUICK and ctx == 512 and (kv_name != "f16" or fa):
                    continue  # --quick: 512 cells once (the sliding windows' size)
                grid.append((ctx, kv_name, kv_id, fa, 512))
    grid += [(4096, "f16", 1, False, 2048)] + ([] if QUICK else [(4096, "f16", 1, True, 2048)])
    for i, a in enumerate(ARCHS):
        if ONLY and a not in ONLY or not in_shard(i):
            continue
        s = arch_spec(a)
        path = os.path.join(tmp, f"{a}.gguf")
        write_gguf(path, s)
        for ctx, kv_name, kv_id, fa, ub in grid:
            try:
                got, log = llama_buffers(path, ctx, kv_id, fa, ub)
            except Exception as e:  # noqa: BLE001
                print(f"{a}\t{ctx}\t{kv_name}\t{int(fa)}\tllama.cpp failed: {e}")
                bad += 1
                continue
            exp = plan(path, ctx, kv_name, fa, ubatch=ub)
            cerr = (exp["compute"] / got["compute"] - 1) if got["compute"] else float("nan")
            row = (a, ctx, kv_name, int(fa), got["model"], exp["model"], got["KV"], exp["KV"], got["compute"], exp["compute"], cerr, got["cells"], ub,
                   exp["built"])
            rows.append(row)
            print("%s\t%d\t%s\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%+.1f%%\t%s\t%d" % (row[:10] + (cerr * 100, row[11], ub)))
            # model and KV (+ recurrent state): equal to llama.cpp's
            # printed figure (two decimals of MiB)
            for k in ("model", "KV"):
                if abs(exp[k] - got[k]) > 0.01 + 0.0005 * got[k]:
                    bad += 1
                    print(f"# OUT: {a} {ctx} {kv_name} fa={int(fa)} ub={ub} {k} {exp[k]:.2f} vs {got[k]:.2f}")
            if got["compute"] and abs(cerr) > 0.05:
                cbad.append(f"{a} {ctx} {kv_name} fa={int(fa)} ub={ub} {100 * cerr:+.1f}%")
    nb, ncb, names = run_new(tmp, rows)
    bad += nb
    cbad += ncb
    # one line per architecture: the worst row of each figure
    print("# per architecture (worst row): model / KV MiB ours vs llama.cpp, compute error range")
    for a in ARCHS + names:
        rs = [r for r in rows if r[0] == a]
        if not rs:
            continue
        dm = max(abs(r[5] - r[4]) for r in rs)
        dk = max(abs(r[7] - r[6]) for r in rs)
        ce = [100 * r[10] for r in rs if r[8]]
        big = max(rs, key=lambda r: r[6])
        print("# %-14s %-32s model %.2f/%.2f (max diff %.2f)  KV@%d %.2f/%.2f (max diff %.2f)  compute %+.1f%%..%+.1f%% over %d loads (%s)"
              % (a, WHAT.get(a) or archs.SPECS[a]["what"], big[5], big[4], dm, big[1], big[7], big[6], dk, min(ce), max(ce), len(rs),
                 "graph" if all(r[13] for r in rs) else "phase model"))
    if not ONLY and SHARD_N == 1:
        bad += recipes(tmp)
    errs = sorted(abs(r[10]) for r in rows if r[8])
    if errs:
        print(f"# compute: median |error| {100 * errs[len(errs) // 2]:.1f}%, max {100 * errs[-1]:.1f}% over {len(errs)} loads")
    print(f"# compute outside 5%: {len(cbad)} of {len(rows)} loads" + (": " + ", ".join(cbad) if cbad else ""))
    # equal: the plan's figure printed as llama.cpp prints it (two decimals),
    # on the graphs lgraph builds; the others are on the phase model
    built = [r for r in rows if r[8] and r[13]]
    neq = [r for r in built if abs(r[9] - r[8]) <= 0.0051]
    ne = [f"{r[0]} {r[1]} {r[2]} fa={r[3]} ub={r[12]} {r[9]:.2f} vs {r[8]:.2f}" for r in built if r not in neq]
    print(f"# compute equal to llama.cpp's printed MiB: {len(neq)} of {len(built)} loads on built graphs" + (" (not: " + ", ".join(ne) + ")" if ne else ""))
    phase = sorted({r[0] for r in rows if not r[13]})
    print(f"# phase model (graph not built): {len(phase)} files: " + ", ".join(phase))
    distinct = len({arch_name(r[0]) for r in rows})
    nfiles = len([a for i, a in enumerate(ARCHS) if (not ONLY or a in ONLY) and in_shard(i)]) + len(names)
    print(f"# {len(rows)} loads of {nfiles} files, {distinct} architectures, {bad} out of tolerance (model, KV, recipes)")
    # the files of every shard (those with a tensor list; one without counts
    # as out of tolerance on its shard) and their architectures
    every = [a for i, a in enumerate(ARCHS) if not ONLY or a in ONLY]
    every += [a for a in archs.SPECS if (not ONLY or a in ONLY) and archs.tensors_for(a) is not None]
    print(f"# shard {SHARD_K}/{SHARD_N}: {nfiles} of {len(every)} files, "
          f"{len({arch_name(a) for a in every})} architectures in all shards")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[1] == "--child":
        child(sys.argv[2], json.loads(sys.argv[3]))
        sys.exit(0)
    sys.exit(main())
