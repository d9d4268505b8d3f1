#!/bin/sh
# The message catalog (issue 24): every string the code marks for
# translation is translated in po/zh_CN.po, none fuzzy (a new _() string
# without its translation fails here); the translations keep the commands,
# options and {placeholders} of the English text verbatim (they must paste
# and run); the glossary's terms are used for the English terms.
. "$(dirname "$0")/lib.sh"
PO=$GW_TOP/po/zh_CN.po
if ! command -v msgfmt >/dev/null 2>&1 || ! command -v xgettext >/dev/null 2>&1; then
	skip "po: the gettext tools are not installed (apt-get install gettext)"
	done_testing
	exit
fi
st=$(msgfmt --check --statistics -o /dev/null "$PO" 2>&1); rc=$?
is "$rc" 0 "msgfmt --check accepts po/zh_CN.po (formats match the English)"
like "$st" '^[0-9]+ translated messages\.$' "po/zh_CN.po: all translated, none fuzzy ($st)"

# extract afresh from the sources, as `make pot` does, and merge: still 100%
make -s --no-print-directory -C "$GW_TOP" pot POT="$TMP/gpuwise.pot" POTDIR="$TMP" >/dev/null 2>"$TMP/pot.err"
is "$?" 0 "make pot extracts the messages ($(head -c 200 "$TMP/pot.err"))"
msgmerge --quiet --no-fuzzy-matching -o "$TMP/merged.po" "$PO" "$TMP/gpuwise.pot"
st=$(msgfmt --statistics -o /dev/null "$TMP/merged.po" 2>&1)
like "$st" '^[0-9]+ translated messages\.$' "every extracted message has its translation ($st)"
n_src=$(grep -c '^msgid ' "$TMP/gpuwise.pot")
ok "$([ "$n_src" -gt 500 ]; echo $?)" "the extraction finds the wrapped messages ($n_src)"

# the check can fail: a new user-facing string without a translation
printf '#include "util/util.h"\nconst char *po_t_new(void) { return _("a message nobody translated yet"); }\n' > "$TMP/new.c"
make -s --no-print-directory -C "$GW_TOP" pot POT="$TMP/new.pot" POTDIR="$TMP/n" POT_EXTRA="$TMP/new.c" >/dev/null 2>&1
msgmerge --quiet --no-fuzzy-matching -o "$TMP/new.po" "$PO" "$TMP/new.pot"
st=$(msgfmt --statistics -o /dev/null "$TMP/new.po" 2>&1)
like "$st" ', 1 untranslated message' "a new _() string without a translation is caught ($st)"

# commands, options, placeholders and glossary terms (python: the .po parser)
python3 - "$PO" "$GW_TOP/po/glossary.md" > "$TMP/checks" <<'PY'
import re, sys
po, glossary = sys.argv[1:3]

def unq(s):
    return bytes(s, "utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8")

entries, cur, key = [], None, None
for line in open(po, encoding="utf-8"):
    line = line.rstrip("\n")
    if not line.strip():
        if cur: entries.append(cur)
        cur = None
        continue
    if line.startswith("#"):
        continue
    cur = cur or {"msgid": "", "msgstr": ""}
    m = re.match(r'(msgid_plural|msgid|msgstr(?:\[0\])?|msgstr\[\d+\])\s+"(.*)"$', line)
    if m:
        key = {"msgid": "msgid", "msgid_plural": None}.get(m.group(1), "msgstr" if m.group(1) in ("msgstr", "msgstr[0]") else None)
        if key: cur[key] += unq(m.group(2))
    elif key:
        cur[key] += unq(line.strip()[1:-1])
if cur: entries.append(cur)
entries = [e for e in entries if e["msgid"]]

# the commands a fix prints: a program name, then its arguments (options,
# PLACEHOLDERS, values with digits or punctuation, a subcommand first) up to
# the first word of prose
import os
top = os.path.dirname(os.path.dirname(po))
SUBCMDS = set(re.findall(r'\{"([a-z-]+)", cmd_', open(os.path.join(top, "src/main.c")).read()))
PROGS = {"gpuwise": SUBCMDS, "sudo": None, "pip": {"install", "uninstall"}, "pip3": {"install"},
         "export": set(), "unset": set(), "nvidia-smi": set(), "apt": {"install", "purge"}, "apt-get": {"install", "purge"},
         "modprobe": set(), "rmmod": set(), "mokutil": set(), "cmake": set(), "ldconfig": set(), "lspci": set(),
         "dmesg": set(), "fuser": set(), "sysctl": set(), "kill": set(), "glxinfo": set(), "dcgmi": {"diag"},
         "update-initramfs": set(), "tee": set(), "reboot": set()}
