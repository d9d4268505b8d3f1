#!/usr/bin/env python3
"""PyTorch's own accounting of a fine-tuning step: the oracle of plan --train.

Each scenario builds a real transformers (+ peft) causal LM from a config
(no weights downloaded) under FakeTensorMode on the CPU (every allocation
PyTorch would make, no arithmetic), runs two optimizer steps of the loop
the HF Trainer runs (autocast for mixed precision, loss.backward(),
optimizer.step(), zero_grad(set_to_none=True)), and records with
torch.distributed._tools.mem_tracker.MemTracker the peak of the tensors
alive and its categories (Parameter, Buffer, Gradient, Activation, Temp,
Optstate), and the peak of each phase: forward, loss backward (lm_head,
final norm and the loss, until the last decoder layer's backward starts),
layer backward, optimizer step.

  train_oracle.py --write TABLE [--configs DIR]   the whole grid -> TABLE
  train_oracle.py --check TABLE ID...             re-run those rows, compare
  train_oracle.py --list                          the grid

Which rows are held out (never looked at while fitting src/plan/train.c)
was fixed before the first fit: every Qwen2 row and every row with
gradient accumulation (accum > 1).  The split column says so.

Versions the table was written with are in its header line.
"""
import argparse
import copy
import json
import os
import sys
import warnings

warnings.filterwarnings("ignore")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402
from torch.distributed._tools.mem_tracker import MemTracker, _MemRefType  # noqa: E402

import transformers  # noqa: E402
import peft  # noqa: E402
from transformers import AutoModelForCausalLM, LlamaConfig, MixtralConfig, Qwen2Config  # noqa: E402

VOCAB = 16384

# Small models of each family, shaped like the real ones (GQA, SwiGLU,
# untied lm_head; Qwen2's q/k/v bias; Mixtral's routed experts).
ARCHS = {
    "llama": lambda: LlamaConfig(hidden_size=512, intermediate_size=1408, num_hidden_layers=4,
                                 num_attention_heads=8, num_key_value_heads=4, vocab_size=VOCAB,
                                 max_position_embeddings=4096, tie_word_embeddings=False),
    "qwen2": lambda: Qwen2Config(hidden_size=448, intermediate_size=1216, num_hidden_layers=5,
                                 num_attention_heads=7, num_key_value_heads=1, vocab_size=VOCAB,
                                 max_position_embeddings=4096, tie_word_embeddings=False),
    "mixtral": lambda: MixtralConfig(hidden_size=384, intermediate_size=768, num_hidden_layers=3,
                                     num_attention_heads=6, num_key_value_heads=2, vocab_size=VOCAB,
                                     num_local_experts=4, num_experts_per_tok=2,
                                     max_position_embeddings=4096, tie_word_embeddings=False),
}

COLS = ["id", "split", "arch", "method", "precision", "optimizer", "ckpt", "attn", "loss", "targets", "rank",
        "seq", "mb", "accum", "in_bwd", "trainable", "peak_bytes", "peak_phase", "param", "grad", "opt", "act",
        "temp", "fwd_peak", "loss_bwd_peak", "layer_bwd_peak", "opt_peak"]

BASE = dict(method="full", precision="fp32", optimizer="adamw", ckpt="none", attn="sdpa", loss="full",
            targets="-", rank=0, seq=512, mb=2, accum=1, in_bwd=0)


