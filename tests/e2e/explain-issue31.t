#!/bin/sh
# Issue 31 in gpuwise explain: each message the issue quotes gets the
# diagnosis named; the WSL2, Windows, ROCm-APU and NCCL-duplicate cases get
# the fix that works there and none that cannot; --json carries the
# retrieval fields; the binary holds no held-out corpus message; Chinese
# messages are answered in Chinese under zh_CN.
. "$(dirname "$0")/lib.sh"
tab=$(printf '\t')
unset LC_ALL LC_MESSAGES LANGUAGE
export LANG=C

# the quoted messages: expected id, then the message (one per line)
cat > "$TMP/quoted" <<'Q'
container-toolkit	docker: Error response from daemon: could not select device driver "nvidia" with capabilities: [[gpu]].
container-toolkit	Error: crun: unresolvable CDI devices nvidia.com/gpu=all: OCI runtime attempted to invoke a command that was not found
bitsandbytes-no-gpu	RuntimeError: Configured CUDA binary not found at /opt/conda/lib/python3.11/site-packages/bitsandbytes/libbitsandbytes_cuda129.so
cuda-home-unset	deepspeed.ops.op_builder.builder.MissingCUDAException: CUDA_HOME does not exist, unable to compile CUDA op(s)
hip-no-binary	rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: Illegal seek for GPU arch : gfx1103
hip-no-binary	:0:rocdevice.cpp :3018: Callback: Queue 0x7f00 aborting with error : HSA_STATUS_ERROR_INVALID_ISA: The instruction set architecture is invalid. code: 0x100f
hip-no-binary	time=2025-05-01T10:00:00 level=WARN source=amd_windows.go:140 msg="amdgpu is not supported (supported types:[])" gpu_type=gfx1103\ntime=2025-05-01T10:00:00 level=INFO source=gpu.go:377 msg="no compatible GPUs were discovered"
windows-dll-load	LoadLibrary failed with error 126: The specified module could not be found.
windows-dll-load	OSError: [WinError 126] 找不到指定的模块。 Error loading "C:\Users\me\AppData\Local\Programs\Python\Python311\Lib\site-packages\torch\lib\fbgemm.dll" or one of its dependencies.
windows-dll-load	OSError: [WinError 126] The specified module could not be found. Error loading "D:\ComfyUI\venv\lib\site-packages\torch\lib\fbgemm.dll" or one of its dependencies.
arch-unsupported	FATAL: kernel `fmha_cutlassF_f32_aligned_64x64_rf_sm80` is for sm80-sm100, but was built for sm37
arch-unsupported	torch.AcceleratorError: CUDA error: no kernel image is available for execution on the device
triton-ptxas-arch	ptxas fatal   : Value 'sm_120' is not defined for option 'gpu-name'
gpu-fell-off-bus	NVRM: Xid (PCI:0000:01:00): 79, pid=1234, GPU has fallen off the bus.
gpu-reset-required	NVRM: Xid (PCI:0000:41:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)
no-driver	Failed to initialize NVML: Driver Not Loaded
vllm-gpu-memory-utilization	ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.
vllm-gpu-memory-utilization	ValueError: Free memory on device (14.2/23.55 GiB) on startup is less than desired GPU memory utilization (0.9, 21.2 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.
gguf-offload-oom	llama_init_from_model: failed to initialize the context: failed to allocate compute pp buffers
library-missing	Unable to load any of {libcudnn_ops.so.9.1.0, libcudnn_ops.so.9.1, libcudnn_ops.so.9, libcudnn_ops.so}
k8s-gpu-unschedulable	Warning  FailedScheduling  default-scheduler  0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available
k8s-device-plugin	E0101 nvidia-device-plugin: Failed to initialize NVML: could not load NVML library. If this is a GPU node, did you configure the NVIDIA Container Toolkit?
sglang-memory	RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.
sglang-memory	Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 2.00 GiB
mps-unsupported-op	NotImplementedError: The operator 'aten::_upsample_bicubic2d_aa.out' is not currently implemented for the MPS device. As a temporary fix, you can set the environment variable `PYTORCH_ENABLE_MPS_FALLBACK=1`
xpu-alloc-limit	RuntimeError: Current platform can NOT allocate memory block with size larger than 4GB! Tried to allocate 6.00 GiB (GPU  0; 15.56 GiB total capacity)
xpu-device-lost	RuntimeError: level_zero backend failed with error: 20 (UR_RESULT_ERROR_DEVICE_LOST)
fsdp-config	ValueError: Must flatten tensors with uniform dtype but got torch.bfloat16 and torch.uint8
fsdp-config	ValueError: Inconsistent compute device and `device_id` on rank 1: cuda:0 vs cuda:1
tensorrt-build	[TRT] [E] 10: Could not find any implementation for node /model.0/conv/Conv.
tensorrt-build	[TRT] [W] Tactic Device request: 4364MB Available: 3788MB. Device memory is insufficient to use tactic.
xformers-build	WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for: PyTorch 2.5.1+cu124 with CUDA 1204 (you have 2.7.0+cu128)
triton-windows	RuntimeError: Cannot find a working triton installation. Either the package is not installed or it is too old. (C:\ComfyUI\python_embeded\Lib\site-packages\torch\_inductor)
no-cuda-device	W external/xla/xla/stream_executor/cuda/cuda_driver.cc: failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected
nccl-error	NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000
Q
while IFS="$tab" read -r want msg; do
	printf '%b' "$msg" > "$TMP/msg"
	got=$("$GW" explain --no-probe --json - < "$TMP/msg" | python3 -c 'import json,sys; m=json.load(sys.stdin)["matches"]; print(m[0]["id"] if m else "none")')
	is "$got" "$want" "$(printf '%.70s' "$msg")"
done < "$TMP/quoted"

# fixes [--json] MESSAGE: the first match's fix lines, one per line
fixes() { "$GW" explain --no-probe --json "$1" | python3 -c 'import json,sys; m=json.load(sys.stdin)["matches"]; print("\n".join(m[0]["fixes"]) if m else "")'; }

# WSL2: cuInit CUDA_ERROR_NO_DEVICE with /usr/lib/wsl -> the Windows driver's libcuda, no Linux driver inside
f=$(fixes 'failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected; LD_LIBRARY_PATH=/usr/lib/wsl/lib')
like "$f" '/usr/lib/wsl/lib' "WSL2 no-device: the fix names /usr/lib/wsl/lib"
like "$f" 'do not install a Linux NVIDIA driver inside WSL' "WSL2 no-device: no Linux driver inside WSL"
unlike "$f" 'modprobe|lsmod|dmesg|rmmod|mokutil|nouveau' "WSL2 no-device: no module step"
# NVIDIA-SMI has failed under a WSL2 root: no bare-metal steps
f=$(fixes 'NVIDIA-SMI has failed because it couldn'"'"'t communicate with the NVIDIA driver (/usr/lib/wsl/lib/nvidia-smi)')
unlike "$f" 'modprobe|lsmod|dmesg|dkms|mokutil|Secure Boot|nouveau' "WSL2 nvidia-smi failed: no bare-metal step"
like "$f" 'WSL2' "WSL2 nvidia-smi failed: a WSL2 step"
# the WSL libcuda message: library-missing first, no cuDNN line
out=$("$GW" explain --no-probe --json 'Could not load dynamic library libcuda.so.1; dlerror: libcuda.so.1: cannot open shared object file: No such file or directory; no CUDA-capable device is detected (/usr/lib/wsl/lib)')
is "$(printf '%s' "$out" | jget 'd["matches"][0]["id"]')" library-missing "WSL libcuda: library-missing ranks above no-cuda-device"
unlike "$(printf '%s' "$out" | jget 'd["matches"][0]["fixes"]')" 'cuDNN|cudnn' "WSL libcuda: no cuDNN line"
# Windows Ollama: no journalctl / free -h
f=$(fixes 'Error: llama runner process has terminated: error loading model: unable to allocate backend buffer (C:\Users\me\AppData\Local\Ollama\server.log)')
unlike "$f" 'journalctl|free -h|dmesg|sudo ' "Windows Ollama: no Linux-only step"
ok "$([ -n "$f" ]; echo $?)" "Windows Ollama: fixes remain"
# ROCm APU gfx1150: no 11.0.0 override, what works instead
f=$(fixes 'RuntimeError: HIP error: invalid device function (HSA_OVERRIDE_GFX_VERSION=11.0.0 on gfx1150)')
unlike "$f" 'HSA_OVERRIDE_GFX_VERSION=11\.0\.0 (for|,)|export HSA_OVERRIDE_GFX_VERSION=' "gfx1150: no gfx1100 override offered"
like "$f" 'gfx1150.*do not set HSA_OVERRIDE_GFX_VERSION=11.0.0' "gfx1150: says the override fails there"
like "$f" 'Vulkan|native gfx1150' "gfx1150: says what works"
# the same message for gfx1031 keeps the RDNA2 override
f=$(fixes 'RuntimeError: HIP error: invalid device function (gfx1031)')
like "$f" 'HSA_OVERRIDE_GFX_VERSION=10.3.0' "gfx1031: the RDNA2 override stays"
# NCCL duplicate GPU: ranks on one GPU, not network advice
f=$(fixes 'torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, invalid usage, NCCL version 2.21.5 ncclInvalidUsage: This usually reflects invalid usage of NCCL library. Last error: Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000')
like "$f" 'LOCAL_RANK' "NCCL duplicate: set the device per rank (LOCAL_RANK)"
unlike "$f" 'NCCL_SOCKET_IFNAME|NCCL_IB|firewall|NCCL_P2P' "NCCL duplicate: no network advice"

# --json: retrieval fields; a message no signature knows is answered from the corpus
out=$("$GW" explain --no-probe --json 'docker: Error response from daemon: could not select device driver "nvidia" with capabilities: [[gpu]].')
is "$(printf '%s' "$out" | jget 'd["matches"][0]["via"]')" signature "--json: via is signature for a signature match"
is "$(printf '%s' "$out" | jget 'd["matches"][0]["confidence"]')" None "--json: confidence null for a signature match"
row=$(grep -v '^#' "$GW_TOP"/data/explain-corpus-*.tsv 2>/dev/null | cut -d: -f2- | awk -F'\t' 'NR > 1 && $1 == "sglang-memory" && $4 ~ /Capture cuda graph/ { print; exit }')
if [ -n "$row" ]; then
	msg=$(printf '%s' "$row" | cut -f4 | sed 's/\\n/ /g')
	out=$("$GW" explain --no-probe --json "$msg")
	is "$(printf '%s' "$out" | jget 'd["matches"][0]["id"]')" sglang-memory "a corpus message is found again"
	ok "$(printf '%s' "$out" | jget 'd["matches"][0]["example"]["source"]' | grep -Eq '^https?://'; echo $?)" "--json: example.source is a URL"
else
	skip "no sglang corpus row yet"
	skip "no sglang corpus row yet"
fi
# a made-up wording no signature holds, close to corpus messages: retrieval answers with a confidence
out=$("$GW" explain --no-probe --json 'vllm ERROR engine: raise ValueError("No available memory for the cache blocks in KV pool") during initialize_cache')
is "$(printf '%s' "$out" | jget 'd["matches"][0]["id"]')" vllm-gpu-memory-utilization "retrieval or signature: vLLM cache blocks"
out=$("$GW" explain --no-probe --json 'Scheduler hit an exception: Capture cuda graph failed with mem_fraction_static 0.88, try --cuda-graph-max-bs 16')
via=$(printf '%s' "$out" | jget 'd["matches"][0]["via"] if d["matches"] else "none"')
ok "$(case $via in signature|retrieval) echo 0 ;; *) echo 1 ;; esac)" "an SGLang wording is recognised ($via)"
# a non-GPU error is no match (exit 3)
run_gw explain --no-probe "fatal error: Python.h: No such file or directory"
is "$rc" 3 "a compiler error is no match (exit 3)"

# the binary holds no held-out message: no held-out source URL is in it,
# except a thread an older signature of data/errors.tsv cites (listed)
n=0 leak=0 cited=0
for f in "$GW_TOP"/tests/validation/explain-heldout-*.tsv; do
	[ -f "$f" ] || continue
	awk -F'\t' '!/^#/ && $5 ~ /^http/ { print $5 }' "$f" | sort -u > "$TMP/urls"
	while IFS= read -r u; do
		n=$((n + 1))
		# a whole URL: not the prefix of a longer one (issues/12 in issues/123)
		re="$(printf '%s' "$u" | sed 's/[].[\*^$()+?{|]/\\&/g')([^0-9A-Za-z_/-]|\$)"
		LC_ALL=C grep -aqE "$re" "$GW" || continue
		if cat "$GW_TOP"/data/*.tsv | grep -v '^#' | grep -aE "$re" | grep -qv '^[a-z-]*	\(en\|zh\)	'; then
			cited=$((cited + 1))
			diag "held-out thread cited by an older signature row (data/errors.tsv): $u"
		else
			leak=$((leak + 1))
			diag "held-out source in the binary: $u"
		fi
	done < "$TMP/urls"
done
is "$leak" 0 "no held-out corpus source is embedded in the binary ($n checked, $cited cited by older signatures)"
for f in "$GW_TOP"/data/explain-corpus-*.tsv; do
	[ -f "$f" ] || continue
	awk -F'\t' '!/^#/ && $5 ~ /^http/ { print $5 }' "$GW_TOP"/tests/validation/explain-heldout-*.tsv 2>/dev/null | sort -u > "$TMP/h"
	awk -F'\t' '!/^#/ && $5 ~ /^http/ { print $5 }' "$f" | sort -u > "$TMP/c"
	is "$(comm -12 "$TMP/h" "$TMP/c" | head -3 | tr '\n' ' ')" "" "$(basename "$f"): no thread on both sides of the split"
done

# zh_CN: Chinese messages recognised and answered in Chinese
zh() { LANG=zh_CN.UTF-8 "$GW" explain --no-probe "$1"; }
out=$(zh 'OSError: [WinError 126] 找不到指定的模块。 Error loading "C:\Python311\Lib\site-packages\torch\lib\fbgemm.dll" or one of its dependencies.')
like "$out" '^windows-dll-load: ' "zh_CN: WinError 126 (Chinese) is windows-dll-load"
like "$out" 'Windows 无法加载' "zh_CN: WinError 126 answered in Chinese"
out=$(zh 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. 显存不足，训练中断')
like "$out" '^cuda-oom: ' "zh_CN: a Chinese OOM report is cuda-oom"
like "$out" 'GPU 显存不足|显存' "zh_CN: OOM answered in Chinese"
out=$(zh '用ollama run qwen2:7b 报错 Error: llama runner process has terminated: exit status 2')
like "$out" '^ollama-runner-died: ' "zh_CN: a Chinese Ollama report is ollama-runner-died"
like "$out" 'Ollama 的' "zh_CN: Ollama answered in Chinese"
done_testing
