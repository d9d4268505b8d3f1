#!/bin/sh
# llama.cpp's own quantizer (llama_model_quantize) as the oracle for the
# weights: an F16 llama file (tests/oracle/llamacpp_oracle.py, 8 layers)
# quantized to the common recipes (half of them here, the other half in
# oracle-recipes-2.t, which runs this file with GW_ORACLE_RECIPES=2/2), the tensor bytes it wrote against gpuwise
# plan's estimate from the F16 file's shapes (within 1%) and its plan of the
# quantized file (exact).  The loads: oracle.t and oracle-2.t .. oracle-6.t.
# Skips when llama_cpp or gguf is not installed (see oracle.t).
. "$(dirname "$0")/lib.sh"

need_llama_cpp
part=${GW_ORACLE_RECIPES:-1/2}
report=$(python3 "$GW_TOP/tests/oracle/llamacpp_oracle.py" "$GW" --quick --shard "recipes:$part" 2>&1)
status=$?
printf '%s\n' "$report" | sed 's/^/# /'
is "$status" 0 "every recipe's weights as llama.cpp's quantizer writes them (estimate within 1%, the quantized file exact)"
like "$report" "^# recipes: 4 of 4 within tolerance of llama.cpp's quantizer \(shard $part of 8\)" "four of the eight recipes quantized and compared"
is "$(printf '%s\n' "$report" | grep -cE '^(q[0-9]_[a-z0-9_]+)\s[0-9.]+\s[0-9.]+\s[0-9.]+\s[-+][0-9.]+%')" 4 "a row per recipe: llama.cpp's bytes, the plan of its file, the estimate, the error"
done_testing
