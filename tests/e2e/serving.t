#!/bin/sh
# gpuwise plan --parallel N: many users on one server (issue 19, item 6).
# One batched decode step reads the weights once for all sequences plus
# each one's KV cache; per-request and aggregate tok/s as N grows, where
# decode turns compute-bound, the most sequences the KV cache holds, how
# many users get --per-user-tps each; validated on published vLLM figures
# and llama.cpp batched-step figures (tests/validation/serving-throughput.tsv).
. "$(dirname "$0")/lib.sh"

# The must-show: --parallel 8 with vLLM on an RTX 4090 and on an H100.
for gpu in rtx-4090 h100; do
	run_gw plan llama3.1:8b --gpu $gpu --engine vllm --quant bf16 --ctx 2048 --parallel 8 --per-user-tps 20 --json
	is "$rc" 0 "vllm $gpu --parallel 8: exit 0"
	s=$(printf '%s' "$out" | jget 'd["serving"]')
	is "$(printf '%s' "$s" | jget 'd["known"] and d["parallel"] == 8 and d["parallel_fits"]')" True "$gpu: 8 sequences of 2048 fit"
	is "$(printf '%s' "$s" | jget 'abs(d["at_parallel"]["aggregate_tok_s"] - 8 * d["at_parallel"]["per_request_tok_s"]) < 0.2')" True \
		"$gpu: aggregate = 8 x per request"
	is "$(printf '%s' "$s" | jget 'd["curve"][0]["n"] == 1 and d["curve"][3]["n"] == 8')" True "$gpu: the curve has N = 1, 2, 4, 8"
	is "$(printf '%s' "$s" | jget 'all(a["per_request_tok_s"] > b["per_request_tok_s"] and a["aggregate_tok_s"] < b["aggregate_tok_s"] for a, b in zip(d["curve"], d["curve"][1:]))')" True \
		"$gpu: per request falls and aggregate rises with N"
	is "$(printf '%s' "$s" | jget 'd["at_parallel"]["aggregate_tok_s"] > 5 * d["curve"][0]["aggregate_tok_s"]')" True \
		"$gpu: 8 users get over 5x one user's aggregate (weights read once)"
	diag "vllm $gpu llama3.1:8b bf16 ctx 2048 x8: $(printf '%s' "$s" | jget 'd["at_parallel"]["per_request_tok_s"]') tok/s per request, $(printf '%s' "$s" | jget 'd["at_parallel"]["aggregate_tok_s"]') aggregate, KV holds $(printf '%s' "$s" | jget 'd["kv_max_seqs"]'), at 20 tok/s: $(printf '%s' "$s" | jget 'd["users_at_target"]') users"
	# the N = 1 point is the speed model's own single-stream decode
	p1=$(printf '%s' "$s" | jget 'd["curve"][0]["per_request_tok_s"]')
	run_gw plan llama3.1:8b --gpu $gpu --engine vllm --quant bf16 --ctx 2048 --json
	is "$(printf '%s' "$out" | jget "abs(d['decode_tok_s'] / $p1 - 1) < 0.01")" True "$gpu: N=1 is the plan's decode"
done
h=$(printf '%s' "$s" | jget 'd["at_parallel"]["aggregate_tok_s"]')
run_gw plan llama3.1:8b --gpu rtx-4090 --engine vllm --quant bf16 --ctx 2048 --parallel 8 --json
r=$(printf '%s' "$out" | jget 'd["serving"]["at_parallel"]["aggregate_tok_s"]')
is "$(python3 -c "print($h > 2 * $r)")" True "an H100 serves 8 users over twice the 4090's aggregate ($h vs $r)"

# vLLM's KV pool: the sequences it holds are the pool over one sequence's cache.
run_gw plan llama3.1:8b --gpu rtx-4090 --engine vllm --quant bf16 --ctx 4096 --parallel 8 --json
is "$(printf '%s' "$out" | jget 'd["serving"]["kv_max_seqs"] == d["devices"][0]["kv_cache_bytes"] // d["serving"]["step"]["kv_bytes_per_seq"]')" True \
	"vllm: kv_max_seqs = KV pool // one sequence's KV"
is "$(printf '%s' "$out" | jget 'd["serving"]["parallel_fits"]')" False "vllm 4090 bf16: 8 x 4096 do not fit the pool"
run_gw plan llama3.1:8b --gpu rtx-4090 --engine vllm --quant bf16 --ctx 4096 --parallel 8
like "$out" '8 sequences do not fit: the KV cache holds [0-9]+' "text says 8 do not fit"
run_gw plan llama3.1:8b --gpu h100 --engine vllm --quant bf16 --ctx 512 --parallel 300 --json
is "$(printf '%s' "$out" | jget 'd["serving"]["engine_max_seqs"] == 256 and d["serving"]["max_seqs"] == 256 and d["serving"]["kv_max_seqs"] > 256')" True \
	"vllm: at most max_num_seqs 256 at once"

