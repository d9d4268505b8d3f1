#!/bin/sh
# gpuwise status and the queue in Simplified Chinese (issue 24): under
# LANG=zh_CN.UTF-8 `status --all` (its header and detail lines), status's
# hardware-layer errors, the lab page of `status --serve` (labels, html
# lang, rendered by chromium with and without a CJK font), the daemon's log
# and submit / queue / show / quota / logs / cancel / hold / release answer
# in Chinese; no English sentence is left in those lines; exit codes are
# those of LANG=C; --json and /metrics are byte-identical to English;
# tables and show's labels align by display width (two columns a CJK
# character, measured with Python's unicodedata, not gpuwise's own code).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/queue-lib.sh"
. "$GW_TOP/tests/e2e/report_shot.sh"
export GPUWISE_CUDA_LIB="$GW_FAKE/libcuda.so"
unset LC_ALL LC_MESSAGES LANGUAGE
ZH=zh_CN.UTF-8

# widths FILE REGEX: the display column where the first match of REGEX ends, one line per matching line
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

# ---- status --all on fake GPUs -------------------------------------------------------------
st() { GPUWISE_NVML_LIB="$GW_FAKE/libnvidia-ml.so" GPUWISE_FAKE_SCENARIO="$FIX/scenarios/$1.json" "$GW" status --all; }
zh=$(LANG=$ZH st laptop-5070 2>&1); zrc=$?
en=$(LANG=C st laptop-5070 2>&1); erc=$?
is "$zrc:$erc" "0:0" "status --all: exit 0 in Chinese and in English"
like "$zh" '  驱动 570\.124\.06  CUDA 12\.8$' "status --all: the header's driver label in Chinese"
like "$zh" '^    总线 0000:01:00\.0  10de:2d58 修订版 -  驱动 无  计算能力 12\.0 \(Blackwell\)  CUDA 序号 0$' "status --all: the bus line in Chinese"
like "$zh" '^    频率 SM 1200/3090 MHz 显存 12001/12001 MHz  PCIe 第 4 代 x8（最高 5 x8）  风扇 -$' "status --all: the clocks line in Chinese"
like "$zh" '^    持久模式 关  计算模式 default  ECC -（已纠正 -，未纠正 -）  MIG -$' "status --all: persistence mode (glossary 持久模式), on/off in Chinese"
like "$zh" '^    性能状态 P8  视频编码 0% 解码 0%  PCIe 发送 1 接收 2 MB/s  能耗 5 kJ$' "status --all: the P-state line in Chinese"
like "$zh" '^    36 个 SM  显存位宽 128 bit  L2 32\.00 MiB  峰值显存带宽 384 GB/s$' "status --all: the SM line (glossary 带宽)"
like "$zh" '^NVML：.*/libnvidia-ml\.so 版本 12\.570\.124\.06$' "status --all: the NVML line in Chinese"
like "$zh" '^CUDA 驱动：.*/libcuda\.so$' "status --all: the CUDA driver line in Chinese"
unlike "$zh" '  driver [0-9]|^    (bus|clocks|persistence|P-state) |SMs  memory bus|peak bandwidth|^CUDA driver:| version [0-9]' "status --all: no English label left"
like "$en" '^    bus 0000:01:00\.0  10de:2d58 rev -  driver none  cc 12\.0 \(Blackwell\)  cuda 0$' "status --all: LANG=C is today's English"
like "$en" '^    36 SMs  memory bus 128 bit  L2 32\.00 MiB  peak bandwidth 384 GB/s$' "status --all: LANG=C, the SM line unchanged"
# a GPU that fell off the bus: the hardware layer's status and the processes line
zh=$(LANG=$ZH st fell-off-bus 2>&1); zrc=$?
en=$(LANG=C st fell-off-bus 2>&1); erc=$?
is "$zrc" "$erc" "status --all, a lost GPU: the same exit status ($zrc)"
like "$zh" '^\[0\] +\| GPU 已丢失$' "status: the lost GPU's state in Chinese"
like "$zh" '^    进程：GPU 已丢失$' "status --all: the processes line in Chinese"
like "$zh" '^    持久模式 开  计算模式 default  ECC 开（已纠正 0，未纠正 0）  MIG 关$' "status --all: on/off in Chinese"
like "$en" '^\[0\] +\| GPU is lost$' "status: LANG=C, the lost GPU in English"
for sc in laptop-5070 fell-off-bus server-a100-4090; do
	a=$(LANG=$ZH GPUWISE_NVML_LIB="$GW_FAKE/libnvidia-ml.so" GPUWISE_FAKE_SCENARIO="$FIX/scenarios/$sc.json" "$GW" status --all --json 2>&1 | grep -v '"timestamp_ms"')
	b=$(LANG=C GPUWISE_NVML_LIB="$GW_FAKE/libnvidia-ml.so" GPUWISE_FAKE_SCENARIO="$FIX/scenarios/$sc.json" "$GW" status --all --json 2>&1 | grep -v '"timestamp_ms"')
	is "$a" "$b" "status --all --json: byte-identical under zh_CN and C ($sc)"
