#!/bin/sh
# The market per region (issue 34 item 2): China's own dated rows (new, used, rent), a card not sold new
# there said so with the card sold in its place, modified boards with their caveats, the budget's
# currency as the answer's, and a grey-market or converted price never passed off as a local one.
. "$(dirname "$0")/lib.sh"
unset GPUWISE_CURRENCY GPUWISE_REGION
D="$GW_TOP/data"

# cost of an RTX 4090 for a buyer in China
run_gw cost --gpu rtx-4090 --currency CNY --region cn --json
is "$rc" 0 "cost --gpu rtx-4090 --currency CNY --region cn exits 0"
is "$(printf '%s' "$out" | jget 'd["market"]["not_sold_new"]')" "True" "the 4090 is not sold new in China"
is "$(printf '%s' "$out" | jget 'd["market"]["instead"]')" "rtx-4090-d" "the card sold in its place: the RTX 4090 D"
want=$(awk -F'\t' '$1 == "rtx-4090-d" && $3 == "CNY" {print $2}' "$D/new-prices.tsv" | sort -n |
	awk '{v[NR]=$1} END {print (NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2) ".0"}')
is "$(printf '%s' "$out" | jget 'd["market"]["instead_price"]')" "$want" "the 4090 D at the median of its CNY rows ($want yuan)"
is "$(printf '%s' "$out" | jget 'd["conversions"][0]["what"] if d["conversions"] else ""')" "launch price (for the resale)" \
	"the purchase price is not converted from USD (a CNY row is on record)"
is "$(printf '%s' "$out" | jget 'd["price"]')" \
	"$(awk -F'\t' '$1 == "rtx-4090" && $3 == "CNY" {print $2 ".0"}' "$D/new-prices.tsv")" "the 4090's own CNY row"
prov=$(printf '%s' "$out" | jget '" ".join(o["provider"] + "@" + o["date"] for o in d["rent"]["offer_list"])')
like "$prov" "AutoDL@2026-" "rents include AutoDL with a date"
is "$(printf '%s' "$out" | jget 'len({o["provider"] for o in d["rent"]["offer_list"]}) >= 3')" "True" "rents of at least three platforms"
is "$(printf '%s' "$out" | jget 'all(o["currency"] == "CNY" for o in d["rent"]["offer_list"])')" "True" "every rent offer is a CNY row"
rate=$(printf '%s' "$out" | jget 'd["rent"]["per_hour"]')
ok "$(python3 -c "print(0 if 1.5 <= $rate <= 2.6 else 1)")" "the rate is the regional median, about 2 yuan an hour ($rate)"
# the conclusion follows the figures: renting is cheaper exactly when the rent total is below owning's
ok "$(printf '%s' "$out" | jget '0 if (d["rent"]["total_month"] < d["own"]["total_month"]) == (d["hours_per_day"] * 30.4375 < (d["breakeven_hours_month"] or 1e9)) else 1')" \
	"renting saves only where the rent total is below owning's"
run_gw cost --gpu rtx-4090 --currency CNY --region cn
like "$out" "not sold new in China" "the text says the 4090 is not sold new in China"
like "$out" "compare .*GeForce RTX 4090 D new in China" "and compares the RTX 4090 D"
like "$out" "grey-market price in China" "the 4090's yuan price is called grey-market"
like "$out" "offers .*AutoDL [0-9.]+ CNY/h \\(2026" "the text lists AutoDL's rent with its date"
unlike "$out" "purchase price: .*USD at 1 USD" "no purchase price converted from dollars"
# a card sold there is not flagged
run_gw cost --gpu rtx-4090-d --currency CNY --region cn --json
is "$(printf '%s' "$out" | jget 'd["market"]["not_sold_new"]')" "False" "the 4090 D is sold new in China"
# the US buyer sees no China note
run_gw cost --gpu rtx-4090 --currency USD --json
is "$(printf '%s' "$out" | jget 'd["market"]["not_sold_new"]')" "False" "in USD the 4090 is on sale"

# cards with a yuan budget: the budget's currency is the answer's
run_gw cards qwen2.5-32b --budget 8000CNY --used --json
is "$rc" 0 "cards qwen2.5-32b --budget 8000CNY --used exits 0"
is "$(printf '%s' "$out" | jget 'd["currency"]')" "CNY" "answered in CNY, the budget's currency"
gpus=$(printf '%s' "$out" | jget '" ".join(r["gpu"] for r in d["rows"])')
like "$gpus" "rtx-2080-ti-22g" "the modified 2080 Ti 22 GB is listed"
is "$(printf '%s' "$out" | jget '[(r["price"], r["price_quoted_currency"]) for r in d["rows"] if r["gpu"] == "rtx-3090"][0]')" \
	"($(awk -F'\t' '$1 == "rtx-3090" && $3 == "CNY" {print $2 ".0"}' "$D/used-prices.tsv"), 'CNY')" "the used 3090 from its Chinese row, not converted"
run_gw cards qwen2.5-32b --budget 8000CNY --used
like "$out" "rtx-2080-ti-22g: modified board .*no warranty.*blower" "the 22 GB 2080 Ti's caveats"
run_gw cards qwen2.5-32b --budget 8000CNY --currency USD --used
is "$rc" 2 "an explicit --currency other than the budget's is still refused"

# catalog rows
run_gw list gpus --json
like "$(printf '%s' "$out" | jget '" ".join(g["id"] for g in d["rows"])')" \
	"rtx-4090-48g" "the 48 GB RTX 4090 is a catalog row"
run_gw cost --gpu rtx-4090-48g --currency CNY --region cn
like "$out" "modified board: .*no NVIDIA or maker warranty" "cost prints the 48 GB card's caveat"

# used price windows compared like with like: a card whose rows end before the newest window begins is named
run_gw cards llama-2-13b --used --json
old=$(printf '%s' "$out" | jget '" ".join(r["gpu"] for r in d["rows"] if not r["price_estimated"] and r["price_date"] and max(int(x["price_date"][:4]) * 12 + int((x["price_date"] + "-01")[5:7]) for x in d["rows"] if not x["price_estimated"] and x["price_date"]) - (int(r["price_date"][:4]) * 12 + int((r["price_date"] + "-01")[5:7])) >= 3) or "none"')
run_gw cards llama-2-13b --used
for g in $(printf '%s' "$old" | tr ' ' '\n' | head -12); do
	like "$out" "  $g: rows of " "different months: $g is named with its rows' months"
done
if [ "$old" = none ]; then unlike "$out" "Different months" "no window note when every window overlaps"; else like "$out" "Different months" "the window note is printed"; fi

# issue 34's English change lines under zh_CN: the remedies are translated (the JSON keeps English)
if locale -a 2>/dev/null | grep -qi '^zh_CN.utf-\?8$'; then
	out=$(LANG=zh_CN.UTF-8 "$GW" cards qwen2.5-32b --budget 8000CNY --used 2>/dev/null)
	like "$out" "部分卸载到 CPU：[0-9]+/[0-9]+ 层放在 GPU 上（-ngl [0-9]+）" "zh_CN: the offload change line is Chinese"
	unlike "$out" "partial CPU offload|lower-quality weights" "zh_CN: no English change line left"
else
	skip "zh_CN.UTF-8 locale not generated (locale-gen)"; skip "zh_CN.UTF-8 locale not generated (locale-gen)"
fi
run_gw cards qwen2.5-32b --budget 8000CNY --used --json
like "$out" '"remedy": "partial CPU offload: ' "the JSON keeps the English remedy"
done_testing
