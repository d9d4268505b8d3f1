#!/bin/sh
# The host, read or measured (issue 30, item 2): planning for this machine,
# plan reads the host memory's bandwidth from its SMBIOS tables (type 17
# memory devices under GPUWISE_ROOT/sys/firmware/dmi/tables/DMI, written here
# by the test), caches it for runs that cannot read them, and names the
# source in the assumptions; an unreadable or malformed table falls back to
# the assumption with a note.  Also the RAM verdict: a host part that does
# not fit beside the OS and the engine starves the host.
. "$(dirname "$0")/lib.sh"

# dmi ROOT SPEC...: write ROOT/sys/firmware/dmi/tables/DMI with one type 17
# device per SPEC "TYPE:MTS:WIDTH:DEVLOC:BANKLOC" (TYPE a SMBIOS type byte in
# hex: 1a DDR4, 22 DDR5), then the end-of-table structure
dmi() {
	_root=$1
	shift
	mkdir -p "$_root/sys/firmware/dmi/tables"
	python3 - "$_root/sys/firmware/dmi/tables/DMI" "$@" <<'EOF'
import struct, sys
out = bytearray()
for i, spec in enumerate(sys.argv[2:]):
    t, mts, width, dl, bl = spec.split(":")
    h = bytearray(0x22)
    h[0], h[1] = 17, 0x22
    struct.pack_into("<H", h, 2, 0x1100 + i)
    struct.pack_into("<H", h, 4, 0x1000)
    struct.pack_into("<HH", h, 8, int(width), int(width))
    struct.pack_into("<H", h, 0x0C, 16384)          # 16 GiB
    h[0x10], h[0x11], h[0x12] = 1, 2, int(t, 16)
    struct.pack_into("<H", h, 0x15, int(mts))
    struct.pack_into("<H", h, 0x20, int(mts))
    out += h + dl.encode() + b"\0" + bl.encode() + b"\0\0"
out += bytes([127, 4, 0xff, 0xfe, 0, 0])
open(sys.argv[1], "wb").write(out)
EOF
}

plan_host() { # plan_host ROOT: a CPU plan of this "machine" (root ROOT), JSON
	GPUWISE_ROOT="$1" run_gw plan llama3.1:8b --gpu none --ram 32G --threads 8 --json
}
src() { printf '%s' "$out" | jget 'd["host"]["memory_bandwidth_source"]'; }
gbs() { printf '%s' "$out" | jget 'd["host"]["memory_bandwidth_gbs"]'; }
says() { printf '%s' "$out" | jget "any(\"$1\" in a for a in d[\"assumptions\"])"; }

export GPUWISE_CACHE_DIR="$TMP/cache-host"

# A desktop: DDR4-3200, two of four slots, one per channel
dmi "$TMP/ddr4" "1a:3200:64:DIMM 0:P0 CHANNEL A" "1a:3200:64:DIMM 0:P0 CHANNEL B"
plan_host "$TMP/ddr4"
is "$rc" 0 "DDR4-3200 x2: exit 0"
is "$(src)" smbios "bandwidth from SMBIOS"
is "$(gbs)" 51.2 "DDR4-3200 x2 = 51.2 GB/s"
is "$(says 'DDR4-3200 x2 channels, SMBIOS')" True "the assumptions name it"

# DDR5-6000, four DIMMs in two channels (Intel locators)
dmi "$TMP/ddr5" "22:6000:64:Controller0-ChannelA-DIMM0:BANK 0" "22:6000:64:Controller0-ChannelA-DIMM1:BANK 1" \
	"22:6000:64:Controller1-ChannelA-DIMM0:BANK 2" "22:6000:64:Controller1-ChannelA-DIMM1:BANK 3"
plan_host "$TMP/ddr5"
is "$(gbs)" 96.0 "DDR5-6000, four DIMMs in two channels = 96 GB/s"
is "$(says 'DDR5-6000 x2 channels, SMBIOS')" True "the assumptions name DDR5-6000 x2"
ddr4_tok=$(GPUWISE_ROOT="$TMP/ddr4" "$GW" plan llama3.1:8b --gpu none --ram 32G --threads 8 --json | jget 'd["decode_tok_s"]')
ddr5_tok=$(printf '%s' "$out" | jget 'd["decode_tok_s"]')
diag "CPU decode: DDR4-3200 x2 $ddr4_tok tok/s, DDR5-6000 x2 $ddr5_tok tok/s"
is "$(python3 -c "print($ddr5_tok > 1.5 * $ddr4_tok)")" True "the faster host decodes faster"