done

# ---- status: the hardware layer's errors ------------------------------------------------------
NOLIB=/nonexistent/libnvidia-ml.so.1
zout=$(LANG=$ZH GPUWISE_NVML_LIB=$NOLIB "$GW" status --all 2>"$TMP/zerr"); zrc=$?
eout=$(LANG=C GPUWISE_NVML_LIB=$NOLIB "$GW" status --all 2>"$TMP/eerr"); erc=$?
is "$zrc:$erc" "1:1" "status, NVML cannot be loaded: exit 1 in Chinese and in English"
like "$(cat "$TMP/zerr")" "^gpuwise: 无法使用 NVML：无法加载 '$NOLIB'：" "status: the error line in Chinese (stderr)"
like "$zout" "^无法使用 NVML：无法加载 '$NOLIB'：" "status: the NVML line in Chinese (stdout)"
like "$zout" "^NVML：无法加载 '$NOLIB'：" "status --all: the NVML detail line in Chinese"
unlike "$zout$(cat "$TMP/zerr")" 'NVML cannot be used|cannot load' "status: no English sentence of gpuwise's left"
like "$(cat "$TMP/eerr")" "^gpuwise: NVML cannot be used: cannot load '$NOLIB': " "status: LANG=C, the English error"
a=$(LANG=$ZH GPUWISE_NVML_LIB=$NOLIB "$GW" status --json 2>/dev/null); zrc=$?
b=$(LANG=C GPUWISE_NVML_LIB=$NOLIB "$GW" status --json 2>/dev/null); erc=$?
a=$(printf '%s\n' "$a" | grep -v '"timestamp_ms"'); b=$(printf '%s\n' "$b" | grep -v '"timestamp_ms"')
is "$zrc:$a" "$erc:$b" "status --json, NVML cannot be loaded: same exit and byte-identical (the error stays English)"
zout=$(LANG=$ZH GPUWISE_NVML_LIB=none "$GW" status --all 2>&1); zrc=$?
is "$zrc" 0 "status, GPUWISE_NVML_LIB=none: exit 0"
like "$zout" '^NVML：未加载 NVML（GPUWISE_NVML_LIB=none）$' "status --all: NVML switched off, in Chinese"
err=$(LANG=$ZH "$GW" status --serve nonsense 2>&1); zrc=$?
is "$zrc" 2 "status --serve nonsense: exit 2 in Chinese"
like "$err" "^gpuwise: --serve 需要 ADDR:PORT（\"127\\.0\\.0\\.1:9400\"、\":9400\"），而不是 'nonsense'" "status --serve nonsense: the message in Chinese"
err=$(LANG=$ZH GPUWISE_MHD_LIB=/nonexistent/libmicrohttpd.so.12 "$GW" status --serve 127.0.0.1:0 2>&1); zrc=$?
is "$zrc" 1 "status --serve without libmicrohttpd: exit 1 in Chinese"
like "$err" "^gpuwise: 无法为 --serve 加载 '/nonexistent/libmicrohttpd\\.so\\.12'（请安装 libmicrohttpd12）：" "status --serve without libmicrohttpd: in Chinese"

