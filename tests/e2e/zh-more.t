#!/bin/sh
# More of gpuwise in Simplified Chinese (issue 24), beside zh.t: explain
# --help and every command's --help without an English sentence left; the
# text of sim (trace, tables, plot labels), export (k8s and Slurm notes),
# the Slurm client (errors without Slurm, with a fake scontrol and sbatch),
# run's give-up reasons and restarts (a leak stopped, --max-restarts, the
# start limit, --no-restart-on) and cost/cards' price sources: Chinese
# under zh_CN, the same exit status as LANG=C, --json byte-identical, the
# commands and options inside the translated lines unchanged, LANG=C English.
. "$(dirname "$0")/lib.sh"
unset LC_ALL LC_MESSAGES LANGUAGE
export GPUWISE_NO_STATUS_LINE=1
ZH=zh_CN.UTF-8
cd "$TMP" || exit 1

# english FILE: the lines of FILE (a Chinese text) that still hold an English
# sentence: four words in a row, once commands, options and ids are taken out
english() {
	python3 - "$1" <<'PY'
import re, sys
for l in open(sys.argv[1], encoding="utf-8"):
    t = re.sub(r"gpuwise [a-z-]+( [^ ，。；：（）]*)*", " ", l)
    t = re.sub(r"(?<![\w.])--?[A-Za-z][\w=.,:/\[\]-]*", " ", t)
    t = re.sub(r"https?://\S+", " ", t)
    if re.search(r"(?<![\w.-])[A-Za-z]{2,}(?: [a-z]{2,}){3}(?![\w.-])", t):
        print(l.rstrip())
PY
}

# ---- explain --help, and every --help once -------------------------------------------------
zh=$(LANG=$ZH "$GW" explain --help 2>&1); zrc=$?
en=$(LANG=C "$GW" explain --help 2>&1); erc=$?
is "$zrc:$erc" "0:0" "explain --help: exit 0 in both languages"
like "$zh" '^用法：gpuwise explain \[TEXT \| FILE \| -\] \[--json\] \[--no-probe\]$' "explain --help: the usage line in Chinese"
like "$zh" '^  -           读取标准输入：python train\.py 2>&1 \| gpuwise explain -$' "explain --help: the pipe example unchanged"
like "$zh" '^退出状态：0 找到了诊断' "explain --help: the exit status in Chinese"
is "$(printf '%s\n' "$zh" | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u | tr '\n' ' ')" \
   "$(printf '%s\n' "$en" | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u | tr '\n' ' ')" "explain --help: the same options as the English help"
like "$en" '^usage: gpuwise explain ' "explain --help: LANG=C is English"
left=""
for c in plan cards cost status doctor explain run bench list daemon submit queue show logs cancel hold release quota sim export; do
	LANG=$ZH "$GW" $c --help > "$TMP/help.$c" 2>&1
	l=$(english "$TMP/help.$c")
	[ -n "$l" ] && left="$left$c: $l
"
done
is "$left" "" "no command's --help keeps an English sentence under zh_CN"
LANG=C "$GW" explain --help > "$TMP/help.en" 2>&1
ok "$([ -n "$(english "$TMP/help.en")" ]; echo $?)" "the check finds English sentences (in the LANG=C help)"

