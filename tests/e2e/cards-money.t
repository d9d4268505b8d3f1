#!/bin/sh
# Money in the buyer's currency and market (issue 23 items 5-7): cost and cards in yuan from CNY rows,
# refused mixing (exact exit code and message), dated conversions, rent like for like, China-market
# cards and Chinese rental platforms, and the "~" mark of LLM speeds no llama-bench row backs.
. "$(dirname "$0")/lib.sh"
unset GPUWISE_CURRENCY GPUWISE_REGION

# cost in yuan throughout, from CNY rows with their dates and sources
run_gw cost --currency CNY --gpu rtx-4090-d --hours 4 --region cn --json
is "$rc" 0 "cost --currency CNY --gpu rtx-4090-d --hours 4 --region cn exits 0"
is "$(printf '%s' "$out" | jget 'd["currency"]')" "CNY" "the answer is in CNY"
is "$(printf '%s' "$out" | jget 'd["price"]')" "15479.0" "purchase: the median of the CNY rows (12,999 yuan MSRP, 17,959 on a Chinese store)"
is "$(printf '%s' "$out" | jget 'd["price_usd"]')" "None" "no dollar figure under a yuan answer"
is "$(printf '%s' "$out" | jget 'd["price_date"]')" "2025-02" "the newest price row's date"
is "$(printf '%s' "$out" | jget 'd["kwh_price"]')" "0.4883" "electricity: the region's CNY tariff"
is "$(printf '%s' "$out" | jget 'd["rent"]["per_hour"]')" "1.14" "rent: the Chinese platform's CNY row for the same card"
is "$(printf '%s' "$out" | jget 'd["rent"]["gpu"]')" "rtx-4090-d" "rented: the same GPU"
is "$(printf '%s' "$out" | jget 'd["rent"]["quoted_currency"]')" "CNY" "the rent was quoted in CNY"
is "$(printf '%s' "$out" | jget 'd["conversions"]')" "[]" "nothing was converted"
like "$(printf '%s' "$out" | jget 'd["rent"]["source"]')" "^https://huggingface.co/datasets/brian8808" "the rent's source"
is "$(printf '%s' "$out" | jget 'd["hours_per_day"]')" "4.0" "--hours is hours a day"
run_gw cost --currency CNY --gpu rtx-4090-d --hours 4 --region cn
unlike "$out" "USD" "the text answer never says USD"
like "$out" "15479 CNY" "the text gives the yuan price"
like "$out" "1.14 CNY/h" "the text gives the yuan rent"

# --price under --currency CNY is yuan; another currency is refused, never mixed
run_gw cost --currency CNY --region cn --gpu rtx-4090 --price 15000 --json
is "$(printf '%s' "$out" | jget 'd["price"]')" "15000.0" "--price 15000 under --currency CNY is 15000 yuan"
is "$(printf '%s' "$out" | jget 'd["currency"]')" "CNY" "and the answer stays in yuan"
run_gw cost --currency CNY --region cn --gpu rtx-4090 --price 2000USD
is "$rc" 2 "a dollar price under a yuan answer: exit 2"
is "$err" "gpuwise: --price '2000USD' is in USD, but this answer is in CNY: give it in CNY (or --currency USD); gpuwise never mixes currencies
try 'gpuwise cost --help'" "the refusal names both currencies"
run_gw cost --currency CNY --region cn --price '$300' --power 200 --cloud-rate 1
is "$rc" 2 "a \$ amount under a yuan answer: exit 2"
run_gw cost --currency CNY --region cn --price 15000 --power 300 --cloud-rate '0.3 USD'
is "$rc" 2 "a dollar rent under a yuan answer: exit 2"
like "$err" "--cloud-rate '0.3 USD' is in USD, but this answer is in CNY" "the rent's currency is named"

# a USD-priced card under --currency CNY: its USD rows converted at the dated rate, and said so
run_gw cost --currency CNY --gpu h100-sxm --json
is "$rc" 0 "an H100 in yuan exits 0"
is "$(printf '%s' "$out" | jget 'd["region"]')" "cn" "the region follows the currency"
conv=$(printf '%s' "$out" | jget '[(c["what"], c["from"], c["to"], c["date"]) for c in d["conversions"]]')
like "$conv" "purchase price.*USD.*CNY.*2026-05-08" "the purchase price conversion is stated with its date"
like "$conv" "rent per hour.*USD.*CNY" "the rent conversion is stated"
rate=$(printf '%s' "$out" | jget 'd["conversions"][0]["rate"]')
ok "$(python3 -c "print(0 if abs($rate - 7.9989/1.1761) < 1e-4 else 1)")" "converted at the ECB cross rate of 2026-05-08 ($rate)"

