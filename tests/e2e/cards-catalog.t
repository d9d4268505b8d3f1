#!/bin/sh
# gpuwise cards and cost re-run over the GPUs issue 19 adds to the catalog:
# a new card with a dated price (RX 9070) enters the rankings where its
# memory, bandwidth and price put it; cards without a price row are never
# ranked at a launch price; cost prices the new card.
. "$(dirname "$0")/lib.sh"

for m in llama3.1:8b qwen2.5:32b llama3.1:70b; do
	run_gw cards "$m" --json
	is "$rc" 0 "cards $m: exit 0"
	printf '%s' "$out" > "$TMP/c.json"
	top=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(",".join(r["gpu"] for r in d["rows"][:3]))' "$TMP/c.json")
	diag "cards $m top three (new prices): $top"
	python3 - "$TMP/c.json" <<'PY' >"$TMP/check" 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
ids = [r["gpu"] for r in d["rows"]]
assert "rx-9070" in ids, "the RX 9070 (dated price) is not ranked"
assert "rx-9070-xt" in ids, "the RX 9070 XT is not ranked"
# the same 16 GB and 640 GB/s as the XT for less: ranked above it, unless its speed is
# unmeasured (no llama-bench row of the RX 9070: "~", ranked after every measured card)
r9, rxt = d["rows"][ids.index("rx-9070")], d["rows"][ids.index("rx-9070-xt")]
if r9["speed_estimated"] == rxt["speed_estimated"]:
    assert ids.index("rx-9070") < ids.index("rx-9070-xt"), "RX 9070 not above the 9070 XT"
else:
    assert r9["speed_estimated"] and ids.index("rx-9070") > ids.index("rx-9070-xt"), "unmeasured RX 9070 above the XT"
    assert r9["speed_per_1000_usd"] > rxt["speed_per_1000_usd"], "RX 9070 not cheaper per token"
r = d["rows"][ids.index("rx-9070")]
assert r["price_usd"] == 550 * r["count"], r["price_usd"]
assert not r["price_estimated"], "RX 9070 price estimated"
key = [(x["speed_estimated"], -x["speed_per_1000_usd"]) for x in d["rows"]]
assert key == sorted(key), "not sorted by speed per dollar (measured first)"
# new rows without a dated new price are not offered new
for gid in ("a30", "a40", "quadro-rtx-8000", "radeon-pro-w7900", "radeon-ai-pro-r9700", "arc-a770",
            "rtx-4090-d", "rtx-pro-6000-max-q", "mi50", "mi210"):
    assert gid not in ids, gid + " ranked without a dated price"
print("ok")
PY
	is "$(cat "$TMP/check")" ok "cards $m: the RX 9070 ranked above the 9070 XT, unpriced new cards left out"
done

# cost on the new card: the dated price, its age flagged.
run_gw cost --gpu rx-9070 --json
is "$rc" 0 "cost --gpu rx-9070: exit 0"
is "$(printf '%s' "$out" | jget 'd["price_usd"]')" 550.0 "cost: purchase 550 USD"
is "$(printf '%s' "$out" | jget 'd["price_age_months"] > 6')" True "cost: the 2025-12 price is flagged old"
run_gw cost --gpu radeon-ai-pro-r9700
is "$rc" 2 "cost --gpu r9700 (no dated price): exit 2"
like "$err" 'price' "says there is no price"

done_testing
