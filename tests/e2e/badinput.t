#!/bin/sh
# Bad input to every command: one "gpuwise: ..." line (plus the usage hint for
# usage errors), the documented exit status, nothing on stdout.
. "$(dirname "$0")/lib.sh"

# bad RC ERE ARGS...: exit RC, stderr starts with ERE, stdout empty
bad() {
	_want=$1 _re=$2
	shift 2
	run_gw "$@"
	is "$rc" "$_want" "gpuwise $* exits $_want"
	like "$(printf '%s\n' "$err" | head -1)" "^gpuwise: $_re" "gpuwise $*: says why"
	is "$out" "" "gpuwise $*: nothing on stdout"
}

# a missing option value is named as such, not as an unknown option
bad 2 "option '--budget' needs a value" cards llama3.1:8b --budget
bad 2 "option '--gpu' needs a value" cost --gpu
bad 2 "option '--python' needs a value" doctor --python
bad 2 "option '--watch' needs a value" status --watch
bad 2 "option '--max-restarts' needs a value" run --max-restarts

# explain: getopt's own message never shows; options after the text are options
bad 2 "unknown option '--bogus'" explain --bogus
unlike "$err" "unrecognized" "explain --bogus: no getopt message"
run_gw explain --no-probe "CUDA error: out of memory" --json
is "$rc" 0 "explain TEXT --json exits 0"
printf '%s\n' "$out" | python3 -m json.tool >/dev/null
ok $? "explain TEXT --json prints JSON"
bad 2 "'-' \(standard input\) must be the only argument" explain - extra
# a path that does not exist is not a message; binary data is not a log
bad 1 "cannot read '/nonexistent/train.log': No such file or directory" explain /nonexistent/train.log
printf '\177ELF\2\1\1\0\0\0\0\0\0\0\0\0\3\0>\0\1\0\0\0' > "$TMP/bin"
bad 1 "cannot read '$TMP/bin': binary data" explain "$TMP/bin"
# a stray NUL in a log does not hide the message after it
printf 'noise\0\0RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB\n' > "$TMP/nul.log"
run_gw explain --no-probe --json "$TMP/nul.log"
is "$rc" 0 "explain: a log with NUL bytes is still read"
like "$out" '"cuda-oom"' "and the message after the NULs matches"

# empty strings are not a default
bad 2 "the model name is empty" plan "" --gpu rtx-4090
bad 2 "the model name is empty" cards ""
bad 2 "invalid --quant ''" plan llama3.1:8b --gpu rtx-4090 --quant ""
bad 2 "invalid --quant ''" cards llama3.1:8b --quant ""
bad 2 "invalid --vendor ''" cards llama3.1:8b --vendor ""
bad 2 "no GPU of vendor 'bogus' in the catalog" cards llama3.1:8b --vendor bogus

# --gpu NxID: a count out of range and an empty name are said as such
bad 2 "invalid count in --gpu '0x3090' \(NxID, N from 1 to 16\)" plan llama3.1:8b --gpu 0x3090
bad 2 "invalid count in --gpu '17x3090'" plan llama3.1:8b --gpu 17x3090
bad 2 "invalid --gpu '2x' \(an empty GPU name\)" plan llama3.1:8b --gpu 2x
bad 2 "invalid --gpu 'rtx-4090,' \(an empty GPU name\)" plan llama3.1:8b --gpu rtx-4090,
bad 2 "invalid --gpu '' \(an empty GPU name\)" plan llama3.1:8b --gpu ""

# doctor --python DIR: a directory must be an environment (bin/python or bin/python3)
mkdir -p "$TMP/notenv"
bad 2 "cannot use --python '$TMP/notenv': not an executable or environment directory" doctor --python "$TMP/notenv"

# cards: plan's --gpu is not taken for an abbreviation of --gpus
bad 2 "--gpu is not a cards option" cards llama3.1:8b --gpu rtx-4090
bad 2 "--vram is not a cards option" cards llama3.1:8b --vram=8G

# numbers: no hex, no leading space (strtod would take both)
bad 2 "invalid --price '0x10'" cost --gpu rtx-4090 --price 0x10
bad 2 "invalid --budget ' 500'" cards llama3.1:8b --budget " 500"

# config.json: impossible head counts are read errors, not guesses
mkdir -p "$TMP/kv0" "$TMP/odd"
printf '{"model_type":"llama","hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":0,"intermediate_size":11008,"vocab_size":32000}' > "$TMP/kv0/config.json"
printf '{"model_type":"llama","hidden_size":4097,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":7,"intermediate_size":11008,"vocab_size":32000}' > "$TMP/odd/config.json"
bad 1 "cannot read '$TMP/kv0/config.json': 32 attention heads cannot be shared by 0 key-value heads" plan "$TMP/kv0/config.json" --vram 24G
bad 1 "cannot read '$TMP/odd/config.json': 32 attention heads cannot be shared by 7 key-value heads" plan "$TMP/odd/config.json" --vram 24G

# an incomplete model description is a usage error
bad 2 "a model given by numbers needs at least --layers and --hidden" plan --params 13b --gpu rtx-4090

# run: a sampling interval has an upper bound; --oom-halve takes a variable name
bad 2 "--interval must be from 100ms to 24h, not '99999999999h'" run --interval 99999999999h -- true
bad 2 "--oom-halve needs a variable name, not 'A B'" run --oom-halve "A B" -- true
bad 2 "--oom-halve needs a variable name, not '1X'" run --oom-halve 1X -- true

# unknown command: the house style (lowercase, no full stop) and the usage hint
run_gw stauts
is "$rc" 2 "an unknown command exits 2"
is "$(printf '%s\n' "$err" | head -2)" "gpuwise: 'stauts' is not a gpuwise command
try 'gpuwise help'" "an unknown command: one line and the hint"

bad 2 "unexpected argument 'extra'" --version extra

# a broken --data-dir is a runtime error in every command, not an unknown GPU or "none fits"
mkdir -p "$TMP/data"
printf 'id\tname\n' > "$TMP/data/gpus.tsv"
bad 1 "cannot open data directory '/nonexistent/data'" --data-dir /nonexistent/data plan llama3.1:8b --gpu rtx-4090
bad 1 "table 'gpus': no 'source' column" --data-dir "$TMP/data" plan llama3.1:8b --gpu rtx-4090
bad 1 "table 'gpus': no 'source' column" --data-dir "$TMP/data" cards llama3.1:8b

# run: a --log that fills up is reported, and a successful job then exits 1
if [ -w /dev/full ]; then
	run_gw run --no-gpu --log /dev/full -- true
	is "$rc" 1 "run --log /dev/full exits 1"
	like "$err" "^gpuwise: cannot write '/dev/full'" "says the log could not be written"
else
	skip "no writable /dev/full"
	skip "no writable /dev/full"
fi

done_testing
