#!/bin/sh
# Buying and sizing advice (issue 13): each bad case of the issue, run the
# way a new user runs it, with the better answer checked.
. "$(dirname "$0")/lib.sh"
DATA=$GW_TOP/data
unset GPUWISE_ROOT GPUWISE_FAKE_SCENARIO GPUWISE_NVML_LIB GPUWISE_CUDA_LIB
# no GPU on the test machine, whatever the host has
nogpu() { export GPUWISE_ROOT="$FIX/roots/nogpu" GPUWISE_NVML_LIB="$TMP/no-libnvidia-ml.so.1" GPUWISE_CUDA_LIB="$TMP/no-libcuda.so.1"; }
median() { # median TABLE GPU [MONTHS]: the median of a price table's USD rows for GPU
	# (MONTHS: only the rows dated in the MONTHS months that end with the newest
	# row's month, as used prices are taken; a bare year counts as its January)
	python3 - "$1" "$2" "${3:-0}" <<'PY'
import sys, statistics
rows = [l.rstrip('\n').split('\t') for l in open(sys.argv[1]) if not l.startswith('#')]
h = rows[0]
cur = h.index('currency') if 'currency' in h else None
mine = [r for r in rows[1:] if r and r[0] == sys.argv[2] and (cur is None or r[cur] == 'USD')]
def month(d):
    return int(d[:4]) * 12 + (int(d[5:7]) - 1 if len(d) >= 7 else 0)
w = int(sys.argv[3])
if w and mine:
    last = max(month(r[h.index('date')]) for r in mine)
    mine = [r for r in mine if last - month(r[h.index('date')]) < w]
v = sorted(float(r[h.index('price')]) for r in mine)
print(statistics.median(v) if v else 'none')
PY
}

# ---- 1. prices a buyer can trust ------------------------------------------
# "cards llama3.1:70b --budget 1000 --used ranks 2x RX 7900 XTX for about
# $699 first": a used estimate is never ranked above a sourced used price
run_gw cards llama3.1:70b --budget 1000 --used --json
is "$rc" 0 "70B within 1000 USD used: something works"
printf '%s' "$out" > "$TMP/used.json"
python3 - "$TMP/used.json" "$DATA/used-prices.tsv" <<'PY' > "$TMP/check" 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["rows"]
priced = {l.split('\t')[0] for l in open(sys.argv[2]) if not l.startswith('#')}
assert not rows[0]["price_estimated"], "an estimate ranked first: %s" % rows[0]["gpu"]
est = [i for i, r in enumerate(rows) if r["price_estimated"]]
real = [i for i, r in enumerate(rows) if not r["price_estimated"]]
assert real and (not est or max(real) < min(est)), "estimates mixed with priced rows"
for r in rows:
    if r["price_estimated"]:
        assert r["gpu"] not in priced, "%s has a used row but was estimated" % r["gpu"]
        assert r["price_date"] is None and r["price_age_months"] is None, "an estimate carries a date"
    else:
        assert r["gpu"] in priced, "%s priced without a used row" % r["gpu"]
        assert r["price_date"] and r["price_source"].startswith("http"), "%s: no dated source" % r["gpu"]
    assert r["price_usd"] <= 1000
print("ok")
PY
is "$(cat "$TMP/check")" "ok" "used: sourced prices first with date and source, estimates last and marked"
run_gw cards llama3.1:70b --budget 1000 --used
like "$out" "~[0-9]+ +estimate" "text marks an estimate with ~ and 'estimate' for its date"
like "$out" "estimate, not a price" "text says what the estimate is"
run_gw cards llama3.1:70b --budget 1000 --used --no-estimates --json
is "$(printf '%s' "$out" | jget 'any(r["price_estimated"] for r in d["rows"])')" False "--no-estimates drops every estimate"
is "$(printf '%s' "$out" | jget 'd["estimates"]')" False "--no-estimates is reported"
# "new prices list discontinued cards at their launch price"
run_gw cards llama3.1:8b --json
ids=$(printf '%s' "$out" | jget '" ".join(r["gpu"] for r in d["rows"])')
for gone in gtx-1060 gtx-1080-ti rtx-2080-ti rtx-3090; do
	unlike " $ids " " $gone " "new prices: $gone (not on sale new) is not offered"
