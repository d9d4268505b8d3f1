#!/bin/sh
# gpuwise cards: lifecycle (data/lifecycle.tsv) and install caveats
# (data/install.tsv) on every pick they concern; the board/PSU of a set.
. "$(dirname "$0")/lib.sh"

# Every Pascal/Volta pick carries the lifecycle line (last PyTorch, last
# driver, build from source) and its install caveats; an SXM card always
# says it needs an adapter.
check_used() { # MODEL
	run_gw cards "$1" --used --json
	is "$rc" 0 "cards $1 --used --json exits 0"
	printf '%s' "$out" > "$TMP/c.json"
	python3 - "$TMP/c.json" <<'PY' >"$TMP/check" 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["rows"]
old = [r for r in rows if r["lifecycle"] and ("Pascal" in r["lifecycle"]["arch"] or "Volta" in r["lifecycle"]["arch"])]
assert old, "no Pascal/Volta pick at all"
for r in old:
    cv = " | ".join(r["caveats"])
    for want in ("last PyTorch 2.14", "cu126", "last driver branch R580", "to build from source: CUDA 12.x",
                 "prebuilt engines:", "hardware:"):
        assert want in cv, "%s lacks %r: %s" % (r["gpu"], want, cv)
    assert r["lifecycle"]["as_of"] == "2026-12" and r["lifecycle"]["source"], r["gpu"]
    if r["gpu"] in ("tesla-p100", "tesla-p40", "v100", "v100-pcie-16g"):
        assert r["install"], "%s has no install row" % r["gpu"]
        for want in ("passively cooled", "blower", "no display outputs", "board power"):
            assert want in cv, "%s lacks %r" % (r["gpu"], want)
for r in rows + ([d["cheapest_over_budget"]] if d["cheapest_over_budget"] else []):
    if r["install"] and r["install"]["form_factor"].startswith("SXM"):
        assert any("adapter board" in c for c in r["caveats"]), "%s (SXM) without the adapter" % r["gpu"]
print("ok %d" % len(old))
PY
	like "$(cat "$TMP/check")" "^ok [1-9]" "$1 --used: every Pascal/Volta pick has lifecycle and install caveats"
}
check_used llama3.1:8b
check_used qwen2.5-32b
check_used llama3.1:70b

run_gw cards llama3.1:8b --used
is "$rc" 0 "cards llama3.1:8b --used exits 0"
like "$out" "v100: SXM2 module, not a PCIe card: a desktop needs an SXM2-to-PCIe adapter board" "SXM2 v100 says it needs an adapter"
like "$out" "tesla-p40: Pascal \(GP10x\), sm_61 \(compute capability below 7.5\); lifecycle as of 2026-12: last PyTorch 2.14, cu126 \(legacy; 2.15 removes cu126\); last driver branch R580; to build from source: CUDA 12.x only" "P40 lifecycle line"
like "$out" "tesla-p40: power: 1x 8-pin EPS \(CPU\) plug" "P40 needs the EPS plug"
like "$out" "tesla-p100: hardware: no DP4A" "P100 has no DP4A"
like "$out" "tesla-p40: hardware: fp16 at 1/64" "P40 fp16 rate"
unlike "$out" "rtx-4090:.*lifecycle" "a current card carries no lifecycle line"

# Arc: Resizable BAR
run_gw cards llama3.1:8b --vendor intel
is "$rc" 0 "cards --vendor intel exits 0"
like "$out" "arc-b580: needs Resizable BAR \(and Above 4G Decoding\) enabled in the BIOS" "Arc B580 pick carries the Resizable BAR line"

# A multi-card pick names the board and PSU it implies; the JSON agrees.
run_gw cards llama3.1:70b --used
like "$out" "tesla-p40: several cards: .*2x 2-slot cards need a board with 2 PCIe x16-size slots and 4 slot widths of room \(or risers\), 500 W of board power, a PSU of at least 850 W" "2x P40: slots, board power, PSU"
run_gw cards llama3.1:70b --used --json
printf '%s' "$out" > "$TMP/m.json"
python3 - "$TMP/m.json" <<'PY' >"$TMP/check" 2>&1
import json, math, sys
d = json.load(open(sys.argv[1]))
multi = [r for r in d["rows"] if r["count"] > 1]
assert multi, "no multi-card pick"
for r in multi:
    rig = r["rig"]
    assert rig["slots"] == r["count"], r["gpu"]
    assert rig["board_power_w"] == r["power_w"], r["gpu"]
    want = math.ceil((r["power_w"] + 150) * 1.25 / 50) * 50
    assert rig["psu_min_w"] == want, "%s psu %s, want %s" % (r["gpu"], rig["psu_min_w"], want)
    assert any("PSU of at least %d W" % want in c for c in r["caveats"]), r["gpu"]
    if want > 1600:
        assert any("two PSUs" in c for c in r["caveats"]), r["gpu"]
