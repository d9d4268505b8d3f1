#!/bin/sh
# Validation of gpuwise plan against measurements: every expressible row of
# tests/validation/plan-measurements.tsv, predicted against measured.
. "$(dirname "$0")/lib.sh"

report=$(python3 "$GW_TOP/tests/validation/validate_plan.py" "$GW" "$GW_TOP/tests/validation" 2>&1)
status=$?
printf '%s\n' "$report" | sed 's/^/# /'
is "$status" 0 "validation: llama.cpp buffers within 3% each, nvidia-smi median within 10%, decode median within 25%"
like "$report" '# llama.cpp buffers: [0-9]+ figures' "llama.cpp buffer rows were planned"
like "$report" '# nvidia-smi totals: [1-9][0-9]* rows' "nvidia-smi rows were planned"
like "$report" '# decode tok/s: [1-9][0-9]* rows' "decode rows were planned"
unlike "$report" 'FAIL' "no row out of tolerance"
done_testing
