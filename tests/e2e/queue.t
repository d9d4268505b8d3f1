#!/bin/sh
# The shared-server queue against a real daemon process on a temporary
# socket, with the fake NVML describing a 2-GPU server (2 x 48 GiB):
# quotas never exceeded at any sample, packing, fair share, backfill without
# starvation, borrowing and its preemption, hold/release, cancel, logs, and
# access control with a second uid (nobody, through setpriv).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/queue-lib.sh"

# ---- no daemon --------------------------------------------------------------
run_gw submit --vram 1G -- true
is "$rc" 1 "submit without a daemon: exit 1"
like "$err" "^gpuwise: no queue daemon at '$SOCK'; start one with 'gpuwise daemon" "... says so with the command that starts one"
run_gw queue
is "$rc" 1 "queue without a daemon: exit 1"

q_start
run_gw queue
is "$rc" 0 "queue on an empty daemon"
is "$out" "no jobs waiting or running" "... says there are none"

# ---- projects and quotas ---------------------------------------------------------
run_gw quota set nlp --vram 40G --members root
is "$rc" 0 "root sets a quota"
run_gw quota set cv --vram 40G --jobs 4
is "$rc" 0 "... and another"
run_gw quota --json
is "$(printf '%s' "$out" | jget "sorted(p['project'] for p in d['projects'])")" '["cv", "default", "nlp"]' "quota lists the projects"
is "$(printf '%s' "$out" | jget "[p['vram_quota_bytes'] for p in d['projects'] if p['project']=='nlp'][0]")" 42949672960 "... with their VRAM quota in bytes"

# ---- 20 jobs of mixed VRAM requests, quotas sampled all along ---------------------
ids=""
i=0
for v in 4 20 8 12 16 4 20 8 12 16; do
	i=$((i + 1))
	id=$("$GW" submit --project nlp --vram ${v}G --name nlp$i -- sleep 1.$((i % 5))) || break
	ids="$ids $id"
done
first_cv=""
i=0
for v in 12 4 16 8 20 12 4 16 8 20; do
	i=$((i + 1))
	id=$("$GW" submit --project cv --vram ${v}G --name cv$i -- sleep 1.$((i % 4))) || break
	[ -n "$first_cv" ] || first_cv=$id
	ids="$ids $id"
done
is "$(echo $ids | wc -w)" 20 "20 jobs submitted"
q_sample_until_idle "$TMP/samples" 120
q_samples_ok=$(python3 "$QTOOLS" check-samples "$TMP/samples" 48 \
	'{"nlp":{"vram":42949672960},"cv":{"vram":42949672960,"jobs":4}}')
is "$q_samples_ok" "ok" "quotas and GPU memory never exceeded at any sample"
run_gw queue --all --json
is "$(printf '%s' "$out" | jget "len([j for j in d['jobs'] if j['state']=='done'])")" 20 "all 20 jobs done"
is "$(python3 "$QTOOLS" max-per-gpu "$TMP/samples")" "$(python3 "$QTOOLS" max-per-gpu "$TMP/samples" | awk '$1>=2{print}')" "packing: several jobs shared one GPU at once"
like "$(python3 "$QTOOLS" max-per-gpu "$TMP/samples")" '^[2-9]' "... (at least two)"
is "$(python3 "$QTOOLS" fair "$TMP/samples" nlp cv)" "ok" "fair share: cv jobs ran before nlp's queue drained though nlp submitted first"
waited=$(python3 "$QTOOLS" saw-reason "$TMP/samples" 'project (nlp|cv) is at its (VRAM|running-job) quota')
is "$waited" "ok" "a waiting job said in words that its project was at its quota"

