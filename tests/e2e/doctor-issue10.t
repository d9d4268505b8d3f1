#!/bin/sh
# Defects of issue 10 in gpuwise doctor, end to end: the severities ok, info,
# skip, warn, fail (what is not a check is not "ok"); a finding that is the
# same for eight GPUs is printed once; a failing Python probe shows the tail
# of its traceback; and the desktop/browser GPU check on the seed's "Chrome
# says GPU acceleration is not supported" laptop (tests/fixtures/roots/desktop-chrome).
. "$(dirname "$0")/lib.sh"
export GPUWISE_NVML_LIB="$GW_FAKE/libnvidia-ml.so" GPUWISE_CUDA_LIB="$GW_FAKE/libcuda.so"
unset CUDA_HOME CUDA_PATH VIRTUAL_ENV CONDA_PREFIX LD_LIBRARY_PATH CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER \
	__NV_PRIME_RENDER_OFFLOAD __GLX_VENDOR_LIBRARY_NAME CUDA_LAUNCH_BLOCKING DRI_PRIME LIBGL_ALWAYS_SOFTWARE \
	DISPLAY WAYLAND_DISPLAY XDG_SESSION_TYPE
export HOME=/nonexistent-home
SC=$FIX/scenarios
fsev() { # fsev ID: severities of every finding with that id (from $out as JSON), space-separated
	printf '%s' "$out" | python3 -c 'import json,sys
print(" ".join(f["severity"] for f in json.load(sys.stdin)["findings"] if f["id"]==sys.argv[1]) or "absent")' "$1"
}
ffield() { # ffield ID FIELD: that field of the first finding with the id
	printf '%s' "$out" | python3 -c 'import json,sys
f=[x for x in json.load(sys.stdin)["findings"] if x["id"]==sys.argv[1]]
v=f[0][sys.argv[2]] if f else "absent"
print(json.dumps(v) if isinstance(v,list) else v)' "$1" "$2"
}

# --- severities: what is not a check is not "ok" ----------------------------
out=$(GPUWISE_ROOT=$FIX/roots/laptop-5070 GPUWISE_FAKE_SCENARIO=$SC/laptop-5070.json PATH=/usr/bin:/bin "$GW" doctor --json --no-exec 2>/dev/null)
is "$(fsev torch)" "skip" "no PyTorch found is 'skip', not 'ok'"
is "$(fsev xid)" "skip" "an unreadable kernel log (Xid not checked) is 'skip', not 'ok'"
is "$(fsev hybrid-graphics)" "info" "the hybrid-laptop note is 'info'"
is "$(fsev driver)" "ok" "a passed check stays 'ok'"
is "$(printf '%s' "$out" | python3 -c 'import json,sys
print(sorted({f["severity"] for f in json.load(sys.stdin)["findings"]} - {"ok","info","skip","warn","fail"}))')" "[]" \
	"every severity is one of ok, info, skip, warn, fail"
out=$(GPUWISE_ROOT=$FIX/roots/laptop-5070 GPUWISE_FAKE_SCENARIO=$SC/laptop-5070.json PATH=/usr/bin:/bin "$GW" doctor --no-exec 2>/dev/null)
like "$out" '^  skip  kernel log not readable: Xid errors not checked$' "text: 'skip  kernel log not readable'"
like "$out" '^  skip  no PyTorch found$' "text: 'skip  no PyTorch found'"
unlike "$out" '^  ok    (no PyTorch found|kernel log not readable)' "no 'ok' for what was not checked"
like "$out" '^[0-9]+ ok, [0-9]+ info, [0-9]+ skipped, [0-9]+ warnings?, [0-9]+ failures?$' "the summary counts each severity"
run_gw doctor --help
like "$out" 'ok \(a check passed\), info \(a fact, not a verdict\)' "--help explains the severities"

# --- no duplicate findings: eight H100s, one finding each --------------------
rm -rf "$TMP/h100"; cp -a "$FIX/roots/server-8xh100" "$TMP/h100"; cp -a "$FIX/roots/doctor-toolkits/." "$TMP/h100/"
out=$(GPUWISE_ROOT=$TMP/h100 GPUWISE_FAKE_SCENARIO=$SC/server-8xh100.json PATH=/usr/local/cuda-11.8/bin:/usr/local/cuda-12.8/bin:/usr/bin "$GW" doctor --json --no-exec 2>/dev/null)
is "$(printf '%s' "$out" | python3 -c 'import json,sys,collections
c=collections.Counter((f["id"],f["severity"],f["title"],f["evidence"],f["fix"]) for f in json.load(sys.stdin)["findings"])
print(max(c.values()))')" 1 "no finding is repeated"
is "$(fsev toolkit-arch)" "warn" "'nvcc 11.0 cannot compile for H100' is one finding"
is "$(ffield toolkit-arch gpus)" "[0, 1, 2, 3, 4, 5, 6, 7]" "it names the eight GPUs"
out=$(GPUWISE_ROOT=$TMP/h100 GPUWISE_FAKE_SCENARIO=$SC/server-8xh100.json PATH=/usr/local/cuda-11.8/bin:/usr/local/cuda-12.8/bin:/usr/bin "$GW" doctor --no-exec 2>/dev/null)
is "$(printf '%s\n' "$out" | grep -c 'nvcc 11.0.228 cannot compile for NVIDIA H100')" 1 "text: printed once"
like "$out" 'cannot compile for NVIDIA H100 80GB HBM3 \(compute capability 9.0\) \(GPUs 0, 1, 2, 3, 4, 5, 6, 7\)' "text: with the GPUs listed"

