#!/bin/sh
# llama.cpp as the oracle for its own buffers: GGUF files of 19 original
# architectures (tests/oracle/llamacpp_oracle.py) and of the architectures
# issue 22 added (tests/oracle/archs.py: real per-layer widths, few
# layers), written by the gguf package, loaded by llama-cpp-python 0.3.36
# on the CPU, their printed model / KV / RS / compute buffers compared with
# gpuwise plan.  The added architectures load at issue 22's settings (q4_0
# and q5_1 caches, ubatch 1024 and 4096, 65536 cells).  --quick runs a
# subset of the settings; the whole sweep is the same script without it.
# Skips when llama_cpp or gguf is not installed (.ci/run builds them; by
# hand: CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install llama-cpp-python==0.3.36 gguf).
. "$(dirname "$0")/lib.sh"

need_llama_cpp
# the files are shared out among oracle.t (shard 1) and oracle-2.t .. oracle-6.t,
# which run this file with GW_ORACLE_SHARD=K/6; the quantization recipes are
# oracle-recipes.t's (GW_ORACLE_SHARD=1/1: all of it here)
shard=${GW_ORACLE_SHARD:-1/6}
report=$(python3 "$GW_TOP/tests/oracle/llamacpp_oracle.py" "$GW" --quick --shard "$shard" 2>&1)
status=$?
printf '%s\n' "$report" | sed 's/^/# /'
is "$status" 0 "model and KV (+ recurrent state) buffers equal to llama.cpp's on every load"
narch=
if printf '%s\n' "$report" | grep -q '^# [0-9]* loads of [0-9]* files, [0-9]* architectures, 0 out of tolerance'; then
	narch=$(printf '%s\n' "$report" | sed -n 's/^# shard [0-9/]*: [0-9]* of [0-9]* files, \([0-9]*\) architectures in all shards$/\1/p')
fi
ok "$([ "${narch:-0}" -ge 45 ]; echo $?)" "llama.cpp loaded every file of shard $shard, of ${narch:-?} architectures in all shards (at least 45)"
# The compute buffer.  Where src/plan/lgraph.c builds the graph it is
# llama.cpp's node for node with ggml's allocator replayed on it: equal to
# the printed MiB on every load of a built graph, within 5% on every load
# on the phase model (docs/plan-model.md).
outline=$(printf '%s\n' "$report" | grep '^# compute outside 5%: [0-9]* of [0-9]* loads')
outside=$(printf '%s\n' "$outline" | sed -n 's/^# compute outside 5%: [0-9]* of [0-9]* loads: //p' | tr ',' '\n' |
	grep -c .)
ok "$([ -n "$outline" ] && [ "$outside" -eq 0 ]; echo $?)" "compute within 5% of llama.cpp's on every load ($outside outside)"
eqline=$(printf '%s\n' "$report" | grep '^# compute equal to llama.cpp')
neq=$(printf '%s\n' "$eqline" | sed -n 's/.*: \([0-9]*\) of \([0-9]*\) loads.*/\1 \2/p')
others=$(printf '%s\n' "$eqline" | sed -n 's/.*(not: \(.*\))$/\1/p' | tr ',' '\n' | grep -c .)
set -- $neq
ok "$([ -n "${1:-}" ] && [ "$1" -gt 0 ] && [ "$others" -eq 0 ]; echo $?)" \
	"compute equal to llama.cpp's printed MiB on every load of a built graph (${1:-?} of ${2:-?})"
done_testing
