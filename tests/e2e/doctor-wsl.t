#!/bin/sh
# gpuwise doctor, status and plan on WSL 2 fixture roots (tests/fixtures/roots/
# wsl2-*, written by generate.py) with the fake NVML's WSL laptop scenario: the
# Windows driver 576.02 seen through /dev/dxg and /usr/lib/wsl/lib, no PCI device.
. "$(dirname "$0")/lib.sh"
export GPUWISE_NVML_LIB="$GW_FAKE/libnvidia-ml.so" GPUWISE_CUDA_LIB="$GW_FAKE/libcuda.so"
export HOME=/nonexistent-home
unset CUDA_HOME CUDA_PATH VIRTUAL_ENV CONDA_PREFIX LD_LIBRARY_PATH CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER \
	__NV_PRIME_RENDER_OFFLOAD __GLX_VENDOR_LIBRARY_NAME CUDA_LAUNCH_BLOCKING
R=$FIX/roots
SC=$FIX/scenarios/wsl2-laptop.json
WPATH=/usr/local/cuda-12.8/bin:/usr/bin

doc() { # doc ROOT ARGS...: doctor on a WSL root (files only: --no-exec)
	r=$1
	shift
	out=$(GPUWISE_ROOT=$R/$r GPUWISE_FAKE_SCENARIO=$SC PATH=$WPATH:$PATH "$GW" doctor --no-exec "$@" 2>"$TMP/stderr"); rc=$?
	err=$(cat "$TMP/stderr")
}
fid() { # fid ID FIELD: first finding with that id (from $out as JSON)
	printf '%s' "$out" | python3 -c 'import json,sys
f=[x for x in json.load(sys.stdin)["findings"] if x["id"]==sys.argv[1]]
print(f[0][sys.argv[2]] if f else "absent")' "$1" "$2"
}
# Fixes that cannot work on WSL (or install a Linux driver): none may be printed there.
# A purge of a wrongly installed driver is a fix and allowed; an install is not.
NOWSL='apt(-get)? install|modprobe|rmmod|fuser|nvidia-smi( -i [0-9]+)? -(r|pl|pm|c)( |$)|mokutil|blacklist nouveau|update-initramfs|dkms|install the driver|lspci|/proc/driver/nvidia'
no_bad_fix() { # no_bad_fix NAME: neither the text nor the JSON output has such a line
	unlike "$out" "$NOWSL" "$1: no apt install / modprobe / driver-install / nvidia-smi -r/-pl/-pm/-c / fuser line"
}

# ---- a correct WSL 2 setup --------------------------------------------------------
doc wsl2-laptop
is "$rc" 0 "wsl2-laptop: a correct setup passes (exit 0)"
like "$out" 'info  WSL 2: the GPU is driven by the Windows NVIDIA driver 576.02 \(CUDA up to 12.9\)' "the platform finding names the Windows driver and its CUDA"
like "$out" "kernel '5.15.167.4-microsoft-standard-WSL2', /dev/dxg, /usr/lib/wsl/lib" "the platform evidence: WSL kernel, /dev/dxg, /usr/lib/wsl/lib"
like "$out" 'ok    NVIDIA Windows driver 576.02' "the driver is called the Windows driver"
like "$out" 'ok    GPU 0 \(NVIDIA GeForce RTX 4060 Laptop GPU' "the GPU is ok without a PCI driver binding"
unlike "$out" 'has no driver bound|nouveau|Secure Boot' "no PCI-binding, nouveau or Secure Boot check"
like "$out" 'ok    no Linux NVIDIA driver is installed inside WSL' "no Linux driver inside WSL: ok"
like "$out" 'ok    libcuda.so.1 and libcuda.so resolve to the Windows driver' "libcuda resolves to /usr/lib/wsl/lib"
like "$out" "info  ldconfig's warning '/usr/lib/wsl/lib/libcuda.so.1 is not a symbolic link' is harmless" "the ldconfig warning is reported as harmless"
like "$out" "fix: nothing to do; do not 'fix' it by deleting, renaming or re-linking files in /usr/lib/wsl/lib" "a line says not to 'fix' the ldconfig warning"
like "$out" "ok    CUDA toolkit 12.8.93 is cuda-toolkit-12-8 from NVIDIA's wsl-ubuntu repository" "the toolkit's origin: the wsl-ubuntu package"
like "$out" 'ok    /dev/dxg is present' "GPU-PV: /dev/dxg present"
like "$out" 'ok    no dxgkrnl \(GPU-PV\) errors' "no dxgkrnl errors"
like "$out" 'info  Xid errors do not reach WSL' "Xid replaced by a note on WSL"
like "$out" 'Event Viewer > Windows Logs > System, source nvlddmkm' "where Windows logs Xid"
unlike "$out" 'Xid errors in the kernel log|kernel log not readable: Xid' "no Linux Xid check"
like "$out" 'process 9012 holds 900 MiB: a Windows-side process' "a process NVML lists without /proc entry is Windows-side"
unlike "$out" 'no longer exists' "no stale-process warning for the Windows process"
like "$out" 'Settings > System > Display > Graphics' "which GPU a Windows app uses: where to click"
like "$out" "Task Manager > Performance > GPU .*'Dedicated GPU memory'.*'Shared GPU memory'" "Task Manager's dedicated vs shared GPU memory explained"
like "$out" '3.86 GiB of 8.00 GiB VRAM in use, the Windows desktop' "VRAM in use counted with the Windows desktop's share"
unlike "$out" 'PRIME render offload|no DRM device drives the display' "no Linux desktop advice on WSL"
no_bad_fix "wsl2-laptop text"
doc wsl2-laptop --json
is "$rc" 0 "wsl2-laptop --json: exit 0"
is "$(printf '%s' "$out" | jget 'd["platform"]')" wsl2 "doctor --json carries platform=wsl2"
is "$(fid platform severity)" info "JSON: the platform finding is info"
is "$(printf '%s' "$out" | jget '",".join(sorted({f["id"] for f in d["findings"]} & {"no-driver","secure-boot","nouveau-conflict","xid","stale-process","persistence-mode","hybrid-graphics","desktop-gpu"}))')" "" "JSON: no bare-metal-only finding on WSL"
no_bad_fix "wsl2-laptop JSON"