# ---- sim: a small trace, inflation with standard sizes, the replay, the plot ---------------
head -400 "$FIX/openb/openb_pod_list_default.csv" > p.csv
head -60 "$FIX/openb/openb_node_list_gpu_node.csv" > n.csv
S="sim --pods p.csv --nodes n.csv --seeds 2 --vram-sizes 4G,8G"
# shellcheck disable=SC2086
LANG=$ZH "$GW" $S --plot zh.svg > sim.zh 2>&1; zrc=$?
# shellcheck disable=SC2086
LANG=C "$GW" $S --plot en.svg > sim.en 2>&1; erc=$?
is "$zrc:$erc" "0:0" "sim: exit 0 in both languages"
zh=$(cat sim.zh)
like "$zh" '^轨迹：399 个 pod（375 个请求 GPU，共 327\.0 块 GPU，33 种请求形状）；59 个节点，共 310 块 GPU$' "sim: the trace line in Chinese, its numbers those of the English run"
like "$(cat sim.en)" '^Trace: 399 pods \(375 ask for GPUs, 327\.0 GPUs in all, 33 request shapes\); 59 nodes with 310 GPUs$' "sim: LANG=C, the English trace line"
like "$zh" '^GPU 分配率（分配给 pod 的 GPU 所占百分比），2 个种子的均值 ± 标准差，按已到达需求：$' "sim: a table's title in Chinese (2 seeds)"
like "$zh" '^策略 +已到达需求 +当时的分配率 ' "sim: the first-failure table's headers in Chinese"
like "$zh" '^策略 +分配率（自由大小） +分配率（标准大小） +碎片（自由大小）' "sim: the standard sizes' table in Chinese (glossary: 碎片)"
unlike "$zh" 'mean ± sd|First failed|Standard sizes|Pods ask' "sim: no English heading left"
is "$(grep -E '^(fgd|gpuwise|best-fit) ' sim.zh | awk '{print $1, $2}')" "$(grep -E '^(fgd|gpuwise|best-fit) ' sim.en | awk '{print $1, $2}')" \
	"sim: the policies (ids) and their figures are those of the English run"
# the figures under the CJK header "策略": the 50% column ends where its header does (display width)
n=$(python3 - sim.zh <<'PY'
import re, sys, unicodedata
w = lambda s: sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
tables = bad = 0
for i, l in enumerate(lines):
    if l.startswith("策略  ") and "50%" in l:
        tables += 1
        end = w(l[:l.index("50%") + 3])
        for row in lines[i + 1:]:
            if not row.strip():
                break
            m = re.match(r"^\S+ +[0-9.]+ ± [0-9.]+", row)
            if not m or w(m.group(0)) != end:
                bad += 1
print(tables if not bad else -bad)
PY
)
ok "$([ "${n:-0}" -ge 4 ]; echo $?)" "sim: in the $n inflation tables the 50% column ends at the display column of its CJK-headed header"
# shellcheck disable=SC2086
is "$(LANG=$ZH "$GW" $S --json 2>&1 | grep -v '"elapsed_ms"')" "$(LANG=C "$GW" $S --json 2>&1 | grep -v '"elapsed_ms"')" \
	"sim --json: byte-identical under zh_CN and C (but for the run times)"
like "$(cat zh.svg)" '>GPU 分配率随已到达 GPU 需求的变化，310 块 GPU，2 个种子的均值</text>' "sim --plot: the title in Chinese"
like "$(cat en.svg)" '>GPU allocation ratio against arrived GPU demand, 310 GPUs, mean of 2 seeds</text>' "sim --plot: LANG=C, the English title"
python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' zh.svg
ok $? "sim --plot: the Chinese SVG is well-formed XML"
LANG=$ZH "$GW" sim --pods p.csv --nodes n.csv --replay times --policy fgd > replay.zh 2>&1
like "$(cat replay.zh)" '^按轨迹自身的时间重放（[0-9.]+ 天）：$' "sim --replay: the heading in Chinese"
like "$(cat replay.zh)" '^同一时刻最多请求 310 块 GPU 中的 [0-9.]+ 块（[0-9.]+%）' "sim --replay: the summary in Chinese (reordered arguments)"
LANG=$ZH "$GW" sim --pods p.csv --nodes /dev/null > /dev/null 2> e.zh; zrc=$?
LANG=C "$GW" sim --pods p.csv --nodes /dev/null > /dev/null 2> e.en; erc=$?
is "$zrc" "$erc" "sim with an empty node list: the same exit status ($zrc)"