done
is "$(printf '%s' "$out" | jget 'all(r["price_date"] and r["price_rows"] >= 1 for r in d["rows"])')" True "every new price has a date and rows"
g=$(printf '%s' "$out" | jget 'd["rows"][0]["gpu"]'); p=$(printf '%s' "$out" | jget 'd["rows"][0]["price_usd"]')
is "$p" "$(median "$DATA/new-prices.tsv" "$g")" "the price shown is the median of the card's new-price rows"
# staleness: prices older than six months are flagged, fresh ones are not
mkdir -p "$TMP/old" "$TMP/fresh"
now=$(date -u +%Y-%m)
printf 'gpu\tusd\tdate\tkind\tsource\nrtx-4090\t1800\t2019-01\tretail\thttps://example.test/old\n' > "$TMP/old/new-prices.tsv"
printf 'gpu\tusd\tdate\tkind\tsource\nrtx-4090\t1800\t%s\tretail\thttps://example.test/new\n' "$now" > "$TMP/fresh/new-prices.tsv"
run_gw --data-dir "$TMP/old" cards llama3.1:8b
like "$out" "warning: 1 of these prices are more than 6 months old" "a 2019 price is called stale"
run_gw --data-dir "$TMP/fresh" cards llama3.1:8b
unlike "$out" "months old" "a price of this month is not"
run_gw --data-dir "$TMP/fresh" cards llama3.1:8b --json
is "$(printf '%s' "$out" | jget '" ".join(r["gpu"] for r in d["rows"])')" "rtx-4090" "only the card of the replaced table is offered new"

# ---- cost: the same tables, --used, --price, rental of the same class ------
run_gw cost --gpu rtx-4090 --json
is "$rc" 0 "cost --gpu rtx-4090: exit 0"
is "$(printf '%s' "$out" | jget 'd["price_usd"]')" "$(median "$DATA/new-prices.tsv" rtx-4090)" "new: the median of the new-price table, not the 2022 launch price"
like "$(printf '%s' "$out" | jget 'd["resale_source"]')" "used-prices" "resale derived from the used-price table"
run_gw cost --gpu rtx-4090 --used --json
# the rows of its newest three months (2026-04 to 2026-06-29 for the 4090: 1825;
# the median of all five rows, 2026-03's 1850 among them, was 1850)
is "$(printf '%s' "$out" | jget 'd["price_usd"]')" "$(median "$DATA/used-prices.tsv" rtx-4090 3)" "--used: the median used price of the newest three months"
is "$(printf '%s' "$out" | jget 'd["used"]')" True "--used is reported"
run_gw cost --gpu rtx-4090 --price 1,500 --json
is "$(printf '%s' "$out" | jget 'd["price_usd"]')" "1500.0" "--price 1,500 overrides the tables"
run_gw cost --gpu gtx-1060
is "$rc" 2 "a GTX 1060 is not sold new: exit 2"
like "$err" "no new price in USD on record for 'gtx-1060' \(not on sale new\)" "says it is not on sale new"
run_gw cost --gpu gtx-1060 --price 90 --json
is "$(printf '%s' "$out" | jget 'd["rent"]')" "None" "no GPU of a GTX 1060's class is rented"
like "$(printf '%s' "$out" | jget 'd["no_rent_reason"]')" "'gtx-1060' is not rented in the cloud-prices table, nor any card near it" "and it says so"
unlike "$out" "rtx-3090" "a GTX 1060 is not compared with an RTX 3090"
run_gw cost --gpu gtx-1060 --price 90
like "$out" "none rented" "text: none rented"
run_gw cost --used --price 100 --power 100
is "$rc" 2 "--used without --gpu: exit 2"