# --deep on WSL: a failing GPU test points at Windows' log, not the Linux kernel log's Xid
out=$(GPUWISE_FAKE_DEEP=corrupt GPUWISE_CUDA_LIB=$GW_FAKE/cudadeep.so GPUWISE_ROOT=$R/wsl2-laptop GPUWISE_FAKE_SCENARIO=$SC \
	PATH=$WPATH:$PATH "$GW" doctor --deep --no-exec 2>/dev/null); rc=$?
is "$rc" 4 "--deep checksum failure on WSL: exit 4"
like "$out" 'fix: gpuwise explain the error text; on Windows: Event Viewer > Windows Logs > System, source nvlddmkm' "--deep on WSL: Windows' event log, not dmesg"
unlike "$out" 'dmesg' "--deep on WSL: no dmesg | grep Xid"

# ---- a Linux driver installed inside WSL ---------------------------------------------
doc wsl2-linux-driver
is "$rc" 4 "wsl2-linux-driver: exit 4"
like "$out" 'fail  a Linux NVIDIA driver is installed inside WSL' "the Linux driver inside WSL fails"
like "$out" 'files: /usr/lib/x86_64-linux-gnu/libcuda.so.550.120, /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.120' "the shadowing files are named"
like "$out" 'packages: cuda 12.8.1-1, cuda-drivers 570.124.06-1, nvidia-driver-550 .*libnvidia-compute-550' "the dpkg packages are named"
like "$out" 'fix: sudo apt-get purge cuda cuda-drivers nvidia-driver-550 libnvidia-compute-550 && sudo apt-get autoremove --purge' "the purge command names the packages"
like "$out" "then the toolkit alone: the package cuda-toolkit-12-8 from NVIDIA's wsl-ubuntu repository; then in PowerShell: wsl --shutdown" "after the purge: the toolkit package and wsl --shutdown"
like "$out" "warn  CUDA toolkit 12.8.93 comes from NVIDIA's ubuntu2404 repository, not the wsl-ubuntu one" "the toolkit's origin: the ubuntu2404 repository warns"
like "$out" "warn  another libcuda.so.1 is in the loader's cache next to the Windows driver's" "the Linux libcuda.so.1 in the cache's directories warns"
like "$out" 'fix: ldconfig -p \| grep libcuda.so.1 shows the order' "the command that shows the cache's order"
like "$out" 'warn  dxgkrnl \(GPU paravirtualisation\) logged 2 errors' "dxgkrnl errors counted"
like "$out" 'dxgkio_query_adapter_info: Ioctl failed: -22' "the dxgkrnl line quoted"
no_bad_fix "wsl2-linux-driver text"
doc wsl2-linux-driver --json
is "$(fid wsl-linux-driver severity)" fail "JSON: wsl-linux-driver fails"
no_bad_fix "wsl2-linux-driver JSON"