# llama.cpp server slots: the most -np whose KV cache still fits is the limit.
run_gw plan llama3.1:8b --gpu rtx-4090 --ctx 4096 --parallel 8 --per-user-tps 20 --json
is "$rc" 0 "llama.cpp 4090 -np 8: exit 0"
n=$(printf '%s' "$out" | jget 'd["serving"]["kv_max_seqs"]')
u=$(printf '%s' "$out" | jget 'd["serving"]["users_at_target"]')
diag "llama.cpp 4090 Q4_K_M ctx 4096: KV holds $n slots; at 20 tok/s: $u users"
run_gw plan llama3.1:8b --gpu rtx-4090 --ctx 4096 --parallel "$n" --json
is "$(printf '%s' "$out" | jget 'd["verdict"]')" fits "-np $n fits"
run_gw plan llama3.1:8b --gpu rtx-4090 --ctx 4096 --parallel $((n + 1)) --json
isnt "$(printf '%s' "$out" | jget 'd["verdict"]')" fits "-np $((n + 1)) does not fit"
run_gw plan llama3.1:8b --gpu rtx-4090 --ctx 4096 --parallel "$u" --json
is "$(printf '%s' "$out" | jget 'd["serving"]["at_parallel"]["per_request_tok_s"] >= 20')" True "at the users given: >= 20 tok/s each"
if [ "$u" -lt "$n" ]; then
	run_gw plan llama3.1:8b --gpu rtx-4090 --ctx 4096 --parallel $((u + 1)) --json
	is "$(printf '%s' "$out" | jget 'd["serving"]["at_parallel"]["per_request_tok_s"] < 20')" True "one more user: under 20 tok/s"
else
	is "$u" "$n" "users at 20 tok/s: all the KV cache holds"
fi

# Short contexts: the weights are shared, so a large batch turns compute-bound.
run_gw plan llama3.2:1b --gpu rtx-3060 --ctx 256 --parallel 64 --json
c=$(printf '%s' "$out" | jget 'd["serving"]["compute_bound_from"]')
is "$(printf '%s' "$out" | jget 'd["serving"]["compute_bound_from"] is not None')" True "llama3.2:1b on a 3060 at ctx 256: compute-bound from some N ($c)"
run_gw plan llama3.2:1b --gpu rtx-3060 --ctx 256 --parallel "$c" --json
is "$(printf '%s' "$out" | jget 'd["serving"]["at_parallel"]["compute_bound"]')" True "at N=$c: compute-bound"
run_gw plan llama3.2:1b --gpu rtx-3060 --ctx 256 --parallel $((c - 1)) --json
is "$(printf '%s' "$out" | jget 'd["serving"]["at_parallel"]["compute_bound"]')" False "at N=$((c - 1)): memory-bound"

# The text section.
run_gw plan llama3.1:8b --gpu h100 --engine vllm --quant bf16 --ctx 2048 --parallel 8 --per-user-tps 20
like "$out" '^serving 8 sequences of 2048 tokens \(vllm\):' "text: serving header"
like "$out" '^  per request ~[0-9.]+ tok/s, aggregate ~[0-9]+ tok/s \(step [0-9.]+ ms, memory-bound\)' "text: per request and aggregate"
like "$out" '^  at 20 tok/s each: [0-9]+ users at once' "text: users at 20 tok/s"
# Without --parallel or --per-user-tps there is no serving section.
run_gw plan llama3.1:8b --gpu h100 --json
is "$(printf '%s' "$out" | jget 'd["serving"]')" None "serving null without --parallel"
# A CPU server too.
run_gw plan llama3.1:8b --gpu none --ram 64G --threads 16 --host-bw 89.6 --parallel 4 --json
is "$(printf '%s' "$out" | jget 'd["serving"]["known"] and d["serving"]["at_parallel"]["aggregate_tok_s"] > 3 * d["serving"]["curve"][0]["aggregate_tok_s"]')" True \
	"CPU server: 4 slots share one weight read"

# Bad input.
run_gw plan llama3.1:8b --gpu h100 --per-user-tps 0
is "$rc" 2 "--per-user-tps 0: exit 2"
is "$err" "gpuwise: invalid --per-user-tps '0' (tokens/s per user, e.g. 20)
try 'gpuwise plan --help'" "--per-user-tps 0 refused"
run_gw plan llama3.1:8b --gpu h100 --per-user-tps fast
is "$rc" 2 "--per-user-tps fast: exit 2"
run_gw plan llama3.1:8b --gpu h100 --parallel 0
is "$rc" 2 "--parallel 0: exit 2"

# Validation on published serving figures: fitted and held-out apart.
report=$(python3 "$GW_TOP/tests/validation/validate_serving.py" "$GW" "$GW_TOP/tests/validation/serving-throughput.tsv")
printf '%s\n' "$report" | grep '^#'
js=$(printf '%s\n' "$report" | grep -v '^#')
is "$(printf '%s' "$js" | jget '"error" not in d')" True "every row planned"
is "$(printf '%s' "$js" | jget 'd["holdout"][2] >= 3')" True "at least 3 held-out figures"
is "$(printf '%s' "$js" | jget 'd["holdout"][0] <= 0.10')" True "held-out median within 10%"
is "$(printf '%s' "$js" | jget 'd["holdout"][1] <= 0.25')" True "held-out worst within 25%"

done_testing
