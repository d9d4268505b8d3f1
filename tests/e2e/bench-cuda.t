#!/bin/sh
# gpuwise bench, the CUDA path through the fake libcuda that runs the PTX
# kernels' C twins; the CPU Triad against a plain C reference built with the
# release flags; the committed PTX against nvcc and ptxas where the CUDA
# toolkit is present.  Usage, CPU and OpenCL: bench.t.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bench-lib.sh"

# ---- CUDA driver API path against the fake libcuda (kernels' C twins) --------
export GPUWISE_CUDA_LIB="$GW_FAKE/cudadeep.so"
# the fake device says 32 MiB free: bench sizes its arrays to its floor of
# 3 x 8 MB (the same kernels, launches and checks on an eighth of the data)
export GPUWISE_FAKE_DEEP_FREE_MB=32
run_gw bench --quick --no-opencl --max-n 1000000 --runs 2 --json
is "$rc" 0 "bench through the fake libcuda: exit 0"
printf '%s\n' "$out" > "$TMP/cuda.json"
for k in copy triad dot h2d_pinned d2h_pinned h2d_pageable d2h_pageable fp32_fma mma_fp16 mma_bf16 mma_tf32; do
	is "$(fig "$TMP/cuda.json" cuda $k validated)" True "CUDA $k: launched and validated"
done
is "$(fig "$TMP/cuda.json" cuda triad peak)" 672.096 "CUDA Triad peak: 2 x 7001 MHz x 384 bits / 8 from the device attributes"
is "$(printf '%s' "$out" | jget '[all(s["validated"] and s["device_ms"] > 0 for s in x["sum_of_squares"]) for x in d["devices"] if x["kind"] == "cuda"][0]')" True \
	"CUDA sum of squares: the two-stage reduction's partials add up to the exact sum"
# peaks from the hardware layer (PCIe link from NVML) and the catalog (TFLOPS) on an 8x H100 scenario
# (the fake NVML's scenario without its fixture root: the root has no CPU
# cache in sysfs, and glibc's figure for this CPU's made STREAM arrays of 1 GB)
GPUWISE_FAKE_SCENARIO="$FIX/scenarios/server-8xh100.json" \
	GPUWISE_NVML_LIB="$GW_FAKE/libnvidia-ml.so" run_gw bench --quick --no-opencl --max-n 10000 --runs 2 --json
printf '%s\n' "$out" > "$TMP/h100.json"
is "$(fig "$TMP/h100.json" cuda h2d_pinned peak_from)" "PCIe gen 5 x16 link" "pinned copy peak: the PCIe link NVML reports"
is "$(fig "$TMP/h100.json" cuda h2d_pinned peak)" 63.008 "PCIe gen 5 x16: 16 lanes x 3.938 GB/s"
is "$(fig "$TMP/h100.json" cuda mma_bf16 peak)" 989.0 "bf16 mma.sync peak: the catalog's dense FP16/BF16 figure for the H100 SXM"
is "$(fig "$TMP/h100.json" cuda mma_tf32 peak)" 494.5 "tf32 peak: half the dense FP16 figure"
like "$(fig "$TMP/h100.json" cuda triad peak_from)" "the catalog says 3350 GB/s" "memory peak: device attributes, and the catalog's figure when they differ"
GPUWISE_FAKE_DEEP=corrupt run_gw bench --quick --no-opencl --max-n 100000 --runs 2
is "$rc" 4 "a device returning a flipped bit: exit 4"
like "$out" "WRONG" "a device returning a flipped bit: the figure says WRONG"
GPUWISE_FAKE_DEEP=noinit run_gw bench --quick --no-opencl --max-n 100000 --runs 2 --json
is "$rc" 0 "cuInit failing: the CPU is still measured, exit 0"
like "$(printf '%s' "$out" | jget 'd["cuda_note"]')" "does not initialise: CUDA error 100" "cuInit failing: the reason"
unset GPUWISE_CUDA_LIB

# ---- the CPU Triad against a plain C Triad: functional here, timed in `make bench` ----
# (bench/triad.sh pairs the two runs and prints the median ratio; a timed
# comparison under a shared machine's load is a benchmark, not a test)
REL="$GW_TOP/gpuwise"
if [ -x "$REL" ] && cc -std=c17 -D_GNU_SOURCE -O2 -g -o "$TMP/ref_triad" "$GW_TOP/tests/bench/ref_triad.c" 2>"$TMP/cc.err"; then
	j=$("$REL" bench --quick --no-cuda --no-opencl --threads 1 --max-n 10000 --runs 2 --json 2>/dev/null)
	g=$(printf '%s' "$j" | jget '[f["value_gbs"] for f in d["devices"][0]["figures"] if f["id"] == "triad" and f["validated"]][0]')
	bytes=$(printf '%s' "$j" | jget 'd["devices"][0]["stream_array_bytes"]')
	r=$("$TMP/ref_triad" "$bytes" 2 2>/dev/null)
	diag "CPU Triad, one thread, $bytes-byte arrays, 2 runs each: gpuwise $g GB/s, reference $r GB/s (timed comparison: make bench)"
	ok "$(python3 -c "print(0 if $g > 0 and $r > 0 else 1)")" "release CPU Triad validated and the reference runs on the same array size"
else
	ok 1 "the reference Triad builds with cc and the release binary exists: $(head -1 "$TMP/cc.err" 2>/dev/null)"
fi

# ---- the committed PTX: what nvcc makes of the .cu, and valid for ptxas ----------
ptxas=$(command -v ptxas || ls /usr/local/cuda/bin/ptxas 2>/dev/null)
nvcc=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
if [ -n "$ptxas" ]; then
	for a in sm_75 sm_80 sm_90; do
		"$ptxas" -arch=$a "$GW_TOP/src/bench/kernels.ptx" -o "$TMP/k.cubin" 2>"$TMP/ptxas.err"
		ok $? "kernels.ptx assembles for $a ($(head -1 "$TMP/ptxas.err"))"
	done
	for a in sm_80 sm_90; do
		"$ptxas" -arch=$a "$GW_TOP/src/bench/mma.ptx" -o "$TMP/m.cubin" 2>"$TMP/ptxas.err"
		ok $? "mma.ptx (mma.sync fp16, bf16, tf32) assembles for $a ($(head -1 "$TMP/ptxas.err"))"
	done
else
	skip "no ptxas (CUDA toolkit): the PTX is not assembled here"
fi
if [ -n "$nvcc" ]; then
	for k in kernels:compute_75 mma:compute_80; do
		f=${k%%:*}
		"$nvcc" -ptx -arch=${k#*:} -o "$TMP/$f.ptx" "$GW_TOP/src/bench/$f.cu" 2>"$TMP/nvcc.err"
		sed 's/^\.version [0-9.]*$/.version 7.0/' "$TMP/$f.ptx" | grep -v '^//' > "$TMP/$f.new"
		grep -v '^//' "$GW_TOP/src/bench/$f.ptx" > "$TMP/$f.old"
		cmp -s "$TMP/$f.new" "$TMP/$f.old"
		ok $? "src/bench/$f.ptx is what nvcc makes of $f.cu (else run make ptx)"
	done
else
	skip "no nvcc: the PTX is not regenerated here"
fi
done_testing
