#!/bin/sh
# Issue 21 in gpuwise explain: 65 real messages from public issue threads
# (tests/validation/error-issue21.tsv; a random third held out before any
# signature was written), top-1 printed on the whole set and on the held-out
# third; the fixes the issue names, each checked end to end; WSL2 fixes on a
# WSL2-shaped root; the guide's two messages with doctor's findings of this
# machine; bad input for the catalog table.
. "$(dirname "$0")/lib.sh"
V=$GW_TOP/tests/validation
tab=$(printf '\t')
# fields EXPR...: one line per Python expression over the JSON on stdin (d)
fields() { python3 -c 'import json,sys; d=json.load(sys.stdin); [print(eval(e)) for e in sys.argv[1:]]' "$@"; }

# one Python for all rows: split, got, want, source, message (a Python start
# costs more than a gpuwise run on a loaded box)
python3 - "$GW" "$V/error-issue21.tsv" > "$TMP/new" <<'PY'
import json, subprocess, sys
gw, path = sys.argv[1], sys.argv[2]
rows = [l.rstrip("\n").split("\t") for l in open(path) if not l.startswith("#")][1:]
for msg, want, split, src in rows:
    p = subprocess.run([gw, "explain", "--no-probe", "--json", "-"], input=msg.encode(), capture_output=True)
    m = json.loads(p.stdout)["matches"]
    print("\t".join([split, m[0]["id"] if m else "none", want, src, msg]))
PY
n=0 r=0 hn=0 hr=0 nosrc=0
while IFS="$tab" read -r split got want src msg; do
	n=$((n + 1))
	[ "$got" = "$want" ] && r=$((r + 1))
	if [ "$split" = holdout ]; then
		hn=$((hn + 1))
		[ "$got" = "$want" ] && hr=$((hr + 1))
	fi
	case $src in https://github.com/*/issues/*|https://github.com/*/pull/*) ;; *) nosrc=$((nosrc + 1)) ;; esac
	diag "$(printf '%-8s %-52.52s -> %s (expected %s)' "$split" "$msg" "$got" "$want")"
done < "$TMP/new"
diag "issue-21 top-1, whole set: $r/$n ($(awk -v r="$r" -v t="$n" 'BEGIN { printf "%.1f", 100 * r / t }')%)"
diag "issue-21 top-1, held-out third: $hr/$hn ($(awk -v r="$hr" -v t="$hn" 'BEGIN { printf "%.1f", 100 * r / t }')%)"
ok "$([ "$n" -ge 60 ]; echo $?)" "at least 60 new real messages ($n)"
is "$nosrc" 0 "every message cites the issue thread it was copied from"
ok "$([ "$hn" -ge 20 ] && [ $((hn * 3)) -ge $((n - 2)) ]; echo $?)" "a third of them is held out ($hn of $n)"
ok "$([ $((r * 100)) -ge $((n * 90)) ]; echo $?)" "top-1 on the whole set is at least 90% ($r/$n)"
ok "$([ $((hr * 100)) -ge $((hn * 80)) ]; echo $?)" "top-1 on the held-out third is at least 80% ($hr/$hn)"

# --- wrapped errors: the innermost cause ------------------------------------
run_gw explain --no-probe --json "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:93, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.28.9
ncclUnhandledCudaError: Call to CUDA function failed.
Last error:
Cuda failure 999 'unknown error'"
printf '%s' "$out" | fields 'd["matches"][0]["id"]' 'd["matches"][0]["catalog"][0]["name"]' 'd["matches"][0]["catalog"][0]["code"]' \
	'd["matches"][0]["fixes"][0]' '" ".join(d["matches"][0]["fixes"])' > "$TMP/f"
is "$(sed -n 1p "$TMP/f")" cuda-unknown-error "NCCL around Cuda failure 999: the driver/GPU diagnosis first"
is "$(sed -n 2p "$TMP/f")" cudaErrorUnknown "its catalog row is cudaErrorUnknown"
is "$(sed -n 3p "$TMP/f")" 999 "code 999"
like "$(sed -n 4p "$TMP/f")" 'nvidia_uvm' "the first fix is the driver's (nvidia_uvm), not the network's"
unlike "$(sed -n 5p "$TMP/f")" 'firewall|NCCL_SOCKET_IFNAME' "no network advice on the first diagnosis"