# ---- 2. cards finds the cheapest configuration that works -----------------
run_gw cards flux.1-dev --image 1024x1024 --budget 2000 --json
is "$rc" 0 "FLUX.1-dev 1024x1024 within 2000 USD: cards found"
is "$(printf '%s' "$out" | jget 'len(d["rows"]) >= 3')" True "several cards"
is "$(printf '%s' "$out" | jget 'any(r["remedy"] and "fp8" in r["remedy"] for r in d["rows"])')" True "fp8 applied where needed, and said"
is "$(printf '%s' "$out" | jget 'all(r["set"] == {} if r["remedy"] is None else len(r["set"]) > 0 for r in d["rows"])')" True "each remedy as option fields (set)"
run_gw cards llama3.1:70b --budget 1000 --json
is "$rc" 0 "70B within 1000 USD new: cards found"
is "$(printf '%s' "$out" | jget 'all(r["remedy"] for r in d["rows"] if r["count"] * r["vram_bytes"] < 40 * 2**30)')" True "small cards only with a remedy"
is "$(printf '%s' "$out" | jget 'any("offload" in (r["remedy"] or "") and "tok/s" in r["remedy"] for r in d["rows"])')" True "partial offload with its speed"
run_gw cards llama3.1:70b --budget 1000
like "$out" "Changes applied so that it fits" "text lists the changes"
# nothing within the budget: the cheapest that fits, and its cost
run_gw cards llama3.1:70b --budget 100 --json
is "$rc" 4 "nothing within 100 USD: exit 4"
is "$(printf '%s' "$out" | jget 'd["cheapest_over_budget"]["price_usd"] > 100')" True "the cheapest configuration that fits is named, over budget"
run_gw cards llama3.1:70b --budget 100
like "$out" "Nothing fits within 100 USD. The cheapest configuration that fits: [0-9]+x .* for [0-9]+ USD" "text names it and its cost"

# ---- 3. plan on this machine ----------------------------------------------
export GPUWISE_ROOT="$FIX/roots/desktop-4090" GPUWISE_FAKE_SCENARIO="$FIX/scenarios/desktop-4090.json"
export GPUWISE_NVML_LIB="$GW_FAKE/libnvidia-ml.so" GPUWISE_CUDA_LIB="$GW_FAKE/libcuda.so"
run_gw plan llama3.1:8b --ctx 8192
like "$out" "PID 4242 +alice +18.00 GiB +python3 train.py" "names the process, its user and command"
like "$out" "without them: fits" "the plan without the other processes"
run_gw plan llama3.1:8b --ctx 8192 --json
is "$(printf '%s' "$out" | jget 'd["gpu_processes"][0]["pid"]')" 4242 "JSON: the process"
is "$(printf '%s' "$out" | jget 'd["without_processes"]["verdict"]')" fits "JSON: fits without it"
is "$(printf '%s' "$out" | jget 'd["host"]["ram_from"]')" "/proc/meminfo" "host RAM read from the machine"
is "$(printf '%s' "$out" | jget 'd["host"]["ram_total_bytes"]')" 67338457088 "MemTotal"
is "$(printf '%s' "$out" | jget 'd["host"]["ram_bytes"] == d["host"]["ram_available_bytes"] - d["host"]["ram_headroom_bytes"]')" True "usable = available - headroom"
# a host part that fits MemAvailable but not with headroom is not a fit
cp -r "$FIX/roots/desktop-4090" "$TMP/tight"
printf 'MemTotal:       67108864 kB\nMemAvailable:   44040192 kB\n' > "$TMP/tight/proc/meminfo"
GPUWISE_ROOT="$TMP/tight" run_gw plan llama3.1:70b --ctx 8192 --json
is "$(printf '%s' "$out" | jget 'd["host"]["ram_ok"]')" False "63 GiB host part in 64 GiB of RAM (42 available): not fine"
isnt "$rc" 0 "and the exit status is not 0"
# "a larger card: rtx-4060" for a busy RTX 4090: only ever a larger card
GPUWISE_ROOT="$FIX/roots/desktop-4090" run_gw plan llama3.1:8b --ctx 8192 --json
card=$(printf '%s' "$out" | jget '[a["set"]["gpu"] for a in d["advice"] if "gpu" in a["set"]][0]')
isnt "$card" "" "a larger card is advised: $card"
unset GPUWISE_ROOT GPUWISE_FAKE_SCENARIO GPUWISE_NVML_LIB GPUWISE_CUDA_LIB
run_gw list gpus --json
is "$(printf '%s' "$out" | jget "[r['vram_bytes'] > 24 * 2**30 for r in d['rows'] if r['id'] == '$card']")" "[true]" "$card has more memory than the RTX 4090"
run_gw plan llama3.1:70b --gpu rtx-3060 --json
cards=$(printf '%s' "$out" | jget '" ".join(a["set"]["gpu"] for a in d["advice"] if "gpu" in a["set"])')
isnt "$cards" "" "a larger card for 70B on a 3060: $cards"
unlike " $cards " " (rtx-3060|rtx-4060|rtx-3070|rtx-4070) " "never a card of the same size or smaller"

