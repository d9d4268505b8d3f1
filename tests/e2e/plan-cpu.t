#!/bin/sh
# gpuwise plan --gpu none: llama.cpp on the host CPU alone (issue 19, item
# 2): the verdict is whether everything fits host RAM, decode comes from the
# host's memory bandwidth and threads, prefill from the threads; validated
# on published CPU llama-bench rows (tests/validation/cpu-llama-bench.tsv).
. "$(dirname "$0")/lib.sh"

# The must-show plan: Llama 3.1 8B on a 32 GB machine without a GPU (a
# root without SMBIOS tables: the bandwidth is assumed here even as root).
mkdir -p "$TMP/bare"
GPUWISE_ROOT="$TMP/bare" run_gw plan llama3.1:8b --gpu none --ram 32G --threads 8 --json
is "$rc" 0 "llama3.1:8b --gpu none --ram 32G: exit 0 (fits in RAM)"
is "$(printf '%s' "$out" | jget 'd["verdict"]')" fits "verdict fits"
is "$(printf '%s' "$out" | jget 'd["cpu_only"]')" True "cpu_only true"
is "$(printf '%s' "$out" | jget 'd["devices"]')" "[]" "no GPU devices"
is "$(printf '%s' "$out" | jget 'd["gpu_layers"]')" 0 "no GPU layers"
is "$(printf '%s' "$out" | jget 'd["cpu"]["threads"]')" 8 "--threads 8 planned"
is "$(printf '%s' "$out" | jget 'd["cpu"]["threads_from"]')" "--threads" "threads from --threads"
is "$(printf '%s' "$out" | jget 'd["cpu"]["host_bandwidth_gbs"]')" 51.2 "host bandwidth assumed 51.2 GB/s"
is "$(printf '%s' "$out" | jget 'd["cpu"]["host_bandwidth_from"]')" assumed "and said to be assumed"
# Q4_K_M 8B: ~4.9 GB read per token at 70% of 51.2 GB/s -> ~7.3 tok/s
is "$(printf '%s' "$out" | jget '6.5 < d["decode_tok_s"] < 8.0')" True "decode ~7 tok/s"
is "$(printf '%s' "$out" | jget '0.9 < d["cpu"]["bytes_per_token"] / d["model_bytes"] < 1.1')" True \
	"decode reads about the model's bytes per token"
is "$(printf '%s' "$out" | jget '20 < d["prefill_tok_s"] < 60')" True "prefill from 8 threads (~40 tok/s)"
is "$(printf '%s' "$out" | jget 'd["host"]["ram_bytes"] == 32 << 30 and d["host"]["ram_ok"]')" True "host RAM 32 GiB, ok"
is "$(printf '%s' "$out" | jget '5 << 30 < d["host_bytes"] < 6 << 30')" True "needs 5-6 GiB of host RAM"
is "$(printf '%s' "$out" | jget 'any("CPU only" in a for a in d["assumptions"])')" True "assumptions name the CPU plan"
is "$(printf '%s' "$out" | jget 'any("assumed DDR4-3200 x2: SMBIOS unreadable" in a for a in d["assumptions"])')" True \
	"assumptions say the bandwidth is assumed"
is "$(printf '%s' "$out" | jget 'any("per GPU" in a for a in d["assumptions"])')" False "no GPU overhead notes"
# the cpu object holds exactly the keys docs/json-plan.md documents
printf '%s' "$out" > "$TMP/cpu.json"
is "$(python3 - "$GW_TOP/docs/json-plan.md" "$TMP/cpu.json" <<'PY'
import json, re, sys
doc = set(re.findall(r'^\| `cpu\.([a-z_]+)`', open(sys.argv[1]).read(), re.M))
got = set(json.load(open(sys.argv[2]))["cpu"])
print("ok" if doc == got else "doc %s, output %s" % (sorted(doc - got), sorted(got - doc)))
PY
)" ok "cpu keys match docs/json-plan.md"
diag "llama3.1:8b CPU: $(printf '%s' "$out" | jget 'd["decode_tok_s"]') tok/s decode, $(printf '%s' "$out" | jget 'd["prefill_tok_s"]') tok/s prefill"

GPUWISE_ROOT="$TMP/bare" run_gw plan llama3.1:8b --gpu none --ram 32G --threads 8
is "$rc" 0 "text: exit 0"
like "$out" '^verdict: fits in host RAM: all 33 layers on the CPU \(8 threads\), 5\.[0-9]+ GiB of 32\.00 GiB' "text verdict"
like "$out" '^decode: ~[67]\.[0-9] tok/s   prefill: ~[0-9]+ tok/s' "text tok/s"
like "$out" 'host memory 51\.2 GB/s peak \(assumed DDR4-3200 x2: SMBIOS unreadable, run as root or gpuwise bench\)' "text says what it assumes, and why"

