#!/bin/sh
# gpuwise export k8s|slurm and export quota: the YAML parsed with a real YAML
# parser (python3-yaml) and every field checked; the manifests validated
# against the Kubernetes schemas (kubernetes-validate, installed by .ci/run
# into .ci/venv) and decoded by kubectl where it exists; the Slurm script
# checked by sh -n and line by line.
. "$(dirname "$0")/lib.sh"

if ! python3 -c 'import yaml' 2>/dev/null; then
	skip "python3 yaml is not installed (apt-get install python3-yaml)"
	done_testing
	exit
fi
KV=
for k in "$GW_TOP/.ci/venv/bin/kubernetes-validate" "$(command -v kubernetes-validate 2>/dev/null)"; do
	[ -n "$k" ] && [ -x "$k" ] && KV=$k && break
done
validate() { # validate FILE NAME: Kubernetes schemas, strict (unknown fields refused)
	if [ -z "$KV" ]; then
		skip "$2: kubernetes-validate is not installed (.ci/run puts it in .ci/venv)"
		return
	fi
	"$KV" --strict --no-warn "$1" > "$TMP/kv.log" 2>&1; _rc=$?
	ok $_rc "$2: valid against the Kubernetes $("$KV" --help | sed -n 's/.*Defaults to \([0-9.]*\).*/\1/p') schemas"
	[ $_rc -eq 0 ] || sed 's/^/#   /' "$TMP/kv.log" | head -10
}
kdecode() { # kdecode FILE NAME: kubectl decodes it into typed objects (no server)
	if ! command -v kubectl >/dev/null 2>&1; then
		skip "$2: kubectl is not installed"
		return
	fi
	kubectl apply --dry-run=client --validate=false -o name -f "$1" > "$TMP/kc.log" 2>&1; _rc=$?
	# client-side dry runs still ask an API server which kinds exist
	if [ $_rc -ne 0 ] && grep -Eq 'connection refused|unable to recognize|no such host|server could not find' "$TMP/kc.log"; then
		skip "$2: kubectl apply --dry-run=client needs an API server to map kinds, and none is reachable"
		return
	fi
	ok $_rc "$2: kubectl apply --dry-run=client decodes it"
	[ $_rc -eq 0 ] || sed 's/^/#   /' "$TMP/kc.log" | head -5
}
# yq FILE EXPR: evaluate EXPR on the list of YAML documents d (d[0] the first)
yq() { python3 -c 'import sys, yaml, json; d=[x for x in yaml.safe_load_all(open(sys.argv[1])) if x is not None]; v=eval(sys.argv[2]); print(json.dumps(v, sort_keys=True) if isinstance(v,(dict,list,bool)) or v is None else v)' "$1" "$2"; }

run_gw export --help
is "$rc" 0 "export --help: exit 0"

# ---- a shared job with on-failure restarts, Kueue, env, time limit ------------
run_gw export k8s --project Team_A --gpus 2 --vram 20G --restart on-failure --max-restarts 5 --kueue \
	--env BATCH=32 --env 'MSG=say "hi"' --time-limit 90m --image registry.example/train:1 --gpuwise /usr/local/bin/gpuwise -- python train.py --lr 0.1
