#!/bin/sh
# Byte-for-byte comparison of `gpuwise plan --json` between two builds on a
# fixed set of plans (catalog models, an offload, several GPUs, MoE, CPU,
# Vulkan, Apple, serving, a GGUF header), for changes meant to make plans
# faster without changing them.  Usage: tools/plan-json-same.sh OLD NEW
# Exit 0 when every plan's JSON and exit status are the same, 1 otherwise.
set -u
old=${1:?usage: plan-json-same.sh OLD-GPUWISE NEW-GPUWISE}
new=${2:?usage: plan-json-same.sh OLD-GPUWISE NEW-GPUWISE}
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gw-same.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
gguf=$tmp/llama-70b-q4_k.gguf
python3 "$top/tests/e2e/gguf_llama.py" "$gguf" 80 8192 64 8 28672 128256 >/dev/null

n=0 bad=0
while IFS= read -r args; do
	[ -z "$args" ] && continue
	n=$((n + 1))
	# shellcheck disable=SC2086
	"$old" plan $args --json >"$tmp/a" 2>"$tmp/ae"
	ra=$?
	# shellcheck disable=SC2086
	"$new" plan $args --json >"$tmp/b" 2>"$tmp/be"
	rb=$?
	if [ "$ra" -ne "$rb" ] || ! cmp -s "$tmp/a" "$tmp/b" || ! cmp -s "$tmp/ae" "$tmp/be"; then
		bad=$((bad + 1))
		echo "DIFFERENT: plan $args (exit $ra vs $rb)"
		diff "$tmp/a" "$tmp/b" | head -5
	else
		echo "same: plan $args (exit $ra, $(wc -c <"$tmp/a") bytes)"
	fi
done <<PLANS
llama3.1:8b --gpu rtx-4090
llama-3-70b --gpu rtx-4090 --ram 64G
llama-3.1-70b --gpu 2x3090 --ram 64G
qwen3-30b-a3b --gpu rtx-5070-ti --ram 64G
gpt-oss-120b --gpu rtx-pro-6000
qwen3-32b --gpu rtx-4090 --ctx 32768 --kv-type q8_0
llama3.1:8b --gpu none --ram 32G
llama3.1:8b --gpu rtx-5090 --backend vulkan
llama-3.3-70b --gpu m3-ultra
llama3.1:8b --gpu rtx-4090 --parallel 8
gemma-3-27b --gpu rx-7900-xtx --ram 64G
$gguf --gpu 2x3090
PLANS
echo "# $n plans, $bad different"
[ "$bad" -eq 0 ]
