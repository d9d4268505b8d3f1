#!/bin/sh
# plan ORG/NAME, ORG/NAME-GGUF:QUANT, --file and NAME:TAG against a fake
# Hugging Face Hub and Ollama registry on 127.0.0.1 (tests/e2e/fakehub.py,
# which counts the bytes it sends): exact against planning the same files
# locally, headers only (under 2 MiB of an 11 GB model), a second run from
# the cache with no request, one clear line and a documented exit status
# for 401, 404, a timeout, a truncated reply, a redirect loop, a server that
# ignores Range and a header that lies about its length; offline answers
# from the catalog with a note and makes no request.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/docs-lib.sh"

if ! command -v python3 >/dev/null; then
	skip "python3 is needed for the fake Hub"
	done_testing
	exit 0
fi
ROOT=$TMP/root
shape=$(python3 "$GW_TOP/tests/e2e/mkmodels.py" "$ROOT")
python3 "$GW_TOP/tests/e2e/fakehub.py" "$ROOT" "$TMP/port" "$TMP/log" &
srv=$!
trap 'kill $srv 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 1 100); do [ -s "$TMP/port" ] && break; sleep 0.1; done
port=$(cat "$TMP/port" 2>/dev/null)
[ -n "$port" ]; ok $? "the fake Hub listens (port $port)"
unset GPUWISE_OFFLINE HF_HUB_OFFLINE HF_TOKEN HUGGING_FACE_HUB_TOKEN HF_HOME HF_TOKEN_PATH GPUWISE_CURL_LIB
export HOME="$TMP/home"   # no token file of the user's
export HF_ENDPOINT="http://127.0.0.1:$port" GPUWISE_OLLAMA_REGISTRY="http://127.0.0.1:$port/"
export GPUWISE_CACHE_DIR="$TMP/cache" GPUWISE_NET_TIMEOUT=2
# no proxy between us and 127.0.0.1
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy

sent() { awk '{s += $4} END {print s + 0}' "$TMP/log"; }
hits() { [ -f "$TMP/log" ] && wc -l < "$TMP/log" | tr -d ' ' || echo 0; }
fresh() { : > "$TMP/log"; }
j() { printf '%s' "$out" | jget "$1"; }

# ---- safetensors: config.json + each shard's header ------------------------
run_gw plan "$ROOT/hf/acme/Big" --vram 24G --json
local_json=$out
fresh
run_gw plan acme/Big --vram 24G --json
is "$rc" 0 "plan acme/Big: exit 0"
is "$(j 'd["source"]["store"]')" hub "  ... read from the Hub"
is "$(j 'd["model_source"]')" safetensors "  ... as safetensors"
for k in model_bytes embd_bytes; do
	want=$(printf '%s' "$local_json" | jget "d[\"$k\"]")
	is "$(j "d[\"$k\"]")" "$want" "  ... $k equal to planning the same files locally ($want)"
done
want=$(printf '%s' "$local_json" | jget 'd["breakdown"]["weights_bytes"]')
is "$(j 'd["breakdown"]["weights_bytes"]')" "$want" "  ... weights on the GPU equal too"
size=$(j 'd["model_bytes"]')
[ "$size" -gt 10000000000 ]; ok $? "  ... of a model of $size bytes (over 10 GB)"
b=$(sent)
[ "$b" -lt 2097152 ]; ok $? "  ... the server sent $b bytes (under 2 MiB)"
is "$(j 'd["source"]["read_bytes"]')" "$b" "  ... and gpuwise says so"
unlike "$(cat "$TMP/log")" ' 500 ' "  ... never a whole large file asked for"
like "$(grep '/cdn/' "$TMP/log")" 'bytes=0-' "  ... the shards by Range, through the CDN's redirect"
fresh
run_gw plan acme/Big --vram 24G --json
is "$rc" 0 "second run: exit 0"
is "$(hits)" 0 "  ... no request (the cache)"
is "$(j 'd["source"]["requests"]')/$(j 'd["source"]["read_bytes"]')" 0/0 "  ... and it says it read the cache"
run_gw plan acme/Big --vram 8G --json
jcheck plan-hub json-plan.md
is "$(j 'd["model_bytes"]')" "$size" "  ... the same model"
run_gw plan acme/Big --vram 24G
like "$out" "^from the Hugging Face Hub: acme/Big@[0-9a-f]{12} \\(config.json \\+ 2 safetensors headers, from the cache\\)" \
	"text: the source named"

