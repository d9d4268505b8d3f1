#!/bin/sh
# llama.cpp as the oracle for its own buffers: GGUF files written by the
# gguf package, loaded by llama-cpp-python on the CPU, their printed model /
# KV / compute buffers compared with gpuwise plan.  Skips when llama_cpp or
# gguf is not installed (pip install llama-cpp-python gguf).
. "$(dirname "$0")/lib.sh"

if ! python3 -c 'import llama_cpp, gguf, numpy' >/dev/null 2>&1; then
	skip "llama_cpp (llama-cpp-python) or gguf is not installed"
	done_testing
	exit 0
fi
report=$(python3 "$GW_TOP/tests/oracle/llamacpp_oracle.py" "$GW" --quick 2>&1)
status=$?
printf '%s\n' "$report" | sed 's/^/# /'
is "$status" 0 "model and KV buffers within 1% of llama.cpp, compute within 25%"
like "$report" '# [1-9][0-9]* loads, 0 out of tolerance' "llama.cpp loaded every file"
done_testing
