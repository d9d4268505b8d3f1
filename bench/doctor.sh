#!/bin/sh
# Benchmark: gpuwise explain and gpuwise doctor.
#  - explain over every message of tests/validation/error-corpus.tsv (whole
#    process per message, no machine probe);
#  - explain over a 4 MiB log whose error is on the last line (every
#    signature is matched against the whole tail);
#  - doctor against a fixture root and the fake NVML (files only, and with
#    the stand-in interpreter run).
# Env: GW (binary), GW_BUILD (build dir with fake/).  Prints figures only.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${GW_BUILD:-build/release}
case $build in /*) ;; *) build=$top/$build ;; esac
GW=${GW:-$top/gpuwise}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gw-bench-doctor.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
now_us() { echo $(( $(date +%s%N) / 1000 )); }
echo "== explain and doctor (bench/doctor.sh)"

tail -n +2 "$top/tests/validation/error-corpus.tsv" | cut -f1 > "$tmp/msgs"
n=$(wc -l < "$tmp/msgs")
t0=$(now_us)
while IFS= read -r m; do "$GW" explain --no-probe "$m" > /dev/null 2>&1 || true; done < "$tmp/msgs"
t1=$(now_us)
echo "explain, corpus: $n messages, $(( (t1 - t0) / n )) us per message (whole process)"

python3 - "$tmp/big.log" <<'PY'
import sys
line = "step 1234 | loss 2.3456 | lr 1.0e-04 | tokens/s 12345.6 | grad_norm 0.98 | mem 17.2 GiB\n"
with open(sys.argv[1], "w") as f:
    f.write(line * ((4 << 20) // len(line)))
    f.write("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.50 GiB is free.\n")
PY
t0=$(now_us)
"$GW" explain --no-probe "$tmp/big.log" > "$tmp/out" 2>&1 || true
t1=$(now_us)
echo "explain, 4 MiB log, error on the last line: $(( (t1 - t0) / 1000 )) ms ($(head -1 "$tmp/out" | cut -c1-40))"

# issue 31: an adversarial 4 MiB paste for the corpus lookup (no newline, every
# token new, CJK runs, literal \n escapes, near-miss GPU words) must stay under 1 s
python3 - "$tmp/adv.log" <<'PY'
import random, sys
random.seed(31)
words = ["cuda", "gpu", "nvidia", "error", "sm_%d" % 120, "gfx1150", "显存不足", "\\n", "CUDA_ERROR_%d" % 7]
out, n = [], 0
while n < (4 << 20) - 200:
    w = random.choice(words) if random.random() < 0.3 else "tok%x" % random.getrandbits(40)
    out.append(w)
    n += len(w.encode()) + 1
with open(sys.argv[1], "w") as f:
    f.write(" ".join(out))
    f.write(" RuntimeError: No available memory for the cache blocks\n")
PY
t0=$(now_us)
"$GW" explain --no-probe "$tmp/adv.log" > "$tmp/out" 2>&1 || true
t1=$(now_us)
echo "explain, 4 MiB adversarial paste (corpus lookup): $(( (t1 - t0) / 1000 )) ms ($(head -1 "$tmp/out" | cut -c1-40))"
t0=$(now_us)
for i in 1 2 3 4 5 6 7 8 9 10; do "$GW" --version > /dev/null; done
t1=$(now_us)
t2=$(now_us)
for i in 1 2 3 4 5 6 7 8 9 10; do "$GW" explain --no-probe "Capture cuda graph failed with mem fraction" > /dev/null || true; done
t3=$(now_us)
echo "start-up: gpuwise --version $(( (t1 - t0) / 10000 )) ms; explain with the corpus index built $(( (t3 - t2) / 10000 )) ms (the index is built only by explain)"

root=$tmp/root
cp -a "$top/tests/fixtures/roots/laptop-5070-awake" "$root"
cp -a "$top/tests/fixtures/roots/doctor-toolkits/." "$root/"
export GPUWISE_ROOT=$root GPUWISE_NVML_LIB=$build/fake/libnvidia-ml.so GPUWISE_CUDA_LIB=$build/fake/libcuda.so
export GPUWISE_FAKE_SCENARIO=$top/tests/fixtures/scenarios/laptop-5070.json
export PATH=/usr/local/cuda-11.8/bin:/usr/local/cuda-12.8/bin:/usr/bin:$PATH CUDA_HOME=/usr/local/cuda-12.8
runs=10
for mode in --no-exec ""; do
	t0=$(now_us)
	i=0
	# shellcheck disable=SC2086
	while [ $i -lt $runs ]; do "$GW" doctor $mode > /dev/null 2>&1 || true; i=$((i + 1)); done
	t1=$(now_us)
	echo "doctor (fixture laptop, 2 toolkits, 1 Python) ${mode:-running interpreter and nvcc}: $(( (t1 - t0) / runs / 1000 )) ms per run"
done
