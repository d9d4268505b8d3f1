#!/bin/sh
# llama.cpp as the oracle for its own buffers: GGUF files of 12
# architectures written by the gguf package, loaded by llama-cpp-python
# 0.3.36 on the CPU, their printed model / KV / RS / compute buffers compared
# with gpuwise plan.  Skips when llama_cpp or gguf is not installed
# (.ci/run builds them; by hand: CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install
# llama-cpp-python==0.3.36 gguf).
. "$(dirname "$0")/lib.sh"

if ! python3 -c 'import llama_cpp, gguf, numpy' >/dev/null 2>&1; then
	skip "llama_cpp (llama-cpp-python) or gguf is not installed"
	done_testing
	exit 0
fi
report=$(python3 "$GW_TOP/tests/oracle/llamacpp_oracle.py" "$GW" --quick 2>&1)
status=$?
printf '%s\n' "$report" | sed 's/^/# /'
is "$status" 0 "model and KV (+ recurrent state) buffers equal to llama.cpp's on every load"
like "$report" '# [1-9][0-9]* loads of 12 architectures, 0 out of tolerance' "llama.cpp loaded every file of 12 architectures"
# The compute buffer: the phase model takes the live set; where ggml-alloc's
# placement of the logits decides the peak it is off by up to 18%.  No
# regression beyond the 12 rows known (docs/plan-model.md); the goal of every
# row within 5% is printed until it is met (tests/run.sh counts a TODO as a
# failure).
nout=$(printf '%s\n' "$report" | sed -n 's/^# compute outside 5%: \([0-9]*\) of.*/\1/p')
ok "$([ -n "$nout" ] && [ "$nout" -le 12 ]; echo $?)" "compute within 5% of llama.cpp's on all but at most 12 of 84 loads (outside: ${nout:-?})"
[ "${nout:-1}" -eq 0 ] || diag "goal not met yet: $nout compute rows outside 5% (phase model vs ggml-alloc placement)"
done_testing
