#!/usr/bin/env python3
"""GGUF files for the architectures added by issue 22, written with gguf-py.

Each architecture is a spec: the metadata llama.cpp's loader reads for it
(src/models/ARCH.cpp load_arch_hparams at 0c1e570, the build
llama-cpp-python 0.3.36 bundles) with per-layer widths taken from a real
model of the family where that keeps the sparse file small, and few layers.
The tensors are the ones llama.cpp's loader asks for: `discover` loads the
file with llama.cpp (model only), reads which tensor it misses and which
shape it expects from its error, and adds it, until the model loads; the
list is kept in arch_tensors.json so a test run writes the file at once.
Regenerate with: archs.py --discover [NAME...] (needs llama_cpp and gguf).

Importable (tests/oracle/llamacpp_oracle.py and other tests use
SPECS, write_arch and tensors_for).
"""
import json
import os
import re
import shutil
import sys
import tempfile

import gguf
import numpy as np

F32 = gguf.GGMLQuantizationType.F32
F16 = gguf.GGMLQuantizationType.F16
HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(HERE, "arch_tensors.json")


def _d(**kw):
    base = dict(L=4, E=1024, H=16, KV=4, HD=64, FF=2816, V=32000, ctx=32768, keys={}, eps="rms")
    base.update(kw)
    return base