# An 8-channel server: DDR4-3200 RDIMMs whose locators name no channel
dmi "$TMP/srv" "1a:3200:64:A1:Not Specified" "1a:3200:64:A2:Not Specified" "1a:3200:64:A3:Not Specified" \
	"1a:3200:64:A4:Not Specified" "1a:3200:64:A5:Not Specified" "1a:3200:64:A6:Not Specified" \
	"1a:3200:64:A7:Not Specified" "1a:3200:64:A8:Not Specified"
plan_host "$TMP/srv"
is "$(gbs)" 204.8 "8-channel DDR4-3200 = 204.8 GB/s"
is "$(says 'DDR4-3200 x8 channels, SMBIOS')" True "the assumptions name 8 channels"

# The last root read was cached: a run that cannot read the tables uses it
mkdir -p "$TMP/notables"
plan_host "$TMP/notables"
is "$(src)" smbios-cache "no tables: what the root run cached"
is "$(gbs)" 204.8 "the cached figure"
is "$(says 'SMBIOS read as root on 20')" True "the assumptions say it was read as root, and when"

# No tables and no cache: the assumption, and what to do
GPUWISE_CACHE_DIR="$TMP/cache-empty" plan_host "$TMP/notables"
is "$(src)" assumed "no tables, no cache: assumed"
is "$(gbs)" 51.2 "51.2 GB/s assumed"
is "$(says 'assumed DDR4-3200 x2: SMBIOS unreadable, run as root or gpuwise bench')" True "the note says why and what to do"

# Malformed: a truncated table, then a structure whose length lies
mkdir -p "$TMP/trunc/sys/firmware/dmi/tables"
head -c 20 "$TMP/ddr5/sys/firmware/dmi/tables/DMI" > "$TMP/trunc/sys/firmware/dmi/tables/DMI"
GPUWISE_CACHE_DIR="$TMP/cache-empty" plan_host "$TMP/trunc"
is "$rc" 0 "truncated table: the plan still runs"
is "$(gbs)" 51.2 "truncated table: assumed"
is "$(says 'assumed DDR4-3200 x2: ')" True "truncated table: the note says so"
mkdir -p "$TMP/liar/sys/firmware/dmi/tables"
python3 -c "
import sys; b = bytearray(open(sys.argv[1], 'rb').read()); b[1] = 0xf0; open(sys.argv[2], 'wb').write(b)" \
	"$TMP/ddr5/sys/firmware/dmi/tables/DMI" "$TMP/liar/sys/firmware/dmi/tables/DMI"
GPUWISE_CACHE_DIR="$TMP/cache-empty" plan_host "$TMP/liar"
is "$rc" 0 "lying length: the plan still runs"
is "$(gbs)" 51.2 "lying length: assumed"

# Given wins over the machine, and a catalog card plans another host
GPUWISE_ROOT="$TMP/ddr5" run_gw plan llama3.1:8b --gpu none --ram 32G --threads 8 --host-mem 8xDDR4-3200 --json
is "$(gbs)" 204.8 "--host-mem 8xDDR4-3200 = 204.8 GB/s"
is "$(src)" "--host-mem" "source --host-mem"
run_gw plan llama-2-13b --quant q4_k_m --ctx 2048 --gpu 4060-laptop --ram 16G --json
is "$(src)" assumed "--gpu: another host, assumed"
is "$(says 'host memory: 51.2 GB/s (assumed DDR4-3200 x2; --host-mem DDR5-6000x2 plans another host)')" True \
	"the guide's case prints the host bandwidth it assumed"