# ---- the toolkit's stub libcuda first on LD_LIBRARY_PATH ------------------------------
out=$(LD_LIBRARY_PATH=/usr/local/cuda-12.8/lib64/stubs:/usr/local/cuda-12.8/lib64 GPUWISE_ROOT=$R/wsl2-stub-first \
	GPUWISE_FAKE_SCENARIO=$SC PATH=$WPATH:$PATH "$GW" doctor --no-exec 2>/dev/null); rc=$?
is "$rc" 4 "wsl2-stub-first: exit 4"
like "$out" "fail  programs load another libcuda before the Windows driver's /usr/lib/wsl/lib/libcuda.so.1" "a stub libcuda first fails"
like "$out" "libcuda.so resolves to /usr/local/cuda-12.8/lib64/stubs/libcuda.so \(via LD_LIBRARY_PATH\): the CUDA toolkit's stub" "the stub and how it is found"
like "$out" 'fix: export LD_LIBRARY_PATH=/usr/lib/wsl/lib:/usr/local/cuda-12.8/lib64 ' "the export line drops the stub directory"
no_bad_fix "wsl2-stub-first"
# without the variable the same root is fine
doc wsl2-stub-first
like "$out" 'ok    libcuda.so.1 and libcuda.so resolve' "wsl2-stub-first without LD_LIBRARY_PATH: resolution ok"

# ---- other libcuda copies, Ubuntu's toolkit, an old Windows driver ---------------------
cp -a "$R/wsl2-laptop" "$TMP/more"
mkdir -p "$TMP/more/home/u/miniconda3/envs/ml/cuda-compat" "$TMP/more/usr/local/cuda-12.8/compat"
echo x > "$TMP/more/home/u/miniconda3/envs/ml/cuda-compat/libcuda.so.1"
out=$(LD_LIBRARY_PATH=/home/u/miniconda3/envs/ml/cuda-compat:/opt/lib GPUWISE_ROOT=$TMP/more GPUWISE_FAKE_SCENARIO=$SC \
	PATH=$WPATH:$PATH "$GW" doctor --no-exec 2>/dev/null); rc=$?
is "$rc" 4 "a conda cuda-compat libcuda.so.1 first on LD_LIBRARY_PATH: exit 4"
like "$out" 'libcuda.so.1 resolves to /home/u/miniconda3/envs/ml/cuda-compat/libcuda.so.1 \(via LD_LIBRARY_PATH\): a CUDA forward-compatibility libcuda' "cuda-compat named as such"
like "$out" 'fix: export LD_LIBRARY_PATH=/usr/lib/wsl/lib:/opt/lib ' "the export line keeps the other entries"
echo x > "$TMP/more/usr/local/cuda-12.8/compat/libcuda.so.1"
echo /usr/local/cuda-12.8/compat > "$TMP/more/etc/ld.so.conf.d/000-cuda-compat.conf"
out=$(GPUWISE_ROOT=$TMP/more GPUWISE_FAKE_SCENARIO=$SC PATH=$WPATH:$PATH "$GW" doctor --no-exec 2>/dev/null)
like "$out" 'libcuda.so.1 resolves to /usr/local/cuda-12.8/compat/libcuda.so.1 \(via /etc/ld.so.conf.d/000-cuda-compat.conf\)' "an ld.so.conf.d file ahead of ld.wsl.conf is found"
like "$out" "fix: remove that directory's line from its ld.so.conf file" "the ld.so.conf fix"
rm "$TMP/more/etc/ld.so.conf.d/000-cuda-compat.conf"
printf '#!/bin/sh\necho "Cuda compilation tools, release 12.0, V12.0.140"\n' > "$TMP/more/usr/bin/nvcc"
chmod +x "$TMP/more/usr/bin/nvcc"
printf '\nPackage: nvidia-cuda-toolkit\nStatus: install ok installed\nVersion: 12.0.140~12.0.1-4build4\n' >> "$TMP/more/var/lib/dpkg/status"
sed 's/"576.02"/"551.61"/; s/"cuda_driver_version": 12090/"cuda_driver_version": 12040/' "$SC" > "$TMP/old.json"
out=$(GPUWISE_ROOT=$TMP/more GPUWISE_FAKE_SCENARIO=$TMP/old.json PATH=/usr/bin:$PATH "$GW" doctor --no-exec 2>/dev/null); rc=$?
like "$out" "warn  CUDA toolkit 12.0.140 is Ubuntu's nvidia-cuda-toolkit, not NVIDIA's WSL package" "Ubuntu's nvidia-cuda-toolkit is named"
like "$out" "fix: sudo apt-get remove nvidia-cuda-toolkit; then the package cuda-toolkit-12-4 from NVIDIA's wsl-ubuntu repository" "the right package for the driver's CUDA"
like "$out" 'fail  driver 551.61 is too old for torch 2.7.1\+cu128 \(built for CUDA 12.8, needs driver >= 570.65\)' "an old Windows driver is judged by the Windows minimum (570.65 for CUDA 12.8)"
like "$out" 'fix: install the NVIDIA driver for Windows >= 570.65 .*then in PowerShell: wsl --shutdown' "an old driver is fixed on Windows"
no_bad_fix "old Windows driver, Ubuntu toolkit"