# ---- 8. machine-readable advice ---------------------------------------------
run_gw plan llama3.1:8b --gpu rtx-4060 --ctx 32k --json
is "$rc" 3 "8B at 32k on an RTX 4060: offload"
printf '%s' "$out" > "$TMP/adv.json"
is "$(printf '%s' "$out" | jget 'all(isinstance(a["set"], dict) and a["set"] and isinstance(a["vram_bytes"], int) and a["verdict"] in ("fits","offload","no-fit") for a in d["advice"])')" True "every advice item: option fields, verdict, VRAM as a number"
q=$(printf '%s' "$out" | jget '[a["set"]["quant"] for a in d["advice"] if set(a["set"]) <= {"quant", "gpu_layers"} and "quant" in a["set"]][0]')
like "$q" '^q[0-9]_' "the quantization advice sets quant=$q"
# applying the advice gives what it predicted
run_gw plan llama3.1:8b --gpu rtx-4060 --ctx 32k --quant "$q" --json
python3 -c '
import json, sys
adv = json.load(open(sys.argv[1]))
a = [a for a in adv["advice"] if a["set"].get("quant") == sys.argv[2]][0]
after = json.loads(sys.argv[3])
assert after["verdict"] == a["verdict"], (after["verdict"], a["verdict"])
assert after["vram_bytes"] == a["vram_bytes"], (after["vram_bytes"], a["vram_bytes"])
assert after["gpu_layers"] == a["gpu_layers"]
assert abs(after["decode_tok_s"] - a["decode_tok_s"]) < 0.01
print("ok")' "$TMP/adv.json" "$q" "$out" > "$TMP/check" 2>&1
is "$(cat "$TMP/check")" "ok" "--quant $q: the verdict, VRAM, layers and tok/s the advice predicted"
# cross-engine advice keeps the quantization, or says it changes it
run_gw plan llama3.1:70b --gpu rtx-4090 --engine vllm --json
is "$(printf '%s' "$out" | jget 'all(("quant" not in a["set"] and "kept at BF16" in a["action"]) or "changing the weights from BF16" in a["action"] for a in d["advice"] if a["set"].get("engine") == "llama.cpp")')" True "llama.cpp advice for a BF16 request keeps BF16 or says it changes it"
is "$(printf '%s' "$out" | jget 'any(a["set"].get("engine") == "llama.cpp" for a in d["advice"])')" True "and there is such advice"

