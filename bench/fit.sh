#!/bin/sh
# Wall time of `gpuwise fit` over the whole catalog (issue 32: under one
# second).  Prints the models planned, measured vs target.
set -u
GW=${GW:-./gpuwise}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gw-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export HOME="$tmp" OLLAMA_MODELS="$tmp/none" HF_HUB_CACHE="$tmp/none"
n=5
"$GW" fit --gpu 4060-laptop --ram 16G --json > "$tmp/out.json" 2>/dev/null
rc=$?
if [ "$rc" -ne 0 ]; then
	echo "fit: gpuwise failed (exit $rc)"
	exit 1
fi
models=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["models_tried"])' "$tmp/out.json")
t0=$(date +%s%N)
i=0
while [ "$i" -lt "$n" ]; do
	"$GW" fit --gpu 4060-laptop --ram 16G >/dev/null 2>&1
	i=$((i + 1))
done
t1=$(date +%s%N)
ms=$(( (t1 - t0) / 1000000 / n ))
echo "fit --gpu 4060-laptop --ram 16G: $models models planned in $ms ms per run (target: under 1000 ms)"
[ "$ms" -lt 1000 ]