def grid():
    """The scenarios: each plan --train option varied around a few bases,
    on each architecture."""
    rows = []

    def add(arch, **kw):
        r = dict(BASE)
        r.update(kw)
        r["arch"] = arch
        if r["method"] == "full":
            r["targets"], r["rank"] = "-", 0
        rows.append(r)

    for arch in ARCHS:
        # full fine-tuning: precision x optimizer x checkpointing x attention
        add(arch)
        add(arch, precision="mixed-bf16")
        add(arch, precision="bf16")
        add(arch, optimizer="adamw-fused")
        add(arch, precision="mixed-bf16", optimizer="adamw-fused", ckpt="full")
        add(arch, ckpt="full")
        add(arch, attn="eager")
        add(arch, attn="eager", precision="mixed-bf16", seq=1024, mb=1)
        add(arch, optimizer="sgd")
        add(arch, optimizer="adafactor")
        add(arch, precision="bf16", in_bwd=1, ckpt="full")
        add(arch, loss="chunked", precision="bf16")
        add(arch, seq=256, mb=4)
        add(arch, accum=2)
        add(arch, precision="mixed-bf16", accum=2, ckpt="full")
        # LoRA: PEFT's defaults and the other targets, ranks, kernels
        add(arch, method="lora", precision="mixed-bf16", targets="qv", rank=8)
        add(arch, method="lora", precision="mixed-bf16", targets="attn", rank=16)
        add(arch, method="lora", precision="mixed-bf16", targets="all-linear", rank=16)
        add(arch, method="lora", precision="mixed-bf16", targets="qv", rank=8, ckpt="full")
        add(arch, method="lora", precision="mixed-bf16", targets="all-linear", rank=8, attn="eager")
        add(arch, method="lora", precision="fp32", targets="qv", rank=8)
        add(arch, method="lora", precision="bf16", targets="all-linear", rank=8, loss="chunked", ckpt="full")
        add(arch, method="lora", precision="mixed-fp16", targets="qv", rank=8, seq=1024, mb=1)
        add(arch, method="lora", precision="mixed-bf16", targets="qv", rank=8, accum=4)
    for i, r in enumerate(rows):
        r["id"] = "%s-%02d" % (r["arch"], i % 24 + 1)
    # bitsandbytes' 8-bit AdamW: its step reads its block maxima back
    # (data-dependent), which FakeTensorMode cannot run, so these rows run
    # for real on the CPU (bitsandbytes' CPU kernels), same tracker
    extra = []
    for arch, kw in (("llama", dict(optimizer="adamw-8bit")),
                     ("llama", dict(optimizer="adamw-8bit", method="lora", precision="fp32", targets="all-linear",
                                    rank=16, seq=256)),
                     ("qwen2", dict(optimizer="adamw-8bit", precision="bf16", seq=256))):
        r = dict(BASE)
        r.update(kw)
        r["arch"] = arch
        if r["method"] == "full":
            r["targets"], r["rank"] = "-", 0
        r["id"] = "%s-%02d" % (arch, 25 + sum(1 for x in extra if x["arch"] == arch))
        extra.append(r)
    rows += extra
    for r in rows:
        # fixed before the first fit (see the docstring)
        r["split"] = "holdout" if r["arch"] == "qwen2" or r["accum"] > 1 else "fit"
    return rows


class Tracker(MemTracker):
    """MemTracker that also takes frozen parameters (LoRA's base): its own
    gradient hooks cannot go on a tensor that does not require grad, so
    they go on the trainable ones only."""

    def _track_module_params_and_buffers(self, module, install_grad_hooks=True):
        res = super()._track_module_params_and_buffers(module, install_grad_hooks=False)
        if install_grad_hooks:
            for p in module.parameters():
                if p.requires_grad and self._param_to_grad_hook_handles.get(p, None) is None:
                    def grad_hook(g):
                        self._update_and_maybe_create_winfos(g, _MemRefType.GRAD)

                    self._param_to_grad_hook_handles[p] = (
                        p.register_hook(grad_hook),
                        p.register_post_accumulate_grad_hook(lambda q: grad_hook(q.grad)))
        return res


