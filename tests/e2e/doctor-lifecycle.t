#!/bin/sh
# gpuwise doctor states the software lifecycle of an old card (data/lifecycle.tsv):
# a Tesla P40 (Pascal GP102, compute capability 6.1) gets the gpu-lifecycle finding
# with the last PyTorch, its wheel, the last driver branch and the build line;
# an RTX 4090 does not.
. "$(dirname "$0")/lib.sh"
export GPUWISE_NVML_LIB="$GW_FAKE/libnvidia-ml.so" GPUWISE_CUDA_LIB="$GW_FAKE/libcuda.so"
python3 - "$FIX/scenarios/desktop-4090.json" "$TMP/p40.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
g = d["gpus"][0]
g.update(name="Tesla P40", cc="6.1", arch=5, memory_total_bytes=24 * 2**30)
d["gpus"], d["description"] = [g], "one Tesla P40 (Pascal GP102)"
json.dump(d, open(sys.argv[2], "w"))
PY
find_f() { # find_f JSON ID FIELD
	python3 -c 'import json,sys
f=[x for x in json.load(open(sys.argv[1]))["findings"] if x["id"]==sys.argv[2]]
print(f[0][sys.argv[3]] if f else "absent")' "$@"
}
out=$(GPUWISE_ROOT=$FIX/roots/desktop-4090 GPUWISE_FAKE_SCENARIO=$TMP/p40.json "$GW" doctor --json 2>/dev/null)
printf '%s\n' "$out" > "$TMP/p40-doctor.json"
is "$(find_f "$TMP/p40-doctor.json" gpu-lifecycle severity)" info "P40: a gpu-lifecycle finding, severity info"
like "$(find_f "$TMP/p40-doctor.json" gpu-lifecycle title)" "Tesla P40.*Pascal \(GP10x\), compute capability 6\.1\): its software support is ending" \
	"P40: the title names the card, its generation and compute capability"
ev=$(find_f "$TMP/p40-doctor.json" gpu-lifecycle evidence)
like "$ev" "as of 2026-12: last PyTorch 2\.14, wheel cu126" "P40: the last PyTorch and its wheel, as of the table's date"
like "$ev" "last driver branch R580" "P40: the last driver branch"
like "$ev" "CUDA 13 cannot build for sm_61" "P40: which toolkits build for it"
like "$ev" "fp16 at 1/64" "P40: the hardware it lacks"
fix=$(find_f "$TMP/p40-doctor.json" gpu-lifecycle fix)
like "$fix" "pip install 'torch~=2\.14\.0' --index-url https://download\.pytorch\.org/whl/cu126" "P40: the pip line pins the last release from its wheel index"
like "$fix" "cmake -DCMAKE_CUDA_ARCHITECTURES=61" "P40: the build line names sm_61"
# the text output carries it too
out=$(GPUWISE_ROOT=$FIX/roots/desktop-4090 GPUWISE_FAKE_SCENARIO=$TMP/p40.json "$GW" doctor 2>/dev/null)
like "$out" "info +GPU 0 \(Tesla P40.*its software support is ending" "P40 text: the finding is printed"
# a current card has no lifecycle finding
out=$(GPUWISE_ROOT=$FIX/roots/desktop-4090 GPUWISE_FAKE_SCENARIO=$FIX/scenarios/desktop-4090.json "$GW" doctor --json 2>/dev/null)
printf '%s\n' "$out" > "$TMP/4090-doctor.json"
is "$(find_f "$TMP/4090-doctor.json" gpu-lifecycle severity)" absent "RTX 4090: no gpu-lifecycle finding"
is "$(find_f "$TMP/4090-doctor.json" gpu severity)" ok "RTX 4090: the gpu finding is still there (the check ran)"
done_testing
