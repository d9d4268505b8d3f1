#!/bin/sh
# gpuwise cost: own against rent, break-even hours, bad input.
. "$(dirname "$0")/lib.sh"

run_gw cost --help
is "$rc" 0 "cost --help exits 0"
like "$out" "--cloud-rate" "help lists --cloud-rate"
like "$out" "Exit status" "help lists exit codes"

run_gw cost --gpu rtx-4090
is "$rc" 0 "cost --gpu rtx-4090 exits 0"
like "$out" "owning is cheaper above [0-9]+ hours a month" "gives the break-even hours"
like "$out" "GeForce RTX 4090" "names the card"

run_gw cost --gpu rtx-4090 --json
is "$rc" 0 "json exits 0"
be=$(printf '%s' "$out" | jget 'd["breakeven_hours_month"]')
dep=$(printf '%s' "$out" | jget 'd["own"]["depreciation_usd_month"]')
rate=$(printf '%s' "$out" | jget 'd["rent"]["usd_per_hour"]')
eh=$(printf '%s' "$out" | jget 'd["own"]["energy_usd_hour"]')
st=$(printf '%s' "$out" | jget 'd["rent"]["storage_month"]')
# break-even = (depreciation - the rent's storage) / (rate - energy per hour), redone here
ok "$(python3 -c "import sys; print(0 if abs(($dep-$st)/($rate-$eh) - $be) < 0.05 else 1)")" "break-even = (depreciation - storage) / (rent - power)"
is "$(printf '%s' "$out" | jget 'd["price_usd"]')" "$(awk -F'\t' '$1 == "rtx-4090" && $3 == "USD" {print $2 ".0"}' "$GW_TOP/data/new-prices.tsv")" "the new-price table is used without --price"

# explicit numbers, no catalog card
run_gw cost --price 1000 --power 300 --cloud-rate 0.5 --resale 0 --years 1 --kwh-price 0.2 --json
is "$rc" 0 "explicit numbers exit 0"
# 1000/12 = 83.33 per month; 0.5 - 0.06 = 0.44 per hour -> 189.39 h
is "$(printf '%s' "$out" | jget 'd["breakeven_hours_month"]')" "189.39" "break-even from explicit numbers"
is "$(printf '%s' "$out" | jget 'd["rent"]["source"]')" "--cloud-rate" "rate source is the option"

# power dearer than rent: no break-even, null in JSON
run_gw cost --price 500 --power 1000 --kwh-price 1 --cloud-rate 0.2 --json
is "$(printf '%s' "$out" | jget 'd["breakeven_hours_month"]')" "None" "no break-even is null"

# a data directory replaces the cloud prices
mkdir -p "$TMP/data" && cp "$GW_TOP"/data/*.tsv "$TMP/data/"
printf 'gpu\tprovider\tusd_per_hour\ttier\tdate\tverified\tsource\nrtx-4090\tTest\t2.00\ton-demand\t2026-01\tno\thttps://example.test\n' > "$TMP/data/cloud-prices.tsv"
run_gw --data-dir "$TMP/data" cost --gpu rtx-4090 --json
is "$(printf '%s' "$out" | jget 'd["rent"]["usd_per_hour"]')" "2.0" "--data-dir overrides the cloud rate"

# storage: the median of the stated storage prices of the rows compared, one
# per provider; the rate's middle row (P2, 0.50) is not taken for all of them.
# P1 states 0.05 on two rows (one figure), P3 states none: median(0.05, 0.10,
# 0.50) = 0.10 of 3 providers, 100 GB -> 10.0 a month (the middle row: 50.0).
{
	printf 'gpu\tprovider\tper_hour\tcurrency\ttier\tdate\tverified\tstorage_gb_month\tsource\n'
	printf 'rtx-4090\tP1\t0.30\tUSD\ton-demand\t2026-06\tsecondary\t0.05\thttps://example.test/p1\n'
	printf 'rtx-4090\tP1\t0.40\tUSD\ton-demand\t2026-06\tsecondary\t0.05\thttps://example.test/p1\n'
	printf 'rtx-4090\tP2\t0.50\tUSD\ton-demand\t2026-06\tsecondary\t0.50\thttps://example.test/p2\n'
	printf 'rtx-4090\tP3\t0.60\tUSD\ton-demand\t2026-06\tsecondary\t\thttps://example.test/p3\n'
	printf 'rtx-4090\tP4\t0.70\tUSD\ton-demand\t2026-06\tsecondary\t0.10\thttps://example.test/p4\n'
	printf 'rtx-4090\tP5\t0.20\tUSD\tspot\t2026-06\tsecondary\t9.00\thttps://example.test/p5\n'
} > "$TMP/data/cloud-prices.tsv"
run_gw --data-dir "$TMP/data" cost --gpu rtx-4090 --storage 100 --json
is "$(printf '%s' "$out" | jget 'd["rent"]["storage_month"]')" "10.0" "storage: median over the providers that state a price, not the middle row's"
is "$(printf '%s' "$out" | jget 'd["rent"]["storage_price_providers"]')" "3" "storage: the median is of 3 providers (one figure per provider, spot rows not compared)"
run_gw --data-dir "$TMP/data" cost --gpu rtx-4090 --storage 100
like "$out" "storage +10\.00 USD/month +\(100 GB x 0\.1 USD/GB-month: the median storage price of the 3 providers" "text says how many providers the storage price is the median of"
run_gw --data-dir "$TMP/data" cost --gpu rtx-4090 --storage 100 --storage-price 0.2 --json
is "$(printf '%s' "$out" | jget 'd["rent"]["storage_month"], d["rent"]["storage_price_providers"]')" "(20.0, None)" "--storage-price is used as given"
{
	printf 'gpu\tprovider\tper_hour\tcurrency\ttier\tdate\tverified\tstorage_gb_month\tsource\n'
	printf 'rtx-4090\tP3\t0.60\tUSD\ton-demand\t2026-06\tsecondary\t\thttps://example.test/p3\n'
} > "$TMP/data/cloud-prices.tsv"
run_gw --data-dir "$TMP/data" cost --gpu rtx-4090 --storage 100
like "$out" "no row compared states a storage price, give --storage-price" "no stated storage price: said so"

# bad input
run_gw cost --gpu rtx-9999
is "$rc" 2 "unknown GPU exits 2"
like "$err" "unknown GPU 'rtx-9999'" "unknown GPU is named"
run_gw cost --gpu rtx-4090 --hours-per-day 30
is "$rc" 2 "30 hours a day exits 2"
like "$err" "invalid --hours-per-day '30'" "bad hours are named"
run_gw cost --price abc --power 100
is "$rc" 2 "malformed price exits 2"
like "$err" "invalid --price 'abc'" "malformed price is named"
run_gw cost --bogus
is "$rc" 2 "unknown option exits 2"
like "$err" "unknown option '--bogus'" "unknown option is named"
run_gw cost --price 100
is "$rc" 2 "no power and no GPU exits 2"
like "$err" "--power" "asks for --power"
run_gw cost --gpu
is "$rc" 2 "--gpu without a value exits 2"

done_testing
