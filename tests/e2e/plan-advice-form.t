#!/bin/sh
# gpuwise plan: advice that fits the machine (issue 34): a laptop's
# "larger card" is one for a desktop or an eGPU enclosure (or renting it),
# never a server card (data/install.tsv: passively cooled, no display
# outputs, or a module); a desktop may get one, with its caveats; prices in
# the reader's currency.
. "$(dirname "$0")/lib.sh"

inst="$GW_TOP/data/install.tsv"
server() { # server ID: 0 when data/install.tsv marks it passive, display-less or not PCIe
	awk -F'\t' -v id="$1" '!/^#/ && $1 == id && ($2 != "pcie" || $3 == "passive" || $4 == "0") { f = 1 } END { exit !f }' "$inst"
}
ok "$(server tesla-p40 && echo 0 || echo 1)" "the install table marks the Tesla P40 a server card (the check works)"

for m in qwen2.5-32b llama-2-70b qwen2.5-14b; do
	run_gw plan $m --gpu 4060-laptop --ram 16G --json
	card=$(printf '%s' "$out" | jget '([a["set"]["gpu"] for a in d["advice"] if "gpu" in a["set"]] + ["none"])[0]')
	act=$(printf '%s' "$out" | jget '([a["action"] for a in d["advice"] if "gpu" in a["set"]] + [""])[0]')
	isnt "$card" "none" "$m on a 4060 Laptop: a larger card is advised ($card)"
	ok "$(server "$card" && echo 1 || echo 0)" "$m on a 4060 Laptop: $card is not a server card"
	like "$act" "desktop or an eGPU enclosure" "$m on a 4060 Laptop: for a desktop or an eGPU enclosure"
	like "$act" "or rent one" "$m on a 4060 Laptop: or renting it"
done

# a desktop card may get a server card, with its caveats
run_gw plan qwen2.5-32b --gpu rtx-3060 --json
card=$(printf '%s' "$out" | jget '([a["set"]["gpu"] for a in d["advice"] if "gpu" in a["set"]] + ["none"])[0]')
act=$(printf '%s' "$out" | jget '([a["action"] for a in d["advice"] if "gpu" in a["set"]] + [""])[0]')
if server "$card"; then
	like "$act" "a server card: (passively cooled|actively cooled)" "desktop: the server card $card comes with its caveats"
else
	unlike "$act" "server card" "desktop: $card is an ordinary card, no server caveat"
fi
unlike "$act" "eGPU" "desktop: no eGPU talk"

# prices in the reader's currency
GPUWISE_CURRENCY=EUR run_gw plan qwen2.5-32b --gpu 4060-laptop --ram 16G
like "$out" "about [0-9]+ EUR\*? (used|new)" "GPUWISE_CURRENCY=EUR: the card's price in EUR"
run_gw plan qwen2.5-32b --gpu 4060-laptop --ram 16G
like "$out" 'about \$[0-9]+ (used|new)' "default: USD"
if locale -a 2>/dev/null | grep -qi '^zh_CN.utf-\?8$'; then
	out=$(LANG=zh_CN.UTF-8 LANGUAGE=zh_CN LC_ALL= "$GW" plan qwen2.5-32b --gpu 4060-laptop --ram 16G 2>/dev/null)
	like "$out" "约 [0-9]+ CNY\*? " "zh_CN: the card's price in CNY"
	like "$out" "台式机或 eGPU 扩展坞" "zh_CN: the laptop advice in Chinese"
else
	skip "no zh_CN.UTF-8 locale (locale-gen zh_CN.UTF-8)"
	skip "no zh_CN.UTF-8 locale"
fi

# a plan that fits comfortably: no lower quantization; better weights if they fit
for g in rtx-4090 4060-laptop; do
	run_gw plan qwen2.5-7b --gpu $g --json
	is "$(printf '%s' "$out" | jget 'd["verdict"]')" "fits" "qwen2.5-7b on $g: fits"
	is "$(printf '%s' "$out" | jget 'any("lower quantization" in a["action"] for a in d["advice"])')" "False" "qwen2.5-7b on $g: no lower quantization offered"
	is "$(printf '%s' "$out" | jget 'all(a["verdict"] == "fits" and a["set"].get("quant", "q4_k_m") != "q4_k_m" for a in d["advice"] if "quant" in a["set"])')" \
		"True" "qwen2.5-7b on $g: any other weights offered fit and differ from the plan's"
done
# a change equal to the plan is never offered: not the plan's own -ngl
run_gw plan qwen2.5-14b --gpu 4060-laptop --ram 16G --json
ngl=$(printf '%s' "$out" | jget 'd["gpu_layers"]')
is "$(printf '%s' "$out" | jget 'd["verdict"]')" "offload" "qwen2.5-14b on a 4060 Laptop + 16G: offload (-ngl $ngl)"
is "$(printf '%s' "$out" | jget "any(a['set'].get('gpu_layers') == $ngl and len(a['set']) == 1 for a in d['advice'])")" "False" "no advice is the plan's own -ngl $ngl"
unlike "$(printf '%s' "$out" | jget '" | ".join(a["action"] for a in d["advice"])')" "-ngl $ngl keeps" "no advice restates -ngl $ngl"

done_testing
