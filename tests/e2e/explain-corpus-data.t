#!/bin/sh
# The explain corpus files (issue 31) are well formed: tools/corpus-split.py
# check passes on every data/explain-corpus-*.tsv, tests/validation/
# explain-heldout-*.tsv and explain-negative-*.tsv (columns, ids, families,
# the sha1 split by source, no duplicates), and the checker itself refuses
# each kind of bad row.
. "$(dirname "$0")/lib.sh"
T=$GW_TOP/tools/corpus-split.py
V=$GW_TOP/tests/validation
tab=$(printf '\t')
H="diagnosis${tab}lang${tab}family${tab}message${tab}source${tab}resolution${tab}fix_match"

out=$(python3 "$T" check 2>&1); rc=$?
is "$rc" 0 "corpus-split.py check passes on every explain corpus file"
[ "$rc" -eq 0 ] || printf '%s\n' "$out" | head -20 | sed 's/^/#   /'

# rows: at least 100 negatives per negative file; each fit/held-out pair
# together holds rows of both sides (the split rule is not degenerate)
for f in "$V"/explain-negative-*.tsv; do
	[ -e "$f" ] || continue
	n=$(grep -v '^#' "$f" | tail -n +2 | grep -c .)
	ok "$([ "$n" -ge 100 ] && echo 0 || echo 1)" "${f##*/} has $n >= 100 rows"
done
for f in "$GW_TOP"/data/explain-corpus-*.tsv; do
	[ -e "$f" ] || continue
	p=${f##*explain-corpus-}
	h=$V/explain-heldout-$p
	nf=$(grep -v '^#' "$f" | tail -n +2 | grep -c .)
	nh=$(grep -v '^#' "$h" 2>/dev/null | tail -n +2 | grep -c .)
	diag "explain-corpus-$p: $nf fit rows, $nh held-out rows"
	ok "$([ "$nf" -gt 0 ] && [ "$nh" -gt 0 ] && echo 0 || echo 1)" "part ${p%.tsv} has rows on both sides of the split"
done
python3 "$T" stats | sed 's/^/# /'

# the checker refuses bad rows (each its own file, named like a held-out file)
good_src=https://github.com/pytorch/pytorch/issues/1   # sha1 prefix decides its side
side=$(python3 -c 'import hashlib,sys; print("heldout" if hashlib.sha1(sys.argv[1].encode()).hexdigest()[:2] < "55" else "corpus")' "$good_src")
other=$([ "$side" = heldout ] && echo corpus || echo heldout)
row="cuda-oom${tab}en${tab}pytorch${tab}CUDA out of memory. Tried to allocate 2.00 GiB${tab}$good_src${tab}smaller batch${tab}batch"
mk() { printf '%s\n%s\n' "$H" "$2" > "$TMP/explain-$1-x.tsv"; echo "$TMP/explain-$1-x.tsv"; }
python3 "$T" check "$(mk "$side" "$row")" >/dev/null 2>&1
is "$?" 0 "a good row passes"
python3 "$T" check "$(mk "$other" "$row")" >/dev/null 2>&1
is "$?" 1 "a row on the wrong side of the sha1 split is refused"
python3 "$T" check "$(mk "$side" "$(printf '%s' "$row" | sed 's/^cuda-oom/no-such-id/')")" >/dev/null 2>&1
is "$?" 1 "an unknown diagnosis id is refused"
python3 "$T" check "$(mk "$side" "$(printf '%s' "$row" | sed 's/pytorch/pytorch2/')")" >/dev/null 2>&1
is "$?" 1 "an unknown family is refused"
python3 "$T" check "$(mk "$side" "$row$tab")" >/dev/null 2>&1
is "$?" 1 "a row with an extra tab (8 fields) is refused"
python3 "$T" check "$(mk "$side" "$(printf '%s\n%s' "$row" "$row")")" >/dev/null 2>&1
is "$?" 1 "the same row twice is refused"
# one message from two threads: fine on one side, refused across the split
same=$(python3 -c 'import hashlib,sys
want = sys.argv[1] == "heldout"
for i in range(2, 999):
    u = "https://github.com/pytorch/pytorch/issues/%d" % i
    if (hashlib.sha1(u.encode()).hexdigest()[:2] < "55") == want:
        print(u); break' "$side")
diff=$(python3 -c 'import hashlib,sys
want = sys.argv[1] != "heldout"
for i in range(2, 999):
    u = "https://github.com/pytorch/pytorch/issues/%d" % i
    if (hashlib.sha1(u.encode()).hexdigest()[:2] < "55") == want:
        print(u); break' "$side")
row2=$(printf '%s' "$row" | sed "s|$good_src|$same|")
python3 "$T" check "$(mk "$side" "$(printf '%s\n%s' "$row" "$row2")")" >/dev/null 2>&1
is "$?" 0 "one message from two threads on the same side passes"
printf '%s\n%s\n' "$H" "$(printf '%s' "$row" | sed "s|$good_src|$diff|")" > "$TMP/explain-$other-x.tsv"
python3 "$T" check "$(mk "$side" "$row")" "$TMP/explain-$other-x.tsv" >/dev/null 2>&1
is "$?" 1 "one message on both sides of the split is refused"
python3 "$T" check "$(mk "$side" "$(printf '%s' "$row" | sed 's/batch$/\\d+/')")" >/dev/null 2>&1
is "$?" 1 "a fix_match with non-POSIX syntax (\\d) is refused"
python3 "$T" check "$(mk "$side" "$(printf '%s' "$row" | sed 's|https://github.com/pytorch/pytorch/issues/1|see thread|')")" >/dev/null 2>&1
is "$?" 1 "a source that is not a URL is refused"
printf 'message\tsource\nModuleNotFoundError: No module named foo\thttps://example.org/a\n' > "$TMP/explain-negative-x.tsv"
python3 "$T" check "$TMP/explain-negative-x.tsv" >/dev/null 2>&1
is "$?" 0 "a good negative file passes"
printf 'message\tsource\nModuleNotFoundError: No module named foo\n' > "$TMP/explain-negative-x.tsv"
python3 "$T" check "$TMP/explain-negative-x.tsv" >/dev/null 2>&1
is "$?" 1 "a negative row without a source is refused"
python3 "$T" frobnicate >/dev/null 2>&1
is "$?" 2 "an unknown command exits 2"
done_testing
