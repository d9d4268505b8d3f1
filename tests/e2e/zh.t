#!/bin/sh
# gpuwise in Simplified Chinese (issue 24): under LANG=zh_CN.UTF-8 plan (13B
# on an 8 GB laptop), cards, cost, doctor (a fixture root), explain (an OOM,
# a driver too old), run (the summary line and the report, rendered by
# chromium with and without a CJK font), queue (a reason) and bench --quick
# answer in Chinese; tables align by display width (two columns a CJK
# character, measured here with Python's unicodedata, not gpuwise's own
# table); --json is byte-identical to the English run; LANG=C and --lang en
# are today's English; the gpuwise commands in translated fixes still parse.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/queue-lib.sh"
. "$GW_TOP/tests/e2e/report_shot.sh"
export GPUWISE_NVML_LIB="$GW_FAKE/libnvidia-ml.so" GPUWISE_CUDA_LIB="$GW_FAKE/libcuda.so"
unset LC_ALL LC_MESSAGES LANGUAGE
ZH=zh_CN.UTF-8
if ! locale -a 2>/dev/null | grep -qi '^zh_CN\.utf-\?8$'; then
	diag "the zh_CN.UTF-8 locale is not generated (locale-gen): the embedded catalog answers, glibc's path is not tested"
fi

# widths: WIDTH FILE COL_REGEX — the display column (East Asian width) where the
# first match of the regex ends, one line per line of the file that matches
widths() {
	python3 - "$1" "$2" <<'PY'
import re, sys, unicodedata
def w(s):
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)
for line in open(sys.argv[1], encoding="utf-8"):
    m = re.search(sys.argv[2], line)
    if m:
        print(w(line[:m.end()]))
PY
}
same() { sort -u | wc -l | tr -d ' '; }   # how many distinct values

# ---- --help of every command and the usage errors (not plan's: above) ------------------
# Chinese under zh_CN, the same --options as the English help (which docs.t
# parses and LANG=C keeps byte-identical), the English one still English
for c in cards cost status doctor run bench list daemon submit queue show logs cancel hold release quota sim export; do
	zh=$(LANG=$ZH "$GW" $c --help 2>&1); zrc=$?
	en=$(LANG=C "$GW" $c --help 2>&1)
	is "$zrc" 0 "$c --help: exit 0 in Chinese"
	like "$zh" "^用法：gpuwise $c " "$c --help: the usage line in Chinese"
	like "$zh" '^退出状态：' "$c --help: the exit status described in Chinese"
	unlike "$zh" '^(Options|Exit status)' "$c --help: no English heading left"
	is "$(printf '%s\n' "$zh" | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u | tr '\n' ' ')" \
	   "$(printf '%s\n' "$en" | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u | tr '\n' ' ')" \
	   "$c --help: the same options as the English help"
	like "$en" "^usage: gpuwise $c " "$c --help: LANG=C is English"
done
zh=$(LANG=$ZH "$GW" plan --help 2>&1)
like "$zh" '^微调（--train）：$' "plan --help: the --train/--image options' help in Chinese (shared with cards)"
err=$(LANG=$ZH "$GW" list foo 2>&1); rc=$?
is "$rc" 2 "list foo: exit 2 in Chinese too"
is "$err" "gpuwise: 无法列出 'foo'（gpus、models 或 quants）
运行 'gpuwise list --help' 查看用法" "list foo: the usage error and its help hint in Chinese"
err=$(LANG=C "$GW" list foo 2>&1); rc=$?
is "$rc:$err" "2:gpuwise: cannot list 'foo' (gpus, models or quants)
try 'gpuwise list --help'" "list foo: LANG=C, the English usage error unchanged"
err=$(LANG=$ZH "$GW" status --count 3 2>&1); rc=$?
is "$rc:$err" "2:gpuwise: --count 需要 --watch
运行 'gpuwise status --help' 查看用法" "status --count without --watch: exit 2, message in Chinese"
err=$(LANG=$ZH "$GW" --lang en run 2>&1); rc=$?
is "$rc:$err" "2:gpuwise: no command given: gpuwise run [OPTIONS] -- CMD [ARGS...]
try 'gpuwise run --help'" "run without a command under zh with --lang en: English, exit 2"