# --- catalog rows when no signature matches ---------------------------------
run_gw explain --no-probe "RuntimeError: CUDA error: operation not permitted when stream is capturing"
is "$rc" 0 "a runtime message with no signature is explained"
like "$out" '^cuda-error: cudaErrorStreamCaptureUnsupported \(cuda-runtime code 900\)' "by its catalog row"
run_gw explain --no-probe "CUDA error 716 at kernel.cu:88"
like "$out" 'cudaErrorMisalignedAddress = 716 \(cuda-runtime\)' "a bare number is looked up (text shows the row)"
run_gw explain --no-probe "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"
like "$out" 'HSA_OVERRIDE_GFX_VERSION=10\.3\.0' "HIP: HSA_OVERRIDE_GFX_VERSION"
like "$out" 'catalog: hipErrorNoBinaryForGpu = 209 \(hip\)' "hipErrorNoBinaryForGpu is 209"

# --- the fixes the issue lists ----------------------------------------------
run_gw explain --no-probe "Found GPU0 GeForce GT 630 which is of cuda capability 2.1."
like "$out" 'no PyTorch build supports CC 2\.1' "CC 2.1: no build supports it"
like "$out" 'run on the CPU: pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cpu' "CC 2.1: the CPU wheel"
unlike "$out" 'pin an older torch' "CC 2.1: not told to pin an older torch"

run_gw explain --no-probe "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 2.00 GiB total capacity; 748.12 MiB already allocated; 0 bytes free; 796.00 MiB reserved in total by PyTorch)"
like "$out" 'free=0 B' "'0 bytes free' is parsed"
like "$out" 'verdict=fragmentation' "0 free + 47.88 MiB reserved-unallocated covers 20 MiB: fragmentation"
run_gw explain --no-probe "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 32.00 MiB. GPU 0 has a total capacity of 4.00 GiB of which 0 bytes is free. Of the allocated memory 3.10 GiB is allocated by PyTorch, and 64.00 MiB is reserved by PyTorch but unallocated."
like "$out" 'free=0 B, .*verdict=fragmentation' "new wording 'of which 0 bytes is free' is parsed"

# a 4 GB laptop: 41 MiB free for a 32 MiB request (constructed in PyTorch's wording)
run_gw explain --no-probe "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 32.00 MiB. GPU 0 has a total capacity of 4.00 GiB of which 41.00 MiB is free. Including non-PyTorch memory, this process has 2.90 GiB memory in use. Of the allocated memory 2.50 GiB is allocated by PyTorch, and 100.00 MiB is reserved by PyTorch but unallocated."
like "$out" 'only 41.00 MiB of its 4.00 GiB was free' "the tight laptop OOM: the GPU is full"
like "$out" 'the desktop \(dwm.exe\), the browser and other apps' "the rest is the desktop's and other apps'"
like "$out" '1.06 GiB is held outside it' "how much the others hold"
unlike "$out" 'driver problem\) or the job used another GPU' "not 'something outside this allocator'"

# vLLM V1: the estimated maximum model length is the pasteable --max-model-len
# (constructed in vLLM V1's wording, vllm/v1/core/kv_cache_utils.py)
run_gw explain --no-probe "ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is needed, which is larger than the available KV cache memory (9.97 GiB). Based on the available memory, the estimated maximum model length is 81472. Try increasing \`gpu_memory_utilization\` or decreasing \`max_model_len\` when initializing the engine."
like "$out" '^    - start vLLM with --max-model-len 81472$' "vLLM V1: --max-model-len N from the message"
like "$out" 'gpuwise plan MODEL --ctx 131072' "the plan command uses --ctx"
unlike "$out" '--context' "never --context"
run_gw explain --no-probe "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV cache (17440). Try increasing gpu_memory_utilization or decreasing max_model_len when initializing the engine."
unlike "$out" '--context' "vLLM V0 wording: never --context"

run_gw explain --no-probe "../aten/src/ATen/native/cuda/Indexing.cu:1292: indexSelectLargeIndex: block: [654,0,0], thread: [120,0,0] Assertion \`srcIndex < srcSelectDimSize\` failed."
like "$out" '^device-assert:' "per-thread srcIndex assertion without 'device-side assert triggered'"
like "$out" 'resize_token_embeddings' "the embedding-size fix"
run_gw explain --no-probe "GGML_ASSERT: ggml/src/ggml-cuda.cu:1257: to_fp32_cuda != nullptr"
like "$out" '^ggml-assert: .*to_fp32_cuda != nullptr' "GGML_ASSERT(... != nullptr) names the missing implementation"
like "$out" 'F16 or quantized GGUF' "and the type to use instead"

