#!/bin/sh
# The lab's page (issue 20 item 8): `gpuwise status --serve` beside a real
# queue daemon with jobs of three users (root, nobody, a user this test
# creates) in two projects.  The page is fetched with curl and rendered in
# headless Chromium (a screenshot is taken and checked not blank); it shows
# the GPUs, the queue and the projects against their quotas, and never
# another user's argv, environment or working directory.  The queue and
# quota series on /metrics are checked by promtool.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/queue-lib.sh"
. "$GW_TOP/tests/e2e/report_shot.sh"

have() { command -v "$1" >/dev/null 2>&1; }
if ! have curl; then
	skip "curl not installed (.ci/run installs it)"
	done_testing
	exit $?
fi

# a user of our own: a real passwd entry when useradd exists, else a bare uid
TUSER=gwpage$$
TUID=
if have useradd && useradd -M -N -r -s /usr/sbin/nologin "$TUSER" 2>/dev/null; then
	TUID=$(id -u "$TUSER")
	trap 'q_cleanup; userdel "$TUSER" 2>/dev/null; cd /; rm -rf "$TMP"' EXIT
else
	TUSER=""
	TUID=54321
fi
as_tuser() {
	out=$(setpriv --reuid "$TUID" --regid nogroup --clear-groups "$GW" "$@" 2>"$TMP/stderr"); rc=$?
	err=$(cat "$TMP/stderr")
}
diag "the created user: ${TUSER:-uid $TUID} (uid $TUID)"

