#!/usr/bin/env python3
"""
po-lint: string literals that the commands print to the reader but that do
not go through the catalog (_() / N_() / P_(); issue 24).

    tools/po-lint.py [--allow FILE] SOURCE.c...

Looks at the arguments of the calls that print (printf, fprintf, fputs,
puts, gw_errorf, gw_warnf, outq_printf, progress) and at the initialisers
of table headers (hdr[] = {...}, table_add/table_addv rows): a literal there
that holds an English word (two or more letters, after the printf
directives and escapes are taken out) and is not inside _(), N_(), P_() or
gw_translate_text() is reported as FILE:LINE: "LITERAL".  Formats without
words ("%s\\n", "  %-20s %s") pass by themselves; everything else that is
meant to stay English (JSON, metric names, commands, ids) is listed in the
allow file, one literal per line as C spells it (adjacent literals joined
into one), optionally after
"FILE: " to allow it in that file only.  Exit status 1 when any is found.
"""
import re
import sys

CALLS = ("printf", "fprintf", "fputs", "puts", "gw_errorf", "gw_warnf", "outq_printf", "progress",
         "table_add", "table_addv")
WRAP = ("_", "N_", "P_", "gw_translate_text")
# calls whose literal arguments are keys or values compared, never printed:
# the JSON accessors (jstr(r, "id"), json_object_get), strcmp and friends
KEYS = r"j[a-z]*|json_\w+|strn?cmp|strcasecmp|getenv"
ONE = r'"(?:[^"\\\n]|\\.)*"'
LIT = re.compile(r"%s(?:\s*%s)*" % (ONE, ONE))  # adjacent literals are one string
MARKUP = re.compile(r"<[^<>]*(?:>|$)|^[^<>]*>")
DIRECTIVE = re.compile(r"%(?:\d+\$)?[-+ #0']*(?:\*|\d+)?(?:\.(?:\*|\d+))?(?:hh|h|ll|l|z|j|t|L)?[diouxXeEfFgGaAcsp%]")
ESCAPE = re.compile(r"\\(?:[abfnrtv\\\"']|x[0-9a-fA-F]+|[0-7]{1,3})")
WORD = re.compile(r"[A-Za-z]{2,}")


def strip_comments(src):
    """C comments become spaces (newlines kept); string and char literals stay."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if c == '"' or c == "'":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == "\\" else 1
            out.append(src[i:j + 1])
            i = j + 1
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def skip_literal(src, i):
    q = src[i]
    j = i + 1
    while j < len(src) and src[j] != q:
        j += 2 if src[j] == "\\" else 1
    return j + 1


def call_span(src, open_paren):
    """The index after the ')' closing the '(' at open_paren."""
    depth, i = 0, open_paren
    while i < len(src):
        c = src[i]
        if c in "\"'":
            i = skip_literal(src, i)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(src)


def wrapped_spans(src, lo, hi):
    """Ranges inside [lo, hi) that are arguments of _(), N_(), P_(), gw_translate_text(),
    or of a call in KEYS (JSON keys looked up, strings compared)."""
    spans = []
    for m in re.finditer(r"(?<![\w.>])(%s)\s*\(" % "|".join(map(re.escape, WRAP)), src[lo:hi]):
        p = lo + m.end() - 1
        spans.append((p, call_span(src, p)))
    for m in re.finditer(r"(?<![\w.>])(%s)\s*\(" % KEYS, src[lo:hi]):
        p = lo + m.end() - 1
        spans.append((p, call_span(src, p)))
    return spans


def regions(src):
    """(start, end) of every printing call's arguments and every header initialiser."""
    for m in re.finditer(r"(?<![\w.>])(%s)\s*\(" % "|".join(CALLS), src):
        p = m.end() - 1
        yield p, call_span(src, p)
    for m in re.finditer(r"\b\w*hdrs?\s*\[[^\]]*\]\s*=\s*\{", src):
        p = m.end() - 1
        yield p, call_span(src, p)


def words(lit):
    body = "".join(m.group(0)[1:-1] for m in re.finditer(ONE, lit))
    body = MARKUP.sub(" ", body.replace('\\"', '"'))
    body = re.sub(r"\bgpuwise\b", " ", body)  # the command's name ("gpuwise: ...")
    body = re.sub(r'"[\w.-]*"', " ", body)  # JSON keys and values: {"id": %lld, "backend": "slurm"}
    body = re.sub(r"\w*_\w*", " ", body)  # identifiers, metric and column names: job_gpu_mem_bytes
    body = DIRECTIVE.sub(" ", body)
    body = ESCAPE.sub(" ", body)
    return WORD.findall(body)


def lint(path, allow):
    raw = open(path, encoding="utf-8").read()
    src = strip_comments(raw)
    found, seen = [], set()
    for lo, hi in regions(src):
        spans = wrapped_spans(src, lo, hi)
        for m in LIT.finditer(src, lo, hi):
            a = m.start()
            if a in seen or any(s <= a < e for s, e in spans):
                continue
            # the literal is a whole adjacent-literal sequence's piece: join them
            seen.add(a)
            lit = m.group(0)
            if not words(lit):
                continue
            one = '"' + "".join(x[1:-1] for x in re.findall(ONE, lit)) + '"'  # "a" "b" is "ab"
            if one in allow.get("*", ()) or one in allow.get(path, ()):
                continue
            found.append((src.count("\n", 0, a) + 1, lit))
    return found


def main(argv):
    allow = {}
    files = []
    it = iter(argv)
    for a in it:
        if a == "--allow":
            for line in open(next(it), encoding="utf-8"):
                line = line.rstrip("\n")
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                m = re.match(r'^(\S+\.c):\s+(".*")$', line)
                key, lit = (m.group(1), m.group(2)) if m else ("*", line.strip())
                allow.setdefault(key, set()).add(lit)
        else:
            files.append(a)
    bad = 0
    for f in files:
        for line, lit in lint(f, allow):
            print("%s:%d: %s" % (f, line, re.sub(r"\s*\n\s*", " ", lit)))
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