# electricity per region; an unknown region needs --kwh-price
run_gw cost --gpu rtx-4090 --json
is "$(printf '%s' "$out" | jget 'd["kwh_price"]')" "0.17" "default: U.S. price in USD"
run_gw cost --currency EUR --gpu rtx-4090 --region de --json
is "$(printf '%s' "$out" | jget 'd["kwh_price"]')" "0.3835" "--region de: the German price in EUR"
run_gw cost --gpu rtx-4090 --region mars
is "$rc" 2 "unknown region: exit 2"
is "$err" "gpuwise: unknown region 'mars' (known: us, cn, eu, de); give --kwh-price
try 'gpuwise cost --help'" "unknown region: the known ones and --kwh-price"
run_gw cost --gpu rtx-4090 --region mars --kwh-price 0.3 --json
is "$rc" 0 "unknown region with --kwh-price: exit 0"
run_gw cost --currency GBP --gpu rtx-4090
is "$rc" 2 "a currency without a region row and no --kwh-price: exit 2"
like "$err" "no electricity price for currency GBP: give --region" "says what to give"
run_gw cost --currency XYZ --price 100 --power 100 --kwh-price 1
is "$rc" 2 "a currency without a dated rate: exit 2"
like "$err" "no dated exchange rate for currency 'XYZ'" "names the currency"
GPUWISE_CURRENCY=CNY run_gw cost --gpu rtx-4090-d --json
is "$(printf '%s' "$out" | jget 'd["currency"]')" "CNY" "GPUWISE_CURRENCY is the default currency"

# rent like for like: a P100 is not rented, so the rate is named as a different card's
run_gw cost --gpu tesla-p100 --used
like "$out" "not the same card" "a P100 rent is not called the same class"
like "$out" "different card: " "the rented card is named as a different card"
unlike "$out" "same class" "no 'same class'"
run_gw cost --gpu rtx-4090
like "$out" "spot .*interruptible, not used" "spot offers are said and not used"
like "$out" "range 0.29-0.682" "the range as well as the median"
like "$out" "storage .*50 GB" "storage kept with the rented machine is counted"
run_gw cost --gpu rtx-4090 --storage 100 --storage-price 0.1 --host-price 800 --idle-power 40 --json
is "$(printf '%s' "$out" | jget 'd["rent"]["storage_month"]')" "10.0" "100 GB x 0.1 a month"
is "$(printf '%s' "$out" | jget 'd["host_price"]')" "800.0" "--host-price counted"
ok "$(printf '%s' "$out" | jget '0 if d["own"]["idle_energy_month"] > 0 else 1')" "--idle-power counted"

# cards in yuan for China: China-market cards and Chinese rental platforms
run_gw cards llama-2-13b --currency CNY --region cn --json
is "$rc" 0 "cards 13B in yuan exits 0"
is "$(printf '%s' "$out" | jget 'd["currency"]')" "CNY" "cards answers in CNY"
gpus=$(printf '%s' "$out" | jget '[r["gpu"] for r in d["rows"]]')
like "$gpus" "rtx-4090-d" "the RTX 4090 D is listed"
like "$gpus" "rtx-5090-d-v2" "the RTX 5090 D v2 is listed"
is "$(printf '%s' "$out" | jget '[r["price"] for r in d["rows"] if r["gpu"] == "rtx-4090-d"][0]')" "15479.0" "at its CNY price"
is "$(printf '%s' "$out" | jget 'all(r["converted"] == (r["quoted_currency"] != "CNY") for r in d["rent"])')" "True" "rent rows say when they were converted"
prov=$(printf '%s' "$out" | jget '" ".join(r["provider"] for r in d["rent"] if r["quoted_currency"] == "CNY")')
like "$prov" "恒源云" "恒源云 is among the rental options"
like "$prov" "算家云" "算家云 is among the rental options"
is "$(printf '%s' "$out" | jget 'all(r["price_converted"] == (r["price_quoted_currency"] != "CNY") for r in d["rows"])')" "True" "every converted price is marked"
run_gw cards llama-2-13b --json
is "$(printf '%s' "$out" | jget '"rtx-4090-d" in [r["gpu"] for r in d["rows"]]')" "False" "a China-only card is not offered to a USD buyer"
ok "$(printf '%s' "$out" | jget '0 if d["other_market"] >= 2 else 1')" "it is counted as another market's"
run_gw cards llama-2-13b --currency CNY --budget 2000USD
is "$rc" 2 "a dollar budget under a yuan answer: exit 2"
like "$err" "--budget '2000USD' is in USD, but this answer is in CNY" "names both currencies"