# --- a failing Python probe shows its traceback's tail ---------------------
rm -rf "$TMP/tb"; cp -a "$FIX/roots/laptop-5070" "$TMP/tb"; cp -a "$FIX/roots/doctor-toolkits/." "$TMP/tb/"
cat > "$TMP/tb/usr/bin/python3" <<'PY'
#!/bin/sh
# a torch whose native part fails after the import: a traceback, exit 1
echo "Traceback (most recent call last):" >&2
echo '  File "<string>", line 6, in <module>' >&2
echo '  File "/usr/lib/python3/dist-packages/torch/_C.py", line 42, in _cuda_getArchFlags' >&2
echo 'RuntimeError: libcudart.so.12: cannot open shared object file: No such file or directory' >&2
exit 1
PY
chmod +x "$TMP/tb/usr/bin/python3"
out=$(GPUWISE_ROOT=$TMP/tb GPUWISE_FAKE_SCENARIO=$SC/laptop-5070.json PATH=/usr/bin:/bin "$GW" doctor --json 2>/dev/null)
ev=$(ffield torch-import evidence)
like "$ev" 'RuntimeError: libcudart.so.12: cannot open shared object file' "the evidence has the exception line"
like "$ev" 'File "/usr/lib/python3/dist-packages/torch/_C.py", line 42' "the evidence has the failing frame"
ok "$([ "$(printf '%s\n' "$ev" | grep -c .)" -ge 3 ]; echo $?)" "not just 'Traceback (most recent call last):': the frames and the exception, on lines of their own"
out=$(GPUWISE_ROOT=$TMP/tb GPUWISE_FAKE_SCENARIO=$SC/laptop-5070.json PATH=/usr/bin:/bin "$GW" doctor 2>/dev/null)
like "$out" '^          RuntimeError: libcudart.so.12: cannot open shared object file' "text: the traceback's lines are indented under the finding"