# ---- the queue: no daemon -------------------------------------------------------------------
err=$(LANG=$ZH "$GW" queue --socket "$TMP/none.sock" 2>&1); zrc=$?
erc=$(LANG=C "$GW" queue --socket "$TMP/none.sock" >/dev/null 2>&1; echo $?)
is "$zrc:$erc" "1:1" "queue without a daemon: exit 1 in Chinese and in English"
like "$err" "^gpuwise: '$TMP/none\\.sock' 上没有队列守护进程；用 'gpuwise daemon --socket $TMP/none\\.sock'( 或 'systemctl start gpuwise')? 启动一个$" \
	"queue without a daemon: the message in Chinese, the command to start one unchanged"

# ---- the daemon, submit, queue, show, quota, logs, cancel, hold, release ----------------------
export LANG=$ZH
q_start
like "$(cat "$TMP/daemon.log")" 'gpuwise daemon: gpuwise daemon [0-9.a-z-]+：(系统|个人)队列，套接字 .*q\.sock，状态在 .*，2 块 GPU，0 个作业在等待或运行$' \
	"daemon: the start line in Chinese (the prefix unchanged)"
out=$("$GW" quota set nlp --vram 16G --gpus 1 2>&1); rc=$?
is "$rc:$out" "0:项目 nlp 已更新" "quota set: in Chinese"
j1=$("$GW" submit --project nlp --vram 6G --name train -- sh -c 'echo hello-zh; exec sleep 30'); rc=$?
is "$rc" 0 "submit: exit 0"
like "$j1" '^[0-9]+$' "submit: prints the job id alone ($j1)"
j2=$("$GW" submit --vram 6G --name later --after "$j1" -- true)
q_wait_state "$j1" running 20
# submit refused by the daemon: exit 3 in both languages, the reason in Chinese
err=$("$GW" submit --project nope --vram 1G -- true 2>&1); zrc=$?
erc=$(LANG=C "$GW" submit --project nope --vram 1G -- true >/dev/null 2>&1; echo $?)
is "$zrc:$erc" "3:3" "submit to a missing project: exit 3 in Chinese and in English"
is "$err" "gpuwise: 没有项目 'nope'（由管理员用 'gpuwise quota set' 创建项目并设置配额）" "submit to a missing project: the daemon's refusal in Chinese"
like "$(LANG=C "$GW" submit --project nope --vram 1G -- true 2>&1)" "^gpuwise: no project 'nope' \\(an administrator creates it with 'gpuwise quota set'\\)$" \
	"submit to a missing project: LANG=C in English"
