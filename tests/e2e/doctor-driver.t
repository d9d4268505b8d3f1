#!/bin/sh
# doctor decides whether the driver is bound from both sources and says one thing (issue 34): an NVML
# that reports a driver for a GPU whose PCI device sysfs does not list (a container's /sys, a test root)
# is a bound driver, not "no driver bound / module not loaded" beside "driver ... ok"; a PCI device that
# sysfs lists without a driver link is still "no driver bound".
. "$(dirname "$0")/lib.sh"
export GPUWISE_NVML_LIB="$GW_FAKE/libnvidia-ml.so" GPUWISE_CUDA_LIB="$GW_FAKE/libcuda.so"
unset CUDA_HOME CUDA_PATH VIRTUAL_ENV CONDA_PREFIX LD_LIBRARY_PATH CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER
export HOME=/nonexistent-home
SC=$FIX/scenarios
R="$TMP/nosysfs"
mkdir -p "$R/sys/bus/pci/devices" "$R/proc" "$R/dev"
sev() { printf '%s' "$out" | python3 -c 'import json,sys
print(" ".join(f["severity"] for f in json.load(sys.stdin)["findings"] if f["id"]==sys.argv[1]) or "absent")' "$1"; }

out=$(GPUWISE_ROOT=$R GPUWISE_FAKE_SCENARIO=$SC/desktop-4090.json PATH=/usr/bin:/bin "$GW" doctor --json --no-exec 2>/dev/null)
is "$(sev driver)" "ok" "NVML reports the driver: driver ok"
is "$(sev no-driver)" "absent" "no 'no driver bound' finding beside it"
is "$(sev secure-boot)" "absent" "nor a Secure Boot verdict"
is "$(sev gpu-sysfs)" "info" "the missing sysfs entry is a fact (info)"
is "$(sev gpu)" "ok" "the GPU itself is ok"
ver=$(printf '%s' "$out" | jget '[f["title"] for f in d["findings"] if f["id"] == "driver"][0]')
like "$ver" "570\\.124\\.06" "the driver version NVML reports"
out=$(GPUWISE_ROOT=$R GPUWISE_FAKE_SCENARIO=$SC/desktop-4090.json PATH=/usr/bin:/bin "$GW" doctor --no-exec 2>/dev/null)
unlike "$out" "no driver bound|not loaded|not bound" "the text never says the driver is missing"
like "$out" "no PCI sysfs entry, but NVML reports driver 570\\.124\\.06" "it says which source lacks what"
like "$out" "driver nvidia \\(per NVML\\)" "the GPU line names the driver NVML implies"

# the other way round: sysfs lists the device and no driver link: still a failure
out=$(GPUWISE_ROOT=$FIX/roots/nvidia-nodriver GPUWISE_FAKE_SCENARIO=$SC/laptop-5070.json PATH=/usr/bin:/bin "$GW" doctor --json --no-exec 2>/dev/null)
is "$(sev gpu-sysfs)" "absent" "a listed PCI device without a driver is not explained away"
like "$(sev no-driver)$(sev secure-boot)" "fail" "it still fails the binding check"
# without NVML nothing vouches for the driver
out=$(GPUWISE_NVML_LIB=none GPUWISE_ROOT=$R GPUWISE_FAKE_SCENARIO=$SC/desktop-4090.json PATH=/usr/bin:/bin "$GW" doctor --json --no-exec 2>/dev/null)
is "$(sev gpu-sysfs)" "absent" "no NVML: no claim that a driver is bound"
done_testing