# ---- 7. unified memory: one rule for LLMs, training and images ----------------
run_gw plan llama-2-13b --gpu m1-7c-8g --json
is "$(printf '%s' "$out" | jget 'd["host"]["ram_from"]')" unified-memory "an 8 GB Mac: the CPU side is the rest of the same memory"
isnt "$(printf '%s' "$out" | jget 'd["verdict"]')" offload "offloading frees nothing on unified memory: not an offload plan"
is "$(printf '%s' "$out" | jget 'any("more host RAM" in a["action"] for a in d["advice"])')" False "and no 'more host RAM' advice"
is "$(printf '%s' "$out" | jget 'd["devices"][0]["usable_bytes"]')" 5726623060 "LLM: 2/3 of 8 GiB (macOS's default working set up to 32 GB)"
run_gw plan sdxl --image 1024x1024 --gpu m1-7c-8g --json
is "$(printf '%s' "$out" | jget 'd["vram_budget_bytes"]')" 5726623060 "images: the same 2/3"
run_gw plan llama-2-7b --train lora --gpu m1-7c-8g --json
is "$(printf '%s' "$out" | jget 'd["vram_budget_bytes"]')" 5726623060 "training: the same 2/3"
run_gw cards sdxl --image 1024x1024 --vendor apple --json
is "$(printf '%s' "$out" | jget 'any("offload" in (r["remedy"] or "") for r in d["rows"])')" False "cards: no offload remedy on unified memory"

# ---- 4. plan without a GPU: the need ----------------------------------------
nogpu
run_gw plan llama3.1:8b --ctx 8k
is "$rc" 0 "no GPU given and none here: exit 0"
like "$out" "needs [0-9.]+ GiB of GPU memory" "says the need"
like "$out" "weights .* KV cache .* compute .* runtime overhead" "with its parts"
like "$out" "smallest common cards" "and the smallest cards that hold it"
run_gw plan llama3.1:70b --json
is "$rc" 0 "JSON: exit 0"
is "$(printf '%s' "$out" | jget 'd["need"]["total_bytes"] == sum(d["need"][k] for k in ("weights_bytes","kv_cache_bytes","compute_bytes","overhead_bytes"))')" True "total = the parts"
is "$(printf '%s' "$out" | jget 'len(d["smallest_cards"]) > 0 and all(c["vram_bytes"] >= d["need"]["total_bytes"] for c in d["smallest_cards"])')" True "every card named holds the need"
is "$(printf '%s' "$out" | jget '[c["vram_bytes"] for c in d["smallest_cards"]] == sorted(c["vram_bytes"] for c in d["smallest_cards"])')" True "smallest first"
unset GPUWISE_ROOT GPUWISE_NVML_LIB GPUWISE_CUDA_LIB

# ---- 5. input as people type it -------------------------------------------
run_gw plan llama3.1:8b --vram 8
is "$rc" 2 "--vram 8: usage error, not 8 bytes"
like "$err" "--vram '8' has no unit: write 8G \(GiB\), 8GB \(10\^9 bytes\) or 8M \(MiB\)" "names the unit forms"
run_gw plan llama3.1:8b --gpu rtx-4090 --ram 16
is "$rc" 2 "--ram 16: usage error"
like "$err" "--ram '16' has no unit" "--ram names the unit forms too"
run_gw plan llama3.1:8b --vram 8G --json
is "$(printf '%s' "$out" | jget 'd["devices"][0]["vram_total_bytes"]')" 8589934592 "--vram 8G is 8 GiB"
run_gw plan llama3.1:8b --gpu rtx-4090 --ctx 128k --json
is "$(printf '%s' "$out" | jget 'd["ctx"]')" 131072 "--ctx 128k = 131072"
run_gw plan llama3.1:8b --gpu rtx-4090 --ctx 32K --json
is "$(printf '%s' "$out" | jget 'd["ctx"]')" 32768 "--ctx 32K = 32768"
run_gw plan llama3.1:8b --gpu rtx-4090 --ctx 12q
is "$rc" 2 "--ctx 12q: usage error"
for b in 1,000 '$1000' '$1,000' 1000USD; do
	run_gw cards llama3.1:8b --budget "$b" --json
	is "$(printf '%s' "$out" | jget 'd["budget_usd"]')" "1000.0" "--budget $b = 1000"
