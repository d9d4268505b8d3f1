#!/bin/sh
# gpuwise plan --image: memory as the UIs allocate it (--ui comfyui|diffusers|a1111),
# the remedies in their order, and speed per vendor and backend with the estimate mark;
# cards --image ranks measured speeds before estimated ones.  Issue 23 items 1 and 2.
. "$(dirname "$0")/lib.sh"

# ---- 8 GB: ComfyUI fits SDXL 1024x1024 without sequential offload -------------------
run_gw plan sdxl --image 1024x1024 --vram 8G
is "$rc" 0 "SDXL 1024 on 8G (ComfyUI profile): exit 0"
like "$out" "fits with little headroom: 6.67 GiB of 8.00 GiB" "fits 8G: 6.67 GiB peak"
like "$out" "without sequential offload" "says it needs no sequential offload"
like "$out" "ComfyUI profile: text encoders unloaded after encoding" "says what the profile assumes"
like "$out" "VAE decoded in bf16 \(no GPU given: a card with bf16" "says the bf16 assumption without a GPU"
unlike "$out" "offload sequential" "no sequential offload advised"
run_gw plan sdxl --image 1024x1024 --vram 8G --json
is "$(printf '%s' "$out" | jget 'd["verdict"]')" "fits" "json: fits"
is "$(printf '%s' "$out" | jget 'd["ui"]')" "comfyui" "json: ui comfyui"
is "$(printf '%s' "$out" | jget 'd["vae_dtype"]')" "bf16" "json: vae_dtype bf16"
is "$(printf '%s' "$out" | jget 'd["offload"]')" "none" "json: offload none"
is "$(printf '%s' "$out" | jget 'd["resident_bytes"] > d["vram_bytes"]')" "True" "json: everything resident is more than the stage peak"

# ---- 12 GB: --vae-tiling is listed with its effect -----------------------------------
run_gw plan sdxl --image 1024x1024 --vram 12G
is "$rc" 0 "SDXL 1024 on 12G: exit 0"
like "$out" "tiled VAE decode \(--vae-tiling\)
     -> 8.35 GiB with everything loaded \(-1.31 GiB\), fits" "12G: --vae-tiling with its effect, against everything loaded (9.66 GiB), not the 6.67 GiB stage peak"
like "$out" "all resident            9.66 GiB" "12G: everything loaded is the baseline the savings are measured from"
run_gw plan sdxl --image 1024x1024 --vram 8G
like "$out" "8-bit weights \(--quant fp8, or the GGUF q8_0\)
     -> 4.27 GiB peak \(-2.39 GiB\), fits" "8G: not everything stays loaded, so the saving is against the stage peak (6.67 GiB)"
run_gw plan sdxl --image 1024x1024 --vram 12G --json
is "$(printf '%s' "$out" | jget '[s["action"] for s in d["savings"]][0]')" "tiled VAE decode (--vae-tiling)" "json savings: --vae-tiling first"

# ---- diffusers / A1111: the fp32 VAE decode; tiling first, before any offload -------
run_gw plan sdxl --image 1024x1024 --vram 12G --ui diffusers
is "$rc" 4 "diffusers profile on 12G: does not fit (exit 4)"
like "$out" "needs 12.72 GiB of 12.00 GiB" "diffusers: 12.7 GiB peak (fp32 VAE decode)"
like "$out" "1. tiled VAE decode \(--vae-tiling\)
     -> 8.59 GiB peak \(-4.12 GiB\), fits" "diffusers: first change is --vae-tiling, 8.6 GiB"
run_gw plan sdxl --image 1024x1024 --vram 12G --ui a1111 --json
is "$(printf '%s' "$out" | jget 'd["vae_dtype"]')" "fp32" "a1111: fp32 VAE (--no-half-vae)"
is "$(printf '%s' "$out" | jget 'd["advice"][0]["action"]')" "tiled VAE decode (--vae-tiling)" "a1111: --vae-tiling first"