err=$("$GW" submit --vram 1G -- /nonexistent/cmd 2>&1); zrc=$?
erc=$(LANG=C "$GW" submit --vram 1G -- /nonexistent/cmd >/dev/null 2>&1; echo $?)
is "$zrc" "$erc" "submit of a missing command: the same exit status ($zrc)"
like "$err" '；作业没有加入队列$' "submit of a missing command: 'the job is not queued' in Chinese"
# queue
"$GW" queue >"$TMP/queue.zh" 2>&1
like "$(cat "$TMP/queue.zh")" '^ *ID +名称 +用户 +项目 +状态 ' "queue: the headers in Chinese"
is "$(widths "$TMP/queue.zh" '^ *ID +名称 +|^ *[0-9]+ +(train|later) +' | same)" 1 "queue: the user column starts at one display column under its CJK header"
# show: labels in Chinese, their values at one display column
"$GW" show "$j1" >"$TMP/show.zh" 2>&1; zrc=$?
is "$zrc" 0 "show: exit 0"
s=$(cat "$TMP/show.zh")
like "$s" "^作业 $j1：train（running）$" "show: the heading in Chinese (the state id unchanged)"
like "$s" '^  用户        root（uid 0）$' "show: the user line"
like "$s" '^  命令        /[a-z/]*sh -c echo hello-zh; exec sleep 30$' "show: the command, unchanged"
like "$s" '^  请求        shared，1 块 GPU，每块 GPU 显存 6\.00 GiB$' "show: the request in Chinese (glossary 显存)"
like "$s" '^  计入配额    每块 GPU 6\.00 GiB 计入配额$' "show: what is charged against the quota (配额)"
like "$s" '^  优先级      0$' "show: the priority"
unlike "$s" '^  (user|project|command|directory|request|charged|priority|measured|waited|ran) ' "show: no English label left"
n=$(grep -c '^  ' "$TMP/show.zh")
ok "$([ "$n" -ge 9 ]; echo $?)" "show: label lines ($n)"
is "$(widths "$TMP/show.zh" '^  [^ ]+( [^ ]+)? +' | same)" 1 "show: every value starts at one display column (labels of 2 to 4 CJK characters)"
"$GW" show "$j2" >"$TMP/show2.zh" 2>&1
like "$(cat "$TMP/show2.zh")" "^  原因        等待任务 $j1 结束\$" "show: a waiting job's reason in Chinese"
a=$("$GW" show --json "$j1" 2>/dev/null); b=$(LANG=C "$GW" show --json "$j1" 2>/dev/null)
is "$(printf '%s' "$a" | jget "sorted(d)")" "$(printf '%s' "$b" | jget "sorted(d)")" "show --json: the same keys under zh_CN and C"
# (the usage decays between two calls: its lines left out)
a=$("$GW" quota --json 2>/dev/null | grep -v -e usage -e fairshare_factor)
b=$(LANG=C "$GW" quota --json 2>/dev/null | grep -v -e usage -e fairshare_factor)
is "$a" "$b" "quota --json: byte-identical under zh_CN and C"
a=$("$GW" queue --json 2>/dev/null | jget "[(j['id'], j['state'], j.get('reason')) for j in d['jobs']]")
b=$(LANG=C "$GW" queue --json 2>/dev/null | jget "[(j['id'], j['state'], j.get('reason')) for j in d['jobs']]")
is "$a" "$b" "queue --json: ids, states and reasons identical under zh_CN and C (the reason stays English)"
# quota
"$GW" quota >"$TMP/quota.zh" 2>&1; zrc=$?
is "$zrc" 0 "quota: exit 0"
q=$(cat "$TMP/quota.zh")
like "$q" '^项目 +显存 +GPU +作业 +等待中 +用量（衰减后） +公平份额 +成员$' "quota: the headers in Chinese"
like "$q" '^nlp +6\.00 GiB / 16\.00 GiB +0 / 1 +1 / - ' "quota: the nlp row"
like "$q" '（占用量 [0-9]+%，占份额 [0-9]+%） +所有人$' "quota: the fair share and members in Chinese"
like "$q" '^借用空闲配额：(开|关)$' "quota: borrowing in Chinese"
like "$q" '^公平份额：系数最高的项目先开始；用量每 .* 减半$' "quota: the fair-share line in Chinese"
unlike "$q" 'PROJECT|borrowing of|fair share:|everyone' "quota: no English left"
is "$(widths "$TMP/quota.zh" '^(项目|nlp|default) +[^ ]+ / [^ ]+ +|^项目 +显存 +' | same)" 1 "quota: the GPU column starts at one display column under its CJK header"
is "$(widths "$TMP/quota.zh" '^(项目|nlp|default) +.*(GPU-h|衰减后）) +' | same)" 1 "quota: the fair-share column too (after a CJK header with fullwidth brackets)"
# ---- the lab page: status --serve beside the daemon ---------------------------------------------
j3=$("$GW" submit --project nlp --vram 6G --name held-zh --after "$j1" -- true)
"$GW" hold "$j3" >/dev/null
serve() { # serve LANG OUT: start status --serve, set $port and $spid
	LANG=$1 GPUWISE_NVML_LIB="$GW_FAKE/libnvidia-ml.so" "$GW" status --serve 127.0.0.1:0 --socket "$SOCK" \
		--prometheus-names gpuwise >"$2" 2>&1 &
	spid=$!
	port=
	for _ in $(seq 1 100); do
		port=$(sed -n 's|.*http://[^ ]*:\([0-9]*\)/metrics.*|\1|p' "$2")
		[ -n "$port" ] && break
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
}
serve "$ZH" "$TMP/serve-zh.out"
zport=$port zpid=$spid
serve C "$TMP/serve-en.out"
eport=$port epid=$spid
like "$(cat "$TMP/serve-zh.out")" '^正在 http://127\.0\.0\.1:[0-9]+/metrics 提供指标' "status --serve: the start line in Chinese"
if [ -n "$zport" ] && [ -n "$eport" ] && command -v curl >/dev/null 2>&1; then
	curl -sf "http://127.0.0.1:$zport/" >"$TMP/page-zh.html"
	curl -sf "http://127.0.0.1:$eport/" >"$TMP/page-en.html"
	curl -sf "http://127.0.0.1:$zport/metrics" >"$TMP/metrics-zh"
	curl -sf "http://127.0.0.1:$eport/metrics" >"$TMP/metrics-en"
	h=$(cat "$TMP/page-zh.html")
	like "$h" '<html lang=zh-CN>' "page: lang zh-CN (the browser picks a CJK font)"
	like "$h" '<h1>.* 的 GPU</h1>' "page: the heading in Chinese"
	like "$h" '<p class=sub>gpuwise [^ ]+ &middot; 读取于 .* &middot; 每 5 秒刷新 &middot; <a href="/metrics">/metrics</a></p>' "page: the subtitle in Chinese, /metrics linked"
	like "$h" '<h2>GPU</h2>' "page: the GPUs heading"
	like "$h" '<th>GPU</th><th>名称</th><th>已用显存</th><th></th><th>队列已预留</th><th></th><th>利用率</th><th></th><th>温度</th>' "page: the GPU table's headers in Chinese"
	like "$h" '<h2>队列</h2>' "page: the queue heading in Chinese"
	like "$h" '<th>ID</th><th>名称</th><th>用户</th><th>项目</th><th>状态</th><th>GPU</th><th>所在 GPU</th><th>每块 GPU 的显存</th><th>已等待</th><th>原因</th>' \
		"page: the queue's headers in Chinese"
	like "$h" '<td>held-zh</td>.*<td>被任务主人暂停</td>' "page: the held job's reason in Chinese"
	like "$h" '<h2>项目</h2>' "page: the projects heading in Chinese"
	like "$h" '<th>项目</th><th>使用中的显存</th><th></th><th>GPU</th><th></th><th>运行中的作业</th><th></th><th>等待中</th>' "page: the projects' headers in Chinese"
	like "$h" '（不限）</td>' "page: 'no limit' in Chinese"
	unlike "$h" '>(name|memory used|utilisation|temperature|Queue|Projects|user|project|state|reason|waited|on GPU|VRAM per GPU|VRAM in use|jobs running|waiting|fair-share factor)<|GPUs of|read at|refreshes every|no limit|whole GPU|held by' \
		"page: no English label or sentence left"
	like "$(cat "$TMP/page-en.html")" '<html lang=en>.*' "page: LANG=C is English (lang en)"
	like "$(cat "$TMP/page-en.html")" '<th>memory used</th>' "page: LANG=C, the English labels"
	like "$(cat "$TMP/page-en.html")" 'held by its owner' "page: LANG=C, the English reason"
	# /metrics: the same bytes under zh_CN and C (the lines that move between two scrapes left out)
	grep -v -e '^gpuwise_queue_up' -e 'energy' "$TMP/metrics-zh" >"$TMP/m-zh"
	grep -v -e '^gpuwise_queue_up' -e 'energy' "$TMP/metrics-en" >"$TMP/m-en"
	n=$(wc -l <"$TMP/m-zh")
	ok "$([ "$n" -gt 20 ]; echo $?)" "/metrics: scraped under zh_CN ($n lines)"
	is "$(cat "$TMP/m-zh")" "$(cat "$TMP/m-en")" "/metrics: byte-identical under zh_CN and C (names and help untouched)"
	is "$(LC_ALL=C grep -c '[^ -~]' "$TMP/metrics-zh")" 0 "/metrics under zh_CN: ASCII only, no Chinese"
	# rendered: with the CJK font the Chinese labels are glyphs, without it tofu boxes; the two differ
	if cjk_available; then
		# the page without its refresh (the screenshot is of one rendering)
		sed 's/<meta http-equiv=refresh[^>]*>//' "$TMP/page-zh.html" >"$TMP/page.html"
		d=$(cjk_shots "$TMP/page.html" 900,420)
		set -- $d
		ok "$([ "${1:-0}" -gt 5000 ]; echo $?)" "page in chromium: drawn (${1:-?} non-white pixels)"
		ok "$([ "${2:-0}" -gt 2000 ]; echo $?)" "page in chromium: the Chinese labels are CJK glyphs, not the tofu boxes of a font without CJK (${2:-?} pixels differ)"
	else
		skip "page: no CJK font or no chromium (apt-get install fonts-noto-cjk chromium)"
	fi