# The RAM verdict: gpt-oss-120b with every expert in host RAM (--n-cpu-moe
# 36, what a 27 tok/s plan was) on an RTX 3090 and 64 GB: 57 GiB in the
# page cache beside the system's share does not fit 64 GiB: the host is
# starved (measured: 0.9 tok/s), not a fit, and no speed is given
run_gw plan gpt-oss-120b --gpu rtx-3090 --ram 64G --n-cpu-moe 36 --host-mem DDR5-6000x2
is "$rc" 4 "gpt-oss-120b, all experts in 64 GB: exit 4"
like "$out" '^verdict: host starved: the GPU part fits, but llama.cpp maps the whole model file \(58\.[0-9]+ GiB\) and the system keeps [0-9.]+ GiB: more than the 64\.00 GiB of RAM, so the part in host RAM \(57\.[0-9]+ GiB\)' "says the host is starved"
like "$out" '^decode: - \(host starved: paging from disk, no speed given\)' "no decode speed"
unlike "$out" 'decode: ~' "not 27 tok/s"
run_gw plan gpt-oss-120b --gpu rtx-3090 --ram 64G --n-cpu-moe 36 --json
is "$(printf '%s' "$out" | jget 'd["host"]["starved"]')" True "json: host.starved"
is "$(printf '%s' "$out" | jget 'd["decode_tok_s"]')" None "json: no decode speed"
is "$(printf '%s' "$out" | jget 'd["host"]["ram_need_bytes"] == d["host_bytes"] + d["host"]["mapped_bytes"] - d["host"]["weights_bytes"] + d["host"]["ram_reserve_bytes"] > d["host"]["ram_bytes"] and d["host"]["mapped_bytes"] == d["model_bytes"]')" True \
	"json: need = host part + the rest of the mapped file + reserve, beyond the RAM"
is "$(printf '%s' "$out" | jget 'any("more host RAM" in a["action"] and a["set"]["ram_bytes"] > d["host"]["ram_need_bytes"] for a in d["advice"])')" True \
	"advice: more RAM, counted with the system's share"
# with 96 GB it fits.  The default placement (llama.cpp's fit: the experts of 24
# layers, 38 GiB, in RAM) starves 64 GB too: llama.cpp maps and populates the
# whole 59 GiB file at load (MAP_POPULATE) and keeps the span of the host tensors
# mapped, the first layers evicted first (engine_llamacpp.c); measured on such a
# host: 0.9-1.8 tok/s at -ngl 13 and --n-cpu-moe 27.  --no-mmap reads the host
# part into memory of its own: then it runs.
run_gw plan gpt-oss-120b --gpu rtx-3090 --ram 96G --n-cpu-moe 36 --json
is "$(printf '%s' "$out" | jget 'd["verdict"]')" offload "96 GB: offload"
is "$(printf '%s' "$out" | jget 'd["host"]["starved"]')" False "96 GB: not starved"
run_gw plan gpt-oss-120b --gpu rtx-3090 --ram 64G
is "$rc" 4 "default placement in 64 GB: exit 4"
like "$out" '^verdict: host starved: .*maps the whole model file' "default placement in 64 GB: host starved"
like "$out" 'decode: - \(host starved' "default placement in 64 GB: no speed (not 21 tok/s)"
like "$out" '1\. read the host part into memory instead of mapping the whole file \(58\.9 GiB\): --no-mmap' \
	"advice 1: --no-mmap"
run_gw plan gpt-oss-120b --gpu rtx-3090 --ram 64G --no-mmap --json
is "$(printf '%s' "$out" | jget 'd["verdict"], d["host"]["starved"], d["host"]["mapped_bytes"], d["n_cpu_moe"], d["decode_tok_s"] > 5')" \
	"('offload', False, 0, 24, True)" "--no-mmap in 64 GB: the fit's placement runs"
run_gw plan gpt-oss-120b --gpu rtx-3090 --ram 64G --json
is "$(printf '%s' "$out" | jget 'd["advice"][0]["set"] == {"no_mmap": True}')" True "json: advice set no_mmap"
# read from this machine, MemAvailable less headroom already leaves the system its share
run_gw plan llama3.1:8b --gpu none --json
is "$(printf '%s' "$out" | jget 'd["host"]["ram_reserve_bytes"]')" 0 "on this machine: no second reserve"

done_testing
