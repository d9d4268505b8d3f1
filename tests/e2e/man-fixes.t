#!/bin/sh
# The man page's printed fixes are the binary's (issue 34): every man line marked `.\" fix-example: MESSAGE`
# must be exactly the fix `gpuwise explain` prints for MESSAGE (make man-fixes rewrites them from the
# binary), and no concrete versioned command (torch~=2.11.0) may stand in the man page unmarked.
. "$(dirname "$0")/lib.sh"
M="$GW_TOP/man/gpuwise.1"
out=$(/usr/bin/python3 "$GW_TOP/tools/man-fixes.py" --check "$GW" "$M" 2>&1); rc=$?
is "$rc" 0 "every marked man-page fix equals the binary's (tools/man-fixes.py --check)"
[ "$rc" = 0 ] || diag "$out"
n=$(printf '%s\n' "$out" | sed -n 's/^\([0-9]*\) printed fixes compared.*/\1/p')
ok "$([ "${n:-0}" -ge 1 ] && echo 0 || echo 1)" "at least the sm_120 fix is compared ($n)"
like "$(sed -n '/fix-example: .*sm_120/{n;p}' "$M")" "torch~=" "the sm_120 line is marked"
# the check can fail: a copy with the old torch~=2.11.0 line is refused, naming both versions
sed 's/torch~=2\.1[0-9]\.0 torchvision/torch~=2.11.0 torchvision/' "$M" | sed 's/\\fBpip install \\-\\-force\\-reinstall torch~=2.1[2-9]/&/' > "$TMP/old.1"
sed -i '/fix-example: .*sm_120/{n;s/torch~=[0-9.]*0 /torch~=2.9.0 /}' "$TMP/old.1"
out=$(/usr/bin/python3 "$GW_TOP/tools/man-fixes.py" --check "$GW" "$TMP/old.1" 2>&1); rc=$?
is "$rc" 1 "a stale man-page fix fails the check"
like "$out" "man says .*torch~=2\\.9\\.0" "and the message shows the man's version"
like "$out" "binary says .*torch~=" "and the binary's"
# an unmarked versioned command is refused too
printf '%s\n' '\fBpip install torch~=2.5.0\fR' >> "$TMP/old.1"
out=$(/usr/bin/python3 "$GW_TOP/tools/man-fixes.py" --check "$GW" "$TMP/old.1" 2>&1)
like "$out" "no fix-example line to check it against: pip install torch~=2\\.5\\.0" "an unmarked versioned command is named"
done_testing