else
	ok 1 "status --serve: both servers listen and curl is installed (zh port '$zport', C port '$eport')"
fi
kill -TERM "$zpid" "$epid" 2>/dev/null
wait "$zpid" "$epid" 2>/dev/null
# logs
out=$("$GW" logs "$j1" 2>/dev/null); rc=$?
is "$rc" 0 "logs: exit 0"
like "$out" '^hello-zh$' "logs: the job's own output, unchanged"
err=$("$GW" logs 999999 2>&1); zrc=$?
erc=$(LANG=C "$GW" logs 999999 >/dev/null 2>&1; echo $?)
is "$zrc:$erc" "3:3" "logs of a missing job: exit 3 in Chinese and in English"
is "$err" "gpuwise: 没有作业 999999" "logs of a missing job: the daemon's refusal in Chinese"
# hold / release / cancel
out=$("$GW" hold "$j2" 2>&1); rc=$?
is "$rc:$out" "0:作业 $j2 已暂停" "hold: in Chinese"
out=$("$GW" release "$j2" 2>&1); rc=$?
is "$rc:$out" "0:作业 $j2 已释放" "release: in Chinese"
err=$("$GW" release "$j2" 2>&1); zrc=$?
is "$zrc" 3 "release of a job not held: exit 3"
like "$err" "^gpuwise: 作业 $j2 的状态是 [a-z]+，没有暂停$" "release of a job not held: in Chinese"
"$GW" cancel "$j3" >/dev/null 2>&1
out=$("$GW" cancel "$j2" 2>&1); rc=$?
is "$rc:$out" "0:作业 $j2 已取消" "cancel of a waiting job: in Chinese"
out=$("$GW" cancel "$j1" 2>&1); rc=$?
is "$rc:$out" "0:作业 $j1 正在停止" "cancel of a running job: in Chinese"
err=$("$GW" cancel "$j2" 2>&1); zrc=$?
erc=$(LANG=C "$GW" cancel "$j2" >/dev/null 2>&1; echo $?)
is "$zrc:$erc" "3:3" "cancel of an ended job: exit 3 in Chinese and in English"
like "$err" "^gpuwise: 作业 $j2 已经结束（[a-z]+）$" "cancel of an ended job: in Chinese"
q_wait_state "$j1" cancelled 20
log=$(cat "$TMP/daemon.log")
like "$log" "gpuwise daemon: 作业 $j1 已启动（pid [0-9]+）$" "daemon: a job start logged in Chinese"
like "$log" "gpuwise daemon: 作业 $j1 cancelled（状态码 [0-9]+）$" "daemon: a job end logged in Chinese (the state id unchanged)"
unlike "$log" 'gpuwise daemon: (gpuwise daemon .* queue on|job [0-9]+ started)' "daemon: no English line left of these"