# ---- export: the notes --------------------------------------------------------------------
LANG=$ZH "$GW" export k8s --name train --gpus 2 --vram 8G --image reg/app:1 -- python train.py > k8s.zh 2> k8s.zh.err; zrc=$?
LANG=C "$GW" export k8s --name train --gpus 2 --vram 8G --image reg/app:1 -- python train.py > k8s.en 2> k8s.en.err; erc=$?
is "$zrc:$erc" "0:0" "export k8s: exit 0 in both languages"
is "$(cat k8s.zh)" "$(cat k8s.en)" "export k8s: the YAML (read by kubectl) is the same in both languages"
like "$(cat k8s.zh.err)" '^gpuwise: 注：Kubernetes 只分配整块 GPU：这个共享任务得到 2 块完整的 GPU（集群对 GPU 做时间片时用 --time-slicing）$' \
	"export k8s: the whole-GPU note in Chinese (plural, option kept)"
like "$(cat k8s.zh.err)" "--gpuwise /usr/local/bin/gpuwise 来包装命令" "export k8s: the image note keeps the option to type"
like "$(cat k8s.zh.err)" 'Kubernetes 没有显存资源' "export k8s: VRAM is 显存 (glossary)"
like "$(cat k8s.en.err)" '^gpuwise: note: Kubernetes gives whole GPUs: the shared job gets 2 whole GPUs ' "export k8s: LANG=C English, plural"
is "$(wc -l < k8s.zh.err)" "$(wc -l < k8s.en.err)" "export k8s: as many notes in both languages ($(wc -l < k8s.en.err))"
LANG=$ZH "$GW" export slurm --gpus 1 --vram 8G -- python train.py > sl.zh 2> sl.zh.err
LANG=C "$GW" export slurm --gpus 1 --vram 8G -- python train.py > sl.en 2> sl.en.err
is "$(cat sl.zh)" "$(cat sl.en)" "export slurm: the sbatch script is the same in both languages"
like "$(cat sl.zh.err)" '^gpuwise: 注：Slurm 只分配整块 GPU：这个共享任务得到 1 块完整的 GPU（集群有 gres/shard 时用 --shards K）$' "export slurm: the note in Chinese"
like "$(cat sl.en.err)" 'gets 1 whole GPU \(use --shards K' "export slurm: LANG=C, singular"
LANG=$ZH "$GW" export quota slurm --quota 'bad name:gpus=1' --quota 'lab:gpus=2,vram=10G' > q.zh 2> q.zh.err; zrc=$?
LANG=C "$GW" export quota slurm --quota 'bad name:gpus=1' --quota 'lab:gpus=2,vram=10G' > q.en 2> q.en.err; erc=$?
is "$zrc" "$erc" "export quota slurm: the same exit status ($zrc)"
like "$(cat q.zh.err)" "项目 'bad name' 不是合法的 Slurm 账户名：已跳过" "export quota: a skipped project in Chinese"
like "$(cat q.zh.err)" '显存配额在 Slurm 中没有对应项.*（--vram-gres 会输出它）' "export quota: the VRAM quota note (显存配额) keeps --vram-gres"
LANG=$ZH "$GW" export quota k8s --from "$TMP/none.json" > /dev/null 2> qf.zh; zrc=$?
LANG=C "$GW" export quota k8s --from "$TMP/none.json" > /dev/null 2> qf.en; erc=$?
is "$zrc" "$erc" "export quota --from a missing file: the same exit status ($zrc)"