# ---- logs, show, environment ------------------------------------------------------
id=$(LEAKME=client "$GW" submit --vram 1G --name env --env FOO=bar -- sh -c 'echo "hello from $GPUWISE_JOB_ID in $GPUWISE_PROJECT"; echo "cvd=$CUDA_VISIBLE_DEVICES order=$CUDA_DEVICE_ORDER foo=$FOO home=$HOME"; echo "leak=${LEAKME:-none}"')
q_wait_state "$id" done 30
run_gw logs "$id"
is "$rc" 0 "logs of an ended job"
like "$out" "^hello from $id in default$" "... the job saw GPUWISE_JOB_ID and GPUWISE_PROJECT"
like "$out" "cvd=GPU-0[ab]0[ab]0[ab]0[ab]-1111-4222-8333-444455556666 order=PCI_BUS_ID foo=bar home=/root" "... CUDA_VISIBLE_DEVICES is a UUID, CUDA_DEVICE_ORDER=PCI_BUS_ID, --env passed"
like "$out" "leak=client" "... the submitter's environment is kept (--export ALL), the daemon's LEAKME=daemon is not"
run_gw show --json "$id"
is "$(printf '%s' "$out" | jget "[d['state'], d['exit_status'], len(d['gpu_uuids'])]")" '["done", 0, 1]' "show --json: state, exit status, its GPU"
id=$("$GW" submit --vram 1G -- sh -c 'for i in 1 2 3; do echo line$i; sleep 0.3; done')
run_gw logs -f "$id"
is "$(printf '%s\n' "$out" | grep -c '^line')" 3 "logs -f follows a running job to its end"
run_gw logs 99999
is "$rc" 3 "logs of no such job: exit 3"
like "$err" "^gpuwise: no job 99999$" "... says so"

# ---- hold, release, cancel ----------------------------------------------------------
block=$("$GW" submit --mode exclusive --gpus 2 --name block -- sleep 30)
q_wait_state "$block" running 30
held=$("$GW" submit --vram 1G --name held -- echo released-ran)
run_gw hold "$held"
is "$rc" 0 "hold a queued job"
is "$(q_state "$held")" held "... it is held"
run_gw hold "$block"
is "$rc" 3 "a running job cannot be held: exit 3"
like "$err" "only a queued job can be held" "... says why"
waiting=$("$GW" submit --vram 1G --name waiting -- true)
run_gw queue
like "$out" "waiting for 2 idle GPUs|no GPU has 1.50 GiB free" "queue says in words why a job waits"
run_gw cancel "$waiting"
is "$out" "job $waiting cancelled" "cancel a queued job"
is "$(q_state "$waiting")" cancelled "... it is cancelled"
run_gw cancel "$block"
is "$out" "job $block is being stopped" "cancel a running job"
q_wait_state "$block" cancelled 30
is "$(q_state "$block")" cancelled "... it ends cancelled"
sleep 1
is "$(q_state "$held")" held "a held job does not start when GPUs free up"
run_gw release "$held"
is "$rc" 0 "release it"
q_wait_state "$held" done 30
is "$(q_state "$held")" done "... then it runs"
run_gw cancel "$held"
is "$rc" 3 "cancel an ended job: exit 3"
like "$err" "has already ended \\(done\\)" "... says so"

# ---- priority and fair share when the GPUs free up at once -------------------------------
"$GW" quota set p --vram 80G >/dev/null
"$GW" quota set q --vram 80G >/dev/null
block=$("$GW" submit --mode exclusive --gpus 2 --name block -- sleep 2)
q_wait_state "$block" running 30
ps=""; qs=""
for i in 1 2 3 4 5 6; do ps="$ps $("$GW" submit --project p --vram 20G --name p$i -- sleep 4)"; done
for i in 1 2 3 4 5 6; do qs="$qs $("$GW" submit --project q --vram 20G --name q$i -- sleep 4)"; done
urgent=$("$GW" submit --project p --vram 20G --priority 10 --name urgent -- sleep 4)
q_wait_state "$block" done 30
q_wait_state "$urgent" running 30
sleep 0.5
run_gw queue --json
wave=$(printf '%s' "$out" | jget "sorted(j['name'] for j in d['jobs'] if j['state'] == 'running')")
is "$wave" '["p1", "q1", "q2", "urgent"]' "first wave: the priority job, then fair share (q catches up with p), then submission order"
for j in $ps $qs $urgent; do q_wait_state "$j" done 60; done

# ---- backfill without starvation -------------------------------------------------------
a=$("$GW" submit --vram 30G --name fillA -- sleep 3)
b=$("$GW" submit --vram 30G --name fillB -- sleep 3)
q_wait_state "$a" running 30
q_wait_state "$b" running 30
head=$("$GW" submit --vram 30G --name head -- sleep 1)
smalls=""
for i in 1 2 3 4 5 6; do smalls="$smalls $("$GW" submit --vram 6G --name small$i -- sleep 1)"; done
sleep 0.5
run_gw show --json "$head"
like "$(printf '%s' "$out" | jget "d['reason']")" "no GPU has 30.50 GiB free; GPU [01] frees .* when job [0-9]+ ends \\(GPUs are held for it\\)" "the head job says why it waits and that GPUs are held for it"
for s in $smalls; do q_wait_state "$s" done 60; done
q_wait_state "$head" done 60
python3 "$QTOOLS" backfill "$GW" "$a" "$b" "$head" $smalls > "$TMP/bf.txt"
is "$(sed -n 1p "$TMP/bf.txt")" "backfilled" "small jobs started while the head job waited (backfill)"
is "$(sed -n 2p "$TMP/bf.txt")" "no-starvation" "the head job started as soon as a 30 GiB job ended"

