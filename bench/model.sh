#!/bin/sh
# Benchmark: reading model headers.  A sparse GGUF whose header describes
# ~40 GB of tensors (Llama-3-70B Q4_K_M shapes, 128k-token vocabulary) is
# read by gguf_read (a C driver linked with the release objects), then by
# the whole `gpuwise plan FILE` once the plan command takes files.
# Env: GW (binary), GW_BUILD (release build dir).  Prints figures only.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${GW_BUILD:-build/release}
case $build in /*) ;; *) build=$top/$build ;; esac
GW=${GW:-$top/gpuwise}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gw-bench-model.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
objs=$(find "$build/obj" -name '*.o' ! -name main.o | sort)
# shellcheck disable=SC2086
cc -std=c17 -D_GNU_SOURCE -O2 -I"$top/src" -I"$top/tests/unit" -o "$tmp/model_bench" "$top/bench/model_bench.c" \
	$objs $(pkg-config --libs jansson sqlite3 2>/dev/null || echo -ljansson -lsqlite3) -ldl -lm -lpthread
echo "== model headers (bench/model.sh)"
"$tmp/model_bench" "$tmp" llama-3.1-8b keep
f=$tmp/bench-70b.gguf
echo "sparse file: $(du -k "$f" | cut -f1) KiB on disk for $(stat -c %s "$f") bytes"
if [ -x "$GW" ] && "$GW" plan "$f" --vram 80G --json >/dev/null 2>&1; then
	runs=20
	t0=$(date +%s%N)
	i=0
	while [ $i -lt $runs ]; do "$GW" plan "$f" --vram 80G --json >/dev/null 2>&1 || true; i=$((i + 1)); done
	t1=$(date +%s%N)
	echo "gpuwise plan (40 GB GGUF, whole process): $(( (t1 - t0) / runs / 1000 )) us per run ($runs runs)"
else
	echo "gpuwise plan FILE: not measured (the plan command does not take this file yet)"
fi
