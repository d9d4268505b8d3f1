#!/bin/sh
# Jobs keep the submitter's environment, as sbatch and task-spooler do:
# a venv's python, activated on PATH, runs as another user (nobody) by
# default; --export NONE gives today's clean environment, --export NAME,...
# only those; the deny list (env_deny) keeps LD_* and GPUWISE_* out and
# refuses them in --env; a command not on PATH is refused at submit.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/queue-lib.sh"

q_start
/usr/bin/python3 -m venv --without-pip "$WORK/venv" 2>"$TMP/venv.err" || diag "venv: $(cat "$TMP/venv.err")"
chmod -R a+rX "$WORK/venv"
VPATH="$WORK/venv/bin:/usr/local/bin:/usr/bin:/bin"
as_env() { # as_env VAR=VALUE... -- gpuwise ARGS (as nobody, the venv activated)
	out=$(setpriv --reuid nobody --regid nogroup --clear-groups env "$@" 2>"$TMP/stderr"); rc=$?
	err=$(cat "$TMP/stderr")
}
as_env PATH="$VPATH" VIRTUAL_ENV="$WORK/venv" MYVAR=hello LD_LIBRARY_PATH=/nonexistent GPUWISE_FOO=x \
	"$GW" submit --vram 1G -- python -c 'import os, sys; print("prefix=" + sys.prefix); print("venv=" + os.environ.get("VIRTUAL_ENV", "none")); print("myvar=" + os.environ.get("MYVAR", "none")); print("ld=" + os.environ.get("LD_LIBRARY_PATH", "none")); print("gwfoo=" + os.environ.get("GPUWISE_FOO", "none")); print("uid=%d" % os.getuid())'
is "$rc" 0 "nobody submits 'python -c ...' from an activated venv"
v=$out
q_wait_state "$v" done 30
is "$(q_state "$v")" done "... the job runs (exit 0), not 'cannot run python' (127)"
run_gw logs "$v"
like "$out" "^prefix=$WORK/venv$" "... with the venv's python (sys.prefix is the venv)"
like "$out" "^venv=$WORK/venv$" "... VIRTUAL_ENV kept"
like "$out" "^myvar=hello$" "... the submitter's variables kept"
like "$out" "^uid=65534$" "... as nobody"
like "$out" "^ld=none$" "... LD_LIBRARY_PATH not inherited (env_deny)"
like "$out" "^gwfoo=none$" "... nor GPUWISE_* variables"
run_gw show --json "$v"
is "$(printf '%s' "$out" | jget "[d['name'], d['spec']['argv'][0]]")" "[\"python\", \"$WORK/venv/bin/python\"]" "... its command resolved on the submitter's PATH at submit, named as typed"

# --export NONE: the clean environment of before
as_env PATH="$VPATH" VIRTUAL_ENV="$WORK/venv" MYVAR=hello "$GW" submit --vram 1G --export NONE -- sh -c 'echo "path=$PATH"; echo "venv=${VIRTUAL_ENV:-none} myvar=${MYVAR:-none} leak=${LEAKME:-none} home=$HOME user=$USER"'
is "$rc" 0 "--export NONE"
n=$out
q_wait_state "$n" done 30
run_gw logs "$n"
like "$out" "^path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin$" "... the default PATH"
like "$out" "^venv=none myvar=none leak=none home=/nonexistent user=nobody$" "... none of the submitter's or the daemon's variables, the user's HOME and USER"

# --export NAME,NAME=VALUE
as_env PATH="$VPATH" MYVAR=hello OTHER=x "$GW" submit --vram 1G --export MYVAR,SET=given -- sh -c 'echo "myvar=${MYVAR:-none} set=${SET:-none} other=${OTHER:-none}"'
is "$rc" 0 "--export MYVAR,SET=given"
e=$out
q_wait_state "$e" done 30
run_gw logs "$e"
like "$out" "^myvar=hello set=given other=none$" "... only the named variables, NAME=VALUE as given"

# refusals
as_env PATH="$VPATH" "$GW" submit --vram 1G --env LD_PRELOAD=/tmp/x.so -- true
is "$rc" 3 "--env LD_PRELOAD: exit 3 (refused by the queue)"
is "$err" "gpuwise: the queue does not pass LD_PRELOAD to jobs (env_deny in daemon.conf)" "... with the reason"
as_env PATH="$VPATH" "$GW" submit --vram 1G --export 'MY VAR' -- true
is "$rc" 2 "--export with a bad name: exit 2"
is "$err" "$(printf "gpuwise: --export 'MY VAR': 'MY VAR' is not a variable name (ALL, NONE or NAME[=VALUE],...)\ntry 'gpuwise submit --help'")" "... says so"
as_env PATH="$VPATH" "$GW" submit --vram 1G -- no-such-command-gw --flag
is "$rc" 1 "a command not on PATH: exit 1 at submit"
is "$err" "gpuwise: cannot find 'no-such-command-gw' on PATH ($VPATH); the job is not queued" "... refused with the PATH searched"
run_gw submit --vram 1G -- ./missing-script.sh
is "$rc" 1 "a missing ./script: exit 1 at submit"
is "$err" "gpuwise: cannot run './missing-script.sh': no such file; the job is not queued" "... refused"
run_gw queue --all --json
is "$(printf '%s' "$out" | jget "len(d['jobs'])")" 3 "nothing refused was queued"
q_stop
unlike "$(cat "$TMP/daemon.log")" "Sanitizer|runtime error" "no sanitizer report from the daemon"
done_testing
