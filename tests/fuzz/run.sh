#!/bin/sh
# Build the libFuzzer targets with clang (ASan + UBSan) and run each one.
#   tests/fuzz/run.sh [SECONDS] [TARGET...]     default 60 s, targets gguf gguf_grow safetensors explain queue tables dmi
# New inputs go to build/fuzz/corpus-TARGET (seeded from tests/fuzz/corpus/TARGET);
# crashes are written to build/fuzz/ and make the script fail.  Copy a crash
# into tests/fuzz/corpus/TARGET/ once fixed: `make check` replays that corpus.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
secs=${1:-60}
[ $# -gt 0 ] && shift
targets=${*:-gguf gguf_grow safetensors explain queue tables dmi}
out=build/fuzz
CC=${FUZZ_CC:-clang}
mkdir -p "$out"
if ! command -v "$CC" >/dev/null; then
	echo "fuzz: $CC not found (apt-get install clang)" >&2
	exit 1
fi
cc -std=c17 -O1 -o "$out/embed" tools/embed.c
"$out/embed" data/*.tsv > "$out/embedded.c"
# no message catalog: the fuzz builds speak English (src/util/i18n.c's embedded .mo, empty)
printf '#include <stddef.h>\nconst unsigned char gw_catalog_mo[1];\nconst size_t gw_catalog_mo_len = 0;\n' > "$out/catalog.c"
flags="-std=c17 -D_GNU_SOURCE -DGPUWISE_VERSION=\"fuzz\" -Isrc -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined $(pkg-config --cflags jansson libcurl 2>/dev/null || true)"
libs="$(pkg-config --libs jansson 2>/dev/null || echo -ljansson) -lm -ldl -lpthread"
# what a target links beyond the readers and tables, and its time limit per
# input: explain's matcher must stay linear in its input, so a slow input is
# a finding (a timeout), not just a long run
extra_srcs() { case $1 in explain) echo src/doctor/*.c src/hw/*.c src/stack/*.c src/bench/cudrv.c src/bench/embed.c src/cap/region.c ;; dmi) echo src/hw/dmi.c ;; queue) echo src/queue/proto.c src/sched/job.c src/watch/runargs.c ;; esac; }
per_input_s() { case $1 in explain) echo 1 ;; *) echo 10 ;; esac; }
for t in $targets; do
	echo "fuzz: building $t" >&2
	# shellcheck disable=SC2086
	$CC $flags -o "$out/fuzz_$t" "tests/fuzz/fuzz_$t.c" src/model/*.c src/util/*.c src/kb/*.c $(extra_srcs "$t") "$out/embedded.c" "$out/catalog.c" $libs
	mkdir -p "$out/corpus-$t"
	dict=""
	[ -f "tests/fuzz/${t%_grow}.dict" ] && dict="-dict=tests/fuzz/${t%_grow}.dict" # gguf_grow: gguf's
	echo "fuzz: running $t for ${secs}s" >&2
	# shellcheck disable=SC2086
	"$out/fuzz_$t" -max_total_time="$secs" -max_len=65536 -timeout="$(per_input_s "$t")" -rss_limit_mb=2048 \
		-artifact_prefix="$out/$t-" $dict "$out/corpus-$t" "tests/fuzz/corpus/$t"
done
