#!/bin/sh
# Defects of issue 10 in gpuwise explain, each checked end to end: fixes
# that are shell pipelines stay whole (text and JSON), the PyTorch
# reinstall line replaces the installed build and keeps torchvision and
# torchaudio matched, and an OOM message from a container does not count
# the job itself as another process.
. "$(dirname "$0")/lib.sh"

# --- a fix with a shell pipe is one command, not three ---------------------
msg="NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running."
run_gw explain --no-probe "$msg"
is "$rc" 0 "no-driver message is diagnosed"
like "$out" '^    - lsmod \| grep nvidia; sudo dmesg \| grep NVRM$' "the pipeline is one bullet"
unlike "$out" '^    - grep ' "no bullet starts in the middle of a pipeline"
run_gw explain --no-probe --json "$msg"
is "$(printf '%s' "$out" | jget '[f for f in d["matches"][0]["fixes"] if "lsmod" in f][0]')" \
	"lsmod | grep nvidia; sudo dmesg | grep NVRM" "JSON: the pipeline is one string"
is "$(printf '%s' "$out" | jget 'len([f for f in d["matches"][0]["fixes"] if f.startswith("grep")])')" 0 \
	"JSON: no fix starts with grep"
# every fix of every signature: none starts as the tail of a pipeline
for m in "Failed to initialize NVML: Unknown Error" "libcudnn.so.8: cannot open shared object file: No such file or directory" \
	"NVRM: Xid (PCI:0000:01:00): 13, pid=1234, Graphics Exception" "The NVIDIA probe routine was not called for 1 device(s)." \
	"RuntimeError: CUDA error: an illegal memory access was encountered" "Mismatch in versions between nvidia-smi and NVML"; do
	run_gw explain --no-probe --json "$m"
	is "$(printf '%s' "$out" | jget 'sum(1 for x in d["matches"] for f in x["fixes"] if f.split()[0] in ("grep","sudo") and "tee" in f.split()[:2] or f.startswith("grep "))')" 0 \
		"no fix is a pipeline's tail: ${m%%:*}"
done
run_gw explain --no-probe "libcudnn.so.8: cannot open shared object file: No such file or directory"
like "$out" '^    - find it: ldconfig -p \| grep libcudnn.so.8$' "library lookup keeps its pipe"

# --- the reinstall line replaces the build and matches the domain libraries --
run_gw explain --no-probe "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation."
like "$out" '^    - pip install --force-reinstall torch~=2.12.0 torchvision~=0.27.0 torchaudio~=2.12.0 --index-url https://download.pytorch.org/whl/cu128$' \
	"sm_120: force-reinstall with matched torchvision/torchaudio"
unlike "$out" 'pip install torch --index-url' "no plain 'pip install torch' (a no-op when torch is installed)"
run_gw explain --no-probe "Found GPU0 Tesla P40 which is of cuda capability 6.1."
like "$out" 'pip install --force-reinstall torch~=([0-9.]+) torchvision~=0\.[0-9]+\.0 torchaudio~=' "an old GPU gets a matched pinned set too"
# the pairs come from data/torch-domains.tsv: each torchvision is torch's minor + 15 for 2.x
grep -v '^#' "$GW_TOP/data/torch-domains.tsv" | tail -n +2 | while IFS="$(printf '\t')" read -r t v a src; do
	[ "0.$(( ${t#2.} + 15 ))" = "$v" ] && [ "$t" = "$a" ] || echo "bad $t $v $a"
done > "$TMP/pairs"
is "$(cat "$TMP/pairs")" "" "torch-domains.tsv pairs follow the release pattern (torchvision 0.(minor+15), torchaudio = torch)"

