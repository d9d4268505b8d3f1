#!/bin/sh
# Standard sizes (vram_sizes in daemon.conf) against a real daemon on a fake
# server of two 24 GiB cards: requests round up to the next size, placement
# packs by those slots, queue and show say the rounded size, and rounding
# lets a third job fit that free-form packing fragments out.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/queue-lib.sh"

SCN=$FIX/scenarios
GiB=1073741824
conf() { printf 'context_reserve = 512M\nclient_timeout = 5s\n%s' "$1" > "$TMP/daemon.conf"; }

# ---- standard sizes: a third job fits that free-form packing fragments out -----------
export GPUWISE_FAKE_SCENARIO="$SCN/server-2x24g.json"
for mode in free sizes; do
	if [ $mode = sizes ]; then conf "vram_sizes = 8G,12G,24G
"; else conf ""; fi
	q_start
	k1=$("$GW" submit --vram 12G --name k1 -- sleep 30)
	q_wait_state "$k1" running 20
	k2=$("$GW" submit --vram 12G --name k2 -- sleep 30)
	q_wait_state "$k2" running 20
	k3=$("$GW" submit --vram 20G --name k3 -- sleep 30)
	sleep 1.2
	eval "st_$mode=\"\$(q_state "\$k3")\""
	if [ $mode = sizes ]; then
		k4=$("$GW" submit --vram 10G --name k4 -- true)
		run_gw show --json "$k4"
		is "$(printf '%s' "$out" | jget "[d['vram_request_bytes'] // $GiB, d['vram_asked_bytes'] // $GiB]")" "[12, 10]" "vram_sizes = 8G,12G,24G: 10 GiB rounds up to 12 GiB (show --json says both)"
		run_gw show "$k4"
		like "$out" "VRAM 12\\.00 GiB per GPU \\(the standard size for the 10\\.00 GiB asked\\)" "show says the rounded size"
		run_gw queue
		like "$out" "k4 .* 12\\.00 GiB \\(std\\)" "queue says the rounded size"
		run_gw show --json "$k3"
		is "$(printf '%s' "$out" | jget "d['vram_request_bytes'] // $GiB")" 24 "... 20 GiB takes the 24 GiB size"
		"$GW" cancel "$k4" >/dev/null 2>&1
		run_gw show --json "$k2"
		is "$(python3 -c "import json,sys; print(len(set(json.loads(sys.argv[1])['gpus'] + json.loads(sys.argv[2])['gpus'])))" "$("$GW" show --json "$k1")" "$out")" 1 "... the two 12 GiB slots pack on one card"
	else
		run_gw show --json "$k3"
		like "$(printf '%s' "$out" | jget "d['reason']")" "^no GPU has 20\\.50 GiB free" "free-form: 12 GiB + the 512 MiB context twice do not share a 24 GiB card, so the 20 GiB job finds no GPU"
	fi
	"$GW" cancel "$k1" "$k2" "$k3" >/dev/null 2>&1
	q_cleanup
done
is "$st_free $st_sizes" "queued running" "the third job waits with free-form requests and runs with standard sizes"
printf 'vram_sizes = 12G,8G\n' > "$TMP/bad.conf"
run_gw daemon --state "$TMP/st2" --socket "$TMP/s2.sock" --config "$TMP/bad.conf"
is "$rc" 1 "vram_sizes not ascending: the daemon refuses its config (exit 1)"
like "$err" "config '.*bad.conf' line 1: bad value '12G,8G' for 'vram_sizes'" "... naming the line"
done_testing
