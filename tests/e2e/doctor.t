#!/bin/sh
# gpuwise doctor against fake NVML scenarios, fixture roots (sysfs from the
# hw fixtures plus tests/fixtures/roots/doctor-toolkits: two CUDA toolkits,
# cuDNN/NCCL, a system Python with torch 2.5.1+cu124), and a real Python
# venv with a stand-in torch package.
. "$(dirname "$0")/lib.sh"
export GPUWISE_NVML_LIB="$GW_FAKE/libnvidia-ml.so" GPUWISE_CUDA_LIB="$GW_FAKE/libcuda.so"
export HOME=/nonexistent-home
unset CUDA_HOME CUDA_PATH VIRTUAL_ENV CONDA_PREFIX LD_LIBRARY_PATH CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER \
	__NV_PRIME_RENDER_OFFLOAD __GLX_VENDOR_LIBRARY_NAME CUDA_LAUNCH_BLOCKING
SC=$FIX/scenarios
TOOLKIT_PATH=/usr/local/cuda-11.8/bin:/usr/local/cuda-12.8/bin:/usr/bin

# mkroot NAME HWROOT: a root = the hw fixture plus the toolkit/site-packages overlay
mkroot() {
	rm -rf "$TMP/$1"
	cp -a "$FIX/roots/$2" "$TMP/$1"
	cp -a "$FIX/roots/doctor-toolkits/." "$TMP/$1/"
}
# doc ROOT SCENARIO ARGS...: run doctor with a fixture root and scenario
doc() {
	r=$1 s=$2
	shift 2
	out=$(GPUWISE_ROOT=$r GPUWISE_FAKE_SCENARIO=$s PATH=$TOOLKIT_PATH:$PATH "$GW" doctor "$@" 2>"$TMP/stderr"); rc=$?
	err=$(cat "$TMP/stderr")
}
fid() { # fid ID FIELD: first finding with that id, one field (from $out as JSON)
	printf '%s' "$out" | python3 -c 'import json,sys
f=[x for x in json.load(sys.stdin)["findings"] if x["id"]==sys.argv[1]]
print(f[0][sys.argv[2]] if f else "absent")' "$1" "$2"
}

# ---- RTX 5070 Laptop (sm_120) with torch 2.5.1+cu124, two toolkits ---------
mkroot laptop laptop-5070
export CUDA_HOME=/usr/local/cuda-12.8
doc "$TMP/laptop" "$SC/laptop-5070.json"
is "$rc" 4 "sm_120 with a cu124 torch: exit 4"
like "$out" '^Hardware$' "grouped: Hardware"
like "$out" '^Python and PyTorch$' "grouped: Python and PyTorch"
like "$out" 'fail  NVIDIA GeForce RTX 5070 Laptop GPU with CUDA capability sm_120 is not compatible with torch 2.5.1\+cu124' "sm_120 incompatibility is a failure"
like "$out" 'fix: .*pip install --force-reinstall torch~=2.12.0 torchvision~=0.27.0 torchaudio~=2.12.0 --index-url https://download.pytorch.org/whl/cu128$' "the exact cu128 install line, torchvision and torchaudio matched"
like "$out" 'warn  the first nvcc on PATH is an older CUDA \(11.8.89\) than the one CUDA_HOME names \(12.8.93\)' "older nvcc first on PATH is a warning"
like "$out" 'fix: export PATH=/usr/local/cuda-12.8/bin:\$PATH' "PATH fix names CUDA_HOME's bin"
like "$out" 'nvcc 11.8.89 cannot compile for NVIDIA GeForce RTX 5070 Laptop GPU' "11.8 cannot build sm_120"
like "$out" 'cuDNN 9.1.0' "cuDNN found through ld.so.conf"
like "$out" 'NCCL 2.21.5' "NCCL found in the system directory"
like "$out" 'bitsandbytes 0.43.1' "bitsandbytes version from dist-info"
like "$out" 'flash-attn 2.6.3' "flash-attn version from dist-info"
like "$out" 'architectures \(python\): sm_50' "arch list came from running the interpreter"
like "$out" 'hybrid laptop: NVIDIA GeForce RTX 5070 Laptop GPU plus the integrated Intel' "hybrid laptop recognised"
like "$out" '__NV_PRIME_RENDER_OFFLOAD=1 __GLX_VENDOR_LIBRARY_NAME=nvidia' "PRIME render offload variables given"
like "$out" 'PRIME render offload variables are not set' "says the variables are not set"
like "$out" '^[0-9]+ ok, [0-9]+ info, [0-9]+ skipped, [0-9]+ warnings?, [0-9]+ failures?$' "summary line"