# ---- access control with a second uid ------------------------------------------------------
mine=$("$GW" submit --project nlp --vram 1G --name mine -- sleep 30)
as_nobody logs "$mine"
is "$rc" 3 "nobody cannot read root's job logs: exit 3"
like "$err" "^gpuwise: job $mine belongs to another user$" "... says why"
as_nobody cancel "$mine"
is "$rc" 3 "nobody cannot cancel root's job"
as_nobody hold "$mine"
is "$rc" 3 "nobody cannot hold root's job"
is "$(q_state "$mine")" running "... which still runs"
as_nobody quota set cv --vram 100G
is "$rc" 3 "nobody cannot set quotas"
like "$err" "only an administrator may set quotas" "... says why"
as_nobody submit --project nlp --vram 1G -- true
is "$rc" 3 "nobody cannot submit to a project they are not a member of"
like "$err" "user nobody is not a member of project 'nlp'" "... says why"
as_nobody submit --project cv --vram 1G -- sh -c 'id -u > uid.txt; id -g >> uid.txt'
is "$rc" 0 "nobody submits to an open project"
nb=$out
q_wait_state "$nb" done 30
is "$(tr '\n' ' ' < "$WORK/uid.txt")" "65534 65534 " "the job of a normal user runs as that user, never as root"
as_nobody logs "$nb"
is "$rc" 0 "nobody reads the logs of their own job"
as_nobody queue --json
is "$(printf '%s' "$out" | jget "sorted(set(j['user'] for j in d['jobs']))")" '["root"]' "nobody sees the queue (other users' jobs listed)"
as_nobody show "$mine"
is "$rc" 3 "... but not the details of root's job"
"$GW" cancel "$mine" >/dev/null

# ---- borrowing and preemption --------------------------------------------------------------
q_stop
printf 'borrowing = yes\ncontext_reserve = 512M\nclient_timeout = 2s\n' > "$TMP/daemon.conf"
q_start
"$GW" quota set a --vram 24G >/dev/null
"$GW" quota set b --vram 72G >/dev/null
a1=$("$GW" submit --project a --vram 20G --name a1 -- sleep 60)
q_wait_state "$a1" running 30
a2=$("$GW" submit --project a --vram 20G --name a2 -- sleep 60)
q_wait_state "$a2" running 30
a3=$("$GW" submit --project a --vram 20G --name a3 -- sleep 60)
q_wait_state "$a3" running 30
run_gw show --json "$a3"
is "$(printf '%s' "$out" | jget "d['borrowed']")" True "project a runs over its quota on borrowed idle quota"
run_gw quota --json
is "$(printf '%s' "$out" | jget "[p['vram_used_bytes'] for p in d['projects'] if p['project']=='a'][0]")" 64424509440 "... quota shows 60 GiB used of 24"
bj=$("$GW" submit --project b --vram 40G --name b1 -- sleep 5)
q_wait_state "$bj" running 40
python3 "$QTOOLS" preempted "$GW" "$a1" "$a2" "$a3" > "$TMP/pre.txt"
is "$(sed -n 1p "$TMP/pre.txt")" "1" "b reclaims its quota: one borrowed job of a is preempted"
like "$(sed -n 2p "$TMP/pre.txt")" "preempted and requeued: project b reclaimed its quota for job $bj" "... and requeued with the reason"
is "$(q_state "$a1")" running "a's job within its own quota is not preempted"
q_wait_state "$bj" done 30
victim=$(sed -n 3p "$TMP/pre.txt")
q_wait_state "$victim" running 30
is "$(q_state "$victim")" running "the preempted job runs again once b's job ended"
"$GW" cancel "$a1" "$a2" "$a3" >/dev/null
q_wait_state "$a3" cancelled 40
q_stop
is "$q_daemon_rc" 0 "the daemon stops cleanly on SIGTERM"
unlike "$(cat "$TMP/daemon.log")" "Sanitizer|runtime error" "no sanitizer report from the daemon"
done_testing
