#!/bin/sh
# Issue 31: explain over the labelled corpus.  tools/explain-eval.py runs
# gpuwise explain --batch (one process per set) on every message of the fit files (data/explain-corpus-*.tsv,
# the matcher's data), the held-out files (tests/validation/explain-heldout-*.tsv,
# threads split off by tools/corpus-split.py before any tuning; the binary
# never reads them) and the negative files (non-GPU errors), and prints top-1
# and usable-fix rates (the row's fix_match hits a fix line) for fit and
# held-out apart and per family, the fit files again with each row's own
# thread left out of the corpus (leave-one-source-out: what the matcher does
# on a thread it has not seen, measured without the held-out files), and the
# false-positive rate.  The issue's
# targets are held-out top-1 >= 85%, usable fix >= 70%, negatives <= 2%; the
# bounds asserted below are what the matcher reaches today (the gap is
# printed), so a change that loses ground fails.
. "$(dirname "$0")/lib.sh"
ls "$GW_TOP"/data/explain-corpus-*.tsv > /dev/null 2>&1 || { skip "no corpus"; done_testing; exit 0; }
/usr/bin/python3 "$GW_TOP/tools/explain-eval.py" "$GW" "$GW_TOP" --fails 0 --loo > "$TMP/eval" 2>&1
rc=$?
sed 's/^/# /' "$TMP/eval"
is "$rc" 0 "explain-eval ran"
rate() { awk -v k="$1" -v f="$2" '$1 == "RATE" && $2 == k { for (i = 3; i <= NF; i++) { split($i, a, "="); if (a[1] == f) print a[2] } }' "$TMP/eval"; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'; }
n=$(rate heldout n); nneg=$(rate negative n)
ok "$([ "${n:-0}" -ge 300 ]; echo $?)" "at least 300 held-out messages ($n)"
ok "$([ "${nneg:-0}" -ge 200 ]; echo $?)" "at least 200 negative messages ($nneg)"
t1=$(rate heldout top1); fx=$(rate heldout fix); fp=$(rate negative fp)
diag "held-out top-1 $t1% (target 85%, gap $(awk -v a="$t1" 'BEGIN { printf "%.1f", 85 - a }') points)"
diag "held-out usable fix $fx% (target 70%, gap $(awk -v a="$fx" 'BEGIN { printf "%.1f", 70 - a }') points)"
diag "negatives with a diagnosis $fp% (target <= 2%)"
ge "$t1" 80; ok $? "held-out top-1 >= 80% (reached: $t1%)"
ge "$fx" 55; ok $? "held-out usable fix >= 55% (reached: $fx%)"
ge 2 "$fp"; ok $? "negatives with a diagnosis <= 2% ($fp%)"
ge "$(rate fit top1)" 90; ok $? "fit top-1 >= 90% ($(rate fit top1)%)"
ge "$(rate fit-loo top1)" 82; ok $? "fit top-1 with each row's thread left out >= 82% ($(rate fit-loo top1)%)"
lint=$(awk '$1 == "LINT"' "$TMP/eval")
like "$lint" 'dangling=0 repeated=0' "no fix list of the whole corpus has a dangling connective or a repeated line ($lint)"
done_testing