# ---- plan: 13B on an 8 GB laptop --------------------------------------------------------
P="plan llama-2-13b --quant q4_k_m --ctx 2048 --gpu 4060-laptop --ram 16G --engine llama.cpp@b2824"
# shellcheck disable=SC2086
zh=$(LANG=$ZH "$GW" $P 2>"$TMP/zh.err"); zrc=$?
# shellcheck disable=SC2086
en=$(LANG=C "$GW" $P 2>/dev/null); erc=$?
is "$zrc" "$erc" "plan: the same exit status in Chinese ($zrc)"
is "$zrc" 3 "plan: 13B on the 8 GB laptop offloads (exit 3)"
like "$zh" '^结论：部分卸载：[0-9]+/41 层在 GPU 上' "plan: the verdict in Chinese"
like "$zh" '^假设：' "plan: assumptions in Chinese"
like "$zh" '^建议：' "plan: advice in Chinese"
like "$zh" '用更低的量化：--quant q3_k_m' "plan: the advice keeps the option to type"
like "$zh" 'KV 缓存' "plan: the glossary's KV 缓存"
unlike "$zh" 'verdict:|assumptions:|advice:' "plan: no English headings left"
printf '%s\n' "$zh" > "$TMP/plan.zh"
is "$(widths "$TMP/plan.zh" '^(权重|KV 缓存|计算缓冲区|运行时开销|合计|可用) +[0-9.]+ [GMK]iB' | same)" 1 \
	"plan: the breakdown's GPU column ends at one display column on every row (CJK labels are two columns a character)"
is "$(widths "$TMP/plan.zh" '^(权重|KV 缓存|计算缓冲区|运行时开销|合计|可用) +[0-9.]+ [GMK]iB +([0-9.]+ [GMK]iB|-)' | same)" 1 \
	"plan: the host RAM column too"
# shellcheck disable=SC2086
j1=$(LANG=$ZH "$GW" $P --json 2>/dev/null); j2=$(LANG=C "$GW" $P --json 2>/dev/null)
is "$j1" "$j2" "plan --json: byte-identical under zh_CN and C"
# shellcheck disable=SC2086
c1=$(LANG=$ZH "$GW" --lang en $P 2>/dev/null); c2=$(LANG=C "$GW" $P 2>/dev/null); c3=$(env -u LANG "$GW" $P 2>/dev/null)
is "$c1" "$en" "plan: --lang en under zh_CN is today's English"
is "$c2$c3" "$en$en" "plan: LANG=C and no LANG are today's English"
# shellcheck disable=SC2086
l1=$(LANG=C "$GW" --lang zh $P 2>/dev/null)
is "$l1" "$zh" "plan: --lang zh under LANG=C is the same Chinese"
# the catalog: glibc's gettext over build/locale, and the copy embedded in the binary, agree
# shellcheck disable=SC2086
e1=$(LANG=$ZH GPUWISE_LOCALEDIR= GPUWISE_I18N_DEBUG=1 "$GW" $P 2>"$TMP/emb.err")
is "$e1" "$zh" "plan: the embedded catalog gives the same text as the installed one"
like "$(cat "$TMP/emb.err")" 'catalog: embedded' "GPUWISE_LOCALEDIR= selects the embedded catalog"
# shellcheck disable=SC2086
LANG=$ZH GPUWISE_I18N_DEBUG=1 "$GW" $P >/dev/null 2>"$TMP/glibc.err"
if locale -a 2>/dev/null | grep -qi '^zh_CN\.utf-\?8$' && [ -f "$GW_TOP/build/locale/zh_CN/LC_MESSAGES/gpuwise.mo" ]; then
	like "$(cat "$TMP/glibc.err")" 'catalog: glibc .*/locale' "with the locale generated, glibc's gettext reads the built .mo"
else
	skip "zh_CN.UTF-8 not generated or no build/locale: glibc's path not checked"
fi
run_gw --lang fr plan llama-2-13b
is "$rc:$err" "2:gpuwise: unknown language 'fr' (use en or zh)" "--lang fr: exit 2 and the message"