# ---- GGUF: the header grown by Range until the tensor table is read -----------
run_gw plan "$ROOT/hf/acme/Big-GGUF/Big-F16.gguf" --vram 24G --json
local_json=$out
fresh
run_gw plan acme/Big-GGUF:F16 --vram 24G --json
is "$rc" 0 "plan acme/Big-GGUF:F16: exit 0"
is "$(j 'd["model_source"]')" gguf "  ... a GGUF"
for k in model_bytes embd_bytes; do
	want=$(printf '%s' "$local_json" | jget "d[\"$k\"]")
	is "$(j "d[\"$k\"]")" "$want" "  ... $k equal to planning the file locally ($want)"
done
is "$(j 'd["quant"]')" F16 "  ... its own type"
b=$(sent)
gsize=$(printf '%s' "$shape" | jget 'd["gguf_size"]')
[ "$b" -lt 2097152 ]; ok $? "  ... the server sent $b bytes of a $gsize-byte file (under 2 MiB)"
n=$(grep -c '/cdn/acme/Big-GGUF/Big-F16.gguf 206' "$TMP/log")
[ "$n" -ge 2 ]; ok $? "  ... in $n growing ranges (the header is larger than the first read)"
unlike "$(grep '/cdn/' "$TMP/log")" ' - *$' "  ... every read of the file has a Range"
fresh
run_gw plan acme/Big-GGUF:F16 --vram 24G --json
is "$(hits)/$rc" 0/0 "second run: no request, exit 0"
run_gw plan acme/Big-GGUF --file Big-Q8_0.gguf --vram 24G --json
is "$rc/$(j 'd["quant"]')" 0/Q8_0 "--file Big-Q8_0.gguf: that file (Q8_0)"
run_gw plan acme/Big-GGUF --vram 24G
is "$rc" 2 "two GGUF files and no quant: exit 2"
like "$err" "has 2 GGUF files \\(Big-F16.gguf, Big-Q8_0.gguf\\): name one with acme/Big-GGUF:QUANT or --file" \
	"  ... naming them (the mmproj file is not a model)"
run_gw plan llama3.1:8b --file x.gguf --vram 24G
is "$rc" 2 "--file with an Ollama name: usage error"

# ---- Ollama's registry: manifest, then the model blob's header ----------------
fresh
run_gw plan big:11b --vram 24G --json
is "$rc" 0 "plan big:11b (not pulled): exit 0"
is "$(j 'd["source"]["store"]')" ollama-registry "  ... from the registry"
want=$(printf '%s' "$local_json" | jget 'd["model_bytes"]')
is "$(j 'd["model_bytes"]')" "$want" "  ... the blob's tensor bytes, exact"
is "$(j 'd["ctx"]')" 16384 "  ... at the num_ctx of its params layer"
like "$(head -1 "$TMP/log")" '^GET /v2/library/big/manifests/11b 200' "  ... the manifest first"
b=$(sent)
[ "$b" -lt 2097152 ]; ok $? "  ... $b bytes sent (under 2 MiB)"
run_gw plan big:11b --vram 8G --json
jcheck plan-registry json-plan.md
fresh
run_gw plan big:11b --vram 24G
is "$(hits)/$rc" 0/0 "second run: no request"
like "$out" "from Ollama's registry: big:11b, sha256:abababababab" "  ... the source named"
run_gw plan big:11b --vram 24G --ctx 4096 --json
is "$(j 'd["ctx"]')" 4096 "--ctx wins over num_ctx"

