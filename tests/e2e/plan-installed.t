#!/bin/sh
# Models by the name the user already uses (issue 32): a fixture Ollama
# store, Hugging Face cache and LM Studio folder, written here.  `plan
# NAME:TAG` plans the blob's own tensor bytes, takes the Modelfile's
# num_ctx and names the store; broken stores give one clear line and exit 1;
# `list models --installed` lists each with its exact size.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/docs-lib.sh"

H=$(printf '1%.0s' $(seq 64)); P=$(printf '2%.0s' $(seq 64)); M=$(printf '9%.0s' $(seq 64))
export HOME="$TMP/home" OLLAMA_MODELS="$TMP/ollama" HF_HUB_CACHE="$TMP/hf"
unset HF_HOME XDG_CACHE_HOME
mkdir -p "$HOME" "$OLLAMA_MODELS/blobs" "$HF_HUB_CACHE"

manifest() { # manifest REL MODEL_HEX MODEL_SIZE
	mkdir -p "$OLLAMA_MODELS/manifests/$(dirname "$1")"
	printf '{"schemaVersion":2,"config":{"digest":"sha256:%s","size":1},"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:%s","size":%s},{"mediaType":"application/vnd.ollama.image.params","digest":"sha256:%s","size":%s}]}' \
		"$P" "$2" "$3" "$P" "$(stat -c %s "$OLLAMA_MODELS/blobs/sha256-$P")" > "$OLLAMA_MODELS/manifests/$1"
}

if ! exp=$(python3 "$GW_TOP/tests/tools/gguf_py_write.py" "$OLLAMA_MODELS/blobs/sha256-$H" qwen3 2>&1); then
	skip "GGUF writer unavailable: $exp"
	done_testing
	exit 0
fi
want=$(printf '%s' "$exp" | jget 'd["total_bytes"]')
size=$(stat -c %s "$OLLAMA_MODELS/blobs/sha256-$H")
printf '{"num_ctx": 2048, "stop": ["<end>"]}' > "$OLLAMA_MODELS/blobs/sha256-$P"
manifest registry.ollama.ai/library/tiny/q8 "$H" "$size"

# ---- Ollama's store ---------------------------------------------------------
run_gw plan tiny:q8 --vram 8G --json
is "$rc" 0 "plan tiny:q8 from Ollama's store: exit 0"
is "$(printf '%s' "$out" | jget 'd["model_bytes"]')" "$want" "weights = the blob's tensor bytes ($want)"
is "$(printf '%s' "$out" | jget 'd["weights_exact"]')" True "weights exact"
is "$(printf '%s' "$out" | jget 'd["ctx"]')" 2048 "the Modelfile's num_ctx 2048 is the context planned"
is "$(printf '%s' "$out" | jget 'd["source"]["store"]')" ollama "source.store = ollama"
is "$(printf '%s' "$out" | jget 'd["source"]["num_ctx"]')" 2048 "source.num_ctx = 2048"
is "$(printf '%s' "$out" | jget 'd["source"]["file_bytes"]')" "$size" "source.file_bytes = the blob's size"
is "$(printf '%s' "$out" | jget 'd["model"]')" tiny:q8 "model named as the user named it"
run_gw plan tiny:q8 --vram 40M --json
jcheck plan-ollama json-plan.md
run_gw plan tiny:q8 --vram 8G --ctx 1024 --json
is "$(printf '%s' "$out" | jget 'd["ctx"]')" 1024 "--ctx overrides num_ctx"
run_gw plan tiny:q8 --vram 8G
like "$out" "from Ollama's store: tiny:q8 \\($OLLAMA_MODELS/blobs/sha256-1111" "text names the store and the blob"
like "$out" "num_ctx 2048" "text names num_ctx"