# ---- cards and cost ----------------------------------------------------------------------
zh=$(LANG=$ZH "$GW" cards llama-2-13b --max-gpus 1 --currency USD 2>/dev/null); zrc=$?
is "$zrc" "$(LANG=C "$GW" cards llama-2-13b --max-gpus 1 >/dev/null 2>&1; echo $?)" "cards: the same exit status in Chinese"
like "$zh" '^适合 llama-2-13b 的显卡（推理）' "cards: the heading in Chinese"
like "$zh" '显存 +每卡需要' "cards: the column headers in Chinese"
printf '%s\n' "$zh" > "$TMP/cards.zh"
n=$(widths "$TMP/cards.zh" '^ *[0-9]+  .* [0-9]+x +[0-9.]+ GiB' | wc -l)
ok "$([ "$n" -ge 5 ]; echo $?)" "cards: rows listed ($n)"
is "$(widths "$TMP/cards.zh" '^ *[0-9]+  .* [0-9]+x +[0-9.]+ GiB|^ *# +GPU +卡数 +显存' | same)" 1 \
	"cards: the VRAM column ends at one display column on the header (CJK) and every row"
is "$(LANG=$ZH "$GW" cards llama-2-13b --max-gpus 1 --json 2>/dev/null)" "$(LANG=C "$GW" cards llama-2-13b --max-gpus 1 --json 2>/dev/null)" \
	"cards --json: byte-identical under zh_CN and C"
# under zh_CN, cards and cost default to CNY and region cn, and say so; --currency/--region override
zh=$(LANG=$ZH "$GW" cost --gpu rtx-4090 --hours 8 2>"$TMP/cost.err")
like "$zh" '^自购 GeForce RTX 4090  （所有金额以 CNY 计）' "cost: own, in Chinese, in CNY by default under zh_CN"
like "$(cat "$TMP/cost.err")" '^gpuwise: 价格以 CNY（元）计、地区为 cn：这是 zh_CN 下的默认值' "cost: the zh_CN default is stated"
like "$zh" '^回本点' "cost: break-even, in Chinese"
like "$zh" '购买价格 +[0-9]+ CNY' "cost: the purchase in CNY"
like "$(LANG=$ZH "$GW" cost --gpu rtx-4090 --hours 8 --currency USD 2>/dev/null)" '购买价格 +1900 USD' "cost: --currency USD overrides the zh_CN default"
like "$(LANG=C "$GW" cost --gpu rtx-4090 --hours 8 2>&1)" 'purchase +1900 USD' "cost: LANG=C keeps USD"
like "$(LANG=$ZH "$GW" cards llama-2-13b --max-gpus 1 2>&1 >/dev/null)" '价格以 CNY（元）计' "cards: the zh_CN default CNY is stated"
is "$(LANG=$ZH "$GW" cost --gpu rtx-4090 --hours 8 --json 2>/dev/null)" "$(LANG=C "$GW" cost --gpu rtx-4090 --hours 8 --json 2>/dev/null)" \
	"cost --json: byte-identical under zh_CN and C"

# ---- doctor on a fixture root -------------------------------------------------------------
rm -rf "$TMP/root" && cp -a "$FIX/roots/laptop-5070" "$TMP/root" && cp -a "$FIX/roots/doctor-toolkits/." "$TMP/root/"
doc() { GPUWISE_ROOT=$TMP/root GPUWISE_FAKE_SCENARIO=$FIX/scenarios/laptop-5070.json HOME=/nonexistent-home \
	PATH=/usr/local/cuda-11.8/bin:/usr/local/cuda-12.8/bin:/usr/bin "$GW" doctor --no-exec "$@"; }
zh=$(LANG=$ZH doc 2>/dev/null); zrc=$?
is "$zrc" "$(LANG=C doc >/dev/null 2>&1; echo $?)" "doctor: the same exit status in Chinese ($zrc)"
like "$zh" '^硬件$' "doctor: the group headings in Chinese"
like "$zh" '^  警告  nvcc 11\.0\.228 无法为 NVIDIA GeForce RTX 5070 Laptop GPU 编译（计算能力 12\.0）' "doctor: a finding in Chinese, severity padded to 4 columns"
like "$zh" '修复：export PATH=/usr/local/cuda-12\.8/bin:\$PATH' "doctor: the fix's command unchanged"
like "$zh" '^[0-9]+ 项正常，[0-9]+ 项提示，[0-9]+ 项跳过，[0-9]+ 项警告，[0-9]+ 项失败$' "doctor: the summary line in Chinese"
is "$(LANG=$ZH doc --json 2>/dev/null)" "$(LANG=C doc --json 2>/dev/null)" "doctor --json: byte-identical under zh_CN and C"
printf '%s\n' "$zh" > "$TMP/fixes.zh"