# LLM speeds without a measured llama-bench row: ~, ranked after every measured one
run_gw cards llama3.1:8b --used --json
is "$rc" 0 "cards 8B --used exits 0"
order=$(printf '%s' "$out" | jget '[r["speed_estimated"] for r in d["rows"] if not r["price_estimated"]]')
is "$(python3 -c "import json,sys; v=json.loads(sys.argv[1].replace('True','true').replace('False','false')); print(v == sorted(v))" "$order")" "True" "measured picks come before estimated ones"
is "$(printf '%s' "$out" | jget '[r["speed_estimated"] for r in d["rows"] if r["gpu"] == "tesla-p100"][0]')" "True" "the P100's speed is an estimate (no llama-bench row)"
is "$(printf '%s' "$out" | jget '[r["speed_estimated"] for r in d["rows"] if r["gpu"] == "tesla-p40"][0]')" "False" "the P40 has a measured row"
run_gw cards llama3.1:8b --used
like "$out" "~ speed: no public llama-bench measurement" "the mark is explained"

# every Pascal/Volta pick of a used list carries its lifecycle line and install caveats; an SXM2 module always
# says it needs an adapter board
for m in llama3.1:8b qwen2.5:32b llama3.1:70b; do
	run_gw cards "$m" --used --json
	printf '%s' "$out" > "$TMP/u.json"
	python3 - "$TMP/u.json" <<'PY' > "$TMP/lc" 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
old = [r for r in d["rows"] if r["gpu"] in ("tesla-p100", "tesla-p40", "gtx-1080-ti", "gtx-1060", "v100", "v100-pcie-16g")]
assert old, "no Pascal/Volta pick"
for r in old:
    cv = " | ".join(r["caveats"])
    assert r["lifecycle"] and r["lifecycle"]["last_torch"] and r["lifecycle"]["last_driver"], r["gpu"] + ": no lifecycle"
    assert "lifecycle as of" in cv and "to build from source" in cv, r["gpu"] + ": no lifecycle line"
    if r["gpu"] != "gtx-1080-ti" and r["gpu"] != "gtx-1060":
        assert r["install"], r["gpu"] + ": no install caveats"
    if r["install"] and r["install"]["form_factor"].startswith("SXM"):
        assert "adapter board" in cv, r["gpu"] + ": SXM without the adapter caveat"
print("ok %d" % len(old))
PY
	like "$(cat "$TMP/lc")" "^ok [0-9]+$" "cards $m --used: Pascal/Volta picks carry lifecycle and install caveats, SXM2 the adapter"
done

# data/llamabench-gpus.tsv names exactly the GPUs of the validation files
python3 - "$GW_TOP" <<'PY' > "$TMP/lb" 2>&1
import sys
top = sys.argv[1]
want = set()
import os
for f in ("llamabench-current.tsv", "llamabench-added-unasserted.tsv"):
    if not os.path.exists(f"{top}/tests/validation/{f}"):
        continue
    hdr = None
    for line in open(f"{top}/tests/validation/{f}"):
        if line.startswith("#") or not line.strip():
            continue
        x = line.rstrip("\n").split("\t")
        if hdr is None:
            hdr = x
            continue
        g = dict(zip(hdr, x))["gpu"]
        if g not in ("gpu", "cpu"):
            want.add(g)
have = set()
hdr = None
for line in open(f"{top}/data/llamabench-gpus.tsv"):
    if line.startswith("#") or not line.strip():
        continue
    x = line.rstrip("\n").split("\t")
    if hdr is None:
        hdr = x
        continue
    have.add(x[0])
print("ok" if want == have else f"missing {sorted(want - have)} extra {sorted(have - want)}")
PY
is "$(cat "$TMP/lb")" "ok" "llamabench-gpus.tsv matches tests/validation"

# every table row carries a currency code and a source
for t in new-prices used-prices cloud-prices; do
	bad=$(awk -F'\t' '!/^#/ && NR > 1 && $0 != "" { for (i = 1; i <= NF; i++) if (h[i] == "currency" && $i !~ /^[A-Z][A-Z][A-Z]$/) print NR }
	      /^gpu\t/ { for (i = 1; i <= NF; i++) h[i] = $i }' "$GW_TOP/data/$t.tsv")
	is "$bad" "" "$t.tsv: every row has an ISO currency"
done

done_testing