CMD = re.compile(r"(?<![\w/.-])(%s)(?=[ ]|$)" % "|".join(re.escape(p) for p in PROGS))
ARG = re.compile(r"^(-[\w=.:/,-]*|nvidia\w*|reboot|[A-Z][A-Z0-9_]*|%[a-z]+|[\w./:=+~*$'|-]*[0-9./=:_*~$'|-][\w./:=+~*$'|-]*)$")
PROSE = {"and", "or", "then", "to", "the", "if", "with", "for", "on", "in"}  # prose after a sudo command
OPT = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
SUBS = re.compile(r"\{[a-z_0-9]+\}")
bad = 0
n_cmds = 0
for e in entries:
    en, zh = e["msgid"], e["msgstr"]
    for line in en.split("\n"):
        for m in CMD.finditer(line):
            prog, rest = m.group(1), line[m.end():].split()
            keep = [prog]
            if prog == "sudo" and rest and rest[0] in PROGS:
                prog = rest.pop(0)
                keep.append(prog)
            subs = PROGS[prog]
            for i, w in enumerate(rest):
                w2 = w.rstrip(".,;:)")
                if w2 in PROSE:
                    break
                if w2.endswith("'s"):  # a possessive ("gpuwise doctor's Hardware group") ends the command
                    w2 = w = w2[:-2] + ","
                    w2 = w2[:-1]
                if ARG.match(w2) or (subs is None and re.match(r"^[a-z][\w.-]*$", w2)) or \
                        (i == 0 and subs and w2 in subs):
                    keep.append(w2)
                    if w2 != w:
                        break
                    if subs is not None and i == 0 and subs and w2 not in subs and not w2.startswith("-"):
                        break
                else:
                    break
            if len(keep) < 2:
                continue  # the bare word in prose
            c = " ".join(keep)
            n_cmds += 1
            if not re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(c), zh):
                print("command: %r lost in %r" % (c, zh))
                bad += 1
    for o in set(OPT.findall(en)):
        if o not in zh:
            print("option: %r lost in %r" % (o, zh))
            bad += 1
    if sorted(SUBS.findall(en)) != sorted(SUBS.findall(zh)):
        print("placeholders differ: %r -> %r" % (en, zh))
        bad += 1
# glossary: "| English | 中文 |" rows; an English term in a message has its Chinese term in the translation
terms = []
for line in open(glossary, encoding="utf-8"):
    m = re.match(r"^\|\s*([A-Za-z][^|]*?)\s*\|\s*([^|]*?)\s*\|\s*(check|-)\s*\|", line)
    if m and m.group(3) == "check":
        terms.append((m.group(1), m.group(2)))
n_terms = 0
for en_t, zh_t in terms:
    pat = re.compile(r"(?<![\w/.-])%s(?![\w/.-])" % re.escape(en_t), re.I)
    for e in entries:
        if pat.search(e["msgid"]):
            n_terms += 1
            if zh_t not in e["msgstr"]:
                print("glossary: %r (%s) not %r in %r" % (en_t, e["msgid"][:60], zh_t, e["msgstr"][:80]))
                bad += 1
print("SUMMARY %d %d %d %d %d" % (len(entries), n_cmds, len(terms), n_terms, bad))
PY
set -- $(grep '^SUMMARY' "$TMP/checks")
grep -v '^SUMMARY' "$TMP/checks" | head -20 | sed 's/^/# /'
is "$6" 0 "translations keep every command ($3), option and {placeholder} of $2 messages, and the glossary's $4 terms ($5 uses)"
ok "$([ "${3:-0}" -ge 40 ] && [ "${4:-0}" -ge 10 ]; echo $?)" "the check saw commands ($3) and glossary terms ($4) to compare"
done_testing
