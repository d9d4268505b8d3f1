#!/bin/sh
# explain --batch: one JSON line per message, in order, with the same
# answers as one explain per message; bad records are reported, not fatal.
. "$(dirname "$0")/lib.sh"
printf '%s\n' '"RuntimeError: CUDA error: no kernel image is available for execution on the device"' \
	'' \
	'{"message": "Traceback (most recent call last):\n  File \"x.py\", line 1\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"}' \
	'not json' \
	'{"message": 7}' \
	'"   "' \
	'"hello world, nothing here"' > "$TMP/in"
"$GW" explain --batch "$TMP/in" --json --no-probe > "$TMP/out" 2> "$TMP/err"
is "$?" 1 "a bad record makes the exit status 1"
is "$(wc -l < "$TMP/out" | tr -d ' ')" 6 "one output line per non-blank input line"
col() { /usr/bin/python3 -c 'import json,sys
for l in sys.stdin:
    o = json.loads(l)
    print(o["line"], o["matches"][0]["id"] if o.get("matches") else ("-" if "matches" in o else "error:" + o["error"]))' < "$TMP/out"; }
got=$(col | tr '\n' ';')
is "$got" "1 arch-unsupported;3 cuda-oom;4 error:not JSON;5 error:not a JSON string or an object with a string \"message\";6 error:the message is empty;7 -;" \
	"each line answered in order: multi-line message, bad JSON, bad type, empty, no match"
# the same answer as explain on the message alone
"$GW" explain --json --no-probe "RuntimeError: CUDA error: no kernel image is available for execution on the device" > "$TMP/one"
one=$(/usr/bin/python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["matches"], sort_keys=True))' "$TMP/one")
first=$(head -1 "$TMP/out" | /usr/bin/python3 -c 'import json,sys; print(json.dumps(json.loads(sys.stdin.read())["matches"], sort_keys=True))')
is "$first" "$one" "a batch record gets what explain gives the message alone"
# standard input, all good: exit 0
printf '"%s"\n' 'CUDA error: out of memory' | "$GW" explain --batch - --no-probe > "$TMP/o2"
is "$?" 0 "every record answered: exit 0"
like "$(cat "$TMP/o2")" '^\{"line":1,"matches":\[\{"id":"cuda-oom"' "standard input with -"
# exclude_source leaves a thread out of the corpus lookup
# (the first row of the corpus: its own thread is its nearest example)
src=$(awk -F'\t' '!/^#/ && $1 != "diagnosis" { print $5; exit }' "$GW_TOP/data/explain-corpus-a.tsv")
msg=$(awk -F'\t' '!/^#/ && $1 != "diagnosis" { print $4; exit }' "$GW_TOP/data/explain-corpus-a.tsv")
if [ -n "$src" ]; then
	/usr/bin/python3 -c 'import json,sys; print(json.dumps({"message": sys.argv[1]})); print(json.dumps({"message": sys.argv[1], "exclude_source": sys.argv[2]}))' "$msg" "$src" |
		"$GW" explain --batch - --no-probe > "$TMP/o3"
	ex=$(/usr/bin/python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)["matches"]
    print(m[0]["example"]["source"] if m and m[0].get("example") else "-")' < "$TMP/o3")
	is "$(echo "$ex" | head -1)" "$src" "the corpus answers with the row's own thread"
	isnt "$(echo "$ex" | sed -n 2p)" "$src" "exclude_source: the example is never the left-out thread"
else
	skip "no corpus"; skip "no corpus"
fi
# usage and input errors
run_gw explain --batch
is "$rc" 2 "--batch without a file is a usage error"
run_gw explain --batch "$TMP/in" "CUDA error"
is "$rc" 2 "--batch and a message together is a usage error"
run_gw explain --batch "$TMP/nonexistent"
is "$rc" 1 "an unreadable batch file: exit 1"
like "$err" "cannot read" "one clear line"
: > "$TMP/empty"
run_gw explain --batch "$TMP/empty"
is "$rc:$out" "0:" "an empty file: nothing to answer, exit 0"
done_testing
