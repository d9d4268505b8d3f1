#!/bin/sh
# gpuwise bench: usage, and every CPU and OpenCL kernel runs and is checked —
# the CPU's for real, the OpenCL ones for real on PoCL (OpenCL on the CPU,
# Debian's pocl-opencl-icd); the text output, the full mode and the progress
# line.  The CUDA path, the reference Triad and the PTX: bench-cuda.t.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bench-lib.sh"

# ---- usage -----------------------------------------------------------------
run_gw bench --help
is "$rc" 0 "bench --help exits 0"
like "$out" "Exit status: 0 success" "bench --help documents the exit status"
run_gw bench --threads 0
is "$rc" 2 "bench --threads 0: usage error"
like "$err" "^gpuwise: invalid --threads '0' \(a number from 1 to 256\)" "bench --threads 0: says the range"
run_gw bench --max-n 12abc
is "$rc" 2 "bench --max-n 12abc: usage error"
like "$err" "invalid --max-n '12abc'" "bench --max-n 12abc: names the value"
run_gw bench --frobnicate
is "$rc" 2 "bench --frobnicate: usage error"
run_gw bench --runs 1
is "$rc" 2 "bench --runs 1: usage error (STREAM needs a run after the first)"
run_gw bench extra
is "$rc" 2 "bench EXTRA: usage error"
like "$err" "unexpected argument 'extra'" "bench EXTRA: names the argument"

# ---- CPU and OpenCL (PoCL): every kernel runs and is validated ------------------
run_gw bench --quick --no-cuda --threads 2 --json
is "$rc" 0 "bench --quick --no-cuda: exit 0"
[ "$rc" = 0 ] || diag "exit $rc; devices' errors: $(printf '%s' "$out" | jget '[(x["kind"], x["error"]) for x in d["devices"] if x["error"]]' 2>&1) stderr: $err"
printf '%s\n' "$out" > "$TMP/cpu.json"
for k in copy scale add triad; do
	is "$(fig "$TMP/cpu.json" cpu $k validated)" True "CPU STREAM $k: results validated"
done
is "$(printf '%s' "$out" | jget 'all(s["validated"] for s in d["devices"][0]["sum_of_squares"])')" True \
	"CPU sum of squares: every size and variant gives the exact sum"
is "$(printf '%s' "$out" | jget '[s["n"] for s in d["devices"][0]["sum_of_squares"]]')" "[10000, 100000, 1000000, 10000000]" \
	"bench --quick: sum of squares from 10^4 to 10^7"
is "$(printf '%s' "$out" | jget 'd["devices"][0]["stream_array_bytes"] * 1.0 >= 4 * (d["cpu_llc_bytes"] or 0)')" True \
	"STREAM arrays are at least 4x the last-level cache"
# the seed's example: at 10^4 numbers handing work to threads costs more than summing
t1=$(printf '%s' "$out" | jget 'd["devices"][0]["sum_of_squares"][0]["cpu_1thread_simd_ms"]')
tall=$(printf '%s' "$out" | jget 'd["devices"][0]["sum_of_squares"][0]["cpu_all_threads_ms"]')
diag "sum of squares of 10^4 numbers: one core ${t1} ms, 2 threads ${tall} ms (thread hand-off dominates)"
ok "$(python3 -c "print(0 if $tall > $t1 else 1)")" "at 10^4 numbers two threads are slower than one: overhead dominates"
if printf '%s' "$out" | jget '[x["kind"] for x in d["devices"]]' | grep -q opencl; then
	for k in copy triad dot; do
		is "$(fig "$TMP/cpu.json" opencl $k validated)" True "OpenCL (PoCL) $k: ran and validated"
		v=$(fig "$TMP/cpu.json" opencl $k value)
		ok "$(python3 -c "print(0 if $v > 0 else 1)")" "OpenCL (PoCL) $k: a bandwidth above 0 ($v GB/s)"
	done
	is "$(printf '%s' "$out" | jget '[all(s["validated"] for s in x["sum_of_squares"]) and len(x["sum_of_squares"]) for x in d["devices"] if x["kind"] == "opencl"][0]')" 4 \
		"OpenCL (PoCL) sum of squares: 4 sizes, each exact"
	is "$(printf '%s' "$out" | jget '[x["error"] for x in d["devices"] if x["kind"] == "opencl"][0]')" None "OpenCL (PoCL): no error"
else
	skip "no OpenCL device (PoCL not installed: apt-get install pocl-opencl-icd): $(printf '%s' "$out" | jget 'd["opencl_note"]')"
fi
# the text (sums up to 10^5: the JSON run above checked the sizes to 10^7)
run_gw bench --quick --no-cuda --threads 2 --max-n 100000 --runs 2
like "$out" "^The sum of the squares of 10,000 numbers: one CPU core [0-9.]+ (us|ms), 2 threads" "text: the seed's example is the first line"
like "$out" "STREAM Triad +[0-9.]+ GB/s" "text: STREAM Triad in the CPU table"
like "$out" "Three lessons" "text: the three lessons"
GPUWISE_OPENCL_LIB=/nonexistent/libOpenCL.so.1 run_gw bench --quick --no-cuda --max-n 100000 --runs 2 --json
is "$rc" 0 "bench without OpenCL: exit 0"
like "$(printf '%s' "$out" | jget 'd["opencl_note"]')" "no OpenCL: cannot load '/nonexistent/libOpenCL.so.1'" "bench without OpenCL: says why"

# the full mode (STREAM arrays of 256 MB or 4x the cache) on small sums; its 20
# default runs take minutes on a loaded machine, so 3 here and the default
# from --help (make bench runs the full default)
run_gw bench --no-cuda --no-opencl --max-n 100000 --runs 3 --json
is "$rc" 0 "bench (full mode): exit 0"
is "$(printf '%s' "$out" | jget 'd["mode"]')" full "bench without --quick: full mode"
like "$(printf '%s' "$out" | jget '[f["note"] for f in d["devices"][0]["figures"] if f["id"] == "triad"][0]')" "best of 2 after the first" \
	"full mode --runs 3: STREAM's best of 2 after the first run"
run_gw bench --help
like "$out" "default 6 quick, 20 full" "full mode: 20 STREAM runs by default (--help)"
# a progress line on a terminal (script gives the command a pty), nothing on a pipe
if command -v script >/dev/null 2>&1; then
	script -qec "$GW bench --quick --no-cuda --no-opencl --max-n 10000 >/dev/null" "$TMP/tty.log" >/dev/null 2>&1
	like "$(tr '\r' '\n' < "$TMP/tty.log")" "gpuwise bench: CPU: STREAM, 3 arrays of [0-9]+ MB, [0-9]+ threads\.\.\." "a progress line on a terminal"
	"$GW" bench --quick --no-cuda --no-opencl --max-n 10000 --runs 2 >/dev/null 2>"$TMP/pipe.err"
	is "$(cat "$TMP/pipe.err")" "" "no progress text when stderr is not a terminal"
else
	skip "no script(1): the progress line is not checked"
fi

done_testing