# the lab server of the queue tests, busy: GPU 0 at 87 % with 18 GiB used, GPU 1 at 12 %
python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
for g, u, m, t in zip(d["gpus"], (87, 12), (18 << 30, 1 << 30), (71, 45)):
    g.update(util_gpu_pct=u, util_mem_pct=u // 2, mem_used=m, temp_c=t)
json.dump(d, open(sys.argv[2], "w"))' "$GPUWISE_FAKE_SCENARIO" "$TMP/busy.json"
chmod 644 "$TMP/busy.json"
export GPUWISE_FAKE_SCENARIO="$TMP/busy.json"
q_start
"$GW" quota set nlp --vram 16G --gpus 1 >/dev/null
"$GW" quota set hold --vram 8G --jobs 0 >/dev/null
# running jobs: root in nlp, nobody in default; waiting: the created user in hold
rid=$("$GW" submit --project nlp --vram 6G --name root-train --env ROOTSECRET=rs-4711 -- sh -c 'exec sleep 60' root-arg-77)
nid=$(setpriv --reuid nobody --regid nogroup --clear-groups "$GW" submit --vram 5G --env NOBODYSECRET=nb-9931 \
	-- sh -c 'exec sleep 60' nobody-arg-42)
as_tuser submit --project hold --vram 2G --env TSECRET=tu-5150 -- /bin/sh -c 'echo tuser-arg-13'
tid=$out
[ -n "$rid" ] && [ -n "$nid" ] && [ -n "$tid" ]; ok $? "three users submitted ($rid root, $nid nobody, $tid ${TUSER:-uid $TUID})"
q_wait_state "$rid" running 20
q_wait_state "$nid" running 20

# ---- the page, served by the created user (not an administrator) -------------------
PAGE_GW=$GW
setpriv --reuid "$TUID" --regid nogroup --clear-groups "$GW" status --serve 127.0.0.1:0 --socket "$SOCK" \
	--prometheus-names gpuwise >"$TMP/serve.out" 2>"$TMP/serve.err" &
spid=$!
port=$(serve_port "$TMP/serve.out" "$spid")
[ -n "$port" ]; ok $? "status --serve listens (port $port), run by ${TUSER:-uid $TUID}"
url=http://127.0.0.1:$port
code=$(curl -s -o "$TMP/page.html" -D "$TMP/page.h" -w '%{http_code}' "$url/")
is "$code" 200 "GET /: 200"
like "$(cat "$TMP/page.h")" '^Content-Type: text/html; charset=utf-8' "GET /: an HTML page"
page=$(cat "$TMP/page.html")
like "$page" '<meta http-equiv=refresh content=5>' "the page refreshes itself every 5 s"
like "$page" '<a href="/metrics">/metrics</a>' "the page links /metrics"
# GPUs: the fake server's two 48 GiB cards, memory and utilisation columns
is "$(printf '%s\n' "$page" | grep -c '^<tr><td>[01]</td><td>NVIDIA RTX 6000 Ada Generation</td>')" 2 "both GPUs have a row"
like "$page" '^<tr><td>0</td><td>[^<]*</td><td class=num>18.00 GiB / 48.00 GiB</td><td><div class=bar><div class="fill" style="width:37.5%">' "GPU 0: 18 of 48 GiB used, a bar 37.5 % full"
like "$page" '^<tr><td>0</td>.*<td class=num>87%</td>.*<td class=num>71 &deg;C</td></tr>$' "GPU 0: 87 % utilisation, 71 degrees"
like "$page" '^<tr><td>1</td>.*<td class=num>12%</td>' "GPU 1: 12 % utilisation"
# the queue: every user's jobs, as 'queue' shows them
like "$page" "<tr class=\"running\"><td class=num>$rid</td><td>root-train</td><td>root</td><td>nlp</td><td>running</td><td class=num>1</td><td class=num>[01]</td><td class=num>6.00 GiB</td>" "root's running job (name, user, project, state)"
like "$page" "<tr class=\"running\"><td class=num>$nid</td><td>sh</td><td>nobody</td><td>default</td><td>running</td>" "nobody's running job"
like "$page" "<tr class=\"queued\"><td class=num>$tid</td><td>/bin/sh</td><td>${TUSER:-$TUID}</td><td>hold</td><td>queued</td><td class=num>1</td><td class=num></td><td class=num>2.00 GiB</td>" "the created user's waiting job"
like "$page" "project hold is at its running-job quota" "... with its reason in words"
# projects against their quotas
like "$page" '<tr><td>nlp</td><td class=num>6.00 GiB / 16.00 GiB</td>' "nlp: 6 GiB in use of its 16 GiB quota"
like "$page" "<td class=num>0 / 1</td>" "nlp: 0 of its 1 whole GPU (a shared job holds none)"
like "$page" '<tr><td>hold</td><td class=num>0 B / 8.00 GiB</td>' "hold: nothing in use of 8 GiB"
# each GPU: what the queue reserved for its running jobs beside NVML's used memory
# (the fake NVML's 18 GiB on GPU 0 are no job's); expected from where the jobs run
g_of() { "$GW" show --json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["gpus"][0])'; }
rg=$(g_of "$rid"); ng=$(g_of "$nid")
exp0=0; exp1=0
for jg in "$rg:6" "$ng:5"; do
	gi=${jg%%:*}; gb=${jg#*:}
	eval "exp$gi=\$((exp$gi + gb * 1024 + 512))"
done
run_gw quota --json
q0=$(printf '%s' "$out" | python3 -c 'import json,sys; g=json.load(sys.stdin)["gpus"]; print(" ".join("%d:%d:%d:%d" % (x["index"], x["reserved_bytes"] >> 20, x["memory_used_bytes"] >> 20, x["jobs_running"]) for x in g))')
n0=$(( (rg == 0) + (ng == 0) )); n1=$(( (rg == 1) + (ng == 1) ))
is "$q0" "0:$exp0:18432:$n0 1:$exp1:1024:$n1" "quota --json: each GPU's reserved MiB (requests + 512 MiB context) beside NVML's used MiB and its running jobs (root's on $rg, nobody's on $ng)"
run_gw quota
like "$out" "^GPU +NAME +RESERVED BY QUEUE +USED \(NVML\) +JOBS" "quota: a GPU table, reserved beside used"
r0=$(python3 -c "print('%.2f GiB' % ($exp0 / 1024) if $exp0 else '0 B')")
like "$out" "^0 +NVIDIA RTX 6000 Ada Generation +$r0 / 48.00 GiB +18.00 GiB / 48.00 GiB +$n0\$" "quota: GPU 0 shows $r0 reserved and NVML's 18.00 GiB used"
like "$page" "^<tr><td>0</td><td>[^<]*</td><td class=num>18.00 GiB / 48.00 GiB</td><td>.*</td><td class=\"num reserved\">$r0 / 48.00 GiB</td>" "the page: GPU 0's NVML used (18.00 GiB) beside the queue's reserved ($r0)"
like "$page" "<th>memory used</th><th></th><th>reserved by the queue</th>" "... under a 'reserved by the queue' heading"
# never argv beyond the display name, never env, never cwd
for secret in root-arg-77 nobody-arg-42 tuser-arg-13 rs-4711 nb-9931 tu-5150 ROOTSECRET NOBODYSECRET TSECRET "$WORK"; do
	case $page in
	*"$secret"*) ok 1 "the page shows no one's arguments, environment or directory ('$secret' is on it)" ;;
	*) ok 0 "the page does not contain '$secret'" ;;
	esac
done
# the checker is not blind: the same jobs' argv and env are there for their owners
run_gw show --json "$rid"
like "$out" 'root-arg-77' "(show gives root its own job's argv, so the test above could fail)"

# read-only
is "$(curl -s -o /dev/null -w '%{http_code}' --data-binary 'x=1' "$url/")" 405 "POST /: 405 (read-only)"
is "$(curl -s -o /dev/null -w '%{http_code}' "$url/cancel")" 404 "no other path: 404"

# ---- headless Chromium: the page renders -------------------------------------------------
CHROME=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$CHROME" ]; then
	timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --user-data-dir="$TMP/chrome-dom" \
		--dump-dom "$url/" >"$TMP/dom.html" 2>"$TMP/chrome-dom.log"
	dom=$(cat "$TMP/dom.html")
	like "$dom" '<table id="queue">' "chromium parsed the page: the queue table is in its DOM"
	like "$dom" '<table id="projects">' "... and the projects table"
	is "$(grep -o '<tr class="[a-z]*">' "$TMP/dom.html" | wc -l | tr -d ' ')" 3 "... with the three jobs' rows"
	curl -s "$url/" -o "$TMP/snapshot.html"
	report_shot "$TMP/snapshot.html" "$TMP/page.png" "the page in chromium"
	[ -n "${GW_SHOT_DIR:-}" ] && cp "$TMP/page.png" "$GW_SHOT_DIR/queue-page.png"