# ---- status and plan say WSL and the .wslconfig limit ---------------------------------
st() { out=$(GPUWISE_ROOT=$R/$1 GPUWISE_FAKE_SCENARIO=$SC "$GW" status ${2:+"$2"} 2>/dev/null); rc=$?; }
st wsl2-laptop
like "$out" 'driver 576.02  CUDA 12.9  WSL 2 \(the Windows driver\)' "status text says WSL 2"
like "$out" 'WSL 2 VM: 11.67 GiB RAM, limited by memory=12GB in /mnt/c/Users/ana/.wslconfig' "status text: the VM's RAM and the .wslconfig limit"
like "$out" "9012 +- +\(a Windows-side process: not in WSL's /proc\)" "status labels the Windows-side process"
unlike "$out" 'another PID namespace' "not called another PID namespace on WSL"
st wsl2-laptop --json
is "$(printf '%s' "$out" | jget 'd["platform"]')" wsl2 "status --json: platform=wsl2"
is "$(printf '%s' "$out" | jget 'd["wsl_memory"]["wslconfig_memory_bytes"]')" 12884901888 "status --json: memory=12GB is 12 GiB"
is "$(printf '%s' "$out" | jget 'd["wsl_memory"]["vm_ram_total_bytes"]')" 12531159040 "status --json: the VM's MemTotal"
is "$(printf '%s' "$out" | jget '[p["windows_side"] for p in d["gpus"][0]["processes"]]')" '[false, true]' "status --json: windows_side per process"
for k in wsl_memory.vm_ram_total_bytes wsl_memory.wslconfig_memory_bytes wsl_memory.wslconfig \
	wsl_memory.windows_ram_estimate_bytes wsl_memory.rule windows_side; do
	grep -q "^| \`$k\`" "$GW_TOP/docs/json-status.md"
	ok $? "docs/json-status.md documents $k"
done
is "$(printf '%s' "$out" | jget '",".join(sorted(d["wsl_memory"]))')" "rule,vm_ram_total_bytes,windows_ram_estimate_bytes,wslconfig,wslconfig_memory_bytes" "status --json: wsl_memory has exactly the documented keys"
st wsl2-stub-first
like "$out" "WSL 2 VM: 15.55 GiB RAM \(no memory= in .*WSL's default, 50% of the Windows RAM: Windows has about 31.10 GiB\)" "status: no .wslconfig limit: WSL's default rule"
out=$(GPUWISE_ROOT=$R/wsl2-laptop GPUWISE_FAKE_SCENARIO=$SC "$GW" plan llama-3.1-8b 2>/dev/null); rc=$?
like "$out" "WSL 2: host RAM is the WSL VM's, limited by memory=12GB in /mnt/c/Users/ana/.wslconfig" "plan text: host RAM is the VM's, with the .wslconfig limit"
like "$out" "WSL 2: GPU 0 has 3.86 GiB in use, 1.86 GiB of it the Windows desktop's and Windows apps'" "plan text: the Windows side's VRAM, counted as used"
like "$out" 'PID 9012 .*\(a Windows-side process\)' "plan lists the Windows-side process as such"
out=$(GPUWISE_ROOT=$R/wsl2-laptop GPUWISE_FAKE_SCENARIO=$SC "$GW" plan llama-3.1-8b --json 2>/dev/null)
is "$(printf '%s' "$out" | jget 'd["platform"]')" wsl2 "plan --json: platform=wsl2"
is "$(printf '%s' "$out" | jget 'd["host"]["wslconfig_memory_bytes"]')" 12884901888 "plan --json: host.wslconfig_memory_bytes"
like "$(printf '%s' "$out" | jget 'd["host"]["ram_limit_rule"]')" 'memory=12GB in /mnt/c/Users/ana/.wslconfig' "plan --json: host.ram_limit_rule"
is "$(printf '%s' "$out" | jget 'd["wsl_vram"][0]["windows_side_bytes"]')" $((3950 * 1048576 - 2048 * 1048576)) "plan --json: wsl_vram windows_side_bytes = used - Linux processes"
out=$(GPUWISE_ROOT=$R/wsl2-stub-first GPUWISE_FAKE_SCENARIO=$SC "$GW" plan llama-3.1-8b --json 2>/dev/null)
like "$(printf '%s' "$out" | jget 'd["host"]["ram_limit_rule"]')" "WSL's default, 50% of the Windows RAM" "plan --json without .wslconfig: the default rule"
is "$(printf '%s' "$out" | jget 'd["host"]["wslconfig_memory_bytes"]')" None "plan --json without .wslconfig: no limit bytes"

