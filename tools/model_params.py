#!/usr/bin/env python3
"""Recompute parameter counts of data/models.tsv rows from their shapes.

Maintenance aid (not used by the build): prints each model's total and
active parameters computed from the architecture next to the table values.
"""
import sys

def params(r):
    a = r["arch"]; L = int(r["layers"]); h = int(r["hidden"]); H = int(r["heads"])
    K = int(r["kv_heads"]); d = int(r["head_dim"]); f = int(r["ffn"]); V = int(r["vocab"])
    E = int(r["experts"]); U = int(r["experts_used"]); ef = int(r["expert_ffn"])
    tied = r["tied_embeddings"] == "1"
    attn = h * H * d + 2 * h * K * d + H * d * h
    norms = 2 * h
    if a == "qwen2":
        attn += H * d + 2 * K * d
    if a in ("qwen3", "qwen3moe"):
        attn += 2 * d
    if a == "gemma2":
        norms = 4 * h
    if a == "gemma3":
        norms = 4 * h; attn += 2 * d
    if a == "gpt-oss":
        attn += H * d + 2 * K * d + h + H
    if a == "olmo2":
        attn += H * d + K * d
    # MoE blocks: every moe_step-th block (Llama 4 Maverick), each with a
    # shared_ffn wide shared expert
    # (DeepSeek-V3: after dense_lead dense blocks; MLA attention is not
    # modelled here, see model_shape_params in src/model/model.c)
    step = int(r.get("moe_step", "0") or 0)
    sh = int(r.get("shared_ffn", "0") or 0)
    lead = int(r.get("dense_lead", "0") or 0)
    n_moe = sum(1 for i in range(L) if E and i >= lead and (step <= 1 or (i + 1) % step == 0))
    dense = 3 * h * f
    if E:
        per_exp = 3 * h * ef
        if a == "gpt-oss":
            per_exp += 2 * ef + h
        router = h * E + (E if a == "gpt-oss" else 0)
        ffn_tot = E * per_exp + router + 3 * h * sh
        ffn_act = U * per_exp + router + 3 * h * sh
    else:
        ffn_tot = ffn_act = dense
    emb = V * h * (1 if tied else 2)
    tot = emb + L * (attn + norms) + n_moe * ffn_tot + (L - n_moe) * dense + h
    act = emb + L * (attn + norms) + n_moe * ffn_act + (L - n_moe) * dense + h
    return tot, act

rows = []
hdr = None
for line in open(sys.argv[1] if len(sys.argv) > 1 else "data/models.tsv"):
    line = line.rstrip("\n")
    if not line or line.startswith("#"):
        continue
    cells = line.split("\t")
    if hdr is None:
        hdr = cells; continue
    r = dict(zip(hdr, cells))
    t, a = params(r)
    print(f"{r['id']:32s} table {float(r['params_total'])/1e9:8.2f} {float(r['params_active'])/1e9:7.2f}"
          f"   computed {t/1e9:8.2f} {a/1e9:7.2f}")