else
	skip "chromium not installed (apt-get install chromium)"
fi

# ---- /metrics: the queue's series, promtool-clean ---------------------------------------------
curl -s "$url/metrics" -o "$TMP/metrics.txt"
m=$(cat "$TMP/metrics.txt")
like "$m" '^gpuwise_queue_up\{socket="[^"]*",error=""\} 1$' "/metrics: the queue daemon answered"
like "$m" '^gpuwise_queue_jobs\{project="nlp",state="running"\} 1$' "/metrics: nlp has 1 job running"
like "$m" '^gpuwise_queue_jobs\{project="hold",state="waiting"\} 1$' "/metrics: hold has 1 job waiting"
like "$m" '^gpuwise_project_vram_requested_bytes\{project="nlp"\} 6442450944$' "/metrics: nlp's VRAM requested (6 GiB)"
like "$m" '^gpuwise_project_vram_quota_bytes\{project="nlp"\} 17179869184$' "/metrics: against its 16 GiB quota"
unlike "$m" 'gpuwise_project_vram_quota_bytes\{project="default"\}' "/metrics: no quota series for a project without a limit"
like "$m" '^gpuwise_gpu_memory_total_bytes\{gpu="0"' "/metrics: the GPU series are still there"
for secret in root-arg-77 nobody-arg-42 rs-4711 nb-9931 tu-5150; do
	case $m in *"$secret"*) ok 1 "/metrics shows '$secret'" ;; *) ok 0 "/metrics does not contain '$secret'" ;; esac
done
if have promtool; then
	lint=$(promtool check metrics < "$TMP/metrics.txt" 2>&1); prc=$?
	is "$prc" 0 "promtool check metrics: the queue and GPU series are clean (rc $prc)"
	is "$lint" "" "promtool: no lint finding"
else
	skip "promtool not installed (.ci/run installs Debian's prometheus package)"
fi

# ---- the daemon stops answering: the page says so, /metrics has queue_up 0 ------------------------
"$GW" cancel "$rid" "$nid" "$tid" >/dev/null
for j in "$rid" "$nid" "$tid"; do q_wait_state "$j" cancelled 20; done
q_stop
code=$(curl -s -o "$TMP/page2.html" -w '%{http_code}' "$url/")
is "$code" 200 "no daemon: the page still answers"
like "$(cat "$TMP/page2.html")" "<p class=warn>no queue: no queue daemon at &#39;$SOCK&#39;</p>" "... and says there is no queue"
like "$(curl -s "$url/metrics")" "gpuwise_queue_up\\{socket=\"$SOCK\",error=\"no queue daemon at '$SOCK'\"\\} 0" "... /metrics: gpuwise_queue_up 0 with the reason"
kill -TERM "$spid"
wait "$spid"
is "$?" 0 "the server stops on SIGTERM"
# ---- the daemon serves the page itself with `http = ADDR:PORT` -------------------------------
hport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf 'context_reserve = 512M\nclient_timeout = 2s\nhttp = 127.0.0.1:%s\n' "$hport" > "$TMP/daemon.conf"
q_start
hid=$("$GW" submit --vram 3G --name served-job --env HTTPSECRET=hs-2718 -- sleep 30)
page=""
for _ in $(seq 1 50); do
	page=$(curl -s "http://127.0.0.1:$hport/") && [ -n "$page" ] && break
	sleep 0.1
done
like "$page" "<td class=num>$hid</td><td>served-job</td><td>root</td>" "http = 127.0.0.1:$hport: the daemon serves the page with its queue"
unlike "$page" "hs-2718" "... without the job's environment"
like "$(cat "$TMP/daemon.log")" "serving the lab page and /metrics on http://127.0.0.1:$hport/ \(pid [0-9]+, as [a-z-]+\)" "the daemon's log says where and as whom"
hpid=$(sed -n "s|.*serving the lab page and /metrics on http://127.0.0.1:$hport/ (pid \([0-9]*\),.*|\1|p" "$TMP/daemon.log" | tail -1)
is "$(ps -o user= -p "$hpid" | tr -d ' ')" "$(id -un gpuwise-page 2>/dev/null || echo nobody)" "the page server runs as gpuwise-page (else nobody), not root"
"$GW" cancel "$hid" >/dev/null
q_wait_state "$hid" cancelled 20
q_stop
kill -0 "$hpid" 2>/dev/null; ok $((!$?)) "the page server stops with the daemon"

run_gw status --socket "$SOCK"
is "$rc" 2 "--socket without --serve: exit 2"
like "$err" "--socket needs --serve" "... says so"
done_testing
