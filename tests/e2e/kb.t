#!/bin/sh
# End-to-end: the knowledge tables replaced with --data-dir / GPUWISE_DATA.
# A broken table is a runtime error (exit 1) whose message names the table,
# the line and the column; a good one is used instead of the embedded table.
. "$(dirname "$0")/lib.sh"

hdr='id	name	aliases	vendor	arch	cc	sms	cores	vram_gib	bandwidth_gbs	fp32_tflops	fp16_tflops	tdp_w	pcie_gen	mig	laptop	unified_memory	year	price_usd	used_price_usd	price_date	source'
row() { # row VRAM SOURCE
	printf 'my-card\tMy Card 9000\tmc9k\tNVIDIA\tAda\t8.9\t10\t1280\t%s\t200\t10\t20\t150\t4\t0\t0\t0\t2024\t1234\t0\t2024-01\t%s\n' "$1" "$2"
}

mkdir -p "$TMP/good" "$TMP/nan" "$TMP/nosrc" "$TMP/cols" "$TMP/empty-src" "$TMP/none"

{ echo "$hdr"; row 16 "test fixture"; } > "$TMP/good/gpus.tsv"
printf 'gpu\tusd\tdate\tkind\tsource\nmy-card\t1234\t2026-01\tretail\ttest fixture\n' > "$TMP/good/new-prices.tsv"
run_gw --data-dir "$TMP/good" cost --gpu mc9k --cloud-rate 1 --json
is "$rc" 0 "a good replacement table is used"
is "$(printf '%s' "$out" | jget 'd["price_usd"]')" "1234.0" "its price comes from the replacement row"
run_gw --data-dir "$TMP/good" cost --gpu rtx-4090 --cloud-rate 1
is "$rc" 2 "the embedded cards are gone with a replacement table"
like "$err" "unknown GPU 'rtx-4090'" "and the miss is reported as an unknown GPU"

{ echo "$hdr"; echo "# a comment line"; row eight "test fixture"; } > "$TMP/nan/gpus.tsv"
run_gw --data-dir "$TMP/nan" cost --gpu my-card --cloud-rate 1
is "$rc" 1 "non-numeric field: exit 1"
like "$err" "^gpuwise: table 'gpus' line 3, column 'vram_gib': 'eight' is not a number$" "non-numeric field: table, line and column named"
is "$out" "" "non-numeric field: nothing on stdout"

GPUWISE_DATA="$TMP/nan" run_gw cost --gpu my-card --cloud-rate 1
is "$rc" 1 "GPUWISE_DATA reads the same directory"

{ echo "$hdr" | sed 's/	source$//'; row 16 "x" | sed 's/	x$//'; } > "$TMP/nosrc/gpus.tsv"
run_gw --data-dir "$TMP/nosrc" cost --gpu my-card --cloud-rate 1
is "$rc" 1 "no source column: exit 1"
like "$err" "table 'gpus': no 'source' column" "no source column: named"

{ echo "$hdr"; row 16 "" ; } > "$TMP/empty-src/gpus.tsv"
run_gw --data-dir "$TMP/empty-src" cost --gpu my-card --cloud-rate 1
is "$rc" 1 "empty source: exit 1"
like "$err" "table 'gpus' line 2: empty source" "empty source: line named"

{ echo "$hdr"; printf 'my-card\tMy Card\tNVIDIA\n'; } > "$TMP/cols/gpus.tsv"
run_gw --data-dir "$TMP/cols" cost --gpu my-card --cloud-rate 1
is "$rc" 1 "wrong column count: exit 1"
like "$err" "table 'gpus' line 2: 3 columns, expected 22" "wrong column count: counts named"

run_gw --data-dir "$TMP/none" cost --gpu rtx-4090 --cloud-rate 1 --json
is "$rc" 0 "a table the directory lacks falls back to the built-in copy"
is "$(printf '%s' "$out" | jget 'd["price_usd"]')" "$(awk -F'\t' '$1 == "rtx-4090" && $3 == "USD" {print $2 ".0"}' "$GW_TOP/data/new-prices.tsv")" "the built-in price is used"
run_gw --data-dir "$TMP/none" cost --gpu my-card --cloud-rate 1
is "$rc" 2 "the replacement card is unknown there"

run_gw --data-dir "$TMP/no-such-dir" cost --gpu rtx-4090 --cloud-rate 1
is "$rc" 1 "missing data directory: exit 1"
like "$err" "cannot open data directory '.*no-such-dir'" "missing data directory: named"

done_testing
