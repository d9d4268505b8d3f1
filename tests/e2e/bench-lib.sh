# Helpers for the gpuwise bench tests (sourced after lib.sh): PoCL's cache,
# the fake NVML off, LSan's OpenCL suppressions, and fig to read one figure.
# PoCL's cache of built kernels: in the build tree, kept between runs (PoCL
# keys it by the kernel source and its own build, so a changed kernels.cl
# is built again), else the test's own
if [ -n "${GW_BUILD:-}" ] && [ -d "$GW_BUILD" ]; then
	export POCL_CACHE_DIR="$GW_BUILD/pocl-cache"
else
	export POCL_CACHE_DIR="$TMP/pocl"
fi
export GPUWISE_NVML_LIB=/nonexistent/libnvidia-ml.so.1
export LSAN_OPTIONS="suppressions=$GW_TOP/tests/e2e/lsan-opencl.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
mkdir -p "$POCL_CACHE_DIR"
fig() { # fig JSON_FILE DEVICE_KIND ID FIELD
	python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
for dev in d["devices"]:
    if dev["kind"] == sys.argv[2]:
        for f in dev["figures"]:
            if f["id"] == sys.argv[3]:
                k = sys.argv[4]
                if k in ("value", "peak"):
                    k += "_gbs" if f["unit"] == "GB/s" else "_tflops"
                print(f[k]); sys.exit(0)
print("absent")' "$@"
}