doc "$TMP/laptop" "$SC/laptop-5070.json" --json
is "$rc" 4 "--json keeps the exit status"
is "$(fid arch-unsupported severity)" fail "JSON: arch-unsupported fails"
is "$(fid arch-unsupported group)" "Python and PyTorch" "JSON: group name"
like "$(fid arch-unsupported fix)" 'pip install --force-reinstall torch~=2.12.0 torchvision~=0.27.0 torchaudio~=2.12.0 --index-url https://download.pytorch.org/whl/cu128' "JSON: fix has the cu128 line"
is "$(fid arch-unsupported gpu)" 0 "JSON: the finding names GPU 0"
is "$(fid nvcc-path-order severity)" warn "JSON: nvcc-path-order warns"
is "$(printf '%s' "$out" | python3 -c 'import json,sys
d=json.load(sys.stdin); ok=all(set(f)>={"id","severity","title","evidence","fix"} and f["severity"] in ("ok","info","skip","warn","fail") for f in d["findings"]); print(ok and len(d["findings"])>5)')" True "JSON: every finding has id, severity, title, evidence, fix"

# the same, files only: the arch list comes from libtorch_cuda.so
doc "$TMP/laptop" "$SC/laptop-5070.json" --no-exec
like "$out" 'architectures \(libtorch_cuda.so\): sm_50 sm_60 sm_70 compute_90' "--no-exec reads the arch list out of libtorch_cuda.so"

# hybrid laptop with the offload variables set
out=$(__NV_PRIME_RENDER_OFFLOAD=1 __GLX_VENDOR_LIBRARY_NAME=nvidia GPUWISE_ROOT=$TMP/laptop GPUWISE_FAKE_SCENARIO=$SC/laptop-5070.json PATH=$TOOLKIT_PATH:$PATH "$GW" doctor 2>/dev/null)
like "$out" 'PRIME render offload variables are set in this shell' "PRIME variables recognised when set"

# CUDA_VISIBLE_DEVICES hiding the GPU
out=$(CUDA_VISIBLE_DEVICES=3 GPUWISE_ROOT=$TMP/laptop GPUWISE_FAKE_SCENARIO=$SC/laptop-5070.json PATH=$TOOLKIT_PATH:$PATH "$GW" doctor 2>/dev/null)
like "$out" "fail  CUDA_VISIBLE_DEVICES hides every GPU" "CUDA_VISIBLE_DEVICES=3 on a 1-GPU machine fails"

# a bad-performance variable (DCGM's list)
out=$(CUDA_LAUNCH_BLOCKING=1 GPUWISE_ROOT=$TMP/laptop GPUWISE_FAKE_SCENARIO=$SC/laptop-5070.json PATH=$TOOLKIT_PATH:$PATH "$GW" doctor 2>/dev/null)
like "$out" "warn  CUDA_LAUNCH_BLOCKING is set" "CUDA_LAUNCH_BLOCKING warns"
unset CUDA_HOME

# ---- driver 535 with a cu128 PyTorch --------------------------------------------
mkroot old laptop-5070-awake
sed -e 's/"570.124.06"/"535.183.01"/; s/"12.570.124.06"/"12.535.183.01"/; s/"cuda_driver_version": 12080/"cuda_driver_version": 12020/' \
	-e 's/"cc": "12.0"/"cc": "8.9"/; s/RTX 5070 Laptop GPU/RTX 4070 Laptop GPU/' "$SC/laptop-5070.json" > "$TMP/old.json"
