#!/bin/sh
# The vendor status-code tables in Simplified Chinese (issue 24): every row of
# data/error-catalog.tsv (explain's "catalog:" line, a CUDA runtime/driver,
# cuBLAS, cuDNN, cuFFT, cuSOLVER, NCCL or HIP code) and of data/xid.tsv
# (explain's catalog line; doctor's Xid finding with its next step) prints
# its meaning, and the Xid's action, as po/zh_CN.po translates it under
# LANG=zh_CN.UTF-8 and in English under LANG=C; --json is byte-identical
# and the exit codes match.  Batched: 16 names to one explain message (as many as it attaches),
# every Xid in one kernel log, one zh_CN explain per Xid: some 280 runs.
. "$(dirname "$0")/lib.sh"
unset LC_ALL LC_MESSAGES LANGUAGE
export GPUWISE_NVML_LIB="$GW_FAKE/libnvidia-ml.so"

python3 - "$GW" "$GW_TOP" "$FIX" "$TMP" > "$TMP/res" <<'PY'
import json, os, re, shutil, subprocess, sys
gw, top, fix, tmp = sys.argv[1:5]

def unq(s):
    return bytes(s, "utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8")

# po/zh_CN.po: msgid -> msgstr (the file is written --no-wrap: one line each)
po, key = {}, None
for line in open(os.path.join(top, "po/zh_CN.po"), encoding="utf-8"):
    m = re.match(r'^(msgid|msgstr) "(.*)"$', line.rstrip("\n"))
    if m and m.group(1) == "msgid":
        key = unq(m.group(2))
    elif m and key is not None:
        po[key] = unq(m.group(2))
        key = None

def table(name):
    rows = [l.rstrip("\n").split("\t") for l in open(os.path.join(top, "data", name), encoding="utf-8")
            if not l.startswith("#")]
    return [dict(zip(rows[0], r)) for r in rows[1:]]

cjk = re.compile(r"[\u4e00-\u9fff]")
fails = []
count = {}

def bump(k, n=1):
    count[k] = count.get(k, 0) + n

def zh_of(en, what):
    zh = po.get(en, "")
    if not zh or zh == en or not cjk.search(zh):
        fails.append(f"{what}: no Chinese translation in po/zh_CN.po for {en!r}")
        return None
    return zh

def gw_run(lang, args):
    env = dict(os.environ, LANG=lang, NO_COLOR="1")
    for k in ("LC_ALL", "LC_MESSAGES", "LANGUAGE"):
        env.pop(k, None)
    p = subprocess.run([gw] + args, env=env, capture_output=True, stdin=subprocess.DEVNULL)
    bump("runs")
    return p.returncode, p.stdout.decode("utf-8")

def four(args, what):
    """LANG=C and zh_CN text and --json: (C text, zh text, English JSON)."""
    (rc_c, en), (rc_z, zh) = gw_run("C", args), gw_run("zh_CN.UTF-8", args)
    (rj_c, jc), (rj_z, jz) = gw_run("C", args + ["--json"]), gw_run("zh_CN.UTF-8", args + ["--json"])
    if rc_c != rc_z or rj_c != rj_z:
        fails.append(f"{what}: exit codes differ: text {rc_c}/{rc_z}, --json {rj_c}/{rj_z}")
    else:
        bump("rc_same")
    if jc != jz:
        fails.append(f"{what}: --json differs between LANG=C and zh_CN")
    else:
        bump("json_same")
    bump("batches")
    return en, zh, json.loads(jc)

# ---- explain: every error-catalog row and every Xid, a dozen to a message ----
cat = table("error-catalog.tsv")
xids = table("xid.tsv")
# success codes (code 0) explain nothing: their meaning is translated, not printed
ok_rows = [r for r in cat if r["code"] == "0"]
for r in ok_rows:
    if zh_of(r["meaning"], f"{r['family']} {r['name']}"):
        bump("success_zh")
items = [(r["name"], r["code"], r["family"], r["meaning"]) for r in cat if r["code"] != "0"] + \
        [("Xid " + r["xid"], r["xid"], "xid", r["meaning"]) for r in xids]
count["catalog_rows"], count["success_rows"], count["xid_rows"] = len(cat) - len(ok_rows), len(ok_rows), len(xids)
B = 16  # CAT_MAX_HITS: the most catalog rows one message attaches
for i in range(0, len(items), B):
    batch = items[i:i + B]
    path = os.path.join(tmp, "msg%d" % i)
    with open(path, "w", encoding="utf-8") as f:
        for name, code, family, _ in batch:
            if family == "xid":
                f.write(f"NVRM: Xid (PCI:0000:2a:00): {code}, pid=4242, name=python3, test line\n")
            else:
                f.write(f"RuntimeError: {name}\n")
    en, zh, js = four(["explain", "--no-probe", path], "explain batch %d" % i)
    rows = {r["name"]: r for m in js["matches"] for r in m["catalog"]}
    for name, code, family, meaning in batch:
        what = f"{family} {name}"
        k = "xid" if family == "xid" else "catalog"
        if f"catalog: {name} = {code} ({family}): {meaning}\n" in en:
            bump(k + "_en")
        else:
            fails.append(f"{what}: LANG=C has no English catalog line")
        t = zh_of(meaning, what)
        if t is None:
            continue
        if f"错误码目录：{name} = {code}（{family}）：{t}\n" in zh:
            bump(k + "_zh")
        else:
            fails.append(f"{what}: zh_CN prints no catalog line '{name} = {code}: {t}'")
        if rows.get(name, {}).get("meaning") == meaning:
            bump(k + "_json_en")
        else:
            fails.append(f"{what}: the --json catalog row's meaning is not the English one")