# ---- errors: one line each, a documented status ----------------------------------
one_line() { # one_line RC WANT_RC ERE NAME
	is "$rc" "$2" "$4: exit $2"
	like "$err" "^gpuwise: $3" "  ... $4: the reason"
	is "$(printf '%s\n' "$err" | wc -l | tr -d ' ')" 1 "  ... one line on stderr"
	is "$out" "" "  ... nothing on stdout"
}
run_gw plan gated/Big-GGUF:F16 --vram 24G
one_line "$rc" 6 "'gated/Big-GGUF' is gated: accept the licence on the model page \\(http://127.0.0.1:$port/gated/Big-GGUF\\) and set HF_TOKEN" "gated (401)"
fresh
HF_TOKEN=good-token run_gw plan gated/Big-GGUF:F16 --vram 24G
is "$rc" 0 "gated, with HF_TOKEN: exit 0"
unlike "$(cat "$TMP/log")" " 400 " "  ... the token went to the Hub, never to the CDN (another host)"
n=$(grep -c '^GET /cdn/gated/' "$TMP/log")
m=$(grep -c '/resolve/' "$TMP/log")
is "$m/$((n > 1))" "1/1" "  ... the header's later ranges straight to the CDN: one resolve, $n CDN reads"
mkdir -p "$HOME/.cache/huggingface" && echo good-token > "$HOME/.cache/huggingface/token"
rm -rf "$GPUWISE_CACHE_DIR/hub/hf/gated--Big-GGUF"
run_gw plan gated/Big-GGUF:F16 --vram 24G
is "$rc" 0 "gated, with huggingface-cli login's token file: exit 0"
rm -f "$HOME/.cache/huggingface/token"
run_gw plan acme/Nope --vram 24G
one_line "$rc" 5 "no repository 'acme/Nope'" "no such repository (the Hub's 401 RepoNotFound)"
run_gw plan acme/Big@v9 --vram 24G
one_line "$rc" 5 "no revision 'v9' of 'acme/Big'" "no such revision (404)"
run_gw plan acme/Big-GGUF --file Nope.gguf --vram 24G
one_line "$rc" 5 "no file 'Nope.gguf' in 'acme/Big-GGUF'" "no such file"
run_gw plan nope:1b --vram 24G
one_line "$rc" 5 "Ollama's registry has no 'library/nope'" "no such Ollama model (404)"
# a name the registry or the Hub does not have (or a proxy answers 404 for) that the catalog knows:
# the catalog answers and says why the network did not
run_gw plan mixtral:8x22b --vram 200G
is "$rc" 0 "a catalog name the registry answers 404 for: the catalog answers (exit 0)"
like "$out" "from the catalog: Ollama's registry has no 'library/mixtral'" "  ... and says the registry had none"
run_gw plan mistralai/Mixtral-8x22B-v0.1 --vram 200G
is "$rc" 0 "a catalog name the Hub has no repository for: the catalog answers (exit 0)"
like "$out" "from the catalog: no repository 'mistralai/Mixtral-8x22B-v0.1'" "  ... and says the Hub had none"
run_gw plan slow/Big-GGUF:F16 --vram 24G
one_line "$rc" 7 "cannot read 'slow/Big-GGUF/Big-F16.gguf': timed out after 2 s" "timeout"
run_gw plan trunc/Big-GGUF:F16 --vram 24G
one_line "$rc" 7 "cannot read 'trunc/Big-GGUF/Big-F16.gguf': truncated response" "truncated response"
run_gw plan loop/Big-GGUF:F16 --vram 24G
one_line "$rc" 7 "cannot read 'loop/Big-GGUF/Big-F16.gguf': redirect loop" "redirect loop"
run_gw plan norange/Big-GGUF:F16 --vram 24G
one_line "$rc" 7 "cannot read 'norange/Big-GGUF/Big-F16.gguf': the server ignored the byte range" "a server that ignores Range"
fresh
run_gw plan acme/Liar-GGUF --vram 24G
one_line "$rc" 1 "cannot read 'acme/Liar-GGUF/Liar-F16.gguf': the header runs past 64 MiB" "a header that lies about its length"
b=$(sent)
[ "$b" -lt 4194304 ]; ok $? "  ... refused after $b bytes, not 100 MiB"
ls "$GPUWISE_CACHE_DIR/hub/hf/acme--Liar-GGUF"/*/*.head >/dev/null 2>&1
ok $(( ! $? )) "  ... and nothing of it cached"

# ---- offline: no request; the catalog answers what it knows, with a note -----------
fresh
HF_HUB_OFFLINE=1 run_gw plan meta-llama/Llama-3.1-8B --vram 24G
is "$rc" 0 "HF_HUB_OFFLINE=1, a catalog model: exit 0"
like "$out" "^from the catalog: offline \\(HF_HUB_OFFLINE=1\\)" "  ... the catalog's answer, with a note"
is "$(hits)" 0 "  ... no request"
HF_HUB_OFFLINE=1 run_gw plan meta-llama/Llama-3.1-8B --vram 24G --json
is "$(j 'd["source"]["store"]')" catalog "  ... JSON: source.store catalog"
like "$(j 'd["source"]["note"]')" "HF_HUB_OFFLINE=1" "  ... and why, in source.note"
HF_HUB_OFFLINE=1 run_gw plan meta-llama/Llama-3.1-8B --vram 4G --json
jcheck plan-offline json-plan.md
HF_HUB_OFFLINE=1 run_gw plan acme/Other --vram 24G
one_line "$rc" 1 "unknown model 'acme/Other' .*; offline \\(HF_HUB_OFFLINE=1\\)" "HF_HUB_OFFLINE=1, a model neither cached nor in the catalog"
GPUWISE_OFFLINE=1 run_gw plan qwen3:1b --vram 24G
one_line "$rc" 2 "unknown model 'qwen3:1b' \\(did you mean '[^']*'\\?\\); offline \\(GPUWISE_OFFLINE=1\\)" "GPUWISE_OFFLINE=1, an Ollama name the catalog lacks: its 'did you mean'"
HF_ENDPOINT=http://127.0.0.1:1 run_gw plan acme/Other --vram 24G
one_line "$rc" 7 "cannot reach 'http://127.0.0.1:1/api/models/acme/Other/revision/main'" "no network, a model the catalog lacks"
HF_HUB_OFFLINE=1 run_gw plan acme/Big --vram 24G --json
is "$rc/$(j 'd["source"]["requests"]')" 0/0 "HF_HUB_OFFLINE=1, a model in the cache: read from it"
is "$(hits)" 0 "  ... still no request"
GPUWISE_OFFLINE=1 run_gw plan llama3.1:8b --vram 24G
is "$rc" 0 "GPUWISE_OFFLINE=1: exit 0"
like "$out" "^from the catalog: offline \\(GPUWISE_OFFLINE=1\\)" "  ... Ollama names answered by the catalog too"
is "$(hits)" 0 "  ... no request"
HF_ENDPOINT=http://127.0.0.1:1 run_gw plan meta-llama/Llama-3.1-8B --vram 24G
is "$rc" 0 "no network (connection refused): exit 0"
like "$out" "from the catalog: cannot reach 'http://127.0.0.1:1/api/models/meta-llama/Llama-3.1-8B/revision/main'" \
	"  ... the catalog, saying why"
fresh
http_proxy=http://127.0.0.1:1 run_gw plan acme/Proxied --vram 24G
one_line "$rc" 7 "cannot reach 'http://127.0.0.1:$port/api/models/acme/Proxied/revision/main': .*" "http_proxy honoured (a proxy that refuses)"
is "$(hits)" 0 "  ... nothing reached the server around the proxy"
GPUWISE_CURL_LIB=none run_gw plan qwen3:14b --vram 24G
is "$rc" 0 "no libcurl: exit 0"
like "$out" "^from the catalog: no network \\(GPUWISE_CURL_LIB=none\\)" "  ... the catalog, saying why"
GPUWISE_CURL_LIB=none run_gw plan acme/Other --vram 24G
one_line "$rc" 1 "unknown model 'acme/Other' .*; no network \\(GPUWISE_CURL_LIB=none\\)" "no libcurl, a model the catalog lacks"

# ---- progress on a terminal only, when a read takes over a second -----------------
if command -v script >/dev/null; then
	script -qec "$GW plan slowok/Big-GGUF:F16 --vram 24G >/dev/null" /dev/null > "$TMP/tty" 2>&1
	like "$(tr '\r' '\n' < "$TMP/tty")" "^reading slowok/Big-GGUF/Big-F16.gguf: " "a slow read on a terminal: progress on stderr"
	rm -rf "$GPUWISE_CACHE_DIR/hub/hf/slowok--Big-GGUF"
	run_gw plan slowok/Big-GGUF:F16 --vram 24G
	is "$rc" 0 "  ... not a terminal: exit 0"
	is "$err" "" "  ... and no progress"
else
	skip "no script(1) for a terminal"
	skip "no script(1)"
	skip "no script(1)"
fi
done_testing
