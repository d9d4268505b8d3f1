#!/bin/sh
# gpuwise explain matches in time linear in its input: 4 MiB (the most it
# reads of a log) of adversarial lines of each character class, with a real
# message at the very end, are diagnosed in under a second by the release
# build (on main, 100 KB of letters took 40 s), and the sanitizer build
# finishes too.  The timings are printed.
. "$(dirname "$0")/lib.sh"
msg="RuntimeError: CUDA error: an illegal memory access was encountered"
python3 "$GW_TOP/tests/tools/adversarial.py" "$TMP/adv" "$msg"
REL=${GW_RELEASE:-$GW_TOP/gpuwise}
# timed CMD...: "CPU_S WALL_S EXIT FIRST_ID" -- the CPU time (user + system)
# of the command is what the bound is on: it does not grow when other jobs
# share the machine; the wall-clock time is printed beside it
timed() {
	python3 - "$@" <<'PY'
import resource, subprocess, sys, time
t = time.monotonic()
r = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=120)
wall = time.monotonic() - t
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
first = r.stdout.decode(errors="replace").split("\n")[0]
print("%.3f %.3f %d %s" % (ru.ru_utime + ru.ru_stime, wall, r.returncode, first.split(":")[0]))
PY
}
for f in "$TMP"/adv/*.txt; do
	name=$(basename "$f" .txt)
	is "$(wc -c < "$f" | tr -d ' ')" 4194304 "$name: the input is 4 MiB"
	if [ -x "$REL" ]; then
		set -- $(timed "$REL" explain --no-probe "$f")
		diag "release build: $name 4 MiB in $1 s CPU ($2 s wall)"
		is "$3 $4" "0 illegal-memory-access" "$name: the message at the end is found (release)"
		ok "$(python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 1.0 else 1)" "$1"; echo $?)" \
			"$name: 4 MiB take under a second of CPU with the release build ($1 s)"
	else
		skip "no release binary at $REL (make gpuwise)"
	fi
	set -- $(timed "$GW" explain --no-probe "$f")
	diag "sanitizer build: $name 4 MiB in $1 s CPU ($2 s wall)"
	is "$3 $4" "0 illegal-memory-access" "$name: the message at the end is found (sanitizer build)"
done
# no signature may fall back to a whole-input regex: a table row whose
# regex has no literal is refused when loaded
mkdir "$TMP/data"
{ grep '^#' "$GW_TOP/data/errors.tsv"; grep -v '^#' "$GW_TOP/data/errors.tsv" | head -1
  printf 'slow\t50\t[a-z ]+x\tt\t["c"]\t["f"]\thttps://example.org\n'; } > "$TMP/data/errors.tsv"
run_gw --data-dir "$TMP/data" explain --no-probe "CUDA out of memory"
is "$rc" 1 "a regex without a literal is a table error"
like "$err" "^gpuwise: cannot load the error signatures: table 'errors' row 1 \(slow\): unbounded regex" "the row is named"
done_testing
