#!/bin/sh
# Every line in the reader's language (issue 34, item 4): each command's text
# output under LANG=LC_ALL=zh_CN.UTF-8, on the fixtures the zh*.t tests use
# (fake NVML/CUDA, fixture roots, scenarios), is scanned by zh-prose.py for
# runs of English prose: 3+ consecutive lowercase English words outside
# quotes, command lines, URLs with the note cited from them, options, file
# names and identifiers (catalog rows of `list` are data with their sources).
# tests/e2e/zh-prose.allow lists the few runs that are not prose, each with why.
# Prints the count of lines checked and runs found; the runs still left are
# listed as diagnostics; none is left (ZH_PROSE_MAX=0: a new one fails the test).
. "$(dirname "$0")/lib.sh"
export GPUWISE_NVML_LIB="$GW_FAKE/libnvidia-ml.so" GPUWISE_CUDA_LIB="$GW_FAKE/libcuda.so"
unset LANGUAGE LC_MESSAGES
export LANG=zh_CN.UTF-8 LC_ALL=zh_CN.UTF-8
ZH_PROSE_MAX=0
O=$TMP/out; mkdir -p "$O"
c() { n=$1; shift; "$GW" "$@" >"$O/$n.txt" 2>&1 </dev/null; }
c plan-13b plan llama-2-13b --quant q4_k_m --ctx 2048 --gpu 4060-laptop --ram 16G --engine llama.cpp@b2824
c plan-7b plan qwen2.5-7b --gpu 4090
c plan-70b plan llama-3.1-70b --gpu 4090 --ram 64G
c plan-train plan qwen2.5-7b --train lora --gpu 4060-laptop
c plan-qlora plan llama-3.1-8b --train qlora --gpu 4090
c plan-unsloth plan qwen2.5-7b --train lora --gpu 4060-laptop --framework unsloth
c cards cards llama-2-13b --max-gpus 1
c cards-used cards qwen2.5-32b --budget 8000CNY --used
c cost cost --gpu rtx-4090 --hours 8
c cost-cn cost --gpu rtx-4090 --currency CNY --region cn
c list-models list models
c list-gpus list gpus
c list-quants list quants
c fit fit --gpu 4060-laptop --ram 16G --top 5
rm -rf "$TMP/root" && cp -a "$FIX/roots/laptop-5070" "$TMP/root" && cp -a "$FIX/roots/doctor-toolkits/." "$TMP/root/"
GPUWISE_ROOT=$TMP/root GPUWISE_FAKE_SCENARIO=$FIX/scenarios/laptop-5070.json HOME=/nonexistent-home \
	PATH=/usr/local/cuda-11.8/bin:/usr/local/cuda-12.8/bin:/usr/bin "$GW" doctor --no-exec >"$O/doctor.txt" 2>&1
for r in wsl2-laptop desktop-4090 nogpu nouveau nvidia-nodriver fell-off-bus; do
	sc=$FIX/scenarios/$r.json; [ -f "$sc" ] || sc=$FIX/scenarios/laptop-5070.json
	GPUWISE_ROOT=$FIX/roots/$r GPUWISE_FAKE_SCENARIO=$sc HOME=/nonexistent-home PATH=/usr/bin \
		"$GW" doctor --no-exec >"$O/doctor-$r.txt" 2>&1
done
GPUWISE_FAKE_SCENARIO=$FIX/scenarios/desktop-4090.json "$GW" status >"$O/status.txt" 2>&1
printf '%s' "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.50 GiB is free. Process 4242 has 6.00 GiB memory in use. Of the allocated memory 12.00 GiB is allocated by PyTorch, and 3.00 GiB is reserved by PyTorch but unallocated." \
	| "$GW" explain --no-probe - >"$O/explain-oom.txt" 2>&1
printf '%s' "The NVIDIA driver on your system is too old (found version 11040)." | "$GW" explain --no-probe - >"$O/explain-drv.txt" 2>&1
c explain-gguf explain --no-probe "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9866.00 MiB on device 1: cudaMalloc failed: out of memory"
c explain-nccl explain --no-probe "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:93, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.28.9"
# run (watch): the summary line and the HTML report's text
GPUWISE_FAKE_SCENARIO=$FIX/scenarios/laptop-5070.json "$GW" run --interval 100ms --report "$TMP/ok.html" \
	--log "$TMP/ok.jsonl" -- sh -c 'sleep 0.3; exit 0' >"$O/run-ok.txt" 2>&1
GPUWISE_FAKE_SCENARIO=$FIX/scenarios/laptop-5070.json "$GW" run --interval 100ms --report "$TMP/fail.html" \
	--log "$TMP/fail.jsonl" -- sh -c 'sleep 0.3; exit 1' >"$O/run-fail.txt" 2>&1
/usr/bin/python3 - "$TMP/ok.html" "$O/report-ok.txt" "$TMP/fail.html" "$O/report-fail.txt" <<'PY'
import html, re, sys
a = sys.argv[1:]
for src, dst in zip(a[0::2], a[1::2]):
    t = open(src, encoding="utf-8").read()
    t = re.sub(r"(?s)<(script|style)[^>]*>.*?</\1>", "", t)
    t = html.unescape(re.sub(r"<[^>]+>", "\n", t))
    open(dst, "w", encoding="utf-8").write("\n".join(l.strip() for l in t.splitlines() if l.strip()) + "\n")
PY
# the report: the exit class and temperatures in the reader's language
like "$(cat "$O/report-ok.txt")" '^0（成功）$' "report: the exit status and its class in Chinese"
like "$(cat "$O/report-fail.txt")" '^1（失败）$' "report: a failed job's class in Chinese"
like "$(cat "$O/report-ok.txt")" '[0-9] °C' "report: temperatures in °C"
unlike "$(cat "$O/report-ok.txt" "$O/report-fail.txt")" '(^|[0-9] )C$|[0-9] C[^a-zA-Z]|\(success\)|\(failure\)' "report: no bare C, no English class"
n=$(ls "$O"/*.txt | wc -l)
ok "$([ "$n" -ge 30 ]; echo $?)" "outputs collected ($n files)"
lines=$(cat "$O"/*.txt | wc -l)
ok "$([ "$lines" -ge 1000 ]; echo $?)" "lines of output to check ($lines)"
like "$(cat "$O/plan-13b.txt")" '^结论：' "the outputs are Chinese (plan's verdict)"

res=$(/usr/bin/python3 "$GW_TOP/tests/e2e/zh-prose.py" "$GW_TOP/tests/e2e/zh-prose.allow" "$O"/*.txt)
printf '%s\n' "$res" | grep '^#'
sum=$(printf '%s\n' "$res" | tail -1)
diag "$sum"
runs=${sum##*runs=}
is "$runs" "$ZH_PROSE_MAX" "runs of English prose under zh_CN: $runs (expected $ZH_PROSE_MAX)"
# the checker itself finds prose and lets commands, quotes and identifiers through
printf '%s\n' '结论：the model does not fit here' "运行 'gpuwise plan llama-2-7b' 查看" '修复：pip install --upgrade torch' \
	'（通过 `nvidia-smi -q` 找到）' "见 https://example.org/a (a note quoted from the page)" >"$TMP/probe.txt"
is "$(/usr/bin/python3 "$GW_TOP/tests/e2e/zh-prose.py" "$GW_TOP/tests/e2e/zh-prose.allow" "$TMP/probe.txt" | tail -1)" "lines=5 runs=1" \
	"the checker: one run in a crafted English sentence, none in a command, a quote or a cited note"
done_testing