# ---- the Slurm client: no Slurm, a fake scontrol, a failing sbatch --------------------------
mkdir -p bin
PATH=/nonexistent "$GW" show slurm:1 > /dev/null 2> e.zh; zrc=$?
LANG=C PATH=/nonexistent "$GW" show slurm:1 > /dev/null 2> e.en; erc=$?
is "$zrc:$erc" "1:1" "show slurm:N without scontrol: exit 1 in both languages (Slurm itself is missing)"
LANG=$ZH PATH=/nonexistent "$GW" show slurm:1 > /dev/null 2> e.zh; zrc=$?
is "$zrc:$(cat e.zh)" "1:gpuwise: Slurm：未安装 scontrol（apt-get install slurm-client）" "show slurm:N without scontrol under zh_CN: exit 1, in Chinese, the apt-get command unchanged"
printf '#!/bin/sh\necho "slurm_load_jobs error: Invalid job id specified"\nexit 1\n' > bin/scontrol
printf '#!/bin/sh\nwhile read -r _; do :; done\necho "sbatch: error: Batch job submission failed: Invalid account"\nexit 1\n' > bin/sbatch
chmod +x bin/scontrol bin/sbatch
LANG=$ZH PATH="$TMP/bin" "$GW" show slurm:7 > /dev/null 2> e.zh; zrc=$?
LANG=C PATH="$TMP/bin" "$GW" show slurm:7 > /dev/null 2> e.en; erc=$?
is "$zrc:$erc" "3:3" "show slurm:N that Slurm does not know: exit 3 in both languages"
is "$(cat e.zh)" "gpuwise: 没有 Slurm 任务 7（Slurm 在 MinJobAge 之后会忘记已结束的任务）" "... the message in Chinese"
is "$(cat e.en)" "gpuwise: no Slurm job 7 (Slurm forgets ended jobs after MinJobAge)" "... LANG=C, the English message"
LANG=$ZH PATH="$TMP/bin" "$GW" cancel slurm:7 > /dev/null 2> c.zh; zrc=$?
is "$zrc:$(cat c.zh)" "3:gpuwise: 没有 Slurm 任务 7（Slurm 在 MinJobAge 之后会忘记已结束的任务）" "cancel slurm:N unknown: exit 3, in Chinese"
LANG=$ZH PATH="$TMP/bin" "$GW" export slurm --submit --gpus 1 --mode exclusive -- true > /dev/null 2> s.zh; zrc=$?
LANG=C PATH="$TMP/bin" "$GW" export slurm --submit --gpus 1 --mode exclusive -- true > /dev/null 2> s.en; erc=$?
is "$zrc" "$erc" "export slurm --submit with a failing sbatch: the same exit status ($zrc)"
like "$(cat s.zh)" "^gpuwise: warning: 无法检查 '.*' 能否在集群节点上运行：未安装 srun$" "export --submit without srun: the warning in Chinese"
like "$(cat s.zh)" 'gpuwise: sbatch 失败：sbatch: error: Batch job submission failed: Invalid account$' "export --submit: sbatch's own error quoted as it is, in a Chinese line"
like "$(cat s.en)" 'gpuwise: sbatch failed: sbatch: error: Batch job submission failed: Invalid account$' "export --submit: LANG=C English"

# ---- run: why it gives up, the restarts ------------------------------------------------------
LANG=$ZH "$GW" run --no-gpu --restart on-failure --backoff 100ms..100ms --max-restarts 1 -- sh -c 'exit 3' 2> r1.zh; zrc=$?
LANG=C "$GW" run --no-gpu --restart on-failure --backoff 100ms..100ms --max-restarts 1 -- sh -c 'exit 3' 2> r1.en; erc=$?
is "$zrc:$erc" "3:3" "run: the job's exit status 3 in both languages"
like "$(cat r1.zh)" 'restart: 第 1 次重启（共 1 次），100ms 后开始$' "run: the restart event in Chinese ('1 of 1')"
like "$(cat r1.zh)" 'give-up: 不再重启：已重启 1 次（--max-restarts）$' "run: the give-up reason in Chinese, the option kept"
like "$(cat r1.zh)" 'no-gpu: 没有可监视的 GPU（给出了 --no-gpu）：只监视主机一侧$' "run: the no-GPU reason in Chinese"
like "$(cat r1.en)" 'restart: restart 1 of 1 in 100ms$' "run: LANG=C, the English restart event"
like "$(cat r1.en)" 'give-up: not restarting: 1 restart done \(--max-restarts\)$' "run: LANG=C, the English give-up reason"
LANG=$ZH "$GW" run --no-gpu --restart on-failure --backoff 100ms..100ms --max-restarts unlimited --start-limit 2/10s \
	-- sh -c 'exit 3' 2> r2.zh; zrc=$?
