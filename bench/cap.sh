#!/bin/sh
# libgpuwise-cap.so: the cost it adds per cuMemAlloc_v2 and per cuMemFree_v2
# (issue 14; target under 200 ns each).  bench/cap_bench.c is linked with
# the fake libcuda and run plain, then under gpuwise run --vram-cap (the
# library preloaded, a region in place), by symbol and through
# cuGetProcAddress_v2.  The median of 5 runs of 200 batches of 1024 calls.
# Env: GW (binary), GW_BUILD (release build dir, with fake/ and the library).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${GW_BUILD:-build/release}
case $build in /*) ;; *) build=$top/$build ;; esac
GW=${GW:-$top/gpuwise}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gw-bench-cap.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cc -std=c17 -D_GNU_SOURCE -O2 -o "$tmp/cap_bench" "$top/bench/cap_bench.c" "$build/fake/libcuda.so"
export GPUWISE_FAKE_SCENARIO="$top/tests/fixtures/scenarios/desktop-4090.json" GPUWISE_NO_STATUS_LINE=1
unset LD_PRELOAD GPUWISE_CAP_REGION
echo "== libgpuwise-cap.so (bench/cap.sh): added cost per call, fake libcuda, one thread"
# median ROUNDS_OF_5 CMD...: the median alloc and free figures of 5 runs
median() {
	for _ in 1 2 3 4 5; do "$@" 2>/dev/null | grep '^alloc_ns='; done | python3 -c '
import sys
rows = [dict(kv.split("=") for kv in l.split()) for l in sys.stdin]
a = sorted(float(r["alloc_ns"]) for r in rows)
f = sorted(float(r["free_ns"]) for r in rows)
print("%.1f %.1f" % (a[len(a) // 2], f[len(f) // 2]))'
}
for way in symbol proc; do
	arg=$([ $way = proc ] && echo proc || echo "")
	# shellcheck disable=SC2046,SC2086
	set -- $(median "$tmp/cap_bench" 200 $arg)
	base_a=$1 base_f=$2
	# shellcheck disable=SC2046,SC2086
	set -- $(median "$GW" run --no-gpu --vram-cap 64G -- "$tmp/cap_bench" 200 $arg)
	cap_a=$1 cap_f=$2
	python3 - "$way" "$base_a" "$base_f" "$cap_a" "$cap_f" <<'PY'
import sys
way, ba, bf, ca, cf = sys.argv[1], *map(float, sys.argv[2:])
for what, b, c in (("cuMemAlloc_v2", ba, ca), ("cuMemFree_v2", bf, cf)):
    d = c - b
    print("%-8s %-14s without cap %7.1f ns, with cap %7.1f ns: +%.1f ns per call (%s the 200 ns target)"
          % (way, what, b, c, d, "meets" if d < 200 else "OVER"))
PY
done
