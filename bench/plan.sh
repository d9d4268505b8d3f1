#!/bin/sh
# Wall time of `gpuwise plan` on a catalog model and on a GGUF whose header
# describes 40 GB of tensors (a sparse file: header only, no data written).
# Targets: under 5 ms and under 20 ms per run.  Prints measured vs target.
set -u
GW=${GW:-./gpuwise}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gw-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
gguf=$tmp/llama-70b-q4_k.gguf

# A GGUF v3 header for a Llama-3-70B shape with Q4_K tensors (sparse data).
top=$(cd "$(dirname "$0")/.." && pwd)
set -- $(python3 "$top/tests/e2e/gguf_llama.py" "$gguf" 80 8192 64 8 28672 128256)
echo "# GGUF header describing $(awk -v b="$1" 'BEGIN { printf "%.1f", b / 1e9 }') GB of tensors"

run() { # run LABEL TARGET_MS N ARGS...
	label=$1 target=$2 n=$3
	shift 3
	"$GW" plan "$@" >/dev/null 2>&1
	rc=$?
	if [ "$rc" -gt 4 ] || [ "$rc" -eq 1 ] || [ "$rc" -eq 2 ]; then
		echo "plan $label: gpuwise failed (exit $rc)"
		return 1
	fi
	t0=$(date +%s%N)
	i=0
	while [ "$i" -lt "$n" ]; do
		"$GW" plan "$@" >/dev/null 2>&1
		i=$((i + 1))
	done
	t1=$(date +%s%N)
	awk -v l="$label" -v ns=$((t1 - t0)) -v n="$n" -v t="$target" \
		'BEGIN { ms = ns / n / 1e6; printf "plan %-34s %7.2f ms per run (target < %d ms) %s\n", l, ms, t, (ms < t ? "ok" : "SLOWER") }'
}

# The catalog's answer, offline: online, a registry or Hub name (llama3.1:8b) asks
# the registry first for the exact file (a network round trip, not plan's time)
GPUWISE_OFFLINE=1 run "catalog llama3.1:8b (rtx-4090)" 5 50 llama3.1:8b --gpu rtx-4090
GPUWISE_OFFLINE=1 run "catalog llama-3-70b (offload)" 5 50 llama-3-70b --gpu rtx-4090 --ram 64G
run "GGUF header of 40 GB (rtx-4090)" 20 50 "$gguf" --gpu rtx-4090 --ram 64G
run "GGUF header of 40 GB, --json" 20 50 "$gguf" --gpu 2x3090 --json
