#!/bin/sh
# plan --train, plan --image, cards --train/--image and the lifecycle /
# install caveats of old cards (data/lifecycle.tsv, data/install.tsv, cards
# --used) in Simplified Chinese (issue 24): Chinese in every section, no
# English sentence left (no run of 4+ lowercase English words outside
# commands, options, paths and cited sources), the same exit status as
# LANG=C, --json byte-identical, the commands inside the advice unchanged,
# the breakdown tables aligned by display width; LANG=C still English.
. "$(dirname "$0")/lib.sh"
unset LC_ALL LC_MESSAGES LANGUAGE
ZH=zh_CN.UTF-8

# english FILE: the lines holding a run of 4+ lowercase English words, once
# options with their argument (--quant fp8), paths and file names
# (data/x.tsv, llama.cpp), URLs and what follows them (a source) are removed
english() {
	python3 - "$1" <<'PY'
import re, sys
for line in open(sys.argv[1], encoding="utf-8"):
    s = re.sub(r"https?://.*", "", line)
    s = re.sub(r"--[a-z][a-z0-9-]*(=\S+|\s+[^\s-]\S*)?", " ", s)
    s = re.sub(r"\S*[/.]\S*", " ", s)
    if re.search(r"(?<![A-Za-z0-9_'-])[a-z]+(?: [a-z]+){3,}(?![A-Za-z0-9_'-])", s):
        print(line.rstrip("\n"))
PY
}
# widths FILE REGEX: the display column (East Asian width) where the first
# match ends, one line per matching line
widths() {
	python3 - "$1" "$2" <<'PY'
import re, sys, unicodedata
def w(s):
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)
for line in open(sys.argv[1], encoding="utf-8"):
    m = re.search(sys.argv[2], line)
    if m:
        print(w(line[:m.end()]))
PY
}
# both NAME ARGS...: run in Chinese and in English; $zh/$en, $zrc/$erc;
# the exit status and the --json output compared
both() {
	_name=$1; shift
	zh=$(LANG=$ZH "$GW" "$@" 2>"$TMP/zh.err"); zrc=$?
	en=$(LANG=C "$GW" "$@" 2>/dev/null); erc=$?
	is "$zrc" "$erc" "$_name: the same exit status in Chinese and English ($erc)"
	zj=$(LANG=$ZH "$GW" "$@" --json 2>/dev/null); zjrc=$?
	ej=$(LANG=C "$GW" "$@" --json 2>/dev/null)
	is "$zjrc" "$erc" "$_name --json: the same exit status"
	if [ -n "$ej" ] && [ "$zj" = "$ej" ]; then ok 0 "$_name --json: byte-identical to LANG=C"
	else ok 1 "$_name --json: byte-identical to LANG=C"; fi
	printf '%s\n' "$zh" > "$TMP/zh.out"
	left=$(english "$TMP/zh.out")
	is "$left" "" "$_name: no English sentence left in Chinese"
}
# cjk TEXT: how many lines hold a CJK ideograph
cjk() { printf '%s\n' "$1" | python3 -c 'import re, sys; print(sum(1 for l in sys.stdin if re.search("[\u4e00-\u9fff]", l)))'; }
ROW='^[^ ].*?  +[0-9.]+ [KMG]?i?B'

# ---- plan --train ---------------------------------------------------------------------
both "plan --train qlora" plan llama-2-7b --train qlora --gpu rtx-3060
is "$zrc" 4 "plan --train qlora on a 3060: does not fit (exit 4)"
like "$zh" '^微调 llama-2-7b：QLoRA（NF4 基座），秩 8' "train: the title in Chinese"
like "$zh" '^每块 GPU +字节' "train: the table header in Chinese"
like "$zh" '^激活 +[0-9.]+ GiB  峰值时保存的张量$' "train: the activations row and its note"
like "$zh" '^放不下：每块 GPU 需要 [0-9.]+ GiB，只有 12.00 GiB（GeForce RTX 3060 12GB）$' "train: the verdict"
like "$zh" '^按以下顺序逐项调整：$' "train: the advice heading"
like "$zh" '^  1\. 开启梯度检查点（--checkpointing full）：每步计算量约多三分之一$' "train: the advice in Chinese keeps the options"
like "$zh" '^     -> 每块 GPU [0-9.]+ GiB（-[0-9.]+ GiB；峰值在损失反向阶段），放得下$' "train: the advice's effect"
like "$zh" '^假设：$' "train: the assumptions heading"
like "$zh" '^  - HF Trainer 方式的混合精度' "train: an assumption in Chinese (混合精度)"
printf '%s\n' "$zh" > "$TMP/train.zh"
is "$(widths "$TMP/train.zh" "$ROW" | sort -u | wc -l | tr -d ' ')" 1 "train: the bytes column aligned by display width"
is "$(widths "$TMP/train.zh" "$ROW" | wc -l | tr -d ' ')" 9 "train: all nine rows of the breakdown measured"
like "$en" '^Fine-tuning llama-2-7b: QLoRA \(NF4 base\), rank 8 on qv$' "train: LANG=C is English"
like "$en" 'saved tensors at the peak' "train: LANG=C keeps the English notes"