# name -> spec.  keys: ARCH.<suffix> -> value (int, float, bool, list of int).
SPECS = {
    # ---- hybrids and recurrent mixers ----
    # Falcon-H1-1.5B-Deep-like widths: attention and a Mamba-2 mixer side by side in every layer
    "falcon-h1": _d(arch="falcon-h1", E=1536, H=12, KV=2, HD=128, FF=4096,
                    keys={"ssm.conv_kernel": 4, "ssm.inner_size": 3072, "ssm.state_size": 256,
                          "ssm.time_step_rank": 24, "ssm.group_count": 1},
                    opt=["ssm_conv1d.bias", "ssm_norm.weight"],
                    what="attention + Mamba-2 in every layer"),
    # Nemotron-H-8B widths: Mamba-2, MLP-only and attention layers
    "nemotron_h": _d(arch="nemotron_h", L=6, E=4096, H=32, HD=128, KV=[0, 0, 0, 8, 0, 0],
                     FF=[0, 12288, 0, 0, 0, 12288], eps="both",
                     keys={"ssm.conv_kernel": 4, "ssm.inner_size": 8192, "ssm.state_size": 128,
                           "ssm.time_step_rank": 128, "ssm.group_count": 8},
                     opt=["ssm_conv1d.bias"],
                     what="Mamba-2 / MLP-only / attention layers"),
    # Qwen3-Next-80B-A3B widths (config.json), 8 layers: gated delta-net 3:1
    "qwen3next": _d(arch="qwen3next", L=8, E=2048, H=16, KV=2, HD=256, FF=5120, ctx=262144,
                    experts=16, used=10, ffn_exp=512,
                    keys={"expert_shared_feed_forward_length": 512, "ssm.conv_kernel": 4, "ssm.inner_size": 4096,
                          "ssm.state_size": 128, "ssm.time_step_rank": 32, "ssm.group_count": 16,
                          "full_attention_interval": 4, "rope.dimension_count": 64},
                    opt=["attn_qkv.weight", "attn_gate.weight"],
                    what="gated delta-net 3:1, MoE + shared (80B-A3B widths, 16 experts)"),
    "qwen35": _d(arch="qwen35", L=4, E=2560, H=16, KV=4, HD=256, FF=9216,
                 keys={"ssm.conv_kernel": 4, "ssm.inner_size": 4096, "ssm.state_size": 128,
                       "ssm.time_step_rank": 32, "ssm.group_count": 16, "full_attention_interval": 4,
                       "rope.dimension_sections": [11, 11, 10, 0], "rope.dimension_count": 64},
                 opt=["attn_qkv.weight", "attn_gate.weight"],
                    what="gated delta-net 3:1, dense"),
    "qwen35moe": _d(arch="qwen35moe", L=4, E=2048, H=16, KV=2, HD=256, FF=5120, experts=16, used=8, ffn_exp=512,
                    keys={"expert_shared_feed_forward_length": 512, "ssm.conv_kernel": 4, "ssm.inner_size": 4096,
                          "ssm.state_size": 128, "ssm.time_step_rank": 32, "ssm.group_count": 16,
                          "attention.recurrent_layers": [1, 0, 1, 0],
                          "rope.dimension_sections": [11, 11, 10, 0], "rope.dimension_count": 64},
                    opt=["attn_qkv.weight", "attn_gate.weight"],
                    what="gated delta-net by recurrent_layers, MoE + shared"),
    "lfm2moe": _d(arch="lfm2moe", L=6, E=2048, H=32, KV=[0, 0, 8, 0, 8, 0], HD=64, FF=7168, experts=8, used=4,
                  ffn_exp=1792, keys={"shortconv.l_cache": 3, "leading_dense_block_count": 2,
                                      "expert_gating_func": 2},
                  what="short conv + attention, MoE after 2 dense (LFM2-8B-A1B widths)"),
    # ---- MLA and sparse attention ----
    "deepseek32": _d(arch="deepseek32", L=4, E=2048, H=16, KV=1, HD=576, HV=512, FF=5632, experts=8, used=4,
                     ffn_exp=1024, mla=True,
                     keys={"expert_shared_count": 1, "leading_dense_block_count": 1, "attention.q_lora_rank": 768,
                           "attention.kv_lora_rank": 512, "attention.key_length_mla": 192,
                           "attention.value_length_mla": 128, "rope.dimension_count": 64,
                           "attention.indexer.head_count": 16, "attention.indexer.key_length": 128,
                           "attention.indexer.top_k": 2048, "expert_gating_func": 2, "expert_weights_norm": True},
                     what="MLA + lightning indexer keys (DSA), MoE"),
    "mistral4": _d(arch="mistral4", L=4, E=2048, H=16, KV=1, HD=576, HV=512, FF=5632, experts=8, used=4,
                   ffn_exp=1024, mla=True,
                   keys={"expert_shared_count": 1, "leading_dense_block_count": 1, "attention.q_lora_rank": 768,
                         "attention.kv_lora_rank": 512, "attention.key_length_mla": 192,
                         "attention.value_length_mla": 128, "rope.dimension_count": 64,
                         "expert_gating_func": 1},
                   what="deepseek2's MLA loader under another name"),
    # ---- sliding window, shared KV ----
    "gemma3n": _d(arch="gemma3n", L=22, E=2048, H=8, KV=2, HD=256, FF=1024, tied=True,
                  keys={"attention.sliding_window": 512, "embedding_length_per_layer_input": 256,
                        "altup.active_idx": 0, "altup.num_inputs": 4,
                        "activation_sparsity_scale": [0.0] * 22},
                  what="SWA 4:1, layers from 20 on reuse KV (E2B widths, 22 layers)"),
    "gemma4": _d(arch="gemma4", L=6, E=2560, H=8, KV=2, HD=512, FF=10240, tied=True,
                 keys={"attention.sliding_window": 512, "attention.sliding_window_pattern": [1, 1, 1, 1, 1, 0],
                       "embedding_length_per_layer_input": 256, "attention.key_length_swa": 256,
                       "attention.value_length_swa": 256, "attention.shared_kv_layers": 0},
                 what="SWA 5:1, sliding layers' own head size 256"),
    "exaone4": _d(arch="exaone4", L=4, E=2048, H=32, KV=8, HD=64, FF=4096,
                  keys={"attention.sliding_window": 4096}, what="no SWA below 64 layers"),
    "exaone4-64": _d(arch="exaone4", L=64, E=512, H=8, KV=2, HD=64, FF=1024,
                     keys={"attention.sliding_window": 4096}, what="SWA 3:1 at 64 layers (32B depth)"),
    "cohere2": _d(arch="cohere2", eps="norm", tied=True, keys={"attention.sliding_window": 4096, "logit_scale": 0.25},
                  what="SWA 3:1, parallel block"),
    "cohere2moe": _d(arch="cohere2moe", L=4, E=2048, H=16, KV=4, HD=128, FF=5632, experts=8, used=4, ffn_exp=512,
                     eps="rms", tied=True,
                     keys={"attention.sliding_window": 4096, "logit_scale": 0.25, "leading_dense_block_count": 1,
                           "expert_shared_feed_forward_length": 512, "expert_shared_count": 1},
                     what="SWA, full first; MoE + shared after a dense block"),
    "afmoe": _d(arch="afmoe", L=4, E=2048, H=32, KV=4, HD=64, FF=6144, experts=12, used=8, ffn_exp=512,
                keys={"attention.sliding_window": 1024, "leading_dense_block_count": 1, "expert_shared_count": 1,
                      "expert_gating_func": 2},
                what="SWA 3:1, gated attention; MoE + shared"),
    # ---- FFN variants, MoE with shared experts ----
    "starcoder2": _d(arch="starcoder2", E=3072, H=24, KV=2, HD=128, FF=12288, eps="norm",
                     what="ungated GELU FFN, LayerNorm with bias (3B widths)"),
    "seed_oss": _d(arch="seed_oss", L=2, E=5120, H=80, KV=8, HD=128, FF=6144, what="heads wider than hidden (36B attention widths)"),
    "glm4moe": _d(arch="glm4moe", L=2, E=4096, H=96, KV=8, HD=128, FF=10944, experts=8, used=8, ffn_exp=1408,
                  keys={"expert_shared_count": 1, "leading_dense_block_count": 1, "rope.dimension_count": 64},
                  what="GLM-4.5-Air widths (fewer experts), dense lead, shared"),
    "ernie4_5-moe": _d(arch="ernie4_5-moe", L=4, E=2560, H=20, KV=4, HD=128, FF=12288, experts=8, used=6,
                       ffn_exp=1536, keys={"expert_shared_feed_forward_length": 3072,
                                           "interleave_moe_layer_step": 1, "leading_dense_block_count": 1},
                       opt=["ffn_gate_exps.weight"],
                       what="ERNIE-4.5-21B-A3B widths, dense lead, shared"),
    "hunyuan-moe": _d(arch="hunyuan-moe", L=2, E=4096, H=32, KV=8, HD=128, FF=1536, experts=8, used=4,
                      ffn_exp=1536, keys={"expert_shared_feed_forward_length": 1536},
                      what="Hunyuan-A13B widths (fewer experts), shared expert"),
    "qwen2moe": _d(arch="qwen2moe", L=3, E=2048, H=16, KV=16, HD=128, FF=5632, experts=8, used=4, ffn_exp=1408,
                   keys={"expert_shared_feed_forward_length": 5632}, bias=True,
                   what="Qwen1.5-MoE-A2.7B widths, shared expert"),
    "phimoe": _d(arch="phimoe", L=2, E=4096, H=32, KV=8, HD=128, FF=3200, experts=4, used=2, ffn_exp=3200,
                 what="Phi-3.5-MoE widths"),
    "bailingmoe2": _d(arch="bailingmoe2", L=4, E=2048, H=16, KV=4, HD=128, FF=5120, experts=12, used=8, ffn_exp=512,
                      keys={"leading_dense_block_count": 1, "expert_shared_count": 1,
                            "expert_shared_feed_forward_length": 512, "expert_gating_func": 2},
                      what="Ling-mini-2.0-like, dense lead, shared"),
    "granitemoe": _d(arch="granitemoe", L=4, E=1536, H=24, KV=8, HD=64, FF=512, experts=12, used=8, ffn_exp=512,
                     keys={"logit_scale": 6.0}, what="Granite 3 MoE"),
    "olmoe": _d(arch="olmoe", L=4, E=2048, H=16, KV=16, HD=128, FF=1024, experts=12, used=8, ffn_exp=1024,
                what="OLMoE"),
    # ---- llama-like dense ----
    "mistral3": _d(arch="mistral3", L=2, E=5120, H=32, KV=8, HD=128, FF=8192, what="Mistral Small 3 attention widths"),
    "granite": _d(arch="granite", L=2, E=2048, H=32, KV=8, HD=64, FF=8192, keys={"logit_scale": 8.0}, tied=True,
                  what="Granite 3 dense"),
    "exaone": _d(arch="exaone", L=2, E=4096, H=32, KV=8, HD=128, FF=14336, what="EXAONE 3.5"),
    "ernie4_5": _d(arch="ernie4_5", E=1024, H=16, KV=2, HD=128, FF=3072, tied=True, what="ERNIE-4.5-0.3B"),
    "hunyuan-dense": _d(arch="hunyuan-dense", L=2, E=2048, H=16, KV=8, HD=128, FF=6144, tied=True, what="Hunyuan dense"),
    "smollm3": _d(arch="smollm3", L=2, E=2048, H=16, KV=4, HD=128, FF=11008, tied=True, what="SmolLM3, NoPE every 4th"),
    "glm4": _d(arch="glm4", L=2, E=4096, H=32, KV=2, HD=128, FF=13696, what="GLM-4"),
    "arcee": _d(arch="arcee", L=2, E=2560, H=20, KV=4, HD=128, FF=18432, what="AFM-4.5B, ReLU^2 FFN"),
}