# ---- doctor on WSL 2 fixture roots (src/doctor/wsl.c) ------------------------------------
wdoc() { r=$1; shift; GPUWISE_ROOT=$FIX/roots/$r GPUWISE_FAKE_SCENARIO=$FIX/scenarios/wsl2-laptop.json HOME=/nonexistent-home \
	PATH=/usr/local/cuda-12.8/bin:/usr/bin "$GW" doctor --no-exec "$@"; }
zh=$(LANG=$ZH wdoc wsl2-laptop 2>/dev/null); zrc=$?
en=$(LANG=C wdoc wsl2-laptop 2>/dev/null); erc=$?
is "$zrc" "$erc" "doctor WSL: the same exit status in Chinese ($zrc)"
like "$zh" '^  提示  WSL 2：GPU 由 Windows 版 NVIDIA 驱动 576\.02（最高支持 CUDA 12\.9）驱动，通过 GPU 半虚拟化访问$' "doctor WSL: the platform finding in Chinese"
like "$zh" '^  正常  /dev/dxg 存在：WSL 的 GPU 半虚拟化已开启$' "doctor WSL: /dev/dxg in Chinese"
like "$zh" '^  提示  Xid 错误不会传到 WSL：GPU 故障由 Windows 驱动处理$' "doctor WSL: the Xid note in Chinese"
like "$zh" '（在 PowerShell 中 wsl --shutdown 可恢复）' "doctor WSL: the ldconfig fix keeps wsl --shutdown"
unlike "$zh" 'Xid errors do not reach WSL|seen through GPU paravirtualisation|is harmless' "doctor WSL: no English finding left in these groups"
like "$en" 'Xid errors do not reach WSL: the Windows driver handles GPU faults' "doctor WSL: LANG=C stays English"
is "$(LANG=$ZH wdoc wsl2-laptop --json 2>/dev/null)" "$(LANG=C wdoc wsl2-laptop --json 2>/dev/null)" "doctor WSL --json: byte-identical under zh_CN and C"
zh=$(LANG=$ZH wdoc wsl2-linux-driver 2>/dev/null); zrc=$?
en=$(LANG=C wdoc wsl2-linux-driver 2>/dev/null); erc=$?
is "$zrc" "$erc" "doctor WSL with a Linux driver: the same exit status ($zrc)"
like "$zh" '^  失败  WSL 里安装了 Linux 版 NVIDIA 驱动：它遮蔽了 Windows 驱动的库$' "doctor WSL: the Linux-driver failure in Chinese"
cmd=$(printf '%s\n' "$en" | sed -n 's/^ *fix: \(sudo apt-get purge [^;]*\);.*/\1/p' | head -1)
like "$cmd" '^sudo apt-get purge [a-z].* && sudo apt-get autoremove --purge$' "doctor WSL: the English fix has its purge command ($cmd)"
ok "$(printf '%s\n' "$zh" | grep -qF "修复：$cmd；"; echo $?)" "doctor WSL: the Chinese fix prints the same purge command"
like "$zh" '然后在 PowerShell 中运行 wsl --shutdown' "doctor WSL: and wsl --shutdown unchanged"

