#!/bin/sh
# `make run` on a machine without a GPU (issue 10): it used to end with
# "make: [Makefile] Error 4 (ignored)".  Now each command's exit status is
# explained and make itself succeeds with nothing that looks like an error.
. "$(dirname "$0")/lib.sh"
if ! command -v make >/dev/null || [ ! -x "$GW_TOP/gpuwise" ]; then
	skip "make or the release binary ($GW_TOP/gpuwise) is missing"
	done_testing
	exit
fi
unset MAKEFLAGS MFLAGS MAKELEVEL
export GPUWISE_ROOT="$FIX/roots/nogpu" GPUWISE_NVML_LIB=none GPUWISE_CUDA_LIB=none
out=$(make --no-print-directory -C "$GW_TOP" run 2>&1); rc=$?
is "$rc" 0 "make run succeeds without a GPU"
unlike "$out" "Error [0-9]|\\(ignored\\)" "  ... with no make error line"
like "$out" "gpuwise doctor: exit [34], (warnings|failures): " "  ... doctor's status is explained"
like "$out" "gpuwise status: exit 0, ok" "  ... status's too"
like "$out" "gpuwise plan: exit [034], " "  ... and plan's"
like "$(printf '%s\n' "$out" | tail -1)" "^make run: done" "  ... and it says it is done"
done_testing