is "$rc" 0 "export k8s: exit 0"
printf '%s\n' "$out" > "$TMP/job.yaml"
J=$TMP/job.yaml
is "$(yq "$J" 'len(d)')" 1 "one document"
is "$(yq "$J" 'd[0]["apiVersion"] + " " + d[0]["kind"]')" "batch/v1 Job" "a batch/v1 Job"
like "$(yq "$J" 'd[0]["metadata"]["name"]')" "^python-[a-z0-9]{8}\$" "name from the command, with a random 8-character suffix"
is "$(yq "$J" 'd[0]["metadata"]["namespace"]')" "team-a" "project Team_A as namespace team-a"
like "$err" "project 'Team_A' becomes namespace 'team-a'" "the renaming is said on stderr"
is "$(yq "$J" 'd[0]["metadata"]["labels"]')" '{"app.kubernetes.io/managed-by": "gpuwise", "kueue.x-k8s.io/queue-name": "gpuwise"}' "labels: managed-by and the Kueue queue"
is "$(yq "$J" 'd[0]["metadata"]["annotations"]')" '{"gpuwise/mode": "shared", "gpuwise/project": "Team_A", "gpuwise/vram-per-gpu-bytes": "21474836480"}' "annotations: project, mode, VRAM"
is "$(yq "$J" 'd[0]["spec"]["backoffLimit"]')" 5 "on-failure: backoffLimit = --max-restarts"
is "$(yq "$J" 'd[0]["spec"]["activeDeadlineSeconds"]')" 5400 "time limit 90m: activeDeadlineSeconds 5400"
is "$(yq "$J" 'sorted(d[0]["spec"].keys())')" '["activeDeadlineSeconds", "backoffLimit", "template"]' "spec: no other field"
P='d[0]["spec"]["template"]["spec"]'
is "$(yq "$J" "$P[\"restartPolicy\"]")" OnFailure "on-failure: restartPolicy OnFailure"
is "$(yq "$J" "$P[\"tolerations\"]")" '[{"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}]' "toleration of the GPU taint"
is "$(yq "$J" "len($P[\"containers\"])")" 1 "one container"
C="$P[\"containers\"][0]"
is "$(yq "$J" "$C[\"image\"]")" "registry.example/train:1" "image"
is "$(yq "$J" "$C[\"command\"]")" '["/usr/local/bin/gpuwise", "run", "--restart", "never", "--", "python", "train.py", "--lr", "0.1"]' "--gpuwise: command wrapped in the image's gpuwise run; Kubernetes does the restarts"
is "$(yq "$J" "$C[\"env\"]")" '[{"name": "BATCH", "value": "32"}, {"name": "MSG", "value": "say \"hi\""}]' "env, quotes kept"
is "$(yq "$J" "$C[\"resources\"]")" '{"limits": {"nvidia.com/gpu": 2}}' "limits: nvidia.com/gpu 2"
like "$err" "whole GPUs" "a shared job on plain nvidia.com/gpu: said"
validate "$J" "job"
kdecode "$J" "job"

# ---- restart never / always ------------------------------------------------------
run_gw export k8s -- sleep 1
yqs() { printf '%s\n' "$out" > "$TMP/x.yaml"; yq "$TMP/x.yaml" "$1"; }
is "$(yqs 'd[0]["spec"]["backoffLimit"]')" 0 "never: backoffLimit 0"
is "$(yqs "$P[\"restartPolicy\"]")" Never "never: restartPolicy Never"
is "$(yqs "$C[\"command\"]")" '["sleep", "1"]' "no --gpuwise: the Job runs the command directly (the default image has no gpuwise)"
is "$(printf '%s\n' "$err" | head -1)" "gpuwise: note: the Job runs 'sleep' directly, without gpuwise run: the image 'nvcr.io/nvidia/pytorch:24.05-py3' is not known to hold gpuwise (no restarts or GPU memory log inside the pod); build one with dist/Dockerfile and give --gpuwise /usr/local/bin/gpuwise to wrap the command" \
	"... and says so on stderr"