# ---- bare metal is not WSL ------------------------------------------------------------
out=$(GPUWISE_ROOT=$R/laptop-5070-awake GPUWISE_FAKE_SCENARIO=$FIX/scenarios/laptop-5070.json "$GW" doctor --no-exec --json 2>/dev/null)
is "$(printf '%s' "$out" | jget 'd["platform"]')" linux "bare metal: doctor --json platform=linux"
is "$(printf '%s' "$out" | jget '",".join(sorted(f["id"] for f in d["findings"] if f["id"].startswith(("wsl-","windows-")) or f["id"]=="platform"))')" "" "bare metal: no WSL finding"
out=$(GPUWISE_ROOT=$R/desktop-4090 GPUWISE_FAKE_SCENARIO=$FIX/scenarios/desktop-4090.json "$GW" status --json 2>/dev/null)
is "$(printf '%s' "$out" | jget '[d["platform"], d["wsl_memory"]]')" '["linux", null]' "bare metal: status platform=linux, wsl_memory null"
out=$(GPUWISE_ROOT=$R/nvidia-nodriver GPUWISE_FAKE_SCENARIO=$FIX/scenarios/laptop-5070.json "$GW" doctor --no-exec 2>/dev/null)
like "$out" 'has no driver bound|Secure Boot' "bare metal: a GPU without a driver still fails the binding check"
like "$out" "$NOWSL" "sanity: the WSL-forbidden pattern does find bare metal's driver-install fix"

# ---- WSL 1 and WSL 2 without GPU-PV -----------------------------------------------------
mkdir -p "$TMP/wsl1/proc/sys/kernel" "$TMP/wsl1/sys/bus/pci/devices"
echo 4.4.0-19041-Microsoft > "$TMP/wsl1/proc/sys/kernel/osrelease"
out=$(GPUWISE_ROOT=$TMP/wsl1 GPUWISE_NVML_LIB=/nonexistent/libnvidia-ml.so.1 "$GW" doctor --no-exec 2>/dev/null); rc=$?
is "$rc" 4 "WSL 1: exit 4"
like "$out" 'fail  WSL 1: no GPU access \(CUDA needs WSL 2\)' "WSL 1 is named"
like "$out" 'wsl --set-version <distribution> 2' "WSL 1: the conversion command"
cp -a "$R/wsl2-laptop" "$TMP/nodxg" && rm -f "$TMP/nodxg/dev/dxg" "$TMP/nodxg/usr/lib/wsl/lib/libcuda.so.1"
out=$(GPUWISE_ROOT=$TMP/nodxg GPUWISE_NVML_LIB=/nonexistent/libnvidia-ml.so.1 PATH=$WPATH:$PATH "$GW" doctor --no-exec 2>/dev/null); rc=$?
is "$rc" 4 "WSL 2 without /dev/dxg and NVML: exit 4"
like "$out" 'fail  /dev/dxg is missing' "no /dev/dxg fails"
like "$out" 'fail  no GPU visible in WSL' "no GPU visible in WSL"
like "$out" 'install the NVIDIA driver for Windows \(nvidia.com/drivers.*then in PowerShell: wsl --shutdown' "the missing driver is fixed on Windows, then wsl --shutdown"
like "$out" 'fail  the Windows NVIDIA driver.s Linux libraries are missing' "missing /usr/lib/wsl/lib/libcuda.so.1 fails"
no_bad_fix "WSL 2 without GPU-PV"
done_testing
