#!/bin/sh
# The errors domain code makes (gw_fail: unknown model, unreadable or broken
# model files, broken data tables, queue config, sim traces, run options) in
# Simplified Chinese under zh_CN (issue 24): the Chinese message with the
# path or name it is about, the same exit status as LANG=C, LANG=C still the
# exact English text, --json still English.
. "$(dirname "$0")/lib.sh"
unset LC_ALL LC_MESSAGES LANGUAGE
export GPUWISE_NO_STATUS_LINE=1
ZH=zh_CN.UTF-8
cd "$TMP" || exit 1

# both RC ZH_ERE C_ERE ARGS...: under zh_CN and under C gpuwise ARGS exits
# RC; stderr holds a "gpuwise: " line matching ZH_ERE (and one matching
# C_ERE); nothing on stdout.  Leaves $zerr and $cerr.
both() {
	_rc=$1 _zre=$2 _cre=$3
	shift 3
	out=$(LANG=$ZH "$GW" "$@" 2>"$TMP/zerr" </dev/null); zrc=$?
	zerr=$(cat "$TMP/zerr")
	is "$zrc" "$_rc" "zh_CN: gpuwise $* exits $_rc"
	like "$zerr" "^gpuwise: $_zre" "zh_CN: gpuwise $*: the Chinese message"
	is "$out" "" "zh_CN: gpuwise $*: nothing on stdout"
	out=$(LANG=C "$GW" "$@" 2>"$TMP/cerr" </dev/null); crc=$?
	cerr=$(cat "$TMP/cerr")
	is "$crc" "$_rc" "C: gpuwise $* exits $_rc too"
	like "$cerr" "^gpuwise: $_cre" "C: gpuwise $*: the English message"
}

# a model name that is not one
both 2 "未知的模型 'nosuchmodel'（既不是文件，也不在目录中）$" \
	"unknown model 'nosuchmodel' \(not a file and not in the catalog\)$" plan nosuchmodel
is "$cerr" "gpuwise: unknown model 'nosuchmodel' (not a file and not in the catalog)" "C: exactly today's English"
both 2 "未知的模型 'llama3.1:8'（是不是 'llama-3.1-8b'？）" "unknown model 'llama3.1:8' \(did you mean 'llama-3.1-8b'\?\)" \
	plan llama3.1:8

# a name is quoted as given, even one the catalog has a translation for
both 2 "未知的模型 'unknown'（既不是文件，也不在目录中）$" "unknown model 'unknown' " plan unknown

# a file that is not there (strerror in the reader's language too)
both 1 "无法读取 '$TMP/nonexist.gguf'：没有那个文件或目录$" \
	"cannot read '$TMP/nonexist.gguf': No such file or directory$" plan "$TMP/nonexist.gguf"

# GGUF files cut short, and one that is no GGUF: the reader's nested message and the field it names
printf 'GGUF' >v.gguf
both 1 "无法读取 'v.gguf'：文件头不完整：偏移 4 处的版本需要 4 字节，文件只有 4 字节$" \
	"cannot read 'v.gguf': truncated header: version at offset 4 needs 4 bytes, the file has 4$" plan v.gguf
is "$cerr" "gpuwise: cannot read 'v.gguf': truncated header: version at offset 4 needs 4 bytes, the file has 4" \
	"C: the truncated GGUF exactly as before"
printf 'GGUF\003\000\000\000' >t.gguf
both 1 "无法读取 't.gguf'：文件头不完整：偏移 8 处的张量数量需要 8 字节" \
	"cannot read 't.gguf': truncated header: tensor count at offset 8 needs 8 bytes" plan t.gguf
printf 'GGUX\003\000\000\000\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0' >m.gguf
both 1 "无法读取 'm.gguf'：不是 GGUF 文件（魔数错误 47 47 55 58）$" \
	"cannot read 'm.gguf': not a GGUF file \(bad magic 47 47 55 58\)$" plan m.gguf
printf 'abc' >s.safetensors
both 1 "无法读取 's.safetensors'：太短，不是 safetensors 文件$" \
	"cannot read 's.safetensors': too short to be a safetensors file$" plan s.safetensors

