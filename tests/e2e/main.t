#!/bin/sh
# The command table: help, version, unknown commands, global options.
. "$(dirname "$0")/lib.sh"

run_gw --version
is "$rc" 0 "--version exits 0"
like "$out" '^gpuwise [0-9]+\.[0-9]+\.[0-9]+$' "--version prints the version"

run_gw help
is "$rc" 0 "help exits 0"
for c in plan cards cost status doctor explain run; do
	like "$out" "^  $c " "help lists $c"
done

run_gw
is "$rc" 2 "no command is a usage error"

run_gw stauts
is "$rc" 2 "unknown command exits 2"
like "$err" "'stauts' is not a gpuwise command" "unknown command is named"
like "$err" "status" "did-you-mean suggests status"

run_gw --bogus
is "$rc" 2 "unknown global option exits 2"

run_gw help nosuch
is "$rc" 2 "help for an unknown command exits 2"

run_gw --data-dir
is "$rc" 2 "--data-dir without a directory is a usage error"

done_testing