class Phases:
    """Per-phase peaks over MemTracker's running snapshot (the tracker
    keeps one global peak; it is reset at each phase boundary)."""

    def __init__(self, mt):
        self.mt, self.name, self.peaks = mt, None, {}

    def enter(self, name):
        mt = self.mt
        if self.name is not None:
            snap = mt.get_tracker_snapshot("peak").get(torch.device("cpu"), {})
            tot = snap.get("Total", 0)
            if tot > self.peaks.get(self.name, ({}, -1))[1]:
                self.peaks[self.name] = (snap, tot)
        self.name = name
        cur = mt.get_tracker_snapshot("current")
        mt._peak_mem_snap = cur
        mt._peak_mem = {d: s["Total"] for d, s in cur.items()}


def build(r):
    cfg = ARCHS[r["arch"]]()
    cfg._attn_implementation = r["attn"]
    lora = r["method"] == "lora"
    # what people load: fp32 for fp32 and mixed full fine-tuning, a bf16
    # (fp16) base for LoRA under mixed precision, bf16 for pure bf16
    dt = torch.float32
    if r["precision"] == "bf16" or (lora and r["precision"] == "mixed-bf16"):
        dt = torch.bfloat16
    if lora and r["precision"] == "mixed-fp16":
        dt = torch.float16
    # peft moves each adapter to its base layer's dtype and back
    # (Module.to), which FakeTensorMode cannot do in place: the base is
    # built in fp32, wrapped, then cast parameter by parameter
    model = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32 if lora else dt)
    if lora:
        # everything is on the one (fake) CPU device already, and the
        # adapters are fp32 as peft leaves them (autocast_adapter_dtype)
        # (peft's Module.to calls would have to swap fake tensors, which
        # FakeTensorMode refuses: they are no-ops here while peft wraps)
        # "qv" is PEFT's default for all three (TRANSFORMERS_MODELS_TO_LORA_
        # TARGET_MODULES_MAPPING: llama, qwen2, mixtral -> q_proj, v_proj),
        # given by name: peft 0.21 does not apply it to Mixtral's fused experts
        tm = {"qv": ["q_proj", "v_proj"], "attn": ["q_proj", "k_proj", "v_proj", "o_proj"], "all-linear": "all-linear"}[r["targets"]]
        lc = peft.LoraConfig(r=r["rank"], lora_alpha=2 * r["rank"], target_modules=tm, lora_dropout=0.0,
                             task_type="CAUSAL_LM")
        orig_to = torch.nn.Module.to
        torch.nn.Module.to = lambda self, *a, **k: self
        try:
            model = peft.get_peft_model(model, lc)
        finally:
            torch.nn.Module.to = orig_to
        # the base as loaded (dt); the adapters stay fp32 as peft keeps
        # them (autocast_adapter_dtype=True, its default)
        for n, p in model.named_parameters():
            if "lora_" not in n and p.dtype != dt:
                p.data = p.data.to(dt)
    if r["ckpt"] == "full":
        model.gradient_checkpointing_enable()
    model.train()
    return cfg, model


def make_optimizer(r, params):
    o = r["optimizer"]
    if o == "adamw":
        return torch.optim.AdamW(params, lr=1e-4, foreach=True)
    if o == "adamw-fused":
        return torch.optim.AdamW(params, lr=1e-4, fused=True)
    if o == "sgd":
        return torch.optim.SGD(params, lr=1e-3, momentum=0.9, foreach=True)
    if o == "adamw-8bit":
        import bitsandbytes as bnb
        return bnb.optim.AdamW8bit(params, lr=1e-4)
    if o == "adafactor":
        # the HF Trainer's optim="adafactor"
        return transformers.optimization.Adafactor(params, lr=1e-4, scale_parameter=False, relative_step=False)
    raise ValueError(o)


