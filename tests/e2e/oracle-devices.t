#!/bin/sh
# llama.cpp as the oracle for per-device compute buffers: two llama.cpp RPC
# servers on this CPU stand in for two GPUs (tests/oracle/slots_oracle.py,
# devices part).  Each device's compute buffer of a layer split over two
# devices, of -ngl below all layers and of --n-cpu-moe (the CPU holding what
# it computes, the last device the output) against gpuwise plan's.
# Needs llama.cpp built with RPC from the same source as llama-cpp-python
# 0.3.36: .ci/run builds it into build/llama-rpc (GW_LLAMA_RPC_LIB=.../libllama.so
# elsewhere, ggml-rpc-server beside it); skips with the reason without it.
. "$(dirname "$0")/lib.sh"

: "${GW_LLAMA_RPC_LIB:=$GW_TOP/build/llama-rpc/bin/libllama.so}"
need_llama_cpp
if [ ! -f "$GW_LLAMA_RPC_LIB" ]; then
	skip "several devices: no RPC build of llama.cpp at $GW_LLAMA_RPC_LIB (.ci/run builds build/llama-rpc)"
	done_testing
	exit 0
fi
export GW_LLAMA_RPC_LIB
report=$(GW_SLOTS_SKIP=1 python3 "$GW_TOP/tests/oracle/slots_oracle.py" "$GW" 2>&1)
status=$?
printf '%s\n' "$report" | sed 's/^/# /'
is "$status" 0 "the RPC devices loaded every file (model buffers equal to llama.cpp's)"
ndev=$(printf '%s\n' "$report" | grep -c '	\(2 devices\|1 device\)')
ok "$([ "$ndev" -ge 20 ]; echo $?)" "per-device compute buffers of $ndev device rows over RPC devices compared (at least 20)"
nsplit=$(printf '%s\n' "$report" | grep -c '	2 devices, all layers	')
ok "$([ "$nsplit" -ge 6 ]; echo $?)" "a layer split over two devices: $nsplit device rows"
nngl=$(printf '%s\n' "$report" | grep -c '	1 device, -ngl ')
ncpumoe=$(printf '%s\n' "$report" | grep -c '	1 device, --n-cpu-moe ')
ok "$([ "$nngl" -ge 4 ] && [ "$ncpumoe" -ge 2 ]; echo $?)" "partial offload: -ngl ($nngl rows) and --n-cpu-moe ($ncpumoe rows), the CPU's buffer among them"
nout=$(printf '%s\n' "$report" | sed -n 's/^# compute outside 5%: \([0-9]*\) of.*/\1/p')
is "${nout:-?}" 0 "every device's compute buffer within 5% of llama.cpp's"
neq=$(printf '%s\n' "$report" | grep '	\(2 devices\|1 device\)' | awk -F'\t' '$NF != "+0.0%" && $NF != "-0.0%"' | wc -l)
is "$neq" 0 "and equal to it (to 0.05%) on every device row"
done_testing
