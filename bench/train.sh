#!/bin/sh
# Benchmark: a fine-tuning plan (plan/train: four phases, and the advice
# that replans), in process (bench/train_bench.c linked with the release
# objects) and as the whole `gpuwise plan ... --train` process.  The target
# is a training plan under 5 ms.  Env: GW, GW_BUILD.  Prints figures only.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${GW_BUILD:-build/release}
case $build in /*) ;; *) build=$top/$build ;; esac
GW=${GW:-$top/gpuwise}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gw-bench-train.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
objs=$(find "$build/obj" -name '*.o' ! -name main.o | sort)
# shellcheck disable=SC2086
cc -std=c17 -D_GNU_SOURCE -O2 -I"$top/src" -o "$tmp/train_bench" "$top/bench/train_bench.c" \
	$objs $(pkg-config --libs jansson sqlite3 libmicrohttpd 2>/dev/null || echo -ljansson -lsqlite3 -lmicrohttpd) -ldl -lm -lpthread
echo "== fine-tuning plan (bench/train.sh)"
"$tmp/train_bench"
runs=20
for args in "--version" "plan llama-2-7b --train lora --vram 8G"; do
	t0=$(date +%s%N)
	i=0
	# shellcheck disable=SC2086
	while [ $i -lt $runs ]; do "$GW" $args >/dev/null 2>&1 || true; i=$((i + 1)); done
	t1=$(date +%s%N)
	echo "gpuwise $args (whole process): $(( (t1 - t0) / runs / 1000 )) us per run ($runs runs)"
done