def run(r):
    with (_null() if r["optimizer"] == "adamw-8bit" else FakeTensorMode()):
        cfg, model = build(r)
        params = [p for p in model.parameters() if p.requires_grad]
        trainable = sum(p.numel() for p in params)
        opts = []
        if r["in_bwd"]:
            # torchtune's optimizer_in_bwd: one optimizer per parameter,
            # stepped as soon as its gradient is accumulated
            per = {p: make_optimizer(r, [p]) for p in params}

            def hook(p):
                per[p].step()
                per[p].zero_grad(set_to_none=True)

            for p in params:
                p.register_post_accumulate_grad_hook(hook)
            opts = list(per.values())
            opt = None
        else:
            opt = make_optimizer(r, params)
            opts = [opt]
        b, s = r["mb"], r["seq"]
        ids = torch.randint(0, cfg.vocab_size, (b, s))
        mt = Tracker()
        mt.track_external(model, *opts)
        ph = Phases(mt)
        amp = None
        if r["precision"] in ("mixed-bf16", "mixed-fp16"):
            amp = torch.bfloat16 if r["precision"] == "mixed-bf16" else torch.float16
        core = model.get_base_model() if hasattr(model, "get_base_model") else model

        # the loss backward ends where the gradient reaches the last
        # decoder layer's output (the final norm's input)
        def norm_pre(mod, args):
            x = args[0]
            if x.requires_grad:
                x.register_hook(lambda g: ph.enter("layer-backward"))

        core.model.norm.register_forward_pre_hook(norm_pre)
        with mt:
            for step in range(2):
                for micro in range(r["accum"]):
                    mt.reset_mod_stats()
                    ph.enter("forward")
                    ctx = torch.autocast("cpu", dtype=amp) if amp else _null()
                    with ctx:
                        if r["loss"] == "chunked":
                            # torchtune: the output projection per chunk of
                            # the sequence, CEWithChunkedOutputLoss (8 chunks)
                            h = core.model(input_ids=ids).last_hidden_state
                            # (F.linear: MemTracker takes one call per
                            # module and iteration)
                            chunks = [F.linear(c, core.lm_head.weight) for c in h.chunk(8, dim=1)]
                            del h
                            lab = torch.nn.functional.pad(ids, (0, 1), value=-100)[:, 1:]
                            loss = 0
                            for c, l in zip(chunks, lab.chunk(8, dim=1)):
                                loss = loss + F.cross_entropy(c.float().reshape(-1, c.shape[-1]), l.reshape(-1),
                                                              reduction="sum", ignore_index=-100)
                            del chunks
                            loss = loss / (b * s)
                        else:
                            loss = model(input_ids=ids, labels=ids).loss
                    ph.enter("loss-backward")
                    (loss / r["accum"]).backward()
                    del loss
                ph.enter("optimizer")
                if opt is not None:
                    opt.step()
                    opt.zero_grad(set_to_none=True)
            ph.enter(None)
    best = max(ph.peaks.items(), key=lambda kv: kv[1][1])
    phase, (snap, tot) = best
    cat = {str(k.value if hasattr(k, "value") else k): v for k, v in snap.items()}
    out = dict(r)
    out.update(trainable=trainable, peak_bytes=tot, peak_phase=phase,
               param=cat.get("Parameter", 0) + cat.get("Buffer", 0), grad=cat.get("Gradient", 0),
               opt=cat.get("Optstate", 0), act=cat.get("Activation", 0) + cat.get("Other", 0),
               temp=cat.get("Temp", 0))
    out["phases"] = {k: {str(c.value if hasattr(c, "value") else c): v for c, v in sn.items()}
                     for k, (sn, _) in ph.peaks.items()}
    for k, col in (("forward", "fwd_peak"), ("loss-backward", "loss_bwd_peak"),
                   ("layer-backward", "layer_bwd_peak"), ("optimizer", "opt_peak")):
        out[col] = ph.peaks.get(k, ({}, 0))[1]
    return out, cfg


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def cuda_run(r):
    """The same step for real on a CUDA GPU (tests/device/check.sh): the
    allocator's peak (torch.cuda.max_memory_allocated) over the two steps,
    and memory_reserved for the caching allocator's slack."""
    torch.manual_seed(0)
    cfg, model = build(r)
    model.to("cuda")
    params = [p for p in model.parameters() if p.requires_grad]
    opt = make_optimizer(r, params)
    amp = {"mixed-bf16": torch.bfloat16, "mixed-fp16": torch.float16}.get(r["precision"])
    ids = torch.randint(0, cfg.vocab_size, (r["mb"], r["seq"]), device="cuda")
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    for step in range(2):
        for micro in range(r["accum"]):
            ctx = torch.autocast("cuda", dtype=amp) if amp else _null()
            with ctx:
                loss = model(input_ids=ids, labels=ids).loss
            (loss / r["accum"]).backward()
            del loss
        opt.step()
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    return {"id": r["id"], "max_allocated": torch.cuda.max_memory_allocated(),
            "max_reserved": torch.cuda.max_memory_reserved(),
            "trainable": sum(p.numel() for p in params)}