run_gw explain --no-probe "ERROR: Could not find a version that satisfies the requirement torch==2.1.2+cu118 (from versions: 1.11.0, 1.12.0, 2.0.0, 2.1.0, 2.1.1, 2.1.2, 2.2.0) ERROR: No matching distribution found for torch==2.1.2+cu118"
like "$out" '^    - pip install torch==2\.1\.2 --index-url https://download\.pytorch\.org/whl/cu118$' "pip shape 1: +cu118 is on PyTorch's index"
run_gw explain --no-probe "ERROR: Could not find a version that satisfies the requirement torch==2.0.1+cu118 (from versions: 2.2.0, 2.2.0+cu118, 2.3.0, 2.3.0+cu118)"
like "$out" 'no torch 2\.0\.1 wheel for this Python' "pip shape 2: the index was searched, this Python has no wheel"
unlike "$out" 'pip install torch==2\.0\.1 --index-url' "pip shape 2: no index line (it was already searched)"

run_gw explain --no-probe "ImportError: /opt/py/site-packages/flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi"
like "$out" 'undefined symbol c10::cuda::SetDevice' "the mangled name is demangled"
like "$out" 'PyTorch \(libc10\)' "and says which library's ABI is missing"
like "$out" 'pip uninstall -y flash-attn && pip install --no-build-isolation --no-cache-dir flash-attn' "rebuild the extension against the installed torch"

run_gw explain --no-probe "triton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'"
like "$out" 'TRITON_PTXAS_PATH=/usr/local/cuda/bin/ptxas' "Triton sm_121a: a toolkit's ptxas"
run_gw explain --no-probe "Program received signal SIGSEGV, Segmentation fault. 0x00007fffa16691bb in ?? () from /usr/lib/x86_64-linux-gnu/libcuda.so.1"
like "$out" '^segfault-native:' "a segfault in libcuda"
like "$out" 'python -X faulthandler' "find the library first"
run_gw explain --no-probe "OSError: /venv/lib/python3.10/site-packages/bitsandbytes/libbitsandbytes_cuda116.dll: invalid ELF header"
like "$out" '^bitsandbytes-windows-build:' "a Windows bitsandbytes .dll on Linux"
like "$out" 'pip uninstall -y bitsandbytes bitsandbytes-windows && pip install -U bitsandbytes' "its fix"
run_gw explain --no-probe "RuntimeError: MPS backend out of memory (MPS allocated: 8.89 GB, other allocations: 172.98 MB, max allowed: 9.07 GB). Tried to allocate 6.25 MB on private pool."
like "$out" 'PYTORCH_MPS_HIGH_WATERMARK_RATIO=0\.0' "MPS: the watermark variable"
like "$out" 'max allowed 9.07 GB' "MPS: the cap is read from the message"