is "$zrc" 3 "run --start-limit: exit status 3"
like "$(cat r2.zh)" 'restart: 第 1 次重启，100ms 后开始$' "run --max-restarts unlimited: 'restart 1', not 'restart 10' (no '%d of')"
like "$(cat r2.zh)" 'give-up: 不再重启：10000 ms 内启动了 2 次（启动次数限制）$' "run: the start limit's reason in Chinese (reordered)"
LANG=C "$GW" run --no-gpu --restart on-failure --backoff 100ms..100ms --max-restarts unlimited --start-limit 2/10s \
	-- sh -c 'exit 3' 2> r2.en
like "$(cat r2.en)" 'restart: restart 1 in 100ms$' "run --max-restarts unlimited, LANG=C: 'restart 1 in'"
LANG=$ZH "$GW" run --no-gpu --restart on-failure --no-restart-on 3 -- sh -c 'exit 3' 2> r3.zh; zrc=$?
is "$zrc" 3 "run --no-restart-on 3: exit status 3"
like "$(cat r3.zh)" 'give-up: 不再重启：退出(状态|码) 3 在 --no-restart-on 中$' "run --no-restart-on: the reason in Chinese"
LANG=$ZH "$GW" run --no-gpu --restart on-failure --backoff 50ms..50ms --json -- sh -c 'exit 3' 2>/dev/null | grep -v '"\(t_ms\|wall_ms\|pid\|pids\|start_ms\|end_ms\|ran_ms\|t_s\|duration_ms\|elapsed_ms\)"' > rj.zh
LANG=C "$GW" run --no-gpu --restart on-failure --backoff 50ms..50ms --json -- sh -c 'exit 3' 2>/dev/null | grep -v '"\(t_ms\|wall_ms\|pid\|pids\|start_ms\|end_ms\|ran_ms\|t_s\|duration_ms\|elapsed_ms\)"' > rj.en
like "$(cat rj.zh)" '"detail": "not restarting: 3 restarts done \(--max-restarts\)"' "run --json under zh_CN: the reason stays English"
# a leak: gpuwise stops the job, and says so when it gives up
NVML="$GW_FAKE/libnvidia-ml.so"
if [ -e "$NVML" ]; then
	python3 - leak.json <<'PY'
import json, sys
MiB, GiB = 1 << 20, 1 << 30
gpu = {"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-00000000-0000-0000-0000-000000000001",
       "pci_bus_id": "00000000:18:00.0", "cc": "9.0", "memory_total_bytes": 80 * GiB, "temp_c": 60,
       "temp_slowdown_c": 87, "temp_shutdown_c": 92, "util_gpu_pct": 95, "util_mem_pct": 40,
       "power_mw": 350000, "power_limit_mw": 700000, "clock_sm_mhz": 1980, "clock_mem_mhz": 2619,
       "throttle_reasons": 0,
       "processes": [{"pid": "child", "used_memory_bytes": {"series": [GiB + int(i * 1.6 * MiB) for i in range(200)],
                                                           "step_ms": 100}, "type": "compute"}]}
json.dump({"driver_version": "570.124.06", "nvml_version": "12.570.124.06", "cuda_driver_version": 12080,
           "gpus": [gpu]}, open(sys.argv[1], "w"))