q_cleanup
like "$(cat "$TMP/daemon.log")" 'gpuwise daemon: 正在停止；[0-9]+ 个运行中的作业继续运行，下次启动时重新接管$' "daemon: the stop line in Chinese"
is "$q_daemon_rc" 0 "daemon: SIGTERM, exit 0"

# ---- the daemon stops a job over its request: its log line and the reason in Chinese ----------
export GPUWISE_FAKE_SCENARIO="$FIX/scenarios/server-2gpu-queue-overuse.json"
printf 'context_reserve = 512M\nover_request = stop\nover_request_grace = 10%%\n' > "$TMP/daemon.conf"
: >"$TMP/daemon.log"
q_start
id=$("$GW" submit --vram 10G --run-opt --interval --run-opt 200ms -- sleep 30)
q_wait_state "$id" failed 30
like "$(cat "$TMP/daemon.log")" "gpuwise daemon: 作业 $id 已停止：使用了 30\\.00 GiB 显存，超出申请的 10\\.00 GiB 达 10% 以上\$" \
	"daemon: 'job N <note>' logged in Chinese (the note translated on its own)"
like "$("$GW" show "$id" 2>/dev/null)" '  原因        已停止：使用了 30\.00 GiB 显存' "show: the stop reason in Chinese"
is "$(LANG=C "$GW" show --json "$id" 2>/dev/null | jget "d['reason']")" \
	"stopped: used 30.00 GiB of GPU memory, over its request of 10.00 GiB by more than 10%" "show --json: the reason stays English"
q_cleanup
done_testing