def row_line(o):
    return "\t".join(str(o[c]) for c in COLS)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--write")
    ap.add_argument("--configs")
    ap.add_argument("--check")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--cuda", action="store_true", help="run ids for real on CUDA, print JSON lines")
    ap.add_argument("ids", nargs="*")
    a = ap.parse_args()
    rows = grid()
    if a.cuda:
        for i in a.ids:
            print(json.dumps(cuda_run(next(x for x in rows if x["id"] == i))), flush=True)
        return 0
    if a.list:
        for r in rows:
            print(r["id"], r["split"], json.dumps({k: r[k] for k in BASE}))
        return 0
    if a.write:
        done = set()
        if os.path.exists(a.write):  # resume: keep the rows written
            with open(a.write) as f:
                done = {line.split("\t")[0] for line in f if not line.startswith("#")}
        with open(a.write, "a" if done else "w") as f:
            if not done:
                f.write("# PyTorch MemTracker under FakeTensorMode (CPU): torch %s, transformers %s, peft %s; "
                    "written by tests/oracle/train_oracle.py --write\n" %
                    (torch.__version__, transformers.__version__, peft.__version__))
                f.write("\t".join(COLS) + "\n")
            seen = set()
            for r in rows:
                if r["id"] in done:
                    continue
                o, cfg = run(r)
                f.write(row_line(o) + "\n")
                f.flush()
                print(row_line(o), file=sys.stderr)
                if a.configs and r["arch"] not in seen:
                    seen.add(r["arch"])
                    d = cfg.to_dict()
                    keep = {k: d[k] for k in ("architectures", "model_type", "hidden_size", "intermediate_size",
                                              "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
                                              "vocab_size", "max_position_embeddings", "tie_word_embeddings",
                                              "num_local_experts", "num_experts_per_tok", "head_dim",
                                              "attention_bias") if k in d and d[k] is not None}
                    keep["architectures"] = [type(AutoModelForCausalLM.from_config(cfg)).__name__] \
                        if "architectures" not in keep else keep["architectures"]
                    with open(os.path.join(a.configs, r["arch"] + ".json"), "w") as cf:
                        json.dump(keep, cf, indent=1, sort_keys=True)
                        cf.write("\n")
        return 0
    if a.check:
        table = {}
        with open(a.check) as f:
            hdr = None
            for line in f:
                if line.startswith("#"):
                    continue
                v = line.rstrip("\n").split("\t")
                if hdr is None:
                    hdr = v
                    continue
                table[v[0]] = dict(zip(hdr, v))
        bad = 0
        for i in a.ids:
            r = next(x for x in rows if x["id"] == i)
            o, _ = run(r)
            t = table[i]
            for c in ("trainable", "peak_bytes", "peak_phase", "param", "grad", "opt", "act", "temp"):
                if str(o[c]) != t[c]:
                    print("%s %s: live %s, table %s" % (i, c, o[c], t[c]))
                    bad += 1
            print("%s live peak %d bytes (%s), table %s" % (i, o["peak_bytes"], o["peak_phase"], t["peak_bytes"]))
        return 1 if bad else 0
    ap.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
