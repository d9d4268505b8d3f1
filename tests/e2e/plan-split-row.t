#!/bin/sh
# -sm row / --split-mode row for several GPUs (issue 30, item 3), as
# llama.cpp's CUDA split buffer type does it: every weight matrix cut by rows
# over the GPUs in proportion to their free memory, the KV cache, output and
# compute graph on GPU 0; decode reads the slices at once but waits on a sync
# and copies activations over PCIe at every matrix product; prefill pays the
# copies per token.  Not a layer split.
. "$(dirname "$0")/lib.sh"

M="llama-3.1-70b --quant q4_k_m --ram 64G --ctx 4096"
run_gw plan $M --gpu 2x3090 --json
is "$rc" 0 "70B Q4_K_M on 2x RTX 3090, layer split: fits"
lay=$out
run_gw plan $M --gpu 2x3090 --json -sm row
is "$rc" 0 "-sm row: fits"
row=$out
is "$(printf '%s' "$row" | jget 'd["split_mode"]')" row "-sm row is planned as a row split"
is "$(printf '%s' "$lay" | jget 'd["split_mode"]')" layer "the default is the layer split"
is "$(printf '%s' "$row" | jget '[x["layers"] for x in d["devices"]] == [d["gpu_layers"]] * 2')" True \
	"row split: each GPU holds a slice of every layer"
# memory: the same weights, split differently; all the KV cache on GPU 0
is "$(printf '%s' "$row" | jget 'd["devices"][0]["kv_cache_bytes"] > 0 and d["devices"][1]["kv_cache_bytes"] == 0')" True \
	"row split: the KV cache is on GPU 0 only"
is "$(printf '%s' "$lay" | jget 'd["devices"][1]["kv_cache_bytes"] > 0')" True "layer split: each GPU keeps its layers' KV cache"
wsum='sum(x["weights_bytes"] for x in d["devices"])'
is "$(printf '%s' "$row" | jget "$wsum")" "$(printf '%s' "$lay" | jget "$wsum")" "the GPUs hold the same weight bytes in both modes"
is "$(printf '%s' "$row" | jget 'd["max_ctx"] < '"$(printf '%s' "$lay" | jget 'd["max_ctx"]')")" True \
	"row split: a smaller largest context (one GPU holds all the KV cache)"

# the rows follow the tensor split (free memory): a 3090 (24 GB) beside a 3060 (12 GB)
run_gw plan $M --gpu rtx-3090,rtx-3060 --json -sm row
mix=$out
share=$(printf '%s' "$mix" | jget 'round(d["devices"][1]["weights_bytes"] / sum(x["weights_bytes"] for x in d["devices"]), 3)')
free=$(printf '%s' "$mix" | jget 'round(sum(x["usable_bytes"] - x["overhead_bytes"] - 2**30 for x in d["devices"][1:]) / sum(x["usable_bytes"] - x["overhead_bytes"] - 2**30 for x in d["devices"]), 3)')
diag "3090 + 3060, -sm row: GPU 1 holds $share of the weights; its share of the free memory $free"
is "$(python3 -c "print(abs($share - $free) < 0.02)")" True "GPU 1's slice follows its share of free memory ($share vs $free)"

# speed: the slices read at once, the syncs and copies paid per product
dl=$(printf '%s' "$lay" | jget 'd["decode_tok_s"]'); dr=$(printf '%s' "$row" | jget 'd["decode_tok_s"]')
pl=$(printf '%s' "$lay" | jget 'd["prefill_tok_s"]'); pr=$(printf '%s' "$row" | jget 'd["prefill_tok_s"]')
diag "2x RTX 3090, 70B Q4_K_M: decode layer $dl, row $dr tok/s; prefill layer $pl, row $pr tok/s"
note=$(printf '%s' "$row" | jget '[a for a in d["assumptions"] if a.startswith("split mode row")][0]')
like "$note" "read their row slices of the weights at once \(.* ms a token.*waits .* ms on 560 matrix products' syncs.*copies .* MB of activations over PCIe" \
	"the assumptions say why: slices in parallel, 7 products x 80 layers of syncs and copies"
slice=$(printf '%s' "$note" | sed 's/.*at once (\([0-9.]*\) ms.*/\1/')
sync=$(printf '%s' "$note" | sed 's/.*waits \([0-9.]*\) ms.*/\1/')
is "$(python3 -c "print($dr > $dl)")" True "row split decodes faster than the layer split on two 3090s ($dr vs $dl tok/s)"
is "$(python3 -c "
tl, tr = 1000 / $dl, 1000 / $dr
# layer split: the GPUs read one after another, about twice the slowest slice; row: one slice + syncs
print(tl > 1.8 * $slice and tr > $slice + $sync and tr - ($slice + $sync) < 0.5 * $slice)")" True \
	"the decode times add up: layer ~ both slices in turn, row ~ one slice + the syncs ($slice + $sync ms)"
is "$(python3 -c "print($pr < $pl)")" True "row split prefills slower: activations cross PCIe per token ($pr vs $pl tok/s)"
# more GPUs: more waits per product
run_gw plan $M --gpu 4x3090 --json -sm row
sync4=$(printf '%s' "$out" | jget '[a for a in d["assumptions"] if a.startswith("split mode row")][0]' | sed 's/.*waits \([0-9.]*\) ms.*/\1/')
is "$(python3 -c "print(abs($sync4 - 3 * $sync) < 0.2)")" True "4 GPUs wait three times as long per token as 2 ($sync4 vs $sync ms)"

# one GPU: nothing to split; bad input
is "$("$GW" plan $M --gpu rtx-6000-ada --json -sm row | jget 'd["split_mode"]')" layer "one GPU: -sm row changes nothing"
run_gw plan $M --gpu 2x3090 --split-mode rows
is "$rc" 2 "--split-mode rows: a usage error (exit 2)"
like "$err" "unknown --split-mode 'rows' \(layer, row\)" "one clear line"
done_testing