# ---- explain: an OOM and a driver too old ------------------------------------------------
OOM="CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.50 GiB is free. Process 4242 has 6.00 GiB memory in use. Of the allocated memory 12.00 GiB is allocated by PyTorch, and 3.00 GiB is reserved by PyTorch but unallocated."
DRV="The NVIDIA driver on your system is too old (found version 11040)."
zh=$(printf '%s' "$OOM" | LANG=$ZH "$GW" explain --no-probe - 2>/dev/null)
like "$zh" '^cuda-oom: GPU 显存不足' "explain OOM: the title in Chinese, the id unchanged"
like "$zh" '显存碎片：1\.50 GiB 空闲加上 PyTorch 已保留但未分配的 3\.00 GiB' "explain OOM: the computed cause in Chinese"
like "$zh" 'export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True' "explain OOM: the fix's command unchanged"
like "$zh" '梯度检查点' "explain OOM: the glossary's 梯度检查点"
printf '%s\n' "$zh" >> "$TMP/fixes.zh"
zh=$(printf '%s' "$DRV" | LANG=$ZH "$GW" explain --no-probe - 2>/dev/null)
like "$zh" '^driver-too-old: NVIDIA 驱动对这个 PyTorch 来说太旧（驱动最高支持 CUDA 11\.4）' "explain driver: the title with its value"
like "$zh" 'CUDA 12\.x 版本的 PyTorch 需要驱动 >= 525' "explain driver: the computed fix in Chinese"
printf '%s\n' "$zh" >> "$TMP/fixes.zh"
# two more explain families: llama.cpp's GPU allocation and an NCCL failure
GGUF="ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9866.00 MiB on device 1: cudaMalloc failed: out of memory"
NCCL="torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:93, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.28.9"
zh=$(LANG=$ZH "$GW" explain --no-probe "$GGUF" 2>/dev/null)
like "$zh" '^gguf-offload-oom: llama\.cpp 无法在 GPU 1 上分配 9866\.00 MiB（cudaMalloc: out of memory）$' "explain llama.cpp OOM: the title with its values"
like "$zh" '卸载到 GPU 的层（-ngl / Ollama 的 num_gpu）' "explain llama.cpp OOM: a cause in Chinese (层, options kept)"
like "$zh" '^    - 先估算：gpuwise plan MODEL\.gguf --gpu YOUR_GPU（' "explain llama.cpp OOM: the plan command unchanged"
like "$zh" '-ctk q8_0 -ctv q8_0（需要 -fa）' "explain llama.cpp OOM: llama-server's options unchanged"
like "$zh" '：gpuwise status$' "explain llama.cpp OOM: gpuwise status unchanged"
printf '%s\n' "$zh" >> "$TMP/fixes.zh"
zh=$(LANG=$ZH "$GW" explain --no-probe "$NCCL" 2>/dev/null)
like "$zh" '^nccl-error: NCCL 失败$' "explain NCCL: the title in Chinese, the id unchanged"
like "$zh" '^    - 用 NCCL_DEBUG=INFO 重新运行$' "explain NCCL: the variable unchanged in the fix"
like "$zh" '^    - 给容器加 --ipc=host 或较大的 --shm-size$' "explain NCCL: docker's options unchanged"
unlike "$zh" 'likely causes|bootstrap or transport' "explain NCCL: no English left"
printf '%s\n' "$zh" >> "$TMP/fixes.zh"
for m in "$OOM" "$DRV" "$GGUF" "$NCCL"; do
	a=$(printf '%s' "$m" | LANG=$ZH "$GW" explain --no-probe --json - 2>/dev/null)
	b=$(printf '%s' "$m" | LANG=C "$GW" explain --no-probe --json - 2>/dev/null)
	is "$a" "$b" "explain --json: byte-identical under zh_CN and C (${m%% *} ...)"
done
# every gpuwise command the translated fixes print parses its options (fix-commands.t, in Chinese)
grep -o 'gpuwise [a-z][a-z-]*\( [^ ，。；：（）]*\)*' "$TMP/fixes.zh" | sed 's/[，。；：（）].*//' | sort -u > "$TMP/cmds"
n=0
while read -r c; do
	set -- $c
	shift
	case "$1" in plan|cards|cost|status|doctor|explain|run|bench|list|queue|submit|show|logs|cancel|hold|release|quota|sim|export|daemon) ;; *) continue ;; esac
	n=$((n + 1))
	# shellcheck disable=SC2068
	"$GW" $@ --help >/dev/null 2>&1
	is "$?" 0 "a command from a translated fix parses: gpuwise $*"
done < "$TMP/cmds"
ok "$([ "$n" -ge 2 ]; echo $?)" "translated fixes printed gpuwise commands ($n)"

# ---- run: the summary line and the report --------------------------------------------------
cd "$TMP" || exit 1
LANG=$ZH GPUWISE_FAKE_SCENARIO=$FIX/scenarios/laptop-5070.json "$GW" run --interval 100ms --report "$TMP/r.html" \
	--log "$TMP/r.jsonl" -- sh -c 'sleep 0.4; exit 1' >/dev/null 2>"$TMP/run.err"
is "$?" 1 "run: the job's exit status"
like "$(cat "$TMP/run.err")" '^gpuwise: run: 1 次尝试，failure（退出码 1），用时 [0-9.]+m?s；任务显存峰值 .*；报告 ' "run: the summary line in Chinese (the class id stays)"
like "$(cat "$TMP/run.err")" 'start: 第 1 次尝试已启动，pid [0-9]+' "run: an event in Chinese (from the English text of the log)"
LANG=$ZH GPUWISE_FAKE_SCENARIO=$FIX/scenarios/laptop-5070.json "$GW" run --interval 100ms --json -- sh -c 'exit 1' \
	>"$TMP/run.json" 2>/dev/null
