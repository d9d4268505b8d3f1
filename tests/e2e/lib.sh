# TAP helpers for end-to-end tests of the real binary (sourced by *.t).
# Provides: ok, is, isnt, like, unlike, run_gw, diag, skip, done_testing.
# After run_gw: $out (stdout), $err (stderr), $rc (exit status).
set -u
GW=${GW:-$(cd "$(dirname "$0")/../.." && pwd)/gpuwise}
GW_TOP=${GW_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
GW_FAKE=${GW_FAKE:-$GW_TOP/build/check/fake}
FIX=$GW_TOP/tests/fixtures
export NO_COLOR=1
_n=0
_failed=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gw-test.XXXXXX")
# gpuwise bench caches measured bandwidth for plan: never the user's own cache
export GPUWISE_CACHE_DIR="$TMP/cache"
# plan ORG/NAME and NAME:TAG read the Hub and Ollama's registry: tests never
# reach them (tests/e2e/hub.t unsets this and serves its own on 127.0.0.1)
export GPUWISE_OFFLINE=1
trap 'rm -rf "$TMP"' EXIT

diag() { printf '# %s\n' "$*"; }
ok() { # ok COND_STATUS NAME
	_n=$((_n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $_n - $2"; else echo "not ok $_n - $2"; _failed=$((_failed + 1)); fi
}
is() { # is GOT EXPECTED NAME
	if [ "$1" = "$2" ]; then ok 0 "$3"; else ok 1 "$3"; diag "got:      '$1'"; diag "expected: '$2'"; fi
}
isnt() {
	if [ "$1" != "$2" ]; then ok 0 "$3"; else ok 1 "$3"; diag "got '$1' (should differ)"; fi
}
like() { # like TEXT ERE NAME
	if printf '%s\n' "$1" | grep -Eq -- "$2"; then ok 0 "$3"; else ok 1 "$3"; diag "'$2' not found in:"; printf '%s\n' "$1" | head -20 | sed 's/^/#   /'; fi
}
unlike() {
	if printf '%s\n' "$1" | grep -Eq -- "$2"; then ok 1 "$3"; diag "'$2' unexpectedly found"; else ok 0 "$3"; fi
}
run_gw() { # run_gw ARGS...  (stdin from /dev/null unless redirected by caller)
	out=$("$GW" "$@" 2>"$TMP/stderr"); rc=$?
	err=$(cat "$TMP/stderr")
}
# jq-free JSON access through python3 (present on Debian): jget EXPR <<< json
jget() { python3 -c 'import json,sys; d=json.load(sys.stdin); v=eval(sys.argv[1]); print(json.dumps(v) if isinstance(v,(dict,list)) else v)' "$1"; }
skip() { _n=$((_n + 1)); echo "ok $_n # skip $*"; }
done_testing() { echo "1..$_n"; [ "$_failed" -eq 0 ]; }
# serve_port FILE PID: the port a `gpuwise status --serve` writing to FILE
# listens on, once it says so (empty if PID ended first or after 10 s)
serve_port() {
	_p=
	for _ in $(seq 1 100); do
		_p=$(sed -n 's|^serving http://[^ ]*:\([0-9]*\)/metrics.*|\1|p' "$1")
		[ -n "$_p" ] && break
		kill -0 "$2" 2>/dev/null || break
		sleep 0.1
	done
	printf '%s' "$_p"
}

# need_llama_cpp: end the test with a skip and its reason unless llama.cpp's
# Python binding and the gguf writer are importable (the oracle tests; .ci/run
# builds them into build/ci-venv, put first on PATH)
need_llama_cpp() {
	if ! python3 -c 'import llama_cpp, gguf, numpy' >/dev/null 2>&1; then
		skip "llama_cpp (llama-cpp-python) or gguf is not installed"
		done_testing
		exit 0
	fi
}