# --gpu cpu and --cpu are the same plan.
run_gw plan llama3.1:8b --gpu cpu --ram 32G --threads 8 --json
is "$(printf '%s' "$out" | jget 'd["cpu_only"] and d["verdict"] == "fits"')" True "--gpu cpu: the CPU plan"
run_gw plan llama3.1:8b --cpu --ram 32G --threads 8 --json
a=$(printf '%s' "$out" | jget 'd["decode_tok_s"]')
is "$(printf '%s' "$out" | jget 'd["cpu_only"]')" True "--cpu: the CPU plan"

# Bandwidth and threads move the speed the physical way.
run_gw plan llama3.1:8b --cpu --ram 32G --threads 8 --host-bw 102.4 --json
b=$(printf '%s' "$out" | jget 'd["decode_tok_s"]')
is "$(python3 -c "print(1.9 < $b / $a < 2.1)")" True "twice the bandwidth, twice the decode ($a -> $b)"
is "$(printf '%s' "$out" | jget 'd["cpu"]["host_bandwidth_from"]')" "--host-bw" "bandwidth from --host-bw"
run_gw plan llama3.1:8b --cpu --ram 32G --threads 1 --host-bw 102.4 --json
is "$(printf '%s' "$out" | jget 'd["cpu"]["decode_read_gbs"]')" 16.0 "one thread streams at most 16 GB/s"
run_gw plan llama3.1:8b --cpu --ram 32G --threads 4 --ram-bw 102.4 --json
c=$(printf '%s' "$out" | jget 'd["prefill_tok_s"]')
run_gw plan llama3.1:8b --cpu --ram 32G --threads 8 --ram-bw 102.4 --json
d=$(printf '%s' "$out" | jget 'd["prefill_tok_s"]')
is "$(python3 -c "print(1.9 < $d / $c < 2.1)")" True "twice the threads, twice the prefill ($c -> $d)"

# --host-mem: the memory itself, MT/s x 8 B x channels.
run_gw plan llama3.1:8b --cpu --ram 32G --threads 32 --host-mem ddr5-6400x12 --json
is "$(printf '%s' "$out" | jget 'd["cpu"]["host_bandwidth_gbs"]')" 614.4 "DDR5-6400 x12: 614.4 GB/s"
is "$(printf '%s' "$out" | jget 'd["cpu"]["host_bandwidth_from"]')" "--host-mem DDR5-6400 x12" "said as given"
run_gw plan llama3.1:8b --cpu --ram 32G --threads 8 --host-mem DDR5-5600 --json
is "$(printf '%s' "$out" | jget 'd["cpu"]["host_bandwidth_gbs"]')" 89.6 "DDR5-5600, two channels by default: 89.6 GB/s"
run_gw plan llama3.1:8b --cpu --host-mem ddr3-1600
is "$rc" 2 "--host-mem ddr3-1600: exit 2"
like "$err" "^gpuwise: invalid --host-mem 'ddr3-1600' \(DDR4-3200, DDR5-5600, DDR5-6400x12 or 12xDDR5-6400, LPDDR5X-8000x4: type, MT/s, x 64-bit channels\)$" "--host-mem names the forms"
run_gw plan llama3.1:8b --cpu --host-mem ddr5-6000x0
is "$rc" 2 "--host-mem with 0 channels: exit 2"

# Not enough RAM: exit 4, and the advice names the RAM it needs and a lower quantization.
# --ram is the installed RAM: 9 GB keeps 4.1 GiB for the system
run_gw plan llama3.1:8b --gpu none --ram 9G --threads 8 --json
is "$rc" 4 "--ram 9G: exit 4 (does not fit beside the system's share)"
is "$(printf '%s' "$out" | jget 'd["verdict"]')" no-fit "verdict no-fit"
is "$(printf '%s' "$out" | jget 'd["decode_tok_s"]')" None "no speed for a plan that does not fit"
is "$(printf '%s' "$out" | jget 'any(a["action"].startswith("more host RAM") for a in d["advice"])')" True "advice: more host RAM"
is "$(printf '%s' "$out" | jget 'any(a["set"].get("quant") in ("q3_k_m", "q2_k") and a["verdict"] == "fits" for a in d["advice"])')" True \
	"advice: a lower quantization fits in 9 GB"
run_gw plan llama3.1:8b --gpu none --ram 9G --threads 8
like "$out" '^verdict: does not fit: needs 5\.[0-9]+ GiB of host RAM, 9\.[0-9]+ GiB with the system.s share \(have 9\.00 GiB\)' "text: the RAM it needs"