name1=$(yqs 'd[0]["metadata"]["name"]')
validate "$TMP/x.yaml" "a Job that runs the command directly"
run_gw export k8s -- sleep 1
name2=$(yqs 'd[0]["metadata"]["name"]')
like "$name1 $name2" "^sleep-[a-z0-9]{8} sleep-[a-z0-9]{8}\$" "two exports of the same command: sleep-XXXXXXXX each"
isnt "$name1" "$name2" "... and their Job names differ ($name1, $name2)"
run_gw export k8s -- this-is-a-very-long-command-name-that-goes-on-and-on-and-on-and-on-forever
like "$(yqs 'd[0]["metadata"]["name"]')" "^this-is-a-very-long-command-name-that-goes-on[a-z-]*[a-z]-[a-z0-9]{8}\$" "a long command's name is cut to leave room for the suffix"
ok "$([ "$(yqs 'len(d[0]["metadata"]["name"])')" -le 63 ]; echo $?)" "... and stays within 63 characters"
run_gw export k8s --gpuwise gpuwise -- sleep 1
is "$(yqs "$C[\"command\"]")" '["gpuwise", "run", "--restart", "never", "--", "sleep", "1"]' "--gpuwise gpuwise: gpuwise run --restart never"
run_gw export k8s --restart always -- ./serve
is "$rc" 2 "--restart always without gpuwise in the image: usage error"
is "$(printf '%s\n' "$err" | head -1)" "gpuwise: --restart always needs gpuwise run in the image (--gpuwise PATH): a Job does not restart a pod that succeeded" "... with the reason"
run_gw export k8s --run-opt --interval --run-opt 5s -- ./serve
is "$rc" 2 "--run-opt without gpuwise in the image: usage error"
is "$(printf '%s\n' "$err" | head -1)" "gpuwise: --run-opt needs gpuwise run in the image (--gpuwise PATH)" "... with the reason"
run_gw export k8s --gpuwise gpuwise --run-opt=-- -- ./serve
is "$rc" 2 "--run-opt -- (it would displace gpuwise run's own options): usage error"
is "$(printf '%s\n' "$err" | head -1)" "gpuwise: 'run_args' may not hold '--': the job's command goes after the daemon's options" "... with the reason"
run_gw export k8s -- sleep 1
is "$(yqs 'd[0]["metadata"]["namespace"]')" default "no --project: namespace default"
unlike "$(yqs 'd[0]["metadata"]["labels"]')" kueue "no Kueue label unless asked"
run_gw export k8s --gpuwise gpuwise --restart always --max-restarts unlimited --name 'Serve LLM' --queue team-q --run-opt --interval --run-opt 5s -- ./serve
is "$(yqs 'd[0]["spec"]["backoffLimit"]')" 0 "always: backoffLimit 0 (a Job cannot restart a success)"
is "$(yqs "$P[\"restartPolicy\"]")" Never "always: restartPolicy Never"
is "$(yqs "$C[\"command\"]")" '["gpuwise", "run", "--restart", "always", "--max-restarts", "unlimited", "--interval", "5s", "--", "./serve"]' "always: restarts stay in gpuwise run, run options passed"
is "$(yqs 'd[0]["metadata"]["name"]')" "serve-llm" "--name as a DNS label"
is "$(yqs 'd[0]["metadata"]["labels"]["kueue.x-k8s.io/queue-name"]')" "team-q" "--queue labels the Job"
validate "$TMP/x.yaml" "job (always)"
run_gw export k8s --restart on-failure --max-restarts unlimited -- ./x
is "$(yqs 'd[0]["spec"]["backoffLimit"]')" 2147483647 "on-failure unlimited: backoffLimit int32 max"

# ---- GPU resources: exclusive, MIG, time-slicing -------------------------------------
run_gw export k8s --gpuwise gpuwise --mode exclusive --gpus 4 -- ./a
is "$(yqs "$C[\"resources\"]")" '{"limits": {"nvidia.com/gpu": 4}}' "exclusive: nvidia.com/gpu 4"
is "$err" "" "exclusive: no note"
run_gw export k8s --mode mig:1g.10gb -- ./a
is "$(yqs "$C[\"resources\"]")" '{"limits": {"nvidia.com/mig-1g.10gb": 1}}' "MIG: nvidia.com/mig-1g.10gb"
validate "$TMP/x.yaml" "MIG job"
run_gw export k8s --time-slicing --vram 8G -- ./a
is "$(yqs "$C[\"resources\"]")" '{"limits": {"nvidia.com/gpu.shared": 1}}' "time-slicing: nvidia.com/gpu.shared"
like "$err" "unfenced" "time-slicing: memory not fenced, said"
validate "$TMP/x.yaml" "time-sliced job"