# ---- broken stores: one line, exit 1 ------------------------------------------
manifest registry.ollama.ai/library/gone/1b "$M" 100
run_gw plan gone:1b --vram 8G
is "$rc" 1 "manifest naming a missing blob: exit 1"
like "$err" "^gpuwise: Ollama's manifest of 'gone:1b' names blob '.*sha256-9999.*', which is missing" "missing blob named"
is "$(printf '%s\n' "$err" | wc -l)" 1 "missing blob: one line"
head -c $((size - 5000)) "$OLLAMA_MODELS/blobs/sha256-$H" > "$OLLAMA_MODELS/blobs/sha256-$M"
manifest registry.ollama.ai/library/liar/1b "$M" $((size - 5000))
run_gw plan liar:1b --vram 8G
is "$rc" 1 "a GGUF blob that lies about its length: exit 1"
like "$err" "truncated" "the lie named"
is "$(printf '%s\n' "$err" | wc -l)" 1 "lying GGUF: one line"

# ---- the Hugging Face cache -------------------------------------------------------
snap="$HF_HUB_CACHE/models--org--tiny-GGUF/snapshots/abc123"
mkdir -p "$snap" "$HF_HUB_CACHE/models--org--tiny-GGUF/refs" "$HF_HUB_CACHE/models--org--tiny-GGUF/blobs"
cp "$OLLAMA_MODELS/blobs/sha256-$H" "$HF_HUB_CACHE/models--org--tiny-GGUF/blobs/b1"
ln -s ../../blobs/b1 "$snap/tiny-Q8_0.gguf"
printf abc123 > "$HF_HUB_CACHE/models--org--tiny-GGUF/refs/main"
run_gw plan org/tiny-GGUF --vram 8G --json
is "$rc" 0 "plan ORG/NAME from the HF cache: exit 0"
is "$(printf '%s' "$out" | jget 'd["model_bytes"]')" "$want" "HF cache: weights exact"
is "$(printf '%s' "$out" | jget 'd["source"]["store"]')" hf-cache "source.store = hf-cache"
is "$(printf '%s' "$out" | jget 'd["source"]["revision"]')" abc123 "source.revision = refs/main"
mkdir -p "$HF_HUB_CACHE/models--org--stale/refs" "$HF_HUB_CACHE/models--org--stale/snapshots"
printf 'ffff\n' > "$HF_HUB_CACHE/models--org--stale/refs/main"
run_gw plan org/stale --vram 8G
is "$rc" 1 "refs/main pointing nowhere: exit 1"
like "$err" "points to snapshot 'ffff', which is missing" "the missing snapshot named"

# ---- LM Studio ---------------------------------------------------------------------
mkdir -p "$HOME/.lmstudio/models/pub/tiny-GGUF"
cp "$OLLAMA_MODELS/blobs/sha256-$H" "$HOME/.lmstudio/models/pub/tiny-GGUF/tiny-Q8_0.gguf"
run_gw plan pub/tiny-GGUF --vram 8G --json
is "$rc" 0 "plan PUBLISHER/REPO from LM Studio: exit 0"
is "$(printf '%s' "$out" | jget 'd["model_bytes"]')" "$want" "LM Studio: weights exact"
is "$(printf '%s' "$out" | jget 'd["source"]["store"]')" lmstudio "source.store = lmstudio"

# ---- list models --installed ------------------------------------------------------
run_gw list models --installed --json
is "$rc" 0 "list models --installed: exit 0"
is "$(printf '%s' "$out" | jget '[r["size_bytes"] for r in d["rows"] if r["name"] == "tiny:q8"][0]')" "$size" "tiny:q8 with its exact size"
jcheck list-installed "json-list.md#installed-models-list-models-installed"
is "$(printf '%s' "$out" | jget '[r["store"] for r in d["rows"] if r["name"] == "org/tiny-GGUF"][0]')" hf-cache "org/tiny-GGUF listed from the HF cache"
is "$(printf '%s' "$out" | jget '[r["broken"] for r in d["rows"] if r["name"] == "gone:1b"][0]')" True "the broken manifest listed as broken"
run_gw list models --installed
like "$out" "tiny:q8 +ollama +[0-9.]+ MiB +$size " "text: name, store, size, exact bytes"
HOME="$TMP/empty" OLLAMA_MODELS="$TMP/empty" HF_HUB_CACHE="$TMP/empty" run_gw list models --installed
is "$rc" 4 "nothing installed: exit 4"
like "$err" "no installed models found" "nothing installed: said"
done_testing