# --- the guide's two messages -------------------------------------------------
run_gw explain --no-probe "Display driver nvlddmkm stopped responding: GPU crash dump triggered"
like "$out" '^gpu-crash-dump:' "GPU crash dump triggered is answered"
printf '%s\n' "$out" | sed -n '/fix:/,$p' > "$TMP/crash"
t=$(grep -n 'temperature' "$TMP/crash" | head -1 | cut -d: -f1)
p=$(grep -n 'power supply' "$TMP/crash" | head -1 | cut -d: -f1)
d=$(grep -n 'roll the driver back' "$TMP/crash" | head -1 | cut -d: -f1)
ok "$([ -n "$t" ] && [ -n "$p" ] && [ -n "$d" ] && [ "$t" -lt "$p" ] && [ "$p" -lt "$d" ]; echo $?)" "the guide's order: temperature, then the PSU, then the driver roll-back ($t, $p, $d)"
like "$(cat "$TMP/crash")" '80 C' "the ~80 C threshold"
run_gw explain --no-probe "Chrome: GPU not support acceleration"
like "$out" '^browser-gpu-acceleration:' "Chrome's 'GPU not support acceleration' is answered"
printf '%s\n' "$out" | sed -n '/fix:/,$p' > "$TMP/chrome"
s=$(grep -n 'Settings > System' "$TMP/chrome" | head -1 | cut -d: -f1)
dr=$(grep -n 'update the graphics driver' "$TMP/chrome" | head -1 | cut -d: -f1)
pp=$(grep -n 'power plan' "$TMP/chrome" | head -1 | cut -d: -f1)
cg=$(grep -n 'chrome://gpu' "$TMP/chrome" | tail -1 | cut -d: -f1)
ok "$([ -n "$s" ] && [ -n "$dr" ] && [ -n "$pp" ] && [ -n "$cg" ] && [ "$s" -lt "$dr" ] && [ "$dr" -lt "$pp" ] && [ "$pp" -lt "$cg" ]; echo $?)" "the guide's order: the setting, the driver, the power plan, then chrome://gpu"
like "$out" 'forced acceleration off on an old GPU: harmless' "forced off on old machines is harmless"
# the guide's Windows-only advice (issue 21 item 2): where to click
run_gw explain --no-probe "Task Manager shows Shared GPU memory at 6.1 GB and Stable Diffusion got ten times slower"
like "$out" '^windows-shared-gpu-memory:' "Windows shared GPU memory is answered"
printf '%s\n' "$out" | sed -n '/fix:/,$p' > "$TMP/shared"
tm=$(grep -n "Task Manager > Performance > GPU" "$TMP/shared" | head -1 | cut -d: -f1)
po=$(grep -n "Prefer No Sysmem Fallback" "$TMP/shared" | head -1 | cut -d: -f1)
pl=$(grep -n "gpuwise plan MODEL" "$TMP/shared" | head -1 | cut -d: -f1)
ok "$([ -n "$tm" ] && [ -n "$po" ] && [ -n "$pl" ] && [ "$tm" -lt "$po" ] && [ "$po" -lt "$pl" ]; echo $?)" "shared memory: see it in Task Manager, then the Sysmem Fallback policy, then plan ($tm, $po, $pl)"
like "$out" "'Dedicated GPU memory' is the card's own VRAM, 'Shared GPU memory' is system RAM" "dedicated vs shared said"
like "$out" 'driver 536\.40' "the driver that brought the fallback"
run_gw explain --no-probe "ComfyUI with DirectML is running on Intel(R) UHD Graphics instead of the NVIDIA GPU"
like "$out" '^windows-integrated-gpu:' "a hybrid laptop's program on the integrated GPU is answered"
like "$out" 'Settings > System > Display > Graphics > add the program' "the Windows per-app GPU preference"
like "$out" "Manage 3D settings > Program Settings > the program > 'High-performance NVIDIA processor'" "the NVIDIA Control Panel's preferred processor"
like "$out" 'CUDA programs always run on the NVIDIA GPU' "CUDA is not sent to the iGPU"
like "$out" "'GPU engine' column" "Task Manager says which GPU a process uses"
run_gw explain --no-probe "ggml_vulkan: 0 = Intel(R) UHD Graphics (Intel Corporation) | uma: 1 | fp16: 1"
unlike "$out" '^windows-integrated-gpu:' "a Vulkan device list alone is not the hybrid diagnosis"
# on this machine: doctor's desktop/browser findings (the desktop-chrome laptop)
export GPUWISE_NVML_LIB="$GW_FAKE/libnvidia-ml.so" GPUWISE_CUDA_LIB="$GW_FAKE/libcuda.so"
out=$(GPUWISE_ROOT=$FIX/roots/desktop-chrome GPUWISE_FAKE_SCENARIO=$FIX/scenarios/laptop-5070.json HOME=/home/alice DISPLAY=:0 XDG_SESSION_TYPE=x11 "$GW" explain "GPU not support acceleration" 2>/dev/null)
like "$out" '^    1\. on this machine \(gpuwise doctor, browser-gpu-off\): Chrome: "Use graphics acceleration when available" is off' "this machine's Chrome setting is the first cause"
like "$(printf '%s\n' "$out" | grep -m1 '^    - ')" '^    - on this machine: turn it on in chrome://settings/system' "and its fix comes first"
like "$out" 'desktop is drawn by Intel GPU card0' "the desktop GPU is said"
out=$(GPUWISE_ROOT=$FIX/roots/laptop-5070-awake GPUWISE_FAKE_SCENARIO=$FIX/scenarios/laptop-5070.json "$GW" explain "GPU crash dump triggered" 2>/dev/null)
like "$out" 'on this machine: NVIDIA GeForce RTX 5070 Laptop GPU runs driver 570.124.06' "crash dump: this machine's driver is named for the roll-back"
like "$out" 'on this machine: the GPU is at 48 C now \(watch it under load' "crash dump: this GPU's temperature now (the first check)"
like "$out" 'draws 18 W of its 115 W limit now' "crash dump: its power draw against the limit (the second)"
unset GPUWISE_NVML_LIB GPUWISE_CUDA_LIB