# --- OOM inside a container: the listed PID is the job itself --------------
oom="torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 7.79 GiB of which 1.02 GiB is free. Process 2345 has 6.60 GiB memory in use. Of the allocated memory 5.80 GiB is allocated by PyTorch, and 412.00 MiB is reserved by PyTorch but unallocated."
run_gw explain --no-probe "$oom"
unlike "$out" 'other processes hold 6.60 GiB' "the job's own 6.60 GiB is not 'other processes'"
like "$out" 'process 2345 \(6.60 GiB\) is this job itself seen from outside its PID namespace' "the job is recognised behind the PID namespace"
like "$out" 'a real shortage: 2.00 GiB requested, 1.02 GiB free' "the verdict is a plain shortage"
unlike "$out" 'gpuwise status \(the message names process 2345\)' "no advice to stop the job itself"
run_gw explain --no-probe --json "$oom"
is "$(printf '%s' "$out" | jget 'd["matches"][0]["oom"]["other_processes"][0]["is_this_job"]')" "True" "JSON: is_this_job"
# a real other process (more than reserved + 2 GiB of context) stays another process
oom2="CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.00 GiB is free. Process 777 has 14.00 GiB memory in use. Process 2345 has 6.60 GiB memory in use. Of the allocated memory 5.80 GiB is allocated by PyTorch, and 412.00 MiB is reserved by PyTorch but unallocated."
run_gw explain --no-probe "$oom2"
like "$out" 'other processes hold 14.00 GiB on this GPU' "the other process alone is counted"
like "$out" 'the message names process 777\)' "only the other process is pointed at"
# outside a container PyTorch says "this process has": nothing is taken for the job
oom3="CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.00 GiB is free. Process 777 has 6.60 GiB memory in use. Including non-PyTorch memory, this process has 15.00 GiB memory in use. Of the allocated memory 5.80 GiB is allocated by PyTorch, and 412.00 MiB is reserved by PyTorch but unallocated."
run_gw explain --no-probe --json "$oom3"
is "$(printf '%s' "$out" | jget 'd["matches"][0]["oom"]["other_processes"][0]["is_this_job"]')" "False" "with 'this process has' the listed PID is another process"
# --- messages users paste that matched nothing on main ---------------------
while IFS='|' read -r want msg; do
	run_gw explain --no-probe --json "$msg"
	is "$rc" 0 "'$msg' is diagnosed"
	is "$(printf '%s' "$out" | jget 'd["matches"][0]["id"] if d["matches"] else "none"')" "$want" "'$msg' is $want"
done <<'MSGS'
gguf-offload-oom|ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9866.00 MiB on device 1: cudaMalloc failed: out of memory
gguf-offload-oom|cudaMalloc failed: out of memory
gguf-offload-oom|failed to allocate CUDA0 buffer
gguf-offload-oom|llama_init_from_model: failed to allocate compute buffers
ollama-runner-died|Error: llama runner process has terminated: exit status 2
host-ram-short|Error: model requires more system memory (9.1 GiB) than is available (7.2 GiB)
gpu-fell-off-bus|Xid 79
nccl-timeout|[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600013 milliseconds before timing out.
bf16-unsupported|ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has compute capability 7.5.
nvcc-arch-unsupported|nvcc fatal   : Unsupported gpu architecture 'compute_120'
cuda-unknown-error|RuntimeError: CUDA unknown error - this may be due to an incorrectly set up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start.
flash-attn-arch|RuntimeError: FlashAttention only supports Ampere GPUs or newer.
host-oom-killed|Killed
MSGS
run_gw explain --no-probe "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9866.00 MiB on device 1: cudaMalloc failed: out of memory"
like "$out" 'could not allocate 9866.00 MiB on GPU 1' "the llama.cpp size and device are captured"
like "$out" 'gpuwise plan MODEL.gguf' "the llama.cpp OOM points to gpuwise plan"
run_gw explain --no-probe "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has compute capability 7.5."
like "$out" '--dtype half' "bf16 on a T4: run in float16"
run_gw explain --no-probe "RuntimeError: CUDA unknown error - this may be due to an incorrectly set up environment"
like "$out" 'sudo rmmod nvidia_uvm && sudo modprobe nvidia_uvm' "unknown error: reload nvidia_uvm (suspend/resume)"
# the lists are structured: a table whose fixes are the old ' | ' text is refused
mkdir "$TMP/old"
{ grep '^#' "$GW_TOP/data/errors.tsv"; grep -v '^#' "$GW_TOP/data/errors.tsv" | head -1
  printf 'old\t50\tCUDA out of memory\tt\t["c"]\tlsmod | grep nvidia\thttps://example.org\n'; } > "$TMP/old/errors.tsv"
run_gw --data-dir "$TMP/old" explain --no-probe "CUDA out of memory"
is "$rc" 1 "fixes that are not a JSON list: a table error"
like "$err" "table 'errors' row 1 \(old\): bad list: column fixes is not a JSON array of strings" "the row and column are named"
done_testing
