#!/bin/sh
# The catalog's lint (issue 24): no string that src/cmd and src/watch print
# to the reader (printf, fprintf, fputs, puts, gw_errorf, gw_warnf, run's
# queued output, bench's progress, table headers and rows) holds an English
# word without going through _() / N_() / P_() (tools/po-lint.py), except
# the few in po/lint-allow.txt (units, ids, JSON, the --log CSV header).
# The lint itself is tested on a temporary file: a new unwrapped sentence
# fails it, the same sentence wrapped, a format without words, JSON keys
# and an allowed literal pass.
. "$(dirname "$0")/lib.sh"
LINT="python3 $GW_TOP/tools/po-lint.py --allow $GW_TOP/po/lint-allow.txt"
cd "$GW_TOP" || exit 1
# Every command and watcher source.
files=$(ls src/cmd/*.c src/watch/*.c)
n=$(printf '%s\n' $files | wc -l | tr -d ' ')
ok "$([ "$n" -ge 15 ]; echo $?)" "the lint reads $n source files"
# shellcheck disable=SC2086
out=$($LINT $files 2>&1); rc=$?
[ -n "$out" ] && printf "%s\n" "$out" | head -20 | sed 's/^/# /'
is "$rc:$out" "0:" "every printed literal with words in src/cmd and src/watch goes through the catalog"

# ---- the lint can fail -------------------------------------------------------------
mkdir -p "$TMP/src/cmd"
cat > "$TMP/src/cmd/new.c" <<'C'
static void f(FILE *o, int n, const char *s)
{
	printf("%s\n", s);                      /* no word: passes */
	printf("{\"id\": %d, \"state\": \"running\"}\n", n); /* JSON keys: pass */
	fprintf(o, _("the job is %s\n"), s);    /* wrapped: passes */
	printf(P_("%d GPU\n", "%d GPUs\n", n), n);
	const char *hdr[] = {"#", "GPU", _("state")}; /* GPU is allowed */
	/* printf("a comment is not printed\n"); */
	fprintf(o, "the job could not be "      /* line 9: a new unwrapped sentence */
		   "placed: %s\n", s);
	gw_errorf("cannot read '%s'", s);       /* line 11 */
	table_add(t, s, n ? "ready" : "-");     /* line 12 */
}
C
cd "$TMP" || exit 1
out=$($LINT src/cmd/new.c 2>&1); rc=$?
is "$rc" 1 "a new unwrapped sentence fails the lint (exit 1)"
is "$out" 'src/cmd/new.c:9: "the job could not be " "placed: %s\n"
src/cmd/new.c:11: "cannot read '\''%s'\''"
src/cmd/new.c:12: "ready"' "the lint names each unwrapped literal with its line, and nothing else"
sed -i -e 's/fprintf(o, "the job could not be "/fprintf(o, _("the job could not be "/' \
	-e 's/"placed: %s\\n", s);/"placed: %s\\n"), s);/' -e "s/gw_errorf(\"cannot read '%s'\", s)/gw_errorf(_(\"cannot read '%s'\"), s)/" \
	-e 's/n ? "ready" : "-"/n ? _("ready") : "-"/' "$TMP/src/cmd/new.c"
out=$($LINT src/cmd/new.c 2>&1); rc=$?
is "$rc:$out" "0:" "the same file with the three wrapped passes"
printf 'static void g(void) { printf("Standard sizes\\n"); }\n' > "$TMP/src/cmd/other.c"
printf 'src/cmd/new.c: "Standard sizes\\n"\n' > "$TMP/allow"
out=$(python3 "$GW_TOP/tools/po-lint.py" --allow "$TMP/allow" src/cmd/other.c 2>&1); rc=$?
is "$rc:$out" '1:src/cmd/other.c:1: "Standard sizes\n"' "an allow line naming another file does not allow it here"
printf '"Standard sizes\\n"\n' > "$TMP/allow"
out=$(python3 "$GW_TOP/tools/po-lint.py" --allow "$TMP/allow" src/cmd/other.c 2>&1); rc=$?
is "$rc:$out" "0:" "an allow line for every file allows it"
done_testing