# Refusals, each with its message and exit 2.
run_gw plan llama3.1:8b --vram 0G
is "$rc" 2 "--vram 0G: exit 2"
is "$err" "gpuwise: --vram 0G is no GPU: to plan llama.cpp on the CPU, say --gpu none
try 'gpuwise plan --help'" "--vram 0G points to --gpu none"
run_gw plan llama3.1:8b --vram 0M --gpu rtx-4090
is "$rc" 2 "--vram 0M: exit 2"
like "$err" 'say --gpu none' "--vram 0M points to --gpu none too"
run_gw plan llama3.1:8b --gpu none --engine vllm
is "$rc" 2 "--gpu none --engine vllm: exit 2"
like "$err" '^gpuwise: --gpu none plans llama.cpp \(or ollama\) on the CPU; --engine vllm needs a GPU$' "vllm needs a GPU"
run_gw plan llama3.1:8b --gpu none --gpu rtx-4090
is "$rc" 2 "--gpu none with --gpu ID: exit 2"
like "$err" '^gpuwise: --gpu none plans without a GPU; drop --gpu ID$' "says to drop --gpu ID"
run_gw plan llama3.1:8b --cpu --vram 8G
is "$rc" 2 "--cpu with --vram: exit 2"
like "$err" 'drop --vram$' "says to drop --vram"
run_gw plan llama3.1:8b --cpu --threads 0
is "$rc" 2 "--threads 0: exit 2"
like "$err" "^gpuwise: invalid --threads '0' \(a whole number from 1 to 4096\)$" "--threads 0 refused"
run_gw plan sdxl --image 1024x1024 --gpu none
is "$rc" 2 "--image --gpu none: exit 2"
like "$err" '^gpuwise: --gpu none plans LLM inference on the CPU; --train and --image need a GPU$' "images need a GPU"

# Ollama on the CPU plans the same llama.cpp.
run_gw plan llama3.1:8b --gpu none --engine ollama --ram 32G --threads 8 --json
is "$(printf '%s' "$out" | jget 'd["engine"] == "ollama" and d["cpu_only"] and d["decode_tok_s"] > 6')" True "ollama on the CPU"

# A MoE model reads only its active experts per token.
run_gw plan llama4:scout --gpu none --ram 128G --threads 16 --host-bw 204.8 --json
is "$(printf '%s' "$out" | jget 'd["cpu"]["bytes_per_token"] < 0.3 * d["model_bytes"]')" True \
	"Llama 4 Scout: bytes per token well under the model's (active experts only)"

# With no GPU on the machine and none given, the need points to --cpu.
GPUWISE_ROOT="$FIX/roots/nogpu" GPUWISE_NVML_LIB=/nonexistent/libnvidia-ml.so.1 run_gw plan llama3.1:8b
is "$rc" 0 "no GPU here, none given: exit 0 (the need)"
like "$out" "^To run it on this machine's CPU with llama.cpp: --cpu\.$" "the need points to --cpu"
GPUWISE_ROOT="$FIX/roots/nogpu" GPUWISE_NVML_LIB=/nonexistent/libnvidia-ml.so.1 run_gw plan llama3.1:8b --cpu --threads 4 --json
is "$rc:$(printf '%s' "$out" | jget 'd["cpu_only"]')" "0:True" "--cpu on a machine without a GPU: the CPU plan"
is "$(printf '%s' "$out" | jget 'd["host"]["ram_from"]')" "unknown" "the fixture root has no /proc/meminfo: RAM unknown"
is "$(printf '%s' "$out" | jget 'any("host RAM not checked" in a for a in d["assumptions"])')" True "and says RAM was not checked"
run_gw plan llama3.1:8b --cpu --threads 4 --json
is "$(printf '%s' "$out" | jget 'd["host"]["ram_from"]')" "/proc/meminfo" "--cpu: host RAM from this machine's /proc/meminfo"

# Validation on published CPU rows: fitted and held-out errors apart.
report=$(python3 "$GW_TOP/tests/validation/validate_cpu.py" "$GW" "$GW_TOP/tests/validation/cpu-llama-bench.tsv")
printf '%s\n' "$report" | grep '^#'
js=$(printf '%s\n' "$report" | grep -v '^#')
is "$(printf '%s' "$js" | jget '"error_tg" not in d and "error_pp" not in d')" True "every row planned"
is "$(printf '%s' "$js" | jget 'd["holdout_tg"][2] >= 5')" True "at least 5 held-out decode rows"
is "$(printf '%s' "$js" | jget 'd["fit_tg"][0] <= 0.05')" True "fitted decode within 5%"
is "$(printf '%s' "$js" | jget 'd["holdout_tg"][0] <= 0.15')" True "held-out decode median within 15%"
is "$(printf '%s' "$js" | jget 'd["holdout_tg"][1] <= 0.35')" True "held-out decode worst within 35%"
is "$(printf '%s' "$js" | jget 'd["holdout_pp"][0] <= 0.35')" True "held-out prefill median within 35%"

done_testing