# ---- quotas: ResourceQuota and Kueue ------------------------------------------------
run_gw export quota k8s --kueue --quota team-a:gpus=4,jobs=8,vram=48G,borrow=2 --quota Lab_B:gpus=2
is "$rc" 0 "export quota k8s --kueue: exit 0"
printf '%s\n' "$out" > "$TMP/q.yaml"
Q=$TMP/q.yaml
is "$(yq "$Q" '[x["kind"] for x in d]')" '["ResourceFlavor", "ResourceQuota", "ClusterQueue", "LocalQueue", "ResourceQuota", "ClusterQueue", "LocalQueue"]' "a flavor, then quota, ClusterQueue and LocalQueue per project"
is "$(yq "$Q" 'd[0]')" '{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "default-flavor"}}' "ResourceFlavor: every field"
is "$(yq "$Q" 'd[1]')" '{"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "gpuwise-quota", "namespace": "team-a"}, "spec": {"hard": {"pods": "8", "requests.nvidia.com/gpu": "4"}}}' "ResourceQuota team-a: every field"
is "$(yq "$Q" 'd[2]')" '{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "team-a-cq"}, "spec": {"cohortName": "gpuwise", "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "team-a"}}, "queueingStrategy": "BestEffortFIFO", "resourceGroups": [{"coveredResources": ["nvidia.com/gpu", "pods"], "flavors": [{"name": "default-flavor", "resources": [{"borrowingLimit": 2, "name": "nvidia.com/gpu", "nominalQuota": 4}, {"name": "pods", "nominalQuota": 8}]}]}]}}' "ClusterQueue team-a: nominal quota 4 GPUs and 8 pods, borrowing limit 2"
is "$(yq "$Q" 'd[3]')" '{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": "gpuwise", "namespace": "team-a"}, "spec": {"clusterQueue": "team-a-cq"}}' "LocalQueue team-a: every field"
is "$(yq "$Q" 'd[4]["spec"]["hard"]')" '{"requests.nvidia.com/gpu": "2"}' "Lab_B: GPUs only"
is "$(yq "$Q" 'd[5]["spec"]["resourceGroups"][0]')" '{"coveredResources": ["nvidia.com/gpu"], "flavors": [{"name": "default-flavor", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 2}]}]}' "Lab_B: no borrowing limit (unlimited within the cohort)"
like "$err" "VRAM quota .* has no equivalent" "VRAM quota: no Kubernetes equivalent, said"
validate "$Q" "quota objects"
# the Kueue kinds are CRDs the schemas above do not hold: their fields are checked
# here against Kueue's API (kueue.x-k8s.io/v1beta2: ClusterQueue, LocalQueue, ResourceFlavor)
python3 - "$Q" <<'PY'; ok $? "Kueue objects: only fields of Kueue's v1beta2 API, quotas non-negative integers"
import sys, yaml
allowed = {'ClusterQueue': {'namespaceSelector', 'cohortName', 'queueingStrategy', 'resourceGroups', 'preemption', 'flavorFungibility', 'stopPolicy', 'fairSharing', 'admissionChecksStrategy'},
           'LocalQueue': {'clusterQueue', 'stopPolicy', 'fairSharing'},
           'ResourceFlavor': {'nodeLabels', 'nodeTaints', 'tolerations', 'topologyName'}}
bad = 0
for x in yaml.safe_load_all(open(sys.argv[1])):
    k = x['kind']
    if k not in allowed:
        continue
    extra = set((x.get('spec') or {}).keys()) - allowed[k]
    if extra or set(x['metadata']) - {'name', 'namespace'}:
        bad = 1
    if k == 'ClusterQueue':
        assert x['spec']['queueingStrategy'] in ('StrictFIFO', 'BestEffortFIFO')
        for g in x['spec']['resourceGroups']:
            assert set(g) == {'coveredResources', 'flavors'}
            for f in g['flavors']:
                assert [r['name'] for r in f['resources']] == g['coveredResources']
                for r in f['resources']:
                    assert set(r) <= {'name', 'nominalQuota', 'borrowingLimit', 'lendingLimit'}
                    for q in ('nominalQuota', 'borrowingLimit'):
                        assert q not in r or (isinstance(r[q], int) and r[q] >= 0)