# --- desktop and browser: the seed's Chrome case ----------------------------
R=$FIX/roots/desktop-chrome
dd() { out=$(GPUWISE_ROOT=$R GPUWISE_FAKE_SCENARIO=$SC/laptop-5070.json HOME=/home/alice DISPLAY=:0 XDG_SESSION_TYPE=x11 PATH=/usr/bin:/bin "$GW" doctor --no-exec "$@" 2>/dev/null); rc=$?; }
dd
is "$rc" 0 "warnings alone exit 0"
like "$out" '^Desktop and browser$' "a Desktop and browser group"
like "$out" 'info  the desktop is drawn by Intel GPU card0 \(i915, 0000:00:02.0\)' "the session renders on the Intel iGPU (DRM)"
like "$out" 'displays connected to card0: eDP-1' "the connected panel is named"
like "$out" 'warn  Chrome: "Use graphics acceleration when available" is off' "Chrome's acceleration setting is the cause"
like "$out" 'fix: turn it on in chrome://settings/system' "the fix names the setting"
like "$out" 'Chrome ignores its GPU blocklist \(#ignore-gpu-blocklist\)' "the blocklist override is reported"
like "$out" 'renders only what is offloaded to it' "the NVIDIA dGPU renders only offloaded programs"
like "$out" '__NV_PRIME_RENDER_OFFLOAD=1 __GLX_VENDOR_LIBRARY_NAME=nvidia google-chrome' "how to run Chrome on the dGPU"
dd --strict
is "$rc" 3 "--strict: the browser warning exits 3"
dd --json
is "$(fsev desktop-gpu)" "info" "JSON: desktop-gpu info"
is "$(fsev browser-gpu-off)" "warn" "JSON: browser-gpu-off warn"
is "$(fsev browser-blocklist)" "info" "JSON: browser-blocklist info"
is "$(ffield browser-gpu-off group)" "Desktop and browser" "JSON: the group"
# PRIME variables that do not fit the GPU
out=$(DRI_PRIME=1 GPUWISE_ROOT=$R GPUWISE_FAKE_SCENARIO=$SC/laptop-5070.json HOME=/home/alice DISPLAY=:0 "$GW" doctor --no-exec --json 2>/dev/null)
is "$(fsev prime-offload)" "warn" "DRI_PRIME with the NVIDIA driver is a warning"
like "$(ffield prime-offload title)" 'the NVIDIA driver ignores it' "DRI_PRIME: says why"
out=$(__NV_PRIME_RENDER_OFFLOAD=1 GPUWISE_ROOT=$R GPUWISE_FAKE_SCENARIO=$SC/laptop-5070.json HOME=/home/alice DISPLAY=:0 "$GW" doctor --no-exec --json 2>/dev/null)
like "$(ffield prime-offload title)" 'half set' "only __NV_PRIME_RENDER_OFFLOAD: half set"
out=$(__NV_PRIME_RENDER_OFFLOAD=1 __GLX_VENDOR_LIBRARY_NAME=nvidia GPUWISE_ROOT=$R GPUWISE_FAKE_SCENARIO=$SC/laptop-5070.json HOME=/home/alice DISPLAY=:0 "$GW" doctor --no-exec --json 2>/dev/null)
is "$(fsev prime-offload)" "info" "both NVIDIA variables: fine"
like "$(ffield prime-offload title)" 'render on NVIDIA GPU card1' "both NVIDIA variables: programs render on the dGPU"
out=$(LIBGL_ALWAYS_SOFTWARE=1 GPUWISE_ROOT=$R GPUWISE_FAKE_SCENARIO=$SC/laptop-5070.json HOME=/home/alice DISPLAY=:0 "$GW" doctor --no-exec --json 2>/dev/null)
is "$(fsev desktop-software)" "warn" "LIBGL_ALWAYS_SOFTWARE is a warning"
# flags: --disable-gpu in chrome-flags.conf; acceleration on in the settings
rm -rf "$TMP/flags"; cp -a "$R" "$TMP/flags"
printf '%s\n' '{"browser":{"enabled_labs_experiments":[]},"hardware_acceleration_mode":{"enabled":true}}' > "$TMP/flags/home/alice/.config/google-chrome/Local State"
printf '%s\n' '--ozone-platform-hint=auto' '--disable-gpu' > "$TMP/flags/home/alice/.config/chrome-flags.conf"
out=$(GPUWISE_ROOT=$TMP/flags GPUWISE_FAKE_SCENARIO=$SC/laptop-5070.json HOME=/home/alice DISPLAY=:0 "$GW" doctor --no-exec --json 2>/dev/null)
like "$(ffield browser-gpu-off title)" 'started with --disable-gpu' "--disable-gpu in chrome-flags.conf is found"
like "$(ffield browser-blocklist title)" 'applies its GPU blocklist' "without the override, the blocklist applies (chrome://gpu)"
# software rendering: only simpledrm drives the display
rm -rf "$TMP/sw"; cp -a "$R" "$TMP/sw"
rm -rf "$TMP/sw/sys/class/drm/card0" "$TMP/sw/sys/class/drm/card0-eDP-1"
mkdir -p "$TMP/sw/sys/devices/platform/simple-framebuffer.0" "$TMP/sw/sys/bus/platform/drivers/simple-framebuffer" \
	"$TMP/sw/sys/class/drm/card0" "$TMP/sw/sys/class/drm/card0-Unknown-1"
ln -s ../../../../bus/platform/drivers/simple-framebuffer "$TMP/sw/sys/devices/platform/simple-framebuffer.0/driver"
ln -s ../../../devices/platform/simple-framebuffer.0 "$TMP/sw/sys/class/drm/card0/device"
echo connected > "$TMP/sw/sys/class/drm/card0-Unknown-1/status"
out=$(GPUWISE_ROOT=$TMP/sw GPUWISE_FAKE_SCENARIO=$SC/laptop-5070.json HOME=/home/alice WAYLAND_DISPLAY=wayland-0 "$GW" doctor --no-exec --json 2>/dev/null)
is "$(fsev desktop-gpu)" "warn" "a display driven by simple-framebuffer is a warning"
like "$(ffield desktop-gpu title)" 'render in software' "software rendering is named"
like "$(ffield desktop-gpu fix)" 'nvidia-drm.modeset=1' "the fix: DRM KMS for NVIDIA"
# no graphical session, nothing connected: the check is skipped, and says so
out=$(GPUWISE_ROOT=$FIX/roots/laptop-5070 GPUWISE_FAKE_SCENARIO=$SC/laptop-5070.json "$GW" doctor --no-exec --json 2>/dev/null)
is "$(fsev desktop-gpu)" "skip" "no session: desktop check skipped"
done_testing
