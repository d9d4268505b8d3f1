#!/bin/sh
# gpuwise bench's CPU Triad against a plain C STREAM Triad built with the
# release flags (tests/bench/ref_triad.c): one thread, the same array size.
# Pairs run back to back with the order alternating, so each pair sees the
# same load; the figure is the median of the pairs' ratios (target: within
# 5% of 1).  Moved here from tests/e2e/bench.t: a timed comparison is a
# benchmark, not a test.  Prints figures; asserts nothing.
set -eu
GW=${GW:-./gpuwise}
PAIRS=${PAIRS:-10}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gw-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
cc -std=c17 -D_GNU_SOURCE -O2 -g -o "$TMP/ref_triad" tests/bench/ref_triad.c
gwrun() {
	"$GW" bench --quick --no-cuda --no-opencl --threads 1 --max-n 10000 --runs 20 --json 2>/dev/null > "$TMP/j.json"
	g=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print([f["value_gbs"] for f in d["devices"][0]["figures"] if f["id"] == "triad"][0])' "$TMP/j.json")
	bytes=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["devices"][0]["stream_array_bytes"])' "$TMP/j.json")
}
ratios="" i=0
while [ "$i" -lt "$PAIRS" ]; do
	i=$((i + 1))
	if [ $((i % 2)) -eq 1 ]; then
		gwrun; r=$("$TMP/ref_triad" "$bytes" 20)
	else
		r=$("$TMP/ref_triad" "${bytes:-134217728}" 20); gwrun
	fi
	ratios="$ratios $g/$r"
done
python3 - $ratios <<'PY'
import statistics, sys
pairs = [tuple(float(v) for v in x.split("/")) for x in sys.argv[1:]]
med = statistics.median(g / r for g, r in pairs)
print("bench triad: CPU Triad, one thread, %d pairs: median gpuwise/reference %.3f (target 0.95-1.05); best gpuwise %.2f GB/s, best reference %.2f GB/s"
      % (len(pairs), med, max(g for g, _ in pairs), max(r for _, r in pairs)))
PY