done
run_gw cards llama3.1:8b --budget 1,00
is "$rc" 2 "--budget 1,00: usage error"
for q in q4 int4 4bit; do
	run_gw plan llama3.1:8b --gpu rtx-4090 --quant "$q" --json
	is "$(printf '%s' "$out" | jget 'd["quant"]')" Q4_K_M "--quant $q is Q4_K_M"
	like "$err" "--quant '$q' read as q4_k_m" "and says so"
done
run_gw plan llama3.1:8b --gpu rtx-4090 --quant 8bit --json
is "$(printf '%s' "$out" | jget 'd["quant"]')" Q8_0 "--quant 8bit is Q8_0 under llama.cpp"
run_gw plan llama3.1:8b --gpu h100-sxm --engine vllm --quant int4 --json
like "$(printf '%s' "$out" | jget 'd["quant"]')" "AWQ" "--quant int4 under vllm is AWQ INT4"
run_gw plan llama3.1:8b --gpu rtx-4090 --quant fp8 --json
is "$(printf '%s' "$out" | jget 'd["quant"]')" FP8 "--quant fp8"
run_gw plan llama3.1:8b --gpu rtx-4090 --quant q4x
is "$rc" 2 "unknown quantization: exit 2"
like "$err" "unknown quantization 'q4x' \(valid: .*q4_k_m.*awq-int4.*bf16" "lists the valid names"
run_gw cards llama3.1:8b --quant q4x
like "$err" "unknown quantization 'q4x' \(valid: .*q4_k_m" "cards lists them too"

# ---- 6. the catalog is browsable -------------------------------------------
run_gw list gpus 4070
is "$rc" 0 "list gpus 4070: exit 0"
like "$out" "rtx-4070-super +GeForce RTX 4070 SUPER" "a filtered row"
like "$out" "rtx-4070-super: https://www.svethardware.cz/" "with its source"
run_gw list gpus --json
for id in rtx-4070-super rtx-4080-super rtx-3060-ti rtx-3070-ti 4070-laptop 4080-laptop rx-7900-xt rx-9070-xt arc-b580 rtx-a4000 rtx-a5000 rtx-pro-6000; do
	is "$(printf '%s' "$out" | jget "[r['source'] != '' for r in d['rows'] if r['id'] == '$id']")" "[true]" "catalog has $id with a source"
done
is "$(printf '%s' "$out" | jget 'len([r for r in d["rows"] if r["used_price"]]) >= 30')" True "at least 30 cards with a sourced used price"
is "$(printf '%s' "$out" | jget 'all(r["used_price"]["date"] and r["used_price"]["source"] for r in d["rows"] if r["used_price"])')" True "each with date and source"
run_gw list models llama --json
is "$(printf '%s' "$out" | jget 'all("llama" in (r["id"] + r["name"] + r["aliases"] + (r["arch"] or "")).lower() for r in d["rows"]) and len(d["rows"]) > 2')" True "list models FILTER"
run_gw list models flux
like "$out" "flux.1-dev .*image" "image models are listed"
run_gw list quants q4 --json
is "$(printf '%s' "$out" | jget '"q4_k_m" in [r["id"] for r in d["rows"]]')" True "list quants q4 has q4_k_m"
run_gw list gpus no-such-card
is "$rc" 4 "no row matches: exit 4"
run_gw list
is "$rc" 2 "list without a table: exit 2"
run_gw list cars
is "$rc" 2 "list cars: exit 2"
like "$err" "cannot list 'cars' \(gpus, models or quants\)" "names the tables"
run_gw plan llama3.1:8b --gpu rtx-9090x
like "$err" "gpuwise list gpus" "an unknown GPU points at gpuwise list gpus"
unlike "$err" "data/gpus.tsv" "not at a source file"

done_testing
