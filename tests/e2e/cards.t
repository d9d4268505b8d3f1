#!/bin/sh
# gpuwise cards: ranking, caveats, JSON, bad input.
. "$(dirname "$0")/lib.sh"

run_gw cards --help
is "$rc" 0 "cards --help exits 0"
like "$out" "--budget" "help lists --budget"
like "$out" "Exit status" "help lists exit codes"

run_gw cards llama-3.1-8b --quant q4_k_m --budget 1000 --used
is "$rc" 0 "cards within 1000 USD used exits 0"
like "$out" "Caveats" "caveats shown"
like "$out" "per 1000 USD" "speed per dollar column"

run_gw cards llama-3.1-8b --quant q4_k_m --budget 1000 --used --json
is "$rc" 0 "json exits 0"
printf '%s' "$out" > "$TMP/cards.json"
python3 - "$TMP/cards.json" <<'PY' >"$TMP/check" 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["rows"]
assert rows, "no rows"
per = [r["speed_per_1000_usd"] for r in rows if not r["price_estimated"]]
est = [i for i, r in enumerate(rows) if r["price_estimated"]]
assert not est or min(est) == len(per), "estimated used prices ranked before priced cards"
assert all(p is not None for p in per), "unknown speed per dollar"
# measured speeds first, then the ones no llama-bench row backs (~), each by speed per dollar
key = [(r["speed_estimated"], -r["speed_per_1000_usd"]) for r in rows if not r["price_estimated"]]
assert key == sorted(key), "not sorted by speed per dollar (measured first)"
assert all(r["price_usd"] <= 1000 for r in rows), "over budget"
assert all(r["need_bytes"] <= r["vram_bytes"] for r in rows), "does not fit"
assert any(r["caveats"] for r in rows), "no caveats at all"
print("ok")
PY
is "$(cat "$TMP/check")" "ok" "rows fit, within budget, sorted by speed per dollar"

run_gw cards llama-3.1-8b --quant q4_k_m --vendor amd --json
is "$(printf '%s' "$out" | jget 'set(r["vendor"] for r in d["rows"])')" "{'AMD'}" "--vendor filters"
like "$(printf '%s' "$out" | jget 'd["rows"][0]["caveats"]')" "ROCm" "AMD rows carry the ROCm caveat"

run_gw cards llama-3.1-70b --quant q4_k_m --max-gpus 4 --json
n=$(printf '%s' "$out" | jget 'max(r["count"] for r in d["rows"])')
ok "$([ "$n" -ge 2 ] && echo 0 || echo 1)" "70B needs sets of several cards"

run_gw cards llama-2-7b --train qlora --micro-batch 1 --checkpointing full --json
is "$rc" 0 "training workload exits 0"
is "$(printf '%s' "$out" | jget 'd["speed_unit"]')" "train_tok_s" "training speed unit"

run_gw cards sdxl --image 1024x1024 --budget 600 --json
is "$rc" 0 "image workload exits 0"
is "$(printf '%s' "$out" | jget 'd["speed_unit"]')" "images_per_min" "image speed unit"

run_gw cards llama-3.1-8b --budget 10
is "$rc" 4 "nothing within 10 USD exits 4"

# bad input
run_gw cards
is "$rc" 2 "no model exits 2"
run_gw cards llama-3.1-8b --budget -5
is "$rc" 2 "negative budget exits 2"
like "$err" "invalid --budget '-5'" "bad budget is named"
run_gw cards llama-3.1-8b --max-gpus 99
is "$rc" 2 "too many GPUs exits 2"
run_gw cards llama-3.1-8b --frobnicate
is "$rc" 2 "unknown option exits 2"
like "$err" "unknown option '--frobnicate'" "unknown option is named"
run_gw cards no-such-model-xyz
is "$rc" 2 "unknown model exits 2"
run_gw cards llama-3.1-8b --ctx 4x
is "$rc" 2 "malformed --ctx exits 2"

done_testing