# ---- FLUX on 12 GB: 8-bit or GGUF weights before sequential offload -----------------
run_gw plan flux.1-dev --image 1024x1024 --vram 12G --json
is "$rc" 4 "FLUX.1-dev fp16 on 12G: exit 4"
acts=$(printf '%s' "$out" | jget '" | ".join(a["action"] for a in d["advice"])')
like "$acts" "8-bit weights" "FLUX 12G: 8-bit weights advised"
unlike "$acts" "sequential" "FLUX 12G: no sequential offload needed"
is "$(printf '%s' "$out" | jget 'd["advice"][-1]["fits"]')" "True" "FLUX 12G: the last change fits"
run_gw plan flux.1-dev --image 1024x1024 --vram 8G --json
acts=$(printf '%s' "$out" | jget '" | ".join(a["action"] for a in d["advice"])')
like "$acts" "GGUF q" "FLUX 8G: a GGUF type advised"
unlike "$acts" "sequential" "FLUX 8G: a GGUF type fits before sequential offload"

# ---- speed: per vendor and backend, measured or estimated ---------------------------
run_gw plan sdxl --image 1024x1024 --gpu arc-b580 --json
is "$(printf '%s' "$out" | jget 'd["speed_backend"]')" "xpu" "B580: PyTorch XPU"
is "$(printf '%s' "$out" | jget 'd["speed_estimated"]')" "False" "B580: measured"
run_gw plan sdxl --image 1024x1024 --gpu rx-9070-xt --json
is "$(printf '%s' "$out" | jget 'd["speed_backend"]')" "rocm" "9070 XT: ROCm"
run_gw plan sdxl --image 1024x1024 --gpu m4-max
like "$out" "Speed: ~[0-9.]+ it/s" "M4 Max: speed marked ~"
like "$out" "~ estimate: no measured row for this card on mps" "M4 Max: says it is an estimate"
run_gw plan sdxl --image 1024x1024 --gpu m4-max --json
is "$(printf '%s' "$out" | jget 'd["speed_estimated"]')" "True" "json: speed_estimated true"
run_gw plan sdxl --image 1024x1024 --gpu t4 --json
is "$(printf '%s' "$out" | jget 'd["rate_tflops"] < 40')" "True" "T4 at 70 W: matrix rate capped below its 65 TFLOPS"
is "$(printf '%s' "$out" | jget 'd["vae_dtype"]')" "fp32" "T4 (no bf16): ComfyUI decodes SDXL's VAE in fp32"
run_gw plan sdxl --image 1024x1024 --gpu a100-40g-sxm
like "$out" "312 TFLOPS paper rate x [0-9]+% realised, plus vector work on 20 FP32 TFLOPS" "A100: the vector work on its 19.5 FP32 TFLOPS is said"
run_gw plan sdxl --image 1024x1024 --vram 8G --json
is "$(printf '%s' "$out" | jget 'd["s_per_step"]')" "None" "no GPU: no speed"

# the four cards of issue 23, SDXL 1024x1024: B580 > 9070 XT > 3060 and 4060 Ti > 3060
ipm() { run_gw plan sdxl --image 1024x1024 --gpu "$1" --json; printf '%s' "$out" | jget 'd["images_per_min"]'; }
b580=$(ipm arc-b580); x9070=$(ipm rx-9070-xt); r3060=$(ipm rtx-3060); r4060=$(ipm rtx-4060-ti-16g)
is "$(python3 -c "print($b580 > $x9070 > $r3060 and $r4060 > $r3060)")" "True" "SDXL img/min: B580 $b580 > 9070 XT $x9070 > 3060 $r3060; 4060 Ti $r4060 > 3060"

