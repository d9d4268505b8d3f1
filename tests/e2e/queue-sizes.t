#!/bin/sh
# Standard sizes (vram_sizes in daemon.conf) against a real daemon on a fake
# server of two 24 GiB cards: requests round up to the next size, placement
# packs by those slots, queue and show say the request and the size charged,
# and rounding lets a third job fit that free-form packing fragments out.
# Then per GPU model (vram_sizes[MODEL]) on a fake A100 80 GiB + RTX 4090:
# a job is charged the standard size of the model it is placed on, quotas
# count that size, and placement keeps a job off a model whose size would
# take it over its quota.
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
		is "$(printf '%s' "$out" | jget "[d['vram_request_bytes'] // $GiB, d['vram_charged_bytes'], [[x['model'], x['bytes'] // $GiB] for x in d['vram_standard_sizes']]]")" \
			"[10, null, [[\"NVIDIA GeForce RTX 4090\", 12]]]" \
			"vram_sizes = 8G,12G,24G: a waiting 10 GiB job keeps its request and would be charged 12 GiB (show --json)"
		run_gw show "$k4"
		like "$out" "VRAM 10\\.00 GiB per GPU
  std sizes   12\\.00 GiB on NVIDIA GeForce RTX 4090" "show says the request and the size it would be charged"
		run_gw show --json "$k3"
		is "$(printf '%s' "$out" | jget "[d['vram_request_bytes'] // $GiB, d['vram_charged_bytes'] // $GiB]")" "[20, 24]" "... a running 20 GiB job is charged the 24 GiB size"
		run_gw show "$k3"
		like "$out" "  charged     24\\.00 GiB per GPU against the quota \\(the standard size of the GPU it runs on\\)" "... show says so"
		run_gw queue
		like "$out" "k3 .* 20\\.00 GiB \\(std 24\\.00 GiB\\)" "queue says the request and the size charged"
		run_gw quota --json
		is "$(printf '%s' "$out" | jget "[p['vram_used_bytes'] // $GiB for p in d['projects'] if p['project'] == 'default'][0]")" 48 "quota counts the sizes charged (12 + 12 + 24 GiB), not the 44 GiB asked"
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

# ---- per GPU model: an A100 80 GiB and an RTX 4090 24 GiB -------------------------------
export GPUWISE_FAKE_SCENARIO="$SCN/server-a100-4090.json"
conf "vram_sizes[RTX 4090] = 6G,12G,24G
vram_sizes[a100] = 10G,20G,40G,80G
"
q_start
gpu_of() { "$GW" show --json "$1" | jget "d['gpus']"; }
charged() { "$GW" show --json "$1" | jget "d['vram_charged_bytes'] // $GiB"; }
# 70 GiB fits only the A100 (its 80 GiB size: the whole card); 9 GiB then goes to the 4090
big=$("$GW" submit --vram 70G --name big -- sleep 30)
q_wait_state "$big" running 20
is "$(gpu_of "$big") $(charged "$big")" "[0] 80" "70 GiB runs on the A100 and is charged its 80 GiB size (the whole card)"
"$GW" quota set lab --vram 22G >/dev/null
a=$("$GW" submit --project lab --vram 9G --name a -- sleep 30)
q_wait_state "$a" running 20
is "$(gpu_of "$a") $(charged "$a")" "[1] 12" "9 GiB on the RTX 4090 is charged the 4090's 12 GiB size"
run_gw quota --json
is "$(printf '%s' "$out" | jget "[p['vram_used_bytes'] // $GiB for p in d['projects'] if p['project'] == 'lab'][0]")" 12 "quota counts 12 GiB for it, not the 9 GiB asked"
run_gw show --json "$a"
is "$(printf '%s' "$out" | jget "sorted([x['model'], x['bytes'] // $GiB] for x in d['vram_standard_sizes'])")" \
	'[["NVIDIA A100 80GB PCIe", 10], ["NVIDIA GeForce RTX 4090", 12]]' "show --json: 9 GiB is 10 GiB on the A100, 12 GiB on the 4090"
run_gw queue
like "$out" " a .* 9\\.00 GiB \\(std 12\\.00 GiB\\)" "queue says 9 GiB asked, 12 GiB charged"
# the lab page (status --serve) shows both too
"$GW" status --serve 127.0.0.1:0 --socket "$SOCK" >"$TMP/serve.out" 2>"$TMP/serve.err" &
spid=$!
port=$(serve_port "$TMP/serve.out" "$spid")
page=$(curl -s "http://127.0.0.1:${port:-1}/" 2>&1)
like "$page" "<td class=num>9\\.00 GiB \\(std 12\\.00 GiB\\)</td>" "the lab page shows 9 GiB asked and the 12 GiB charged"
kill "$spid" 2>/dev/null
wait "$spid" 2>/dev/null
"$GW" cancel "$big" >/dev/null 2>&1
q_wait_state "$big" cancelled 20
# 12 GiB used of 22: a second 9 GiB job fits the quota only at the A100's 10 GiB size
b=$("$GW" submit --project lab --vram 9G --name b -- sleep 30)
q_wait_state "$b" running 20
is "$(gpu_of "$b") $(charged "$b")" "[0] 10" "the second 9 GiB job runs on the A100 (10 GiB; the 4090's 12 GiB would take lab over 22 GiB)"
run_gw quota --json
is "$(printf '%s' "$out" | jget "[p['vram_used_bytes'] // $GiB for p in d['projects'] if p['project'] == 'lab'][0]")" 22 "... lab's quota counts 12 + 10 GiB"
c=$("$GW" submit --project lab --vram 1G --name c -- sleep 30)
sleep 1.2
run_gw show --json "$c"
is "$(printf '%s' "$out" | jget "[d['state'], d['reason']]")" '["queued", "project lab is at its VRAM quota: 22.00 GiB/22.00 GiB (this job'"'"'s 6.00 GiB would take it to 28.00 GiB)"]' "a third job waits: the quota is full at the sizes charged, and the reason names what this job would add (its 1 GiB is charged the smallest standard size, 6 GiB)"
"$GW" cancel "$a" "$b" "$c" >/dev/null 2>&1
# refused at submit: no model's size of 9 GiB fits a 9 GiB quota (10 GiB on the A100, 12 on the 4090)
"$GW" quota set small --vram 9G >/dev/null
run_gw submit --project small --vram 9G -- true
is "$rc" 3 "9 GiB in a 9 GiB project: every model charges more, refused at submit (exit 3)"
is "$err" "gpuwise: the job asks for 9.00 GiB of GPU memory, which is charged at least 10.00 GiB here (the smallest standard size of any GPU model that holds it), and project small's VRAM quota is 9.00 GiB: it could never start" "... with the reason"
# 5 GiB is 6 GiB on the 4090 but 10 GiB on the A100: it may only run on the 4090
s5=$("$GW" submit --project small --vram 5G --name s5 -- sleep 30)
q_wait_state "$s5" running 20
is "$(gpu_of "$s5") $(charged "$s5")" "[1] 6" "5 GiB in the 9 GiB project runs on the 4090 at 6 GiB, never on the A100 at 10 GiB"
"$GW" cancel "$s5" >/dev/null 2>&1
q_cleanup
printf 'vram_sizes = 12G,8G\n' > "$TMP/bad.conf"
run_gw daemon --state "$TMP/st2" --socket "$TMP/s2.sock" --config "$TMP/bad.conf"
is "$rc" 1 "vram_sizes not ascending: the daemon refuses its config (exit 1)"
like "$err" "config '.*bad.conf' line 1: bad value '12G,8G' for 'vram_sizes'" "... naming the line"
printf '# sizes\nvram_sizes[A100 = 10G\n' > "$TMP/bad.conf"
run_gw daemon --state "$TMP/st2" --socket "$TMP/s2.sock" --config "$TMP/bad.conf"
is "$rc $err" "1 gpuwise: config '$TMP/bad.conf' line 2: expected vram_sizes[MODEL] = SIZES" "vram_sizes[MODEL without its bracket: refused (exit 1), naming the line"
printf 'vram_sizes[] = 10G\n' > "$TMP/bad.conf"
run_gw daemon --state "$TMP/st2" --socket "$TMP/s2.sock" --config "$TMP/bad.conf"
like "$rc $err" "^1 .*line 1: bad value '10G' for 'vram_sizes\\[\\]'" "vram_sizes[] (no model): refused"
done_testing