PY
	for l in $ZH C; do
		LANG=$l GPUWISE_NVML_LIB="$NVML" GPUWISE_FAKE_SCENARIO="$TMP/leak.json" timeout 60 "$GW" run --interval 100ms \
			--leak-warmup 1s --leak-window 500ms --on-leak stop --grace 300ms --restart on-failure --report leak.$l.html \
			-- sleep 20 > /dev/null 2> leak.$l
		echo $? > leak.$l.rc
	done
	is "$(cat leak.$ZH.rc)" "$(cat leak.C.rc)" "run --on-leak stop: the same exit status in both languages ($(cat leak.C.rc))"
	like "$(cat leak.$ZH)" 'leak: ' "run: the leak event (its id stays)"
	unlike "$(cat leak.$ZH)" 'job GPU memory grows' "run: the leak's text is not English"
	like "$(cat leak.$ZH)" 'give-up: 不再重启：gpuwise 停止了它（leak）$' "run: why it gives up after the leak, in Chinese (the reason id kept)"
	like "$(cat leak.C)" 'give-up: not restarting: gpuwise stopped it \(leak\)$' "run: LANG=C, the English reason"
	like "$(cat leak.$ZH.html)" '不再重启：gpuwise 停止了它（leak）' "run --report: the give-up reason in Chinese in the report's events"
else
	skip "run --on-leak: the fake NVML is not built ($NVML)"
fi

# ---- cost and cards: where the prices come from -----------------------------------------------
C="cost --gpu rtx-3090 --used --currency EUR --region de --system-power 100 --hours 8"
# shellcheck disable=SC2086
zh=$(LANG=$ZH "$GW" $C 2>&1); zrc=$?
# shellcheck disable=SC2086
en=$(LANG=C "$GW" $C 2>&1); erc=$?
is "$zrc" "$erc" "cost: the same exit status in both languages ($zrc)"
like "$zh" '（二手价格，[0-9]+ 条带日期的 USD 记录的中位数（[0-9]+-[0-9]+ EUR），最新 [0-9-]+' "cost: the purchase price's source in Chinese"
like "$zh" '[0-9]+ W（含整机） x ' "cost: 'with the system' in Chinese"
like "$zh" '居民电价' "cost: the household electricity price in Chinese"
like "$zh" '[0-9]+ 个报价的中位数' "cost: the rent's offers in Chinese, no English plural 's' left"
unlike "$zh" '报价s|median of|dated USD row|household price|offers\)|with the system' "cost: no English fragment of the sources left"
like "$zh" '^  购买价格：[0-9.]+ USD，按 1 USD = ' "cost: the conversions name what they convert in Chinese"
like "$en" 'used price, median of [0-9]+ dated USD rows' "cost: LANG=C, the English source (plural)"
# shellcheck disable=SC2086
is "$(LANG=$ZH "$GW" $C --json 2>&1)" "$(LANG=C "$GW" $C --json 2>&1)" "cost --json: byte-identical (the sources stay English)"
zh=$(LANG=$ZH "$GW" cost --gpu rtx-4090-d --storage 500 2>&1)
like "$zh" '（40%，3 年后：40% \[假设：目录中没有可比较的首发价\]）' "cost: the resale assumption in Chinese"
like "$zh" '：所比较的行都没有标明存储价格，请给出 --storage-price）' "cost: the storage note in Chinese, the option kept"
zh=$(LANG=$ZH "$GW" cards llama-2-13b 2>/dev/null); zrc=$?
erc=$(LANG=C "$GW" cards llama-2-13b >/dev/null 2>&1; echo $?)
is "$zrc" "$erc" "cards: the same exit status in both languages ($zrc)"
like "$zh" '改为租用（按需，能运行它且每小时最便宜的' "cards: the rentals' heading in Chinese"
like "$zh" '^# +GPU +卡数 +tok/s +CNY/h +平台 +日期 +报价数$' "cards: the rentals' table headers in Chinese"
like "$zh" '块没有新卡在售（试试 --used）' "cards: the count of unpriced cards in Chinese, the option kept"
unlike "$zh" 'Rent instead|not on sale new' "cards: no English left in those lines"
is "$(LANG=$ZH "$GW" cards llama-2-13b --json 2>/dev/null)" "$(LANG=C "$GW" cards llama-2-13b --json 2>/dev/null)" "cards --json: byte-identical under zh_CN and C"
done_testing
