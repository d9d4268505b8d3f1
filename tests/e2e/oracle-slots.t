#!/bin/sh
# llama.cpp as the oracle for llama-server's parallel slots: the GGUF files
# of tests/oracle/llamacpp_oracle.py loaded by llama-cpp-python 0.3.36 on
# the CPU with 4 sequences, a KV stream per sequence (llama.cpp's default,
# `llama-server -np 4`) and one unified cache (`-np auto`, --kv-unified),
# flash attention on and off; printed model / KV (+ RS) / compute buffers
# against gpuwise plan --parallel 4 [--kv-unified] (tests/oracle/slots_oracle.py).
# Several devices: tests/e2e/oracle-devices.t.  Skips without llama_cpp.
. "$(dirname "$0")/lib.sh"

# The options themselves (no llama.cpp needed): a stream per slot by
# default, one with --kv-unified, llama-server's -np auto = 4 unified.
run_gw plan gemma-3-4b --vram 80G --parallel 4 --json
j=$out
is "$(printf '%s' "$j" | jget 'd["kv_streams"], d["kv_unified"], d["kv_stream_cells"], d["kv_swa_cells"]')" \
	"(4, False, 4096, 1536)" "--parallel 4: a stream of 4096 cells per sequence, a window of 1536 each"
run_gw plan gemma-3-4b --vram 80G --parallel 4 --kv-unified --json
j=$out
is "$(printf '%s' "$j" | jget 'd["kv_streams"], d["kv_unified"], d["kv_stream_cells"], d["kv_swa_cells"]')" \
	"(1, True, 16384, 4608)" "--kv-unified: one stream of 16384 cells, 4 windows + the batch"
run_gw plan gemma-3-4b --vram 80G --parallel auto --json
j=$out
is "$(printf '%s' "$j" | jget 'd["parallel"], d["kv_unified"]')" "(4, True)" "--parallel auto: llama-server's -np auto"
run_gw plan gemma-3-4b --vram 80G --parallel auto --no-kv-unified --json
j=$out
is "$(printf '%s' "$j" | jget 'd["parallel"], d["kv_streams"]')" "(4, 4)" "--no-kv-unified after auto splits the slots"
run_gw plan gemma-3-4b --vram 80G --parallel 0
is "$rc" 2 "--parallel 0: exit 2"
like "$err" "gpuwise: invalid --parallel '0' \\(a whole number from 1 to 4096, or auto\\)" "--parallel 0: the message"

need_llama_cpp
report=$(GW_LLAMA_RPC_LIB= python3 "$GW_TOP/tests/oracle/slots_oracle.py" "$GW" 2>&1)
status=$?
printf '%s\n' "$report" | sed 's/^/# /'
is "$status" 0 "model and KV (+ recurrent state) buffers equal to llama.cpp's with 4 slots, split and unified"
n=$(printf '%s\n' "$report" | sed -n 's/^# \([0-9]*\) slot loads of \([0-9]*\) architectures.*/\1 \2/p')
set -- $n
ok "$([ "${1:-0}" -ge 40 ] && [ "${2:-0}" -ge 10 ]; echo $?)" "llama.cpp loaded ${1:-?} files of ${2:-?} architectures with 4 slots"
# the sliding-window caches: a stream per sequence keeps a window each
like "$report" 'gemma3	split	0	[0-9.]*	[0-9.]*	72.00	72.00	' "Gemma 3, 4 split slots: 72.00 MiB of KV (a window per stream)"
like "$report" 'gemma3	unified	0	[0-9.]*	[0-9.]*	57.00	57.00	' "Gemma 3, 4 unified slots: 57.00 MiB of KV (4 windows in one cache)"
nout=$(printf '%s\n' "$report" | sed -n 's/^# compute outside 5%: \([0-9]*\) of.*/\1/p')
is "${nout:-?}" 0 "compute within 5% of llama.cpp's on every load (and on every device)"
# Several devices: tests/e2e/oracle-devices.t.
done_testing
