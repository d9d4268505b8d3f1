#!/bin/sh
# `make run`: the main job on this machine.  Runs doctor, status and a
# plan, says after each what its exit status meant, and succeeds: on a
# machine without a GPU those answers are the result, not a failure.
#   sh tools/make-run.sh ./gpuwise
gw=${1:-./gpuwise}
meaning() { # meaning COMMAND STATUS
	case $2 in
	0) echo "ok" ;;
	1) echo "a runtime error (see the message above)" ;;
	2) echo "a usage error" ;;
	3) case $1 in
	   doctor) echo "warnings: findings to look at, nothing failed" ;;
	   plan) echo "fits only with layers offloaded to host RAM" ;;
	   *) echo "verdict 3 (see gpuwise $1 --help)" ;;
	   esac ;;
	4) case $1 in
	   doctor) echo "failures: see the findings marked fail (no GPU or driver here is one)" ;;
	   plan) echo "does not fit" ;;
	   *) echo "verdict 4 (see gpuwise $1 --help)" ;;
	   esac ;;
	*) echo "unexpected status" ;;
	esac
}
summary=""
step() { # step NAME ARGS...
	name=$1
	shift
	printf '\n$ gpuwise %s\n' "$*"
	"$gw" "$@"
	st=$?
	line="gpuwise $name: exit $st, $(meaning "$name" "$st")"
	echo "-> $line"
	summary="$summary
  $line"
	[ "$st" -le 4 ]
}
bad=0
step doctor doctor || bad=1
step status status || bad=1
step plan plan llama3.1:8b --quant q4_k_m --gpu rtx-4060 || bad=1
printf '\nmake run:%s\n' "$summary"
if [ "$bad" -ne 0 ]; then
	echo "make run: a command crashed or was killed (exit status above 4)"
	exit 1
fi
echo "make run: done (statuses 3 and 4 are answers: see 'gpuwise COMMAND --help')"