def _add(w, key, v):
    if isinstance(v, bool):
        w.add_bool(key, v)
    elif isinstance(v, int):
        w.add_uint32(key, v)
    elif isinstance(v, float):
        w.add_float32(key, v)
    elif isinstance(v, list):
        if v and isinstance(v[0], float):
            w.add_array(key, [float(x) for x in v])
        else:
            w.add_key_value(key, [int(x) for x in v], gguf.GGUFValueType.ARRAY,
                            sub_type=gguf.GGUFValueType.INT32)
    else:
        raise TypeError(key)


def write_arch(path, s, tensors):
    """Write spec s with tensors [(name, [ne0, ne1, ...])] (zero data, sparse)."""
    arch = s["arch"]
    w = gguf.GGUFWriter(path, arch)
    a = arch + "."
    w.add_name(s.get("name", f"oracle-{arch}"))
    w.add_file_type(1)
    w.add_uint32(a + "block_count", s["L"])
    w.add_uint32(a + "context_length", s["ctx"])
    w.add_uint32(a + "embedding_length", s["E"])
    _add(w, a + "feed_forward_length", s["FF"])
    w.add_uint32(a + "attention.head_count", s["H"])
    _add(w, a + "attention.head_count_kv", s["KV"])
    w.add_uint32(a + "attention.key_length", s["HD"])
    w.add_uint32(a + "attention.value_length", s.get("HV", s["HD"]))
    if s["eps"] in ("rms", "both"):
        w.add_float32(a + "attention.layer_norm_rms_epsilon", 1e-6)
    if s["eps"] in ("norm", "both"):
        w.add_float32(a + "attention.layer_norm_epsilon", 1e-5)
    w.add_float32(a + "rope.freq_base", 10000.0)
    if "experts" in s:
        w.add_uint32(a + "expert_count", s["experts"])
        w.add_uint32(a + "expert_used_count", s["used"])
        w.add_uint32(a + "expert_feed_forward_length", s["ffn_exp"])
    if s.get("mla"):
        pass
    for k, v in s["keys"].items():
        _add(w, a + k, v)
    V = s["V"]
    toks = [b"<unk>", b"<s>", b"</s>"] + [f"t{i}".encode() for i in range(3, V)]
    w.add_tokenizer_model("llama")
    w.add_token_list(toks)
    w.add_token_scores([0.0] * V)
    w.add_token_types([2, 3, 3] + [1] * (V - 3))
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)

    def typ(name, ne):
        if len(ne) == 1 or any(x in name for x in ("norm", "ssm_a", "ssm_d", "conv1d", "shortconv.conv", "gate_inp",
                                                     "exp_probs_b", "ssm_dt")):
            return F32
        return F16

    rows = [(n, ne, typ(n, ne)) for n, ne in tensors]

    def nbytes(ne, t):
        k = 1
        for x in ne:
            k *= x
        return k * (4 if t == F32 else 2)

    for n, ne, t in rows:
        w.add_tensor_info(n, tuple(reversed(ne)), np.dtype(np.float32 if t == F32 else np.float16), nbytes(ne, t),
                          raw_dtype=t)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    w.close()
    align = 32
    size = os.path.getsize(path)
    start = (size + align - 1) // align * align
    total = sum((nbytes(ne, t) + align - 1) // align * align for _, ne, t in rows)
    with open(path, "r+b") as f:
        f.truncate(start + total)


def spec_key(s):
    return json.dumps({k: s[k] for k in sorted(s) if k != "what"}, sort_keys=True)


def tensors_for(name):
    """The cached tensor list of a spec, or None when missing or stale."""
    try:
        with open(CACHE) as f:
            c = json.load(f)
    except OSError:
        return None
    e = c.get(name)
    if not e or e.get("spec") != spec_key(SPECS[name]):
        return None
    return [(n, ne) for n, ne in e["tensors"]]


MISS = re.compile(r"missing tensor '([^']+)'|tensor '([^']+)' not found")
SHAPE = re.compile(r"tensor '([^']+)' has wrong shape; expected ([0-9, ]+), got")


def _load_error(path):
    """Load the model only (no context) with llama.cpp; its error text, '' when
    every tensor was created (the load is cancelled before the data is read)."""
    import llama_cpp
    fd = tempfile.TemporaryFile(mode="w+b")
    saved = os.dup(2)
    os.dup2(fd.fileno(), 2)
    cancel = llama_cpp.llama_progress_callback(lambda progress, user: False)
    try:
        p = llama_cpp.llama_model_default_params()
        p.n_gpu_layers = 0
        p.use_mmap = True
        p.progress_callback = cancel
        mdl = llama_cpp.llama_model_load_from_file(path.encode(), p)
        if mdl:
            llama_cpp.llama_model_free(mdl)
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    fd.seek(0)
    log = fd.read().decode("utf-8", "replace")
    if mdl or "cancelled model load" in log:
        return ""
    m = re.search(r"error loading model: (.*)", log)
    return m.group(1) if m else log[-400:]


SMALL_V = 263  # the vocabulary while discovering (a size no width has), then the real one


def _real_vocab(tensors, V):
    return [(n, [V if x == SMALL_V else x for x in ne]) for n, ne in tensors]


def discover(name, tmp, verbose=False):
    """The tensors llama.cpp asks for, one error at a time (with a small
    vocabulary, which only the embedding and output rows depend on)."""
    s = dict(SPECS[name], V=SMALL_V)
    E, V = s["E"], s["V"]
    tensors = [("token_embd.weight", [E, V])]
    path = os.path.join(tmp, name + ".gguf")
    spec_added = []  # tensors copied from the previous layer on a guess
    no_guess = set()  # layers where that guess was wrong
    for _ in range(4000):
        write_arch(path, s, tensors)
        err = _load_error(path)
        if not err:
            return tensors
        if "wrong number of tensors" in err and spec_added:
            # a guessed layer differs from the one before it: the latest
            # guess is undone and that layer found one tensor at a time
            layer, names = spec_added.pop()
            tensors = [t for t in tensors if t[0] not in names]
            no_guess.add(layer)
            continue
        m = MISS.search(err)
        if m:
            n = m.group(1) or m.group(2)
            lm = re.match(r"blk\.(\d+)\.(.*)", n)
            if lm and int(lm.group(1)) > 0 and lm.group(1) not in no_guess and \
                    not any(t[0].startswith(f"blk.{lm.group(1)}.") for t in tensors):
                # a new layer: guess it is like the previous one
                i = int(lm.group(1))
                prev = [(f"blk.{i}." + t[0][len(f"blk.{i - 1}."):], list(t[1])) for t in tensors
                        if t[0].startswith(f"blk.{i - 1}.")]
                if any(t[0] == n for t in prev):
                    tensors = tensors + prev
                    spec_added.append((lm.group(1), {t[0] for t in prev}))
                    continue
            guess = None
            if lm and int(lm.group(1)) > 0:
                prev = f"blk.{int(lm.group(1)) - 1}.{lm.group(2)}"
                guess = next((ne for nn, ne in tensors if nn == prev), None)
            tensors.append((n, list(guess) if guess else [1]))
            continue
        m = SHAPE.search(err)
        if m:
            n, ne = m.group(1), [int(x) for x in m.group(2).split(",")]
            tensors = [(nn, ne if nn == n else x) for nn, x in tensors]
            continue
        raise RuntimeError(f"{name}: {err}")
    raise RuntimeError(f"{name}: too many tensors")


def discover_opt(name, tmp, tensors):
    """Optional tensors the graph uses anyway (spec opt: per-layer suffixes):
    offered on every layer, kept where llama.cpp asks for them (it says
    which shape it expects), dropped where it does not (wrong count)."""
    s = dict(SPECS[name], V=SMALL_V)
    path = os.path.join(tmp, name + ".gguf")
    for suf in s.get("opt", []):
        for i in range(s["L"]):
            n = f"blk.{i}.{suf}"
            trial = tensors + [(n, [1])]
            for _ in range(3):
                write_arch(path, s, trial)
                err = _load_error(path)
                m = SHAPE.search(err)
                if m and m.group(1) == n:
                    trial = tensors + [(n, [int(x) for x in m.group(2).split(",")])]
                    continue
                break
            if not err:
                tensors = trial
    return tensors


def main(argv):
    names = [a for a in argv if not a.startswith("-")] or list(SPECS)
    try:
        with open(CACHE) as f:
            cache = json.load(f)
    except OSError:
        cache = {}
    tmp = tempfile.mkdtemp(prefix="gw-archs.")
    bad = 0
    for n in names:
        if "--all" not in argv and tensors_for(n) is not None:
            continue
        try:
            t = _real_vocab(discover_opt(n, tmp, discover(n, tmp)), SPECS[n]["V"])
        except RuntimeError as e:
            print(f"{n}: {e}")
            bad += 1
            continue
        print(f"{n}: {len(t)} tensors", flush=True)
        try:  # another discovery may have written meanwhile
            with open(CACHE) as f:
                cache = json.load(f)
        except OSError:
            cache = {}
        cache[n] = {"spec": spec_key(SPECS[n]), "tensors": [[a, b] for a, b in t]}
        with open(CACHE + ".tmp", "w") as f:
            json.dump(cache, f, indent=0, sort_keys=True)
        os.replace(CACHE + ".tmp", CACHE)
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    if "--discover" not in sys.argv:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
