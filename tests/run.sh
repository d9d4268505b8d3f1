#!/bin/sh
# Run every test: cmocka unit tests (TAP) and end-to-end TAP scripts, both
# under prove.  Ends with the line "N passed, N failed".
# Env: GW_BUILD (build dir with gpuwise, tests/, fake/), GW_ONLY=unit|e2e.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=${GW_BUILD:-build/check}
case $build in /*) ;; *) build=$top/$build ;; esac
log=$build/test-log.txt
: > "$log"
export GW="$build/gpuwise" GW_BUILD="$build" GW_TOP="$top"
export GW_FAKE="$build/fake"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export CMOCKA_MESSAGE_OUTPUT=TAP
export NO_COLOR=1
status=0
shift 0
if [ "${GW_ONLY:-}" != e2e ] && [ $# -gt 0 ]; then
	prove -v --exec '' "$@" >>"$log" 2>&1 || status=1
fi
if [ "${GW_ONLY:-}" != unit ]; then
	set -- "$top"/tests/e2e/*.t
	if [ -e "$1" ]; then
		prove -v ${GW_JOBS:+-j "$GW_JOBS"} "$@" >>"$log" 2>&1 || status=1
	fi
fi
# Show failures and the summary prove printed, then our own count.
grep -E '^(not ok|Failed|#   Failed|t/|Test Summary|Result:)|Dubious|ERROR|Sanitizer' "$log" | head -100
passed=$(grep -cE '^[[:space:]]*ok [0-9]+' "$log")
failed=$(grep -cE '^[[:space:]]*not ok [0-9]+' "$log")
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
	failed=1  # a test script died without reporting (crash, bad plan)
	echo "a test program failed without a 'not ok' line; see $log"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
