#!/bin/sh
# Run every test: cmocka unit tests (TAP) and end-to-end TAP scripts, each
# file under prove.  Prints one line per file as it ends (PASS, FAIL or
# SKIP, with its counts and time), the reason of every skipped test, the
# details of failures, and ends with the line "N passed, N failed, N skipped".
# A skipped test is never counted as passed.  The whole TAP output is kept
# in $GW_BUILD/test-log.txt.
# Env: GW_BUILD (build dir with gpuwise, tests/, fake/), GW_ONLY=unit|e2e,
# T='plan speed' (only the files whose name contains one of these words).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=${GW_BUILD:-build/check}
case $build in /*) ;; *) build=$top/$build ;; esac
log=$build/test-log.txt
one=$build/test-one.txt
skips=$build/test-skips.txt
: > "$log"
: > "$skips"
export GW="$build/gpuwise" GW_BUILD="$build" GW_TOP="$top"
export GW_FAKE="$build/fake"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export CMOCKA_MESSAGE_OUTPUT=TAP
export NO_COLOR=1
# model_load reads the Hub and Ollama's registry for ORG/NAME and NAME:TAG:
# never from a test (tests/e2e/hub.t serves its own on 127.0.0.1)
export GPUWISE_OFFLINE=1
passed=0 failed=0 skipped=0 bad_files=""

# run_file FILE EXEC: one test file under prove; print its line.
run_file() {
	if [ -n "${T:-}" ]; then
		want=0
		for w in $T; do case ${1##*/} in *"$w"*) want=1 ;; esac; done
		[ "$want" -eq 1 ] || return 0
	fi
	name=${1#"$top"/}
	name=${name#"$build"/}
	case $name in */tests/test_*) name=unit/${name##*/} ;; esac
	t0=$(date +%s)
	prove -v --exec "$2" "$1" > "$one" 2>&1
	st=$?
	secs=$(($(date +%s) - t0))
	cat "$one" >> "$log"
	# TAP: "ok N - name", "ok N # skip reason", "not ok N - name" (cmocka indents nothing)
	p=$(grep -cE '^[[:space:]]*ok [0-9]+' "$one")
	s=$(grep -ciE '^[[:space:]]*ok [0-9]+[^#]*# *skip' "$one")
	f=$(grep -cE '^[[:space:]]*not ok [0-9]+' "$one")
	p=$((p - s))
	if [ "$st" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1 # the file died without a "not ok" line (a crash, a bad plan)
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
	grep -iE '^[[:space:]]*ok [0-9]+[^#]*# *skip' "$one" |
		sed -E "s|^[[:space:]]*ok [0-9]+[^#]*# *[sS][kK][iI][pP]:? *|  $name: |" >> "$skips"
	if [ "$f" -ne 0 ]; then
		verdict=FAIL
		bad_files="$bad_files $name"
	elif [ "$p" -eq 0 ] && [ "$s" -gt 0 ]; then
		verdict=SKIP
	else
		verdict=PASS
	fi
	printf '%-4s %-34s %4d passed' "$verdict" "$name" "$p"
	[ "$f" -ne 0 ] && printf ', %d failed' "$f"
	[ "$s" -ne 0 ] && printf ', %d skipped' "$s"
	printf ' (%ds)\n' "$secs"
	if [ "$f" -ne 0 ]; then
		# the failed tests with their diagnostics, and what the file said last
		grep -A8 -E '^[[:space:]]*not ok [0-9]+' "$one" | head -60 | sed 's/^/     | /'
		[ "$st" -ne 0 ] && tail -15 "$one" | sed 's/^/     > /'
	fi
}

if [ "${GW_ONLY:-}" != e2e ]; then
	for t in "$@"; do
		run_file "$t" ''
	done
fi
if [ "${GW_ONLY:-}" != unit ]; then
	for t in "$top"/tests/e2e/*.t; do
		[ -e "$t" ] && run_file "$t" sh
	done
fi
if [ -s "$skips" ]; then
	echo "skipped (not counted as passed):"
	# the same reason for several tests of a file: once, with the count
	awk '{ if (!($0 in n)) order[k++] = $0; n[$0]++ }
	     END { for (i = 0; i < k; i++) print order[i] (n[order[i]] > 1 ? " (" n[order[i]] " tests)" : "") }' "$skips"
fi
[ -n "$bad_files" ] && echo "failed in:$bad_files (full output: $log)"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