printf "__version__ = '2.7.1+cu128'\ncuda: Optional[str] = '12.8'\nhip: Optional[str] = None\n" > "$TMP/old/usr/lib/python3/dist-packages/torch/version.py"
doc "$TMP/old" "$TMP/old.json" --json --no-exec
is "$rc" 4 "driver 535 with a cu128 torch: exit 4"
is "$(fid driver-too-old severity)" fail "driver-too-old is a failure"
like "$(fid driver-too-old title)" "driver 535.183.01 is too old for torch 2.7.1\+cu128 \(built for CUDA 12.8, needs driver >= 570.26\)" "driver-too-old names the minimum"
like "$(fid driver-too-old fix)" "upgrade the NVIDIA driver to >= 570.26" "driver-too-old fix"

# ---- a real venv with a stand-in torch package ---------------------------------------
mkroot venvroot laptop-5070-awake
rm -f "$TMP/venvroot/usr/bin/python3"
if python3 -m venv --without-pip "$TMP/venvroot/venv" 2>/dev/null; then
	site=$(echo "$TMP"/venvroot/venv/lib/python3*/site-packages)
	mkdir -p "$site/torch"
	printf "__version__ = '2.7.1+cu128'\ndebug = False\ncuda = '12.8'\nhip = None\n" > "$site/torch/version.py"
	printf "def _cuda_getArchFlags():\n    return 'sm_75 sm_80 sm_86 sm_90 sm_100 sm_120'\n" > "$site/torch/_C.py"
	printf "def is_available():\n    return False\ndef device_count():\n    return 0\n" > "$site/torch/cuda.py"
	printf "from . import version, _C, cuda\n__version__ = version.__version__\n" > "$site/torch/__init__.py"
	mkdir -p "$site/vllm-0.6.3.dist-info"
	doc "$TMP/venvroot" "$SC/laptop-5070.json" --python /venv/bin/python --json
	is "$(printf '%s' "$out" | python3 -c 'import json,sys
print(sum(1 for f in json.load(sys.stdin)["findings"] if f["id"]=="torch-arch" and "/venv/bin/python" in f["evidence"] and "(python)" in f["evidence"]))')" 1 "the venv's interpreter was run: sm_120 covered by its arch list"
	like "$(fid python-packages title)" "vllm 0.6.3" "venv package versions read"
	doc "$TMP/venvroot" "$SC/laptop-5070.json" --python /venv --deep
	like "$out" "torch 2.7.1\+cu128 in /venv/bin/python: torch.cuda.is_available\(\) is False" "--deep runs is_available() in the venv"
	like "$out" "CUDA driver tests not available|CUDA device 0" "--deep CUDA tests run or say they are not available"
	is "$rc" 4 "--deep failure makes exit 4"
else
	skip "python3 -m venv unavailable"
	skip "python3 -m venv unavailable"
	skip "python3 -m venv unavailable"
	skip "python3 -m venv unavailable"
	skip "python3 -m venv unavailable"
fi

# ---- warnings only: --strict ----------------------------------------------------
printf "__version__ = '2.7.1+cu128'\ncuda = '12.8'\n" > "$TMP/laptop/usr/lib/python3/dist-packages/torch/version.py"
rm -f "$TMP/laptop/usr/bin/python3"
export CUDA_HOME=/usr/local/cuda-12.8
doc "$TMP/laptop" "$SC/laptop-5070.json" --python /usr/lib/python3/dist-packages/../../../bin/true
is "$rc" 2 "--python with a missing interpreter is a usage error"
like "$err" "cannot use --python" "--python error names the problem"
printf '#!/bin/sh\nexit 1\n' > "$TMP/laptop/usr/bin/python3"; chmod +x "$TMP/laptop/usr/bin/python3"
doc "$TMP/laptop" "$SC/laptop-5070.json" --no-exec
is "$rc" 0 "warnings only: exit 0"
doc "$TMP/laptop" "$SC/laptop-5070.json" --no-exec --strict
is "$rc" 3 "warnings only with --strict: exit 3"
unset CUDA_HOME