# a broken config.json (a model directory) and one that is no object
mkdir -p cj && echo '{' >cj/config.json
both 1 "无法读取 'cj/config.json'：无效的 JSON（" "cannot read 'cj/config.json': invalid JSON \(" plan cj
echo '[1]' >arr.json
both 1 "无法读取 'arr.json'：不是 JSON 对象$" "cannot read 'arr.json': not a JSON object$" plan arr.json

# cost: an unknown GPU and region (usage errors, exit 2)
both 2 "未知的 GPU 'nosuchgpu'（gpuwise list gpus 列出目录）$" "unknown GPU 'nosuchgpu'" cost --gpu nosuchgpu
both 2 "未知的地区 'xx'（已知：[a-z, ]+）；请给出 --kwh-price$" "unknown region 'xx' \(known: [a-z, ]+\); give --kwh-price$" \
	cost --gpu rtx-4090 --region xx

# a malformed data table through --data-dir, and a data directory that is not there
mkdir -p dd
{ grep '^#' "$GW_TOP/data/models.tsv"; grep -v '^#' "$GW_TOP/data/models.tsv" | head -1; printf 'broken\tx\n'; } >dd/models.tsv
both 1 "表 'models' 第 [0-9]+ 行：2 列，应为 [0-9]+ 列$" "table 'models' line [0-9]+: 2 columns, expected [0-9]+$" \
	--data-dir dd plan llama3.1:8b --gpu rtx-4090
both 1 "无法打开数据目录 '$TMP/nodata'$" "cannot open data directory '$TMP/nodata'$" --data-dir "$TMP/nodata" plan llama3.1:8b

# the queue daemon's config file: an unknown key, a line that is no setting, a missing file
printf 'bogus_key = 1\n' >q.conf
both 1 "配置 'q.conf' 第 1 行：未知的键 'bogus_key'$" "config 'q.conf' line 1: unknown key 'bogus_key'$" \
	daemon --config q.conf --state "$TMP/st" --socket "$TMP/s.sock"
is "$cerr" "gpuwise: config 'q.conf' line 1: unknown key 'bogus_key'" "C: the config error exactly as before"
printf 'junk\n' >q2.conf
both 1 "配置 'q2.conf' 第 1 行：应为 KEY = VALUE$" "config 'q2.conf' line 1: expected KEY = VALUE$" \
	daemon --config q2.conf --state "$TMP/st" --socket "$TMP/s.sock"
both 1 "无法读取配置 '$TMP/none.conf'：无法打开 '$TMP/none.conf'：没有那个文件或目录$" \
	"cannot read config '$TMP/none.conf': cannot open '$TMP/none.conf': No such file or directory$" \
	daemon --config "$TMP/none.conf" --state "$TMP/st" --socket "$TMP/s.sock"

# sim: a trace without its columns, an empty one
printf 'a,b\n' >pods.csv
printf 'sn,cpu_milli,memory_mib,num_gpu,model\n' >nodes.csv
both 1 "pods.csv:1：缺少列 'cpu_milli'$" "pods.csv:1: missing column 'cpu_milli'$" sim --pods pods.csv --nodes nodes.csv
: >empty.csv
both 1 "empty.csv：空文件，没有表头行$" "empty.csv: empty file, no header line$" sim --pods empty.csv --nodes nodes.csv

# run --oom-halve-arg naming an option the command does not have
both 1 "--oom-halve-arg：命令中没有可减半的 '--batch N' 或 '--batch=N'$" \
	"--oom-halve-arg: the command has no '--batch N' or '--batch=N' to halve$" run --oom-halve-arg --batch -- echo hi

# --json stays English under zh_CN (translation is off for it), byte for byte
out=$(LANG=$ZH "$GW" plan nosuchmodel --json 2>"$TMP/json-zh"); zrc=$?
out=$(LANG=C "$GW" plan nosuchmodel --json 2>"$TMP/json-c"); crc=$?
is "$zrc" "$crc" "--json: the same exit status"
is "$(cat "$TMP/json-zh")" "$(cat "$TMP/json-c")" "--json: the error byte-identical to LANG=C"
# --lang en under zh_CN: today's English
out=$(LANG=$ZH "$GW" --lang en plan nosuchmodel 2>&1)
is "$out" "gpuwise: unknown model 'nosuchmodel' (not a file and not in the catalog)" "--lang en: English under zh_CN"

done_testing
