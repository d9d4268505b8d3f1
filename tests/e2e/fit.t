#!/bin/sh
# gpuwise fit (issue 32): every catalog and installed model ranked for the
# GPUs and RAM given; each row is what `plan MODEL --quant Q` says on the
# same hardware; filters; bad input; an installed model joins the ranking.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/docs-lib.sh"
export HOME="$TMP/home" OLLAMA_MODELS="$TMP/ollama" HF_HUB_CACHE="$TMP/hf"
mkdir -p "$HOME"

run_gw fit --gpu 4060-laptop --ram 16G --json
is "$rc" 0 "fit --gpu 4060-laptop --ram 16G: exit 0"
jcheck fit json-fit.md
printf '%s' "$out" > "$TMP/fit.json"
n=$(jget 'd["models_run"]' < "$TMP/fit.json")
[ "$n" -ge 10 ]; ok $? "at least 10 models run on a 4060 laptop with 16 GiB RAM ($n)"
is "$(jget 'all(r["decode_tok_s"] >= 5 for r in d["rows"])' < "$TMP/fit.json")" True "every row decodes at 5 tok/s or faster (the default --min-tps)"
is "$(jget 'all(d["rows"][i]["rank"] == i + 1 for i in range(len(d["rows"])))' < "$TMP/fit.json")" True "ranks 1..N"
is "$(jget 'all(r["verdict"] in ("fits", "offload") for r in d["rows"])' < "$TMP/fit.json")" True "only models that run"

# the top entries are what plan says for each, on the same hardware
for i in 0 1 2 3 4; do
	id=$(jget "d['rows'][$i]['model']" < "$TMP/fit.json")
	q=$(jget "d['rows'][$i]['quant'].lower()" < "$TMP/fit.json")
	run_gw plan "$id" --quant "$q" --gpu 4060-laptop --ram 16G --json
	for k in verdict gpu_layers model_bytes decode_tok_s ctx; do
		is "$(printf '%s' "$out" | jget "d['$k']")" "$(jget "d['rows'][$i]['$k']" < "$TMP/fit.json")" "#$((i + 1)) $id $q: $k as plan says"
	done
done

# a smaller machine runs fewer; a bare --vram GPU has no speed (kept, speed null); --min-tps and --kind filter
run_gw fit --vram 4G --ram 8G --json
is "$rc" 0 "fit --vram 4G --ram 8G: exit 0"
is "$(printf '%s' "$out" | jget 'all(r["decode_tok_s"] is None for r in d["rows"])')" True "a bare --vram GPU: decode speed unknown (null)"
[ "$(printf '%s' "$out" | jget 'd["models_run"]')" -lt "$n" ]; ok $? "a 4 GiB GPU runs fewer models than the 4060 laptop"
run_gw fit --gpu 4060-laptop --ram 16G --min-tps 30 --json
is "$(printf '%s' "$out" | jget 'all(r["decode_tok_s"] >= 30 for r in d["rows"]) and len(d["rows"]) > 0')" True "--min-tps 30: every row at 30 tok/s or more"
run_gw fit --gpu 4060-laptop --ram 16G --kind code --json
is "$(printf '%s' "$out" | jget 'all("code" in r["uses"] for r in d["rows"])')" True "--kind code: code models only"
run_gw fit --gpu 4060-laptop --ram 16G --ctx 32k --json
is "$(printf '%s' "$out" | jget 'd["ctx"]')" 32768 "--ctx 32k planned"
[ "$(printf '%s' "$out" | jget 'd["models_run"]')" -le "$n" ]; ok $? "--ctx 32k runs no more models than 4096"
run_gw fit --gpu 4060-laptop --ram 16G
like "$out" "^What runs on GeForce RTX 4060 Laptop GPU \\(8.00 GiB\\) \\+ 16.00 GiB host RAM: [0-9]+ of [0-9]+ models" "text: the hardware and the count"

# an installed model is ranked from its file
if exp=$(python3 "$GW_TOP/tests/tools/gguf_py_write.py" "$TMP/tiny.gguf" qwen3 2>&1); then
	mkdir -p "$HOME/.lmstudio/models/pub/tiny-GGUF"
	mv "$TMP/tiny.gguf" "$HOME/.lmstudio/models/pub/tiny-GGUF/tiny-Q8_0.gguf"
	run_gw fit --gpu 4060-laptop --ram 16G --installed --json
	is "$rc" 0 "fit --installed: exit 0"
	is "$(printf '%s' "$out" | jget '[r["model"] + " " + r["store"] for r in d["rows"]]')" '["pub/tiny-GGUF lmstudio"]' "the LM Studio model, only"
	is "$(printf '%s' "$out" | jget 'd["rows"][0]["model_bytes"]')" "$(printf '%s' "$exp" | jget 'd["total_bytes"]')" "planned from its file's own bytes"
else
	skip "GGUF writer unavailable: $exp"; skip "GGUF writer unavailable"; skip "GGUF writer unavailable"
fi

# bad input: one line, exit 2; nothing runs: exit 4
run_gw fit --kind poetry
is "$rc" 2 "--kind poetry: exit 2"
like "$err" "invalid --kind 'poetry'" "--kind poetry named"
run_gw fit --gpu no-such-gpu
is "$rc" 2 "unknown GPU: exit 2"
run_gw fit --vram 256M --ram 256M --min-tps 1000
is "$rc" 4 "nothing runs: exit 4"
run_gw fit --help
is "$rc" 0 "--help: exit 0"
like "$out" "--min-tps" "--help names --min-tps"
done_testing