like "$(cat "$TMP/run.json")" '"detail": "attempt 1 started as pid [0-9]+"' "run --json: the events' details stay English"
html=$(cat "$TMP/r.html")
like "$html" '<html lang="zh-CN">' "report: lang zh-CN (the browser picks a CJK font)"
like "$html" '<h2>概要</h2>' "report: the summary heading in Chinese"
like "$html" '<th>任务显存峰值</th>' "report: the labels in Chinese"
like "$html" '<h2>事件</h2>' "report: the events heading in Chinese"
# rendered: with the CJK font the Chinese labels are glyphs, without it tofu boxes; the two differ
if cjk_available; then
	ok 0 "a CJK font is installed: $(fc-match 'sans-serif:lang=zh-cn' family 2>/dev/null)"
	d=$(cjk_shots "$TMP/r.html" 640,260) # the top of the report (its title and summary table)
	set -- $d
	ok "$([ "${1:-0}" -gt 3000 ]; echo $?)" "report in chromium: the page is drawn (${1:-?} non-white pixels)"
	ok "$([ "${2:-0}" -gt 1500 ]; echo $?)" "report in chromium: the Chinese labels are CJK glyphs, not the tofu boxes of a font without CJK (${2:-?} pixels differ)"
else
	skip "report: no CJK font or no chromium (apt-get install fonts-noto-cjk chromium)"
fi
cd "$WORK" || exit 1

# ---- queue: a reason ----------------------------------------------------------------------
export GPUWISE_FAKE_SCENARIO="$FIX/scenarios/server-24g-unattributed.json"
printf 'context_reserve = 512M\nclient_timeout = 5s\n' > "$TMP/daemon.conf"
q_start
j1=$("$GW" submit --vram 6G --name six1 -- sleep 30)
j2=$("$GW" submit --vram 6G --name six2 -- sleep 30)
j3=$("$GW" submit --vram 8G --name eight -- sleep 30)
q_wait_state "$j2" running 20
sleep 0.5
zh=$(LANG=$ZH "$GW" queue 2>/dev/null)
like "$zh" '名称 +用户 +项目 +状态' "queue: the headers in Chinese"
like "$zh" 'eight .*没有哪块 GPU 有 8\.50 GiB 空闲' "queue: the waiting job's reason in Chinese"
printf '%s\n' "$zh" > "$TMP/queue.zh"
is "$(widths "$TMP/queue.zh" '^ *[0-9]+ +[a-z0-9]+ +[a-z]+ +[a-z-]+ +|^ *ID +名称 +用户 +项目 +' | same)" 1 "queue: the state column starts at one display column under its CJK header"
like "$(LANG=$ZH "$GW" show "$j3" 2>/dev/null)" '原因 +没有哪块 GPU 有 8\.50 GiB 空闲' "show: the reason in Chinese"
is "$(LANG=$ZH "$GW" show --json "$j3" 2>/dev/null | jget "d['reason']")" "$(LANG=C "$GW" show --json "$j3" 2>/dev/null | jget "d['reason']")" \
	"show --json: the reason stays English"
"$GW" cancel "$j1" "$j2" "$j3" >/dev/null 2>&1
q_cleanup

# ---- bench --quick ------------------------------------------------------------------------
# (one run: the machine's timings differ from run to run, so --json is compared by bench.t's schema, not here)
zh=$(LANG=$ZH ASAN_OPTIONS=detect_leaks=0 "$GW" bench --quick --no-cuda --no-opencl --max-n 100000 --runs 2 --threads 2 2>/dev/null)
like "$zh" '三点结论' "bench: the lessons in Chinese"
like "$zh" '^数据量 +单核 +单核 SIMD' "bench: the table's headers in Chinese"
like "$zh" '^指标 +实测值 +峰值' "bench: the figures' headers in Chinese"
printf '%s\n' "$zh" > "$TMP/bench.zh"
is "$(widths "$TMP/bench.zh" '^(数据量|10\^[0-9]) +[^ ]+ [^ ]+|^数据量 +单核' | same)" 1 "bench: the first column of times ends at one display column (header in CJK)"
is "$(widths "$TMP/bench.zh" '^(指标|STREAM [A-Za-z]+) +([0-9.]+ GB/s|实测值)' | same)" 1 "bench: the value column ends at one display column (header in CJK)"
done_testing
