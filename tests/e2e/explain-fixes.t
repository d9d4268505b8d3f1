#!/bin/sh
# Issue 31: fix lines chosen by the message's facts (data/explain-fixes.tsv).
# The table is well formed (every id a diagnosis of errors.tsv, every @name
# one the code knows, no step that starts with a connective, a source on
# every row), and the same diagnosis gets the steps of the machine the
# message names: the exact HSA_OVERRIDE_GFX_VERSION of a gfx target, none on
# Windows or for a gfx115x APU; on AMD no CUDA_VISIBLE_DEVICES but /dev/kfd's
# groups; on WSL2 /usr/lib/wsl/lib; ComfyUI's --disable-cuda-malloc only where
# the message names ComfyUI's malloc error.
. "$(dirname "$0")/lib.sh"
unset LC_ALL LC_MESSAGES LANGUAGE
export LANG=C NO_COLOR=1
T="$GW_TOP/data/explain-fixes.tsv"
[ -f "$T" ] || { skip "no data/explain-fixes.tsv"; done_testing; exit 0; }
bad=$(awk -F'\t' -v E="$GW_TOP/data/errors.tsv" -v D="$GW_TOP/docs/diagnoses.md" '
	BEGIN { while ((getline l < E) > 0) { if (l ~ /^#/) continue; split(l, c, "\t"); ids[c[1]] = 1 }
		# and the catalog fallback ids the documentation lists (cuda-error)
		while ((getline l < D) > 0) if (match(l, /^\| `[a-z0-9-]+`/)) ids[substr(l, 4, RLENGTH - 4)] = 1
		split("amd intel apple ollama llamacpp vllm sglang comfyui docker k8s jax tensorflow deepspeed blackwell windows wsl macos", k, " ")
		for (i in k) known["@" k[i]] = 1 }
	/^#/ || $1 == "id" { next }
	!($1 in ids) { print "line " NR ": unknown id " $1 }
	NF != 6 || $6 == "" { print "line " NR ": needs 6 cells and a source" }
	tolower($5) ~ /^(or|and|but|then) / { print "line " NR ": starts with a connective: " $5 }
	{ n = split($2 "|" $3, w, "|"); for (i = 1; i <= n; i++) if (w[i] ~ /^@/ && !(w[i] in known)) print "line " NR ": unknown fact " w[i] }
' "$T")
is "$bad" "" "explain-fixes.tsv: ids, facts, sources and steps well formed"
fx() { "$GW" explain --no-probe --json - | python3 -c 'import json,sys; m=json.load(sys.stdin)["matches"]; print(m[0]["id"]); print("\n".join(m[0]["fixes"]))'; }
out=$(printf 'RuntimeError: HIP error: invalid device function\nrocminfo: gfx1031\n' | fx)
like "$out" 'export HSA_OVERRIDE_GFX_VERSION=10\.3\.0' "gfx1031 (Linux): the RDNA2 override, pasteable"
unlike "$out" 'HSA_OVERRIDE_GFX_VERSION=11\.0\.0' "gfx1031: no RDNA3 override"
out=$(printf 'RuntimeError: HIP error: invalid device function\ngfx1102\n' | fx)
like "$out" 'export HSA_OVERRIDE_GFX_VERSION=11\.0\.0' "gfx1102: the RDNA3 override"
out=$(printf 'HIP error: invalid device function (gfx1150)\n' | fx)
unlike "$out" 'export HSA_OVERRIDE_GFX_VERSION' "gfx1150 APU: no override to another generation's code"
out=$(printf 'rocBLAS error: Cannot read C:\\Program Files\\AMD\\ROCm\\6.2\\bin\\/rocblas/library/TensileLibrary.dat: No such file or directory for GPU arch : gfx1031\n' | fx)
unlike "$out" 'export HSA_OVERRIDE' "Windows gfx1031: no HSA_OVERRIDE_GFX_VERSION (it does nothing there)"
like "$out" 'rocblas' "Windows gfx1031: rocBLAS libraries for the card"
out=$(printf 'hsa api call failure: HSA_STATUS_ERROR_OUT_OF_RESOURCES\nROCm: no CUDA GPUs are available\n' | fx)
like "$out" '^no-cuda-device' "ROCm without a device is no-cuda-device"
unlike "$out" 'set CUDA_VISIBLE_DEVICES|echo "\$CUDA_VISIBLE_DEVICES"' "AMD: no CUDA_VISIBLE_DEVICES step"
like "$out" 'usermod -aG render,video' "AMD: the /dev/kfd groups"
out=$(printf 'RuntimeError: No CUDA GPUs are available\n' | fx)
like "$out" 'CUDA_VISIBLE_DEVICES' "NVIDIA: CUDA_VISIBLE_DEVICES stays"
unlike "$out" 'usermod|/dev/kfd|setvars' "NVIDIA: no AMD or Intel step"
out=$(printf 'RuntimeError: CUDA error: operation not supported\nComfyUI KSampler cudaMallocAsync\n' | fx)
like "$out" -- '--disable-cuda-malloc' "ComfyUI's malloc error: --disable-cuda-malloc"
out=$(printf 'RuntimeError: CUDA error: out of memory\n' | fx)
unlike "$out" 'disable-cuda-malloc|ComfyUI:' "a plain OOM gets no ComfyUI switch"
done_testing