for r in d["rows"]:
    if r["count"] == 1:
        assert r["rig"] is None, r["gpu"]
print("ok")
PY
is "$(cat "$TMP/check")" "ok" "multi-card rig: slots, board power, PSU = (cards + 150 W) x 1.25 rounded up to 50 W"

# plan states the lifecycle of the card it plans for, and none for a current card
run_gw plan llama3.1:8b --gpu tesla-p40
is "$rc" 0 "plan on a P40 exits 0"
like "$out" "  - Pascal \(GP10x\), sm_61 .*lifecycle as of 2026-12: last PyTorch 2.14.*last driver branch R580" "plan --gpu tesla-p40 states the lifecycle line"
run_gw plan llama3.1:8b --gpu rtx-4090
unlike "$out" "lifecycle as of" "plan --gpu rtx-4090: no lifecycle line"

# Malformed tables are refused with the table, line and column.
mkdir -p "$TMP/dd"
printf 'arch\tccs\tlast_torch\ttorch_wheel\tlast_driver\tcuda_build\tprebuilt\thardware\tas_of\tsource\nPascal\tsix\t2.14\tcu126\tR580\tCUDA 12\tnone\tnone\t2026-12\ttest\n' > "$TMP/dd/lifecycle.tsv"
run_gw cards llama3.1:8b --used --data-dir "$TMP/dd"
is "$rc" 1 "bad lifecycle ccs: exit 1"
like "$err" "table 'lifecycle' line 2, column 'ccs': 'six' is not a list of compute capabilities" "bad ccs named with line and column"
printf 'arch\tccs\tlast_torch\ttorch_wheel\tlast_driver\tcuda_build\tprebuilt\thardware\tas_of\tsource\nPascal\t6.1\t2.14\tcu126\t580\tCUDA 12\tnone\tnone\t2026-12\ttest\n' > "$TMP/dd/lifecycle.tsv"
run_gw cards llama3.1:8b --used --data-dir "$TMP/dd"
is "$rc" 1 "bad driver branch: exit 1"
like "$err" "table 'lifecycle' line 2, column 'last_driver': '580' is not a driver branch" "bad driver branch refused"
printf 'arch\tccs\tlast_torch\ttorch_wheel\tlast_driver\tcuda_build\tprebuilt\thardware\tas_of\tsource\nPascal\t6.1\t2.14\tcu126\tR580\tCUDA 12\tnone\tnone\t2026-12\t\n' > "$TMP/dd/lifecycle.tsv"
run_gw cards llama3.1:8b --used --data-dir "$TMP/dd"
is "$rc" 1 "lifecycle row without a source: exit 1"
like "$err" "table 'lifecycle' line 2: empty source" "empty source refused"
rm "$TMP/dd/lifecycle.tsv"
printf '# c\ngpu\tform_factor\tcooling\tdisplay\tpower_connector\tslots\trebar\tsource\nv100\tmezzanine\tpassive\t0\tsocket\t2\t0\ttest\n' > "$TMP/dd/install.tsv"
run_gw cards llama3.1:8b --used --data-dir "$TMP/dd"
is "$rc" 1 "bad form factor: exit 1"
like "$err" "table 'install' line 3, column 'form_factor': 'mezzanine' is not pcie, sxm2, sxm4 or sxm5" "bad form factor named with line and column"
printf 'gpu\tform_factor\tcooling\tdisplay\tpower_connector\tslots\trebar\tsource\ntesla-p41\tpcie\tpassive\t0\tEPS\t2\t0\ttest\n' > "$TMP/dd/install.tsv"
run_gw cards llama3.1:8b --used --data-dir "$TMP/dd"
is "$rc" 1 "unknown GPU in install: exit 1"
like "$err" "table 'install' line 2, column 'gpu': 'tesla-p41' is not a GPU of the gpus table" "unknown GPU refused"
printf 'gpu\tform_factor\tcooling\tdisplay\tpower_connector\tslots\trebar\tsource\ntesla-p40\tpcie\tpassive\t0\tEPS\t9\t0\ttest\n' > "$TMP/dd/install.tsv"
run_gw cards llama3.1:8b --used --data-dir "$TMP/dd"
is "$rc" 1 "slots out of range: exit 1"
like "$err" "table 'install' line 2, column 'slots': '9' is out of range" "slots out of range refused"

done_testing
