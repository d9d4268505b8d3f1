#!/bin/sh
# Placement as llama.cpp does it (issue 30, item 3): with no -ngl and no
# --n-cpu-moe, current llama.cpp's automatic fit (common/fit.cpp) moves a MoE
# model's experts to host RAM first and brings them back layer by layer;
# plan used to place whole layers (Qwen3-30B-A3B on 8 GB + 32 GB: -ngl, 18.7
# tok/s, its own --n-cpu-moe 35 at ~28 only 4th in the advice).  The advice
# lists the placements that run first, fastest first.
. "$(dirname "$0")/lib.sh"

run_gw plan qwen3-30b-a3b --gpu rtx-4060 --ram 32G --json
is "$rc" 3 "Qwen3-30B-A3B on an RTX 4060 + 32 GB: offload (exit 3)"
is "$(printf '%s' "$out" | jget 'd["fit_moe"]')" True "the default placement is the fit's expert offload"
is "$(printf '%s' "$out" | jget 'd["gpu_layers"] == d["total_layers"] and d["n_cpu_moe"] > 0')" True "every layer on the GPU, some experts in host RAM"
dec=$(printf '%s' "$out" | jget 'd["decode_tok_s"]'); ncm=$(printf '%s' "$out" | jget 'd["n_cpu_moe"]')
split=$(printf '%s' "$out" | jget '[a["decode_tok_s"] for a in d["advice"] if a["placement"] and "whole layers" in a["action"]][0]')
diag "Qwen3-30B-A3B, RTX 4060 + 32 GB: fit --n-cpu-moe $ncm $dec tok/s; whole layers in host RAM $split tok/s"
is "$(python3 -c "print($dec > $split)")" True "expert offload decodes faster than whole layers in host RAM ($dec vs $split)"
is "$(printf '%s' "$out" | jget 'any("automatic fit (common/fit.cpp) moves a MoE model" in a and "whole layers in host RAM (-ngl" in a for a in d["assumptions"])')" True \
	"the assumptions say why: the fit's rule, and the speed of the alternative"
is "$(printf '%s' "$out" | jget 'd["advice"][0]["placement"] and d["advice"][0]["verdict"] != "no-fit"')" True "the advice's first line is a placement that runs"
is "$(printf '%s' "$out" | jget 'd["advice"][0]["decode_tok_s"] == max(a["decode_tok_s"] for a in d["advice"] if a["placement"] and a["verdict"] != "no-fit")')" True \
	"the first line is the fastest placement that fits"
is "$(printf '%s' "$out" | jget '[a["placement"] for a in d["advice"]] == sorted([a["placement"] for a in d["advice"]], reverse=True)')" True "placements before the other changes"
run_gw plan qwen3-30b-a3b --gpu rtx-4060 --ram 32G
like "$out" "verdict: offload: all 49 layers on the GPU, the experts of $ncm layers in host RAM \(--n-cpu-moe $ncm" "text: the verdict names the expert offload"
unlike "$out" "  [0-9]+\. offload: --n-cpu-moe $ncm keeps" "text: the plan's own --n-cpu-moe is not offered as a change (issue 34)"

# the fit does not override what was asked
is "$("$GW" plan qwen3-30b-a3b --gpu rtx-4060 --ram 32G --gpu-layers 20 --json | jget '[d["fit_moe"], d["n_cpu_moe"], d["gpu_layers"]]')" "[false, 0, 20]" "-ngl 20 given: no fit, 20 layers"
is "$("$GW" plan qwen3-30b-a3b --gpu rtx-4060 --ram 32G --n-cpu-moe 40 --json | jget '[d["fit_moe"], d["n_cpu_moe"]]')" "[false, 40]" "--n-cpu-moe 40 given: kept"
is "$("$GW" plan qwen3-30b-a3b --gpu rtx-4060 --ram 32G --engine llama.cpp@b2824 --json | jget 'd["fit_moe"]')" False "llama.cpp b2824 had no automatic fit"
is "$("$GW" plan qwen3-30b-a3b --gpu rtx-4090 --json | jget '[d["fit_moe"], d["verdict"]]')" "[false, \"fits\"]" "a model that fits stays whole on the GPU"
is "$("$GW" plan llama-2-13b --quant q4_k_m --ctx 2048 --gpu 4060-laptop --ram 16G --json | jget 'd["fit_moe"]')" False "a dense model: layers, as before"
done_testing
