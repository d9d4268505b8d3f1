#!/bin/sh
# Used prices (issue 23, item 7): a card's used price is the median of its
# rows dated in the three months that end with its newest row's month, not of
# every row it ever had.  The tables below are built so that the median of all
# rows and the median of the window differ; main's binary before the window
# answered the former (500 for the RTX 3090) and fails here.
. "$(dirname "$0")/lib.sh"
unset GPUWISE_ROOT GPUWISE_FAKE_SCENARIO
D=$TMP/dd
mkdir -p "$D"
row() { printf '%s\t%s\tUSD\t%s\tlistings\thttps://example.test/%s\n' "$1" "$2" "$3" "$4"; }
{
	printf 'gpu\tprice\tcurrency\tdate\tkind\tsource\n'
	# RTX 3090: autumn rows 1000-1200, spring rows 400-500, a bare year 300.
	# All 7: median 500.  Window 2026-07..2026-09: 1000, 1100, 1200 -> 1100.
	row rtx-3090 1200 2026-09 sep
	row rtx-3090 500 2026-03 mar
	row rtx-3090 1000 2026-07 jul
	row rtx-3090 400 2026-02 feb
	row rtx-3090 300 2026 year
	row rtx-3090 1100 2026-08 aug
	row rtx-3090 450 2026-01 jan
	# RTX 3060: a bare year counts as January, so it is in while the newest
	# row is of March (900, 200, 100 -> 200; without it 150) ...
	row rtx-3060 900 2026 year
	row rtx-3060 200 2026-03 mar
	row rtx-3060 100 2026-02 feb
	# RTX 4090: a day counts as its month; 2026-06-29's window is 2026-04..06
	row rtx-4090 2000 2026-06-29 day
	row rtx-4090 1500 2026-04 apr
	row rtx-4090 900 2026-03 mar
} > "$D/used-prices.tsv"

run_gw --data-dir "$D" list gpus rtx-3090 --json
is "$rc" 0 "list gpus with the crafted table: exit 0"
u=$(printf '%s' "$out" | jget '[r for r in d["rows"] if r["id"] == "rtx-3090"][0]["used_price"]')
is "$(printf '%s' "$u" | jget 'd["price"]')" "1100.0" "RTX 3090: median of the newest three months (1100), not of every row (500)"
is "$(printf '%s' "$u" | jget 'd["rows"]')" "3" "three rows used"
is "$(printf '%s' "$u" | jget 'd["rows_on_record"]')" "7" "seven on record"
is "$(printf '%s' "$u" | jget 'd["window_from"]')" "2026-07" "window from 2026-07"
is "$(printf '%s' "$u" | jget 'd["date"]')" "2026-09" "newest 2026-09"
is "$(printf '%s' "$u" | jget 'd["source"]')" "https://example.test/aug" "source: the median row's"

run_gw --data-dir "$D" cost --gpu rtx-3090 --used --json
is "$rc" 0 "cost --used: exit 0"
is "$(printf '%s' "$out" | jget 'd["price_usd"]')" "1100.0" "cost --used: the windowed median"
is "$(printf '%s' "$out" | jget '[d["price_rows"], d["price_rows_on_record"], d["price_window_from"], d["price_date"]]')" \
	'[3, 7, "2026-07", "2026-09"]' "cost --json: rows used, on record, window"
like "$(printf '%s' "$out" | jget 'd["price_source"]')" "^used price, median of 3 dated USD rows \(1000-1200 USD\), newest 2026-09" \
	"price_source: 3 rows and their range"
run_gw --data-dir "$D" cost --gpu rtx-3090 --used
like "$out" "\(used: the card's rows of 2026-07 to 2026-09, the 3 months up to its newest; 4 older rows on record, not used\)" \
	"cost text names the months and the rows left out"
# a new price is not windowed: the new-prices table is untouched and --price skips the rows
run_gw --data-dir "$D" cost --gpu rtx-3090 --used --price 700 --json
is "$(printf '%s' "$out" | jget '[d["price_usd"], d["price_rows"], d["price_window_from"]]')" '[700.0, null, null]' \
	"--price: no rows, no window"

run_gw --data-dir "$D" cards llama3.1:8b --used --no-estimates --json
is "$rc" 0 "cards --used with the crafted table: exit 0"
r=$(printf '%s' "$out" | jget '{x["gpu"]: [x["price_usd"], x["price_rows"], x["price_rows_on_record"], x["price_window_from"]] for x in d["rows"]}')
is "$(printf '%s' "$r" | jget 'd["rtx-3090"]')" '[1100.0, 3, 7, "2026-07"]' "cards: the RTX 3090 at its windowed median"
is "$(printf '%s' "$r" | jget 'd["rtx-3060"]')" '[200.0, 3, 3, "2026"]' "a bare year counts as January: in while the newest row is of March"
is "$(printf '%s' "$r" | jget 'd["rtx-4090"]')" '[1750.0, 2, 3, "2026-04"]' "a day date counts as its month: 2026-03 is out of 2026-06-29's window"
run_gw --data-dir "$D" cards llama3.1:8b --used --no-estimates
like "$out" "Prices: median of each card's rows of data/used-prices.tsv dated in the 3 months up to its newest row" \
	"cards text states the rule"

# ... and drops out once the card has a row of April
row rtx-3060 120 2026-04 apr >> "$D/used-prices.tsv"
run_gw --data-dir "$D" cards llama3.1:8b --used --no-estimates --json
is "$(printf '%s' "$out" | jget '[[x["price_usd"], x["price_rows"], x["price_rows_on_record"]] for x in d["rows"] if x["gpu"] == "rtx-3060"][0]')" \
	'[120.0, 3, 4]' "with a 2026-04 row the bare year is out (100, 120, 200 -> 120; with it 160)"

# the shipped table: no used price rests on a row older than its card's window
run_gw list gpus --json
printf '%s' "$out" > "$TMP/list.json"
python3 - "$TMP/list.json" "$GW_TOP/data/used-prices.tsv" <<'PY' > "$TMP/check" 2>&1
import json, sys, statistics
d = json.load(open(sys.argv[1]))
rows = [l.rstrip('\n').split('\t') for l in open(sys.argv[2]) if not l.startswith('#')]
h = rows[0]
def month(s):
    return int(s[:4]) * 12 + (int(s[5:7]) - 1 if len(s) >= 7 else 0)
bad = []
for r in d["rows"]:
    u = r["used_price"]
    if not u or u["currency"] != "USD":
        continue
    mine = [x for x in rows[1:] if x and x[0] == r["id"] and x[h.index('currency')] == 'USD']
    last = max(month(x[h.index('date')]) for x in mine)
    win = sorted(float(x[h.index('price')]) for x in mine if last - month(x[h.index('date')]) < 3)
    if abs(statistics.median(win) - u["price"]) > 0.01 or len(win) != u["rows"] or len(mine) != u["rows_on_record"]:
        bad.append("%s: %s (%d/%d rows), expected %s (%d/%d)" % (r["id"], u["price"], u["rows"], u["rows_on_record"],
                                                                 statistics.median(win), len(win), len(mine)))
print("\n".join(bad) or "ok")
PY
is "$(cat "$TMP/check")" "ok" "every used price of the shipped table is the median of its card's newest three months"

done_testing
