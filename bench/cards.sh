#!/bin/sh
# Wall time of `gpuwise cards` (every catalog GPU, sets of up to 4 cards,
# each planned in full), of fine-tuning and image plans, and of `gpuwise
# cost`.  Prints figures; nothing is asserted.
set -u
GW=${GW:-./gpuwise}

run() { # run LABEL N ARGS...
	label=$1 n=$2
	shift 2
	"$GW" "$@" >/dev/null 2>&1
	rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 4 ]; then
		echo "$label: gpuwise failed (exit $rc)"
		return 1
	fi
	t0=$(date +%s%N)
	i=0
	while [ "$i" -lt "$n" ]; do
		"$GW" "$@" >/dev/null 2>&1
		i=$((i + 1))
	done
	t1=$(date +%s%N)
	awk -v l="$label" -v ns=$((t1 - t0)) -v n="$n" \
		'BEGIN { printf "%-52s %7.2f ms per run\n", l, ns / n / 1e6 }'
}

run "cards llama-3.1-8b q4_k_m (all GPUs, up to 4x)" 20 cards llama-3.1-8b --quant q4_k_m
run "cards llama-3.1-70b q4_k_m (all GPUs, up to 4x)" 20 cards llama-3.1-70b --quant q4_k_m
run "cards llama-3.1-8b --train qlora" 20 cards llama-3.1-8b --train qlora
run "cards flux.1-dev --image 1024x1024" 20 cards flux.1-dev --image 1024x1024
run "plan llama-2-7b --train lora --vram 8G (advice)" 50 plan llama-2-7b --train lora --vram 8G
run "plan sdxl --image 1024x1024 --gpu rtx-4090" 50 plan sdxl --image 1024x1024 --gpu rtx-4090
run "cost --gpu rtx-4090" 50 cost --gpu rtx-4090