# ---- cards: estimated speeds ranked after measured ones ------------------------------
run_gw cards sdxl --image 1024x1024 --json
is "$rc" 0 "cards sdxl --image: exit 0"
is "$(printf '%s' "$out" | jget 'all(not r["speed_estimated"] for r in d["rows"][:[r["price_estimated"] or r["speed_estimated"] for r in d["rows"]].index(True)])')" "True" "measured rows come first"
is "$(printf '%s' "$out" | jget 'any(r["speed_estimated"] for r in d["rows"])')" "True" "some rows are estimates"
is "$(printf '%s' "$out" | jget '[ (r["price_estimated"], r["speed_estimated"]) for r in d["rows"]] == sorted((r["price_estimated"], r["speed_estimated"]) for r in d["rows"])')" "True" "estimated speeds after measured within each price kind"
run_gw cards sdxl --image 1024x1024
like "$out" "~ before a speed: no public measurement of this card" "text: says what ~ means"
# the A770 (used): an estimated speed with the caveat that its measurements ran IPEX; the B580 has none
run_gw cards sdxl --image 1024x1024 --used --json
is "$(printf '%s' "$out" | jget '[r["speed_estimated"] and any(c.startswith("speed: the A-series measurements on record all ran IPEX") for c in r["caveats"]) for r in d["rows"] if r["gpu"] == "arc-a770"]')" "[true]" \
	"cards --used: the A770's speed is an estimate and carries the IPEX caveat"
is "$(printf '%s' "$out" | jget '[any(c.startswith("speed:") for c in r["caveats"]) for r in d["rows"] if r["gpu"] == "arc-b580"]')" "[false]" \
	"cards --used: the B580 (measured) carries no speed caveat"

# ---- the validation: >= 25 rows, per-vendor medians, the four-card order ------------
report=$(python3 "$GW_TOP/tests/validation/validate_image.py" "$GW" "$GW_TOP/tests/validation/image-speed.tsv" 2>&1)
vrc=$?
printf '%s\n' "$report" | grep -E '^# (NVIDIA|AMD|Intel|Apple|  |SDXL|targets|[0-9]+ (modelled )?rows)'
is "$vrc" 0 "image-speed validation meets its targets but the known misses it names"
like "$report" "# targets met except the known gaps of Intel \\(named above\\)" "the summary line names the known gap (Intel), not a plain 'targets met'"
for v in NVIDIA AMD Apple; do
	like "$report" "# $v +fitted: [0-9]+ rows, median [0-9.]+%, worst [0-9.]+%  held-out: [0-9]+ rows, median [0-9.]+%, worst" \
		"$v: fitted and held-out medians and worsts printed apart"
done
# Intel: the B580 is its only GPU on the modelled stack (PyTorch XPU without IPEX); the A-series rows ran IPEX
like "$report" "# Intel +fitted: [0-9]+ rows, median [0-9.]+%, worst [0-9.]+%  held-out: none .*NO held-out GPU \(known: the B580 is the only Intel GPU" \
	"Intel: no held-out GPU, said with the reason"
like "$report" "# skipped  arc-a770 .*not modelled: IPEX" "the A770's IPEX rows are recorded as not modelled"
like "$report" "reference \(not counted\): pred [0-9.]+ s/step~, meas 0\.909, error -[0-9.]+%" \
	"the A770's ComfyUI row on IPEX: its error against today's estimate is printed (marked ~)"
like "$report" "# not-modelled rows the planner predicts \(reference, not counted\): [0-9]+, median \|error\| [0-9.]+%: .*arc-a770" \
	"the reference rows' errors are summed up apart"