# --- WSL2: a WSL-shaped root gets WSL fixes ----------------------------------
W=$TMP/wsl
mkdir -p "$W/proc/sys/kernel" "$W/usr/lib/wsl/lib" "$W/dev"
echo "6.6.87.2-microsoft-standard-WSL2" > "$W/proc/sys/kernel/osrelease"
: > "$W/dev/dxg"
wsl() { out=$(GPUWISE_ROOT=$W GPUWISE_NVML_LIB=/nonexistent GPUWISE_CUDA_LIB=/nonexistent "$GW" explain "$1" 2>/dev/null); rc=$?; }
wsl "ldconfig: /usr/lib/wsl/lib/libcuda.so.1 is not a symbolic link"
like "$out" '^wsl-ldconfig-symlink: .*harmless' "WSL: the ldconfig warning is harmless"
like "$out" 'nothing to fix for CUDA' "WSL: and nothing is to be fixed"
wsl "Failed to initialize NVML: GPU access blocked by the operating system"
like "$out" 'nvidia-smi.exe -g 0 -dm 0' "WSL: blocked GPU: TCC to WDDM"
wsl "misc dxg: dxgk: dxgkio_query_adapter_info: Ioctl failed: -22"
like "$out" 'wsl --update' "WSL: dxg ioctl: update WSL"
wsl "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Error 2: out of memory"
like "$out" '^    - WSL2: this is the Windows driver or the VM.s memory limit' "WSL: init OOM: the WSL fix first"
like "$out" '\.wslconfig' "WSL: the .wslconfig limit"
for m in "The NVIDIA driver on your system is too old (found version 11040)." \
	"RuntimeError: CUDA unknown error - this may be due to an incorrectly set up environment" \
	"RuntimeError: No CUDA GPUs are available" "RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable" \
	"OSError: libcuda.so.1: cannot open shared object file: No such file or directory" \
	"nvidia-container-cli: mount error: file creation failed: /var/lib/docker/overlay2/x/merged/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1: file exists: unknown"; do
	wsl "$m"
	like "$(printf '%s\n' "$out" | grep -m1 '^    - ')" 'WSL2' "WSL: the first fix is a WSL fix: ${m%%:*}"
	unlike "$out" 'modprobe|rmmod|nvidia-smi -r|dkms|apt install nvidia-driver' "WSL: no bare-metal driver step: ${m%%:*}"
done
wsl "The NVIDIA driver on your system is too old (found version 11040)."
like "$out" 'NVIDIA driver for Windows, then run wsl --shutdown' "WSL: driver too old: the Windows driver and wsl --shutdown"
# the same messages on bare metal keep their Linux fixes
out=$(GPUWISE_ROOT=$FIX/roots/nvidia-nodriver GPUWISE_NVML_LIB=/nonexistent GPUWISE_CUDA_LIB=/nonexistent "$GW" explain "RuntimeError: CUDA unknown error - this may be due to an incorrectly set up environment" 2>/dev/null)
like "$out" 'sudo rmmod nvidia_uvm && sudo modprobe nvidia_uvm' "bare metal: the module reload stays"
unlike "$out" 'WSL2' "bare metal: no WSL fix"

# --- the catalog table: bad input -------------------------------------------
mkdir "$TMP/badcat"
{ grep '^#' "$GW_TOP/data/error-catalog.tsv"; grep -v '^#' "$GW_TOP/data/error-catalog.tsv" | head -1
  printf 'cuda-runtime\tcudaErrorBogus\tseven\t\t\tbogus\thttps://example.org\n'; } > "$TMP/badcat/error-catalog.tsv"
run_gw --data-dir "$TMP/badcat" explain --no-probe "CUDA error: unknown error"
is "$rc" 1 "a catalog row with a non-numeric code: exit 1"
like "$err" "table 'error-catalog' line [0-9]+: code 'seven' is not a number" "the line and the value are named"
done_testing
