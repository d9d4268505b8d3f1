#!/bin/sh
# The user-facing promises agree with the binary: every long option of
# `gpuwise CMD --help` is in that command's .SS section of man/gpuwise.1 and
# back, with the same exit statuses; every GPUWISE_* variable is in man
# ENVIRONMENT; README's examples run and the files it names exist.  The
# --json keys against docs/json-*.md: docs-json.t.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/docs-lib.sh"
man_section "GLOBAL OPTIONS" SH | python3 "$TMP/opts.py" > "$TMP/global"
like "$(cat "$TMP/global")" "^--data-dir" "man: GLOBAL OPTIONS lists --data-dir"
like "$(man_section DESCRIPTION SH)" 'Every command accepts \\fB\\-\\-help' "man: DESCRIPTION promises --help for every command"
printf -- '--help\n' >> "$TMP/global"

for c in plan cards cost status doctor explain run bench list sim export; do
	run_gw "$c" --help
	is "$rc" 0 "$c --help exits 0"
	printf '%s\n' "$out" | python3 "$TMP/opts.py" > "$TMP/help"
	man_section "$c" | python3 "$TMP/opts.py" > "$TMP/man"
	allowed=$TMP/man
	# cards takes plan's options (its man section says so)
	if [ "$c" = cards ]; then
		like "$(man_section cards)" 'the options of' "man: cards refers to plan's options"
		man_section plan | python3 "$TMP/opts.py" | sort -u - "$TMP/man" > "$TMP/allowed"
		allowed=$TMP/allowed
	fi
	missing=$(sort -u "$allowed" "$TMP/global" | comm -23 "$TMP/help" -)
	is "$missing" "" "$c: every option of --help is in man/gpuwise.1 (.SS $c)"
	extra=$(comm -23 "$TMP/man" "$TMP/help")
	is "$extra" "" "$c: every option of man .SS $c is in --help"
	[ "$(wc -l < "$TMP/man")" -ge 1 ] ; ok $? "$c: the man section lists options"
done

# every GPUWISE_* variable the code reads is in man ENVIRONMENT
envs=$(cat "$GW_TOP"/src/*.c "$GW_TOP"/src/*/*.c | grep -oE 'getenv\("GPUWISE_[A-Z_]+"\)' | sed 's/getenv("\(.*\)")/\1/' | sort -u)
[ -n "$envs" ]; ok $? "src reads GPUWISE_* variables"
missing=$(for e in $envs; do man_section ENVIRONMENT SH | grep -q "$e" || echo "$e"; done)
is "$missing" "" "man ENVIRONMENT documents every GPUWISE_* variable"

for c in plan cards cost status doctor explain run bench list sim export; do
	h=$("$GW" "$c" --help | python3 "$TMP/exits.py")
	m=$(man_section "$c" | python3 "$TMP/exits.py")
	isnt "$h" none "$c: --help has an Exit status paragraph"
	is "$m" "$h" "$c: man and --help list the same exit statuses"
done

# ---- the queue (issue 11): --help against man (its --json: docs-json.t) ------
for c in daemon submit queue show logs cancel hold release quota; do
	run_gw "$c" --help
	is "$rc" 0 "$c --help exits 0"
	printf '%s\n' "$out" | python3 "$TMP/opts.py" > "$TMP/help"
	man_section "$c" | python3 "$TMP/opts.py" > "$TMP/man"
	is "$(sort -u "$TMP/man" "$TMP/global" | comm -23 "$TMP/help" -)" "" "$c: every option of --help is in man/gpuwise.1 (.SS $c)"
	is "$(comm -23 "$TMP/man" "$TMP/help")" "" "$c: every option of man .SS $c is in --help"
	h=$(printf '%s\n' "$out" | python3 "$TMP/exits.py")
	isnt "$h" none "$c: --help has an Exit status paragraph"
	is "$(man_section "$c" | python3 "$TMP/exits.py")" "$h" "$c: man and --help list the same exit statuses"
done

# ---- README examples: every plan/cards/cost line runs with a verdict status -----
grep -E '^    gpuwise (plan|cards|cost)( |$)' "$GW_TOP/README.md" | grep -v '\.gguf' > "$TMP/readme"
[ "$(wc -l < "$TMP/readme")" -ge 5 ]; ok $? "README: plan/cards/cost examples found"
while IFS= read -r line; do
	cmd=${line%%#*}
	want=$(printf '%s' "$line" | sed -n 's/.*# *exit \([0-9]\).*/\1/p')
	# shellcheck disable=SC2086
	set -- ${cmd#*gpuwise }
	run_gw "$@"
	if [ -n "$want" ]; then
		is "$rc" "$want" "README: '$(echo $cmd)' exits $want"
	else
		like "$rc" '^[034]$' "README: '$(echo $cmd)' runs (exit $rc)"
	fi
	is "$err" "" "README: '$(echo $cmd)' writes nothing on stderr"
done < "$TMP/readme"

# every repository path README.md names in backticks exists
missing=$(grep -oE '`(docs|tests|data|man|src|bench)/[^` ]+`' "$GW_TOP/README.md" | tr -d '`' | sort -u |
	while read -r f; do [ -e "$GW_TOP/$f" ] || echo "$f"; done)
is "$missing" "" "README: every file it names exists"

done_testing