# ---- hardware cases from the hw fixtures -------------------------------------------
GPUWISE_NVML_LIB=/nonexistent/libnvidia-ml.so.1 doc "$FIX/roots/nogpu" "$SC/laptop-5070.json"
is "$rc" 4 "no GPU: exit 4"
like "$out" "fail  no GPU found" "no GPU is a failure"
doc "$FIX/roots/nouveau" "$SC/laptop-5070.json" --json
is "$(fid nouveau-conflict severity)" fail "nouveau bound is a failure"
like "$(fid nouveau-conflict fix)" "blacklist nouveau" "nouveau fix blacklists it"
doc "$FIX/roots/nvidia-nodriver" "$SC/laptop-5070.json" --json
like "$(fid no-driver title)$(fid secure-boot title)" "has no driver" "a GPU without a driver is found"
doc "$FIX/roots/fell-off-bus" "$SC/fell-off-bus.json" --json
is "$(fid gpu-fell-off-bus severity)" fail "fell off the bus is a failure"
is "$(fid xid severity)" fail "Xid 79 in the kernel log fails (DCGM severity fail)"
like "$(fid xid title)" "Xid 79 on 0000:2a:00: GPU has fallen off the bus" "Xid finding names code, PCI and meaning"
doc "$FIX/roots/server-8xh100" "$SC/server-8xh100.json" --json --no-exec
is "$(fid health severity)" ok "healthy H100s are ok"

# ---- bad input ---------------------------------------------------------------------
run_gw doctor --bogus
is "$rc" 2 "unknown option exits 2"
like "$err" "unknown option '--bogus'" "unknown option named"
run_gw doctor extra
is "$rc" 2 "unexpected argument exits 2"
run_gw doctor --python
is "$rc" 2 "--python without a value exits 2"
run_gw doctor --help
is "$rc" 0 "--help exits 0"
like "$out" "Exit status: 0 nothing fails" "--help lists exit codes"
# ---- --deep through a fake libcuda with memory, copies and the PTX kernel ---------------
mkroot deeproot laptop-5070-awake
out=$(GPUWISE_CUDA_LIB=$GW_FAKE/cudadeep.so GPUWISE_ROOT=$TMP/deeproot GPUWISE_FAKE_SCENARIO=$SC/laptop-5070.json "$GW" doctor --deep --no-exec 2>/dev/null)
like "$out" 'ok    CUDA device 0 \(Fake Deep GPU\): context, allocation, copies, PTX kernel and checksum work' "--deep: copies, kernel and checksum pass"
like "$out" 'host to device [0-9.]+ GB/s, device to host [0-9.]+ GB/s' "--deep: bandwidth measured"
out=$(GPUWISE_FAKE_DEEP=corrupt GPUWISE_CUDA_LIB=$GW_FAKE/cudadeep.so GPUWISE_ROOT=$TMP/deeproot GPUWISE_FAKE_SCENARIO=$SC/laptop-5070.json "$GW" doctor --deep --no-exec 2>/dev/null); rc=$?
like "$out" 'fail  CUDA device 0 \(Fake Deep GPU\) failed at the checksum step' "--deep: a flipped bit fails the checksum"
is "$rc" 4 "--deep checksum failure exits 4"
out=$(GPUWISE_FAKE_DEEP=noinit GPUWISE_CUDA_LIB=$GW_FAKE/cudadeep.so GPUWISE_ROOT=$TMP/deeproot GPUWISE_FAKE_SCENARIO=$SC/laptop-5070.json "$GW" doctor --deep --no-exec 2>/dev/null)
like "$out" 'cuInit: CUDA error 100: no CUDA-capable device is detected' "--deep: cuInit failure reported with the driver's text"
out=$(GPUWISE_ROOT=$TMP/deeproot GPUWISE_FAKE_SCENARIO=$SC/laptop-5070.json "$GW" doctor --deep --no-exec 2>/dev/null); rc=$?
like "$out" "skip  CUDA driver tests not available" "--deep with a libcuda lacking the calls says 'not available' (skip)"
like "$out" "lacks cuMemAllocHost_v2" "--deep names the missing function (the plain fake has contexts and device memory, not host memory)"
# --deep runs gpuwise bench's Triad kernel (assembled and checked in bench.t), not a private copy
grep -q '\.entry' "$GW_TOP/src/doctor/deep.c"
ok $((1 - $?)) "--deep holds no PTX of its own"
grep -q 'gw_bench_kernels_ptx' "$GW_TOP/src/doctor/deep.c"
ok $? "--deep loads the bench kernels (gw_bench_kernels_ptx)"
done_testing