both "plan --train full fp32" plan llama-2-7b --train full --precision fp32 --framework none --gpu rtx-4090
like "$zh" '只训练 LoRA 适配器，而非全部权重（--train lora）' "train full: the LoRA advice keeps --train lora"
like "$zh" '不用框架（--framework none）' "train full: the framework assumption in Chinese"
like "$zh" 'eager 注意力会保存 s x s 的分数矩阵' "train full: the eager-attention assumption"

both "plan --train qlora 70b" plan llama-2-70b --train qlora --gpu rtx-3060
like "$zh" '^  1\. 微批次 1，梯度累积 4 步（有效批次不变：--micro-batch 1 --grad-accum 4）$' "train 70B: the --grad-accum to type"
like "$zh" '^  3\. 缩短样本（--seq 1024）：更长的样本会被截断；数据本身较短时无妨$' "train 70B: the shorter --seq"
like "$zh" '^  4\. 若有更多 GPU：用 FSDP / ZeRO-3 分片到 4 块 GPU（--gpus 4 --shard fsdp）$' "train 70B on 3060s: more GPUs come last, with their options"

# ---- plan --image ---------------------------------------------------------------------
both "plan --image sdxl 8G" plan sdxl --image 1024x1024 --vram 8G
is "$zrc" 0 "sdxl on 8 GB: fits (exit 0)"
like "$zh" '^Stable Diffusion XL 1.0：1024x1024，批大小 1，30 步' "image: the title in Chinese"
like "$zh" '^峰值时在 GPU 上 +字节' "image: the table header"
like "$zh" '^UNet +[0-9.]+ GiB  去噪阶段；解码时可能移出$' "image: the UNet's note"
like "$zh" '^放得下，但余量很小：[0-9.]+ GiB / 8.00 GiB（8.00 GiB 显存的 GPU），无需顺序卸载$' "image: the verdict"
like "$zh" '^如果需要更多余量' "image: the savings heading"
like "$zh" '^  - 8 位权重（--quant fp8，或 GGUF 的 q8_0）$' "image: a saving keeps --quant fp8"
like "$zh" '^     -> 峰值 [0-9.]+ GiB（-[0-9.]+ GiB），放得下$' "image: the saving's effect"
like "$zh" '^速度：没有 GPU 无法估算（请给出 --gpu）$' "image: no speed without a GPU"
like "$zh" '^  - ComfyUI 配置：' "image: the profile assumption"
printf '%s\n' "$zh" > "$TMP/image.zh"
is "$(widths "$TMP/image.zh" "$ROW" | sort -u | wc -l | tr -d ' ')" 1 "image: the bytes column aligned by display width"
like "$en" 'denoising stage; may leave for the decode' "image: LANG=C is English"

both "plan --image flux 3060 tiled" plan flux.1-dev --image 1024x1024 --gpu rtx-3060 --vae-tiling
is "$zrc" 4 "flux on a 3060: does not fit (exit 4)"
like "$zh" '^扩散 Transformer +[0-9.]+ GiB' "flux: the diffusion transformer row"
like "$zh" '^VAE 解码 +[0-9.]+ MiB  一块 512x512 分块$' "flux: the tiled decode"
like "$zh" '^速度：[0-9.]+ it/s，每张图约 [0-9.]+ 秒，每分钟 [0-9.]+ 张' "flux: the speed line in Chinese"
like "$zh" '^  1\. 8 位权重（--quant fp8，或 GGUF 的 q8_0）$' "flux: the advice keeps --quant fp8"
printf '%s\n' "$zh" > "$TMP/flux.zh"
is "$(widths "$TMP/flux.zh" "$ROW" | sort -u | wc -l | tr -d ' ')" 1 "flux: the bytes column aligned by display width"

both "plan --image sdxl fp8 diffusers 4090" plan sdxl --image 1024x1024 --gpu rtx-4090 --quant fp8 --ui diffusers
like "$zh" '^  - diffusers 配置：所有模型常驻' "sdxl diffusers: the profile assumption"
like "$zh" '（标称算力）x 实际达到 [0-9]+%' "sdxl on a 4090: the rate in Chinese"