# the numbers behind the targets, read back from the report: fitted <= 20% per vendor; held-out <= 25%
medians=$(printf '%s\n' "$report" | python3 -c '
import re, sys
for l in sys.stdin:
    m = re.match(r"# (\w+) +fitted: \d+ rows, median ([0-9.]+)%.*held-out: \d+ rows, median ([0-9.]+)%", l)
    if m:
        print(m.group(1), m.group(2), m.group(3))')
is "$(printf '%s\n' "$medians" | awk '{print $1}' | tr '\n' ' ')" "AMD Apple NVIDIA " "held-out medians read back for AMD, Apple, NVIDIA"
is "$(printf '%s\n' "$medians" | awk '$2 > 20 {print $1}')" "" "fitted median <= 20% for every vendor with a held-out GPU"
is "$(printf '%s\n' "$medians" | awk '$3 > 25 {print $1}')" "" "held-out median <= 25% for every vendor with a held-out GPU"
unlike "$report" "# (NVIDIA|AMD|Intel|Apple) .*MISSES the 20% target" "all-rows and fitted medians <= 20% for every vendor"

# the Arc A-series: an estimate on today's PyTorch XPU, with Xe-HPG's measured attention rate and the caveat
run_gw plan sdxl --image 1024x1024 --gpu arc-a770 --json
is "$(printf '%s' "$out" | jget '(d["speed_estimated"], d["attention_fraction"])')" "(True, 0.228)" \
	"A770: an estimate; attention at 0.228 of the matrix rate (torch-xpu-ops#4886)"
like "$(printf '%s' "$out" | jget 'd["speed_caveat"]')" "ran IPEX, retired after 2.8" "A770: the caveat names the IPEX measurements"
a770=$(printf '%s' "$out" | jget 'd["s_per_step"]')
run_gw plan sdxl --image 1024x1024 --gpu arc-b580 --json
is "$(printf '%s' "$out" | jget '(d["speed_estimated"], d["attention_fraction"], d["speed_caveat"])')" "(False, 1.0, None)" \
	"B580 (Xe2): measured, attention at the matrix rate, no caveat"
run_gw plan sdxl --image 1024x1024 --gpu arc-a770
like "$out" "attention at 23% of that" "text: Xe-HPG's attention share is said"
like "$out" "caveat: the A-series measurements on record all ran IPEX" "text: the caveat is printed"
# the attention share is what slows it: the same card with attention at the matrix rate is faster
mkdir -p "$TMP/dd" && grep -v "Xe-HPG" "$GW_TOP/data/image-backends.tsv" > "$TMP/dd/image-backends.tsv"
out=$("$GW" --data-dir "$TMP/dd" plan sdxl --image 1024x1024 --gpu arc-a770 --json)
is "$(printf '%s' "$out" | jget "d['attention_fraction'] == 1 and d['s_per_step'] < $a770")" "True" \
	"without the Xe-HPG row the A770 is faster ($a770 s/step with it)"
modelled=$(printf '%s\n' "$report" | sed -n 's/^# \([0-9]*\) modelled rows of .*/\1/p')
is "$(python3 -c "print(${modelled:-0} >= 40)")" "True" "at least 40 modelled rows ($modelled)"
like "$report" "held out before the fit: .*rx-9070-xt" "an AMD GPU is held out"
like "$report" "order agrees" "the four-card SDXL order agrees with the measured order"

# ---- memory against public figures (tests/validation/image-memory.tsv) --------------
run_gw plan sdxl --image 1024x1024 --ui a1111 --json
is "$(printf '%s' "$out" | jget 'd["vram_bytes"] > 12e9')" "True" "A1111 #13341: SDXL 1024 with --no-half-vae over 12 GB"
run_gw plan sdxl --image 1024x1024 --json
is "$(printf '%s' "$out" | jget '5.0e9 <= d["breakdown"]["denoiser_bytes"] + d["breakdown"]["overhead_bytes"] <= 6.5e9')" "True" "ComfyUI #4108: SDXL UNet resident 5-6 GB"
run_gw plan sdxl --image 1024x1024 --gpu rtx-2060 --json
is "$(printf '%s' "$out" | jget 'd["vae_dtype"]')" "fp32" "ComfyUI #1781: Turing decodes in fp32"
run_gw plan sdxl --image 1024x1024 --gpu m1 --json
is "$(printf '%s' "$out" | jget 'd["vae_dtype"]')" "fp32" "ComfyUI #1905: MPS decodes in fp32"

# ---- bad input ----------------------------------------------------------------------
run_gw plan sdxl --image 1024x1024 --ui invoke
is "$rc" 2 "unknown --ui exits 2"
is "$err" "gpuwise: invalid --ui 'invoke' (one of: comfyui, diffusers, a1111)
try 'gpuwise plan --help'" "unknown --ui: the message"
run_gw plan llama-2-7b --ui comfyui
is "$rc" 2 "--ui without --image exits 2"
like "$err" "--ui needs --image" "--ui without --image: says it needs --image"

done_testing