# ---- explain, one Xid a message: its title, cause and next step -------------
for r in xids:
    what = "explain Xid " + r["xid"]
    msg = f"NVRM: Xid (PCI:0000:2a:00): {r['xid']}, pid=4242, name=python3, test line"
    # (LANG=C and --json of every Xid: the batches above; one run a row here)
    rc_z, zh = gw_run("zh_CN.UTF-8", ["explain", "--no-probe", msg])
    if rc_z == 0:
        bump("xid1_rc")
    else:
        fails.append(f"{what}: exit {rc_z} under zh_CN")
    tm, ta = zh_of(r["meaning"], what), zh_of(r["action"], what + " action")
    if tm is None or ta is None:
        continue
    want = [f"xid: NVIDIA 驱动报告了 Xid {r['xid']}：{tm}\n", f"xid_meaning={tm}, ",
            f"    1. Xid {r['xid']}：{tm}（DCGM 严重程度：{r['severity']}）\n", f"  修复：\n    - {ta}\n"]
    miss = [w for w in want if w not in zh]
    if not miss:
        bump("xid1_zh")
    else:
        fails.append(f"{what}: zh_CN lacks {miss!r}")

# ---- doctor: every Xid in the kernel log, its meaning and next step ----------
root = os.path.join(tmp, "root")
shutil.copytree(os.path.join(fix, "roots/fell-off-bus"), root, symlinks=True)
with open(os.path.join(root, "dev/kmsg"), "w") as f:
    for n, r in enumerate(xids):
        f.write(f"3,{2000 + n},86012345678,-;NVRM: Xid (PCI:0000:2a:00): {r['xid']}, pid=4242, name=python3, test line\n")
os.environ["GPUWISE_ROOT"] = root
os.environ["GPUWISE_FAKE_SCENARIO"] = os.path.join(fix, "scenarios/fell-off-bus.json")
en, zh, js = four(["doctor", "--no-exec"], "doctor")
jf = {f["title"]: f for f in js["findings"] if f["id"] == "xid"}
for r in xids:
    what = "doctor Xid " + r["xid"]
    title = f"Xid {r['xid']} on 0000:2a:00: {r['meaning']} (1 in the last 24 h)"
    if f"{title}\n" in en and f"fix: {r['action']}\n" in en and jf.get(title, {}).get("fix") == r["action"]:
        bump("doctor_en")
    else:
        fails.append(f"{what}: LANG=C text or --json lacks the English finding {title!r} / fix {r['action']!r}")
    tm, ta = zh_of(r["meaning"], what), zh_of(r["action"], what + " action")
    if tm is None or ta is None:
        continue
    block = re.search(r"0000:2a:00 上的 Xid %s：(.*)\n.*\n\s*修复：(.*)\n" % r["xid"], zh)
    if block and block.group(1) == f"{tm}（最近 24 小时 1 次）" and block.group(2) == ta:
        bump("doctor_zh")
    else:
        fails.append(f"{what}: zh_CN finding {block.group(0) if block else None!r}, expected {tm!r} / {ta!r}")

for k, v in sorted(count.items()):
    print("COUNT", k, v)
for f in fails:
    print("FAIL", f)
PY
is "$?" 0 "the checks ran"
c() { sed -n "s/^COUNT $1 //p" "$TMP/res"; }
grep '^FAIL' "$TMP/res" | head -20 | sed 's/^/# /'
nc=$(c catalog_rows) nx=$(c xid_rows) nb=$(c batches)
diag "$nc status codes (and $(c success_rows) success codes), $nx Xid rows, $nb batches, $(c runs) gpuwise runs"
ok "$([ "${nc:-0}" -ge 350 ] && [ "${nx:-0}" -ge 100 ]; echo $?)" "both tables read ($nc status codes, $nx Xids)"
ns=$(c success_rows)
ok "$([ "${ns:-0}" -ge 7 ]; echo $?)" "the success codes ($ns) are rows too"
is "$(c success_zh)" "$ns" "their meaning is translated, though explain prints nothing for a success code"
is "$(c catalog_en)" "$nc" "LANG=C: every status code's catalog line is English"
is "$(c catalog_zh)" "$nc" "zh_CN: every status code's catalog line prints its meaning in Chinese"
is "$(c catalog_json_en)" "$nc" "--json: every status code's meaning stays English"
is "$(c xid_en)" "$nx" "LANG=C: every Xid's catalog line is English"
is "$(c xid_zh)" "$nx" "zh_CN: every Xid's catalog line prints its meaning in Chinese"
is "$(c xid_json_en)" "$nx" "--json: every Xid's meaning stays English"
is "$(c xid1_rc)" "$nx" "explain of each Xid alone exits 0 under zh_CN"
is "$(c xid1_zh)" "$nx" "zh_CN: each Xid's title, cause, captured meaning and next step are Chinese"
is "$(c doctor_en)" "$nx" "LANG=C: doctor's finding for every Xid is English (text and --json)"
is "$(c doctor_zh)" "$nx" "zh_CN: doctor's finding for every Xid gives its meaning and next step in Chinese"
is "$(c json_same)" "$nb" "--json is byte-identical between LANG=C and zh_CN in every batch"
is "$(c rc_same)" "$nb" "the exit codes match between LANG=C and zh_CN in every batch"
is "$(grep -c '^FAIL' "$TMP/res")" 0 "no row left English or mistranslated"
done_testing
