#!/bin/sh
# Requests that are right, against a real daemon on fake NVML servers: memory
# NVML counts as used that no visible process holds counts against the GPU
# (the 24 GiB card with 9.77 GiB used); an exclusive job never gets a GPU a
# foreign process uses (configurable threshold).  queue-vramauto.t: --vram
# auto; queue-sizes.t: standard sizes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/queue-lib.sh"

SCN=$FIX/scenarios
GiB=1073741824
conf() { printf 'context_reserve = 512M\nclient_timeout = 5s\n%s' "$1" > "$TMP/daemon.conf"; }

# ---- memory used that no process holds counts against the GPU --------------------------
export GPUWISE_FAKE_SCENARIO="$SCN/server-24g-unattributed.json"
conf ""
q_start
python3 "$QTOOLS" topology "$SOCK" > "$TMP/topo" 2>/dev/null
out=$(python3 -c '
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(b"{\"op\": \"ping\", \"v\": 1}\n"); f = s.makefile()
print(json.loads(f.readline())["topology"][0]["mem_outside_bytes"])' "$SOCK")
is "$(python3 -c "print(round($out / $GiB, 2))")" "9.77" "the daemon counts the 9.77 GiB NVML says are used (no process listed) as held outside the queue"
j1=$("$GW" submit --vram 6G --name six1 -- sleep 30)
j2=$("$GW" submit --vram 6G --name six2 -- sleep 30)
j3=$("$GW" submit --vram 8G --name eight -- sleep 30)
q_wait_state "$j2" running 20
sleep 0.5
is "$(q_state "$j1") $(q_state "$j2") $(q_state "$j3")" "running running queued" "24 GiB card with 9.77 GiB used: 6 + 6 GiB run, the 8 GiB job waits (it was given 6 + 6 + 8)"
run_gw show --json "$j3"
like "$(printf '%s' "$out" | jget "d['reason']")" "^no GPU has 8\\.50 GiB free" "... and says why"
"$GW" cancel "$j1" "$j2" "$j3" >/dev/null 2>&1
q_cleanup

# ---- exclusive means no foreign process on the GPU --------------------------------
export GPUWISE_FAKE_SCENARIO="$SCN/server-2x24g-foreign.json"
conf ""
q_start
x1=$("$GW" submit --mode exclusive --name x1 -- sleep 30)
q_wait_state "$x1" running 20
run_gw show --json "$x1"
is "$(printf '%s' "$out" | jget "d['gpus']")" "[1]" "an exclusive job gets GPU 1, not GPU 0 where a foreign process (2 GiB, 93%) runs"
x2=$("$GW" submit --mode exclusive --name x2 -- sleep 30)
sleep 1.2
is "$(q_state "$x2")" queued "a second exclusive job is not given the foreign process's GPU"
run_gw show --json "$x2"
like "$(printf '%s' "$out" | jget "d['reason']")" "^waiting for 1 idle GPU \\(GPU 0: a process outside the queue uses it\\)" "... and says why"
s1=$("$GW" submit --vram 4G --name beside -- sleep 30)
q_wait_state "$s1" running 20
is "$(q_state "$s1")" running "a shared job still packs beside the foreign process"
"$GW" cancel "$x1" "$x2" "$s1" >/dev/null 2>&1
q_cleanup
# the threshold is configurable: 4 GiB of foreign memory tolerated
conf "exclusive_foreign = 4G
"
q_start
x1=$("$GW" submit --mode exclusive --gpus 2 --name both -- sleep 30)
q_wait_state "$x1" running 20
is "$(q_state "$x1")" running "exclusive_foreign = 4G: an exclusive job may take the GPU with 2 GiB of a foreign process"
"$GW" cancel "$x1" >/dev/null 2>&1
q_cleanup

done_testing
