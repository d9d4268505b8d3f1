#!/bin/sh
# The release binary can be copied to a GPU box that has only glibc: every
# other library (STATIC_LIBS in the Makefile: jansson, ...) is linked in
# statically, and NVML / libcuda are opened at run time (issue 10).
. "$(dirname "$0")/lib.sh"
bin=$GW_TOP/gpuwise
if [ ! -x "$bin" ] || ! command -v ldd >/dev/null; then
	skip "no release binary at $bin (make gpuwise) or no ldd"
	done_testing
	exit
fi
libs=$(ldd "$bin" 2>&1)
other=$(printf '%s\n' "$libs" | grep -vE '^[[:space:]]*(linux-vdso\.so|linux-gate\.so|/lib.*/ld-linux|ld-linux)' |
	grep -vE '^[[:space:]]*lib(c|m|dl|pthread|rt)\.so\.[0-9]+ ' || true)
is "$other" "" "the release binary needs only glibc (libc, libm, libdl, libpthread) at run time"
unlike "$libs" "libjansson" "jansson is linked in statically"
# and it runs with nothing on the library path but the system's
out=$(env -i PATH=/usr/bin:/bin "$bin" --version 2>&1); rc=$?
is "$rc" 0 "it runs in an empty environment"
like "$out" "^gpuwise [0-9]" "  ... and says its version"
done_testing