sys.exit(bad)
PY

# the projects of `gpuwise quota --json` (docs/json-quota.md), borrowing off
cat > "$TMP/quota.json" <<'JSON'
{"projects": [
 {"project": "default", "vram_quota_bytes": null, "gpus_quota": null, "jobs_quota": null, "vram_used_bytes": 0, "gpus_used": 0, "jobs_running": 0, "jobs_borrowing": 0, "jobs_waiting": 0, "members": ""},
 {"project": "vision", "vram_quota_bytes": 51539607552, "gpus_quota": 2, "jobs_quota": 4, "vram_used_bytes": 0, "gpus_used": 0, "jobs_running": 0, "jobs_borrowing": 0, "jobs_waiting": 0, "members": "@vision"}],
 "borrowing": false}
JSON
run_gw export quota k8s --kueue --from "$TMP/quota.json"
is "$rc" 0 "quota from 'gpuwise quota --json': exit 0"
printf '%s\n' "$out" > "$TMP/q2.yaml"
is "$(yq "$TMP/q2.yaml" '[x["kind"] + ":" + x["metadata"].get("namespace", x["metadata"]["name"]) for x in d]')" '["ResourceFlavor:default-flavor", "ClusterQueue:default-cq", "LocalQueue:default", "ResourceQuota:vision", "ClusterQueue:vision-cq", "LocalQueue:vision"]' "unlimited default: no ResourceQuota, a ClusterQueue"
is "$(yq "$TMP/q2.yaml" 'd[4]["spec"]["resourceGroups"][0]["flavors"][0]["resources"]')" '[{"borrowingLimit": 0, "name": "nvidia.com/gpu", "nominalQuota": 2}, {"name": "pods", "nominalQuota": 4}]' "borrowing off: borrowingLimit 0"
is "$(yq "$TMP/q2.yaml" 'd[1]["spec"]["resourceGroups"][0]["flavors"][0]["resources"]')" '[{"borrowingLimit": 0, "name": "nvidia.com/gpu", "nominalQuota": 0}]' "default (no limit): nominal quota 0"
run_gw export quota k8s --from "$TMP/quota.json"
printf '%s\n' "$out" > "$TMP/q3.yaml"
is "$(yq "$TMP/q3.yaml" '[x["kind"] for x in d]')" '["ResourceQuota"]' "without --kueue: ResourceQuota objects only"
validate "$TMP/q3.yaml" "ResourceQuota"
kdecode "$TMP/q3.yaml" "ResourceQuota"

# ---- Slurm --------------------------------------------------------------------------
run_gw export slurm --project vision --gpus 2 --mode exclusive --restart on-failure --max-restarts 2 \
	--time-limit 90m --partition gpu --mem-per-gpu 16G --env "MSG=it's" --output 'out-%j.txt' -- python train.py --epochs 3
is "$rc" 0 "export slurm: exit 0"
printf '%s\n' "$out" > "$TMP/job.sh"
sh -n "$TMP/job.sh"; ok $? "the script is valid sh"
is "$(grep '^#SBATCH' "$TMP/job.sh" | tr '\n' ' ')" "#SBATCH --job-name=python #SBATCH --account=vision #SBATCH --partition=gpu #SBATCH --gres=gpu:2 #SBATCH --mem-per-gpu=16384M #SBATCH --time=0-01:30:00 #SBATCH --signal=B:TERM@60 #SBATCH --requeue #SBATCH --output=out-%j.txt " "every #SBATCH line"
is "$(grep '^export' "$TMP/job.sh")" "export MSG='it'\\''s'" "env quoted for the shell"
is "$(tail -1 "$TMP/job.sh")" "exec gpuwise run --restart on-failure --max-restarts 2 -- python train.py --epochs 3" "exec gpuwise run with the restart options"
run_gw export slurm --shards 4 --vram 8G -- ./infer
like "$out" "#SBATCH --gres=shard:4" "shared with --shards: gres shard"
like "$out" "#SBATCH --no-requeue" "restart never: --no-requeue"
like "$err" "without fencing" "shards: memory not fenced, said"
run_gw export slurm --mode mig:3g.20gb -- ./a
like "$out" "#SBATCH --gres=gpu:3g.20gb:1" "MIG: typed gres"