both "plan --image sd-1.5 offload" plan sd-1.5 --image 2048x2048 --vram 4G --offload sequential --batch 2
like "$zh" '一次一个块' "sd-1.5 sequential: the block-at-a-time note"

# ---- cards --train / --image -------------------------------------------------------------
both "cards --image" cards sdxl --image 1024x1024
like "$zh" '^适合 sdxl 的显卡（图像生成）' "cards --image: the title in Chinese"
like "$zh" '^注意事项：$' "cards --image: the caveats heading"
like "$zh" 'a100-80g-sxm: 供电：经由 SXM4 插座供电；整卡功耗 400 W' "cards --image: install.tsv's power cell translated"
both "cards --train" cards llama-2-7b --train lora
like "$zh" '^适合 llama-2-7b 的显卡（微调）' "cards --train: the title in Chinese"
like "$zh" 'h100-sxm: 供电：经由 SXM5 插座供电' "cards --train: install.tsv's power cell translated"

# ---- cards --used: old cards' lifecycle ------------------------------------------------------
both "cards --used" cards llama-2-7b --used
lc=$(printf '%s\n' "$zh" | grep -E '^  [0-9]+\. (tesla-p40|tesla-p100|v100|v100-pcie-16g|gtx-1080-ti): ')
is "$(cjk "$lc")" "$(printf '%s\n' "$lc" | wc -l | tr -d ' ')" "cards --used: every caveat line of the old cards has Chinese"
like "$lc" 'tesla-p40: Pascal \(GP10x\)，sm_61（计算能力低于 7.5）；生命周期（截至 2026-12）：最后支持的 PyTorch 2.14' "cards --used: the P40's lifecycle line"
like "$lc" 'tesla-p40: 预编译引擎：llama.cpp 的 Windows CUDA 预编译包.*-DCMAKE_CUDA_ARCHITECTURES=61 自行编译 llama.cpp$' "cards --used: the P40's prebuilt caveat keeps the cmake flag"
like "$lc" 'tesla-p100: 硬件：没有 DP4A（llama.cpp 用模拟实现量化点积' "cards --used: the P100's hardware caveat"
like "$lc" 'v100: 预编译引擎：llama.cpp 的 Windows CUDA 预编译包从 Volta 之后的架构开始支持' "cards --used: the V100's prebuilt caveat"
like "$lc" 'tesla-p40: 供电：1 个 8-pin EPS（CPU）供电插头，不是 PCIe 8-pin' "cards --used: the P40's power plug"
printf '%s\n' "$lc" > "$TMP/lc.zh"
is "$(english "$TMP/lc.zh")" "" "cards --used: no English sentence in the lifecycle and install lines"
like "$en" "tesla-p40: prebuilt engines: llama.cpp's Windows CUDA prebuilts and LM Studio's CUDA backend dropped sm_61" \
	"cards --used: LANG=C keeps data/lifecycle.tsv's English"

# plan's assumptions carry the card's lifecycle line too
zh=$(LANG=$ZH "$GW" plan llama-2-7b --gpu tesla-p40 2>/dev/null)
like "$zh" '^  - Pascal \(GP10x\)，sm_61（计算能力低于 7.5）；生命周期（截至 2026-12）' "plan on a P40: the lifecycle assumption in Chinese"

# doctor's gpu-lifecycle finding on a Tesla P40 (fake NVML) quotes the same cells
if [ -e "$GW_FAKE/libnvidia-ml.so" ]; then
	export GPUWISE_NVML_LIB="$GW_FAKE/libnvidia-ml.so" GPUWISE_CUDA_LIB="$GW_FAKE/libcuda.so"
	python3 - "$FIX/scenarios/desktop-4090.json" "$TMP/p40.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
g = d["gpus"][0]
g.update(name="Tesla P40", cc="6.1", arch=5, memory_total_bytes=24 * 2**30)
d["gpus"] = [g]
json.dump(d, open(sys.argv[2], "w"))
PY
	export GPUWISE_ROOT="$FIX/roots/desktop-4090" GPUWISE_FAKE_SCENARIO="$TMP/p40.json"
	both "doctor on a P40" doctor
	like "$zh" '预编译引擎：llama.cpp 的 Windows CUDA 预编译包和 LM Studio 的 CUDA 后端在 2026 年去掉了 sm_61' \
		"doctor on a P40: data/lifecycle.tsv's prebuilt cell in Chinese"
	like "$zh" '硬件：fp16 速度只有 fp32 的 1/64' "doctor on a P40: the hardware cell in Chinese"
	like "$zh" 'cmake -DCMAKE_CUDA_ARCHITECTURES=61' "doctor on a P40: the build command kept"
else
	skip "no fake NVML in $GW_FAKE (make fakes): doctor on a P40 not run"
fi

done_testing