run_gw export quota slurm --quota vision:gpus=2,jobs=4,vram=48G --quota nlp:jobs=3
is "$rc" 0 "export quota slurm: exit 0"
is "$(printf '%s\n' "$out" | grep '^sacctmgr')" "sacctmgr -i add account vision Description=gpuwise
sacctmgr -i modify account where name=vision set GrpTRES=gres/gpu=2 GrpJobs=4
sacctmgr -i add account nlp Description=gpuwise
sacctmgr -i modify account where name=nlp set GrpJobs=3" "sacctmgr: GrpTRES=gres/gpu and GrpJobs per account"
like "$err" "VRAM quotas have no Slurm equivalent" "VRAM: no Slurm equivalent, said"
run_gw export quota slurm --vram-gres --cluster lab --quota vision:gpus=2,vram=48G
like "$out" "set GrpTRES=gres/gpu=2,gres/vram=48" "--vram-gres: gres/vram limited in GiB"
like "$out" "Name=vram Count=.* Flags=CountOnly" "--vram-gres: the gres.conf line"
like "$out" "GresTypes=gpu,vram" "--vram-gres: the slurm.conf line"
like "$out" "add account vision cluster=lab" "--cluster"
is "$err" "" "--vram-gres: nothing left unsaid"

# ---- bad input ----------------------------------------------------------------------
run_gw export k8s
is "$rc" 2 "no command: usage error"
like "$err" "after '--'" "no command: said"
run_gw export k8s python x
is "$rc" 2 "command without --: usage error"
run_gw export nomad -- x
is "$rc" 2 "unknown target: usage error"
run_gw export k8s --mode exclusive --vram 8G -- x
is "$rc" 2 "--vram with exclusive: usage error"
run_gw export k8s --max-restarts 3 -- x
is "$rc" 2 "--max-restarts without --restart: usage error"
run_gw export k8s --shards 2 -- x
is "$rc" 2 "a Slurm option on k8s: usage error"
like "$err" "--shards is not an option of 'export k8s'" "the option is named"
run_gw export slurm --project 'a b' -- x
is "$rc" 2 "a project Slurm cannot name: usage error"
like "$err" "not a Slurm account name" "said"
run_gw export slurm --shards 2 --gpus 2 -- x
is "$rc" 2 "shards on 2 GPUs: usage error"
run_gw export k8s --gpus 0 -- x
is "$rc" 2 "--gpus 0: usage error"
run_gw export k8s --mode mig: -- x
is "$rc" 2 "--mode mig: without profile: usage error"
run_gw export quota k8s
is "$rc" 2 "quota without projects: usage error"
run_gw export quota k8s --quota vision:gpus=x
is "$rc" 2 "bad --quota: usage error"
printf '{"projects": [{"project": "x", "gpus_quota": "two"}]}' > "$TMP/bad.json"
run_gw export quota k8s --from "$TMP/bad.json"
is "$rc" 1 "quota JSON with a string quota: exit 1"
is "$err" "gpuwise: cannot read '$TMP/bad.json': project 'x' has a quota that is not a count or null" "said in one line"
printf 'not json' > "$TMP/bad2.json"
run_gw export quota slurm --from "$TMP/bad2.json"
is "$rc" 1 "quota file not JSON: exit 1"
is "$(printf '%s\n' "$err" | wc -l)" 1 "one line"
run_gw export quota slurm --kueue --quota a:gpus=1
is "$rc" 2 "--kueue on slurm: usage error"
done_testing
