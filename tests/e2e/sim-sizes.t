#!/bin/sh
# gpuwise sim --vram-sizes: standard sizes against free-form requests on a
# trace small enough to count by hand, and bad input.
. "$(dirname "$0")/lib.sh"

# one node, one 16 GiB T4; every pod asks 0.3 of it (4.8 GiB)
printf 'sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,1,T4\n' > "$TMP/nodes.csv"
{
	echo "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time"
	for i in 0 1 2 3 4 5; do echo "p$i,1000,1024,1,300,,LS,Running,0,100,0"; done
} > "$TMP/pods.csv"
run_gw sim --pods "$TMP/pods.csv" --nodes "$TMP/nodes.csv" --policy best-fit --seeds 1 --gpu-only --vram-sizes 4G,8G,16G --json
is "$rc" 0 "sim --vram-sizes: exit 0"
# free-form: three 4.8 GiB pods fit 16 GiB (0.9 GPU); rounded to 8 GiB, two do (0.6 GPU)
is "$(printf '%s' "$out" | jget "[(p['alloc_free_form_pct'], p['alloc_sized_pct']) for p in d['vram_sizes']['policies']]")" "[[90.0, 60.0]]" "three pods of 0.3 GPU fit free-form, two once rounded up to 8 GiB (allocation 90% against 60%)"
# what is left: 1.6 GiB free-form (no 4.8 GiB pod fits: all fragmented), 0 B with sizes
is "$(printf '%s' "$out" | jget "[(p['frag_free_form_pct'], p['frag_sized_pct']) for p in d['vram_sizes']['policies']]")" "[[10.0, 0.0]]" "fragmentation: the 1.6 GiB left free-form cannot take a pod (10%); the sized card is full (0%)"
is "$(printf '%s' "$out" | jget "d['vram_sizes']['sizes']")" "4.00 GiB,8.00 GiB,16.00 GiB" "the sizes are named"
run_gw sim --pods "$TMP/pods.csv" --nodes "$TMP/nodes.csv" --policy best-fit --seeds 1 --gpu-only --vram-sizes 4G,8G,16G
like "$out" "Standard sizes 4.00 GiB,8.00 GiB,16.00 GiB against free-form requests" "the text output has the comparison"
like "$out" "best-fit +90\\.00% +60\\.00% +10\\.00% +0\\.00%" "... with both figures"

# per GPU model: a T4 and a V100 32 GiB; the same 0.3-GPU pods are 4.8 GiB on the
# T4, 9.6 GiB on the V100.  One list for both rounds 9.6 up to 16 GiB (two pods
# per card, 60%); the V100's own 10G size keeps its three (2 + 3 pods, 75%)
printf 'sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,1,T4\nn1,64000,262144,1,V100M32\n' > "$TMP/nodes2.csv"
run_gw sim --pods "$TMP/pods.csv" --nodes "$TMP/nodes2.csv" --policy best-fit --seeds 1 --gpu-only --vram-sizes 4G,8G,16G --json
is "$(printf '%s' "$out" | jget "[(p['alloc_free_form_pct'], p['alloc_sized_pct']) for p in d['vram_sizes']['policies']]")" "[[90.0, 60.0]]" "T4 + V100 with 4G,8G,16G for both: 90% free-form, 60% sized"
run_gw sim --pods "$TMP/pods.csv" --nodes "$TMP/nodes2.csv" --policy best-fit --seeds 1 --gpu-only --vram-sizes 4G,8G,16G --vram-sizes v100=10G,32G --json
is "$rc" 0 "--vram-sizes MODEL=LIST: exit 0"
is "$(printf '%s' "$out" | jget "[(p['alloc_sized_pct'], p['frag_sized_pct']) for p in d['vram_sizes']['policies']]")" "[[75.0, 3.125]]" "... the V100's own 10G size: 75% allocated, its 2 GiB left is 3.125% fragmented"
is "$(printf '%s' "$out" | jget "d['vram_sizes']['sizes']")" "v100: 10.00 GiB,32.00 GiB; others: 4.00 GiB,8.00 GiB,16.00 GiB" "... the sizes are named per model"
run_gw sim --pods "$TMP/pods.csv" --nodes "$TMP/nodes2.csv" --vram-sizes =4G
is "$rc $err" "2 gpuwise: --vram-sizes '=4G': MODEL=LIST takes a model of 1 to 23 characters, at most 8 models
try 'gpuwise sim --help'" "--vram-sizes =LIST (no model): usage error (exit 2), said"

run_gw sim --pods "$TMP/pods.csv" --nodes "$TMP/nodes.csv" --vram-sizes 8G,4G
is "$rc" 2 "--vram-sizes not ascending: usage error"
like "$err" "--vram-sizes '8G,4G' is not ascending sizes" "... said"
run_gw sim --pods "$TMP/pods.csv" --nodes "$TMP/nodes.csv" --vram-sizes 8X
is "$rc" 2 "--vram-sizes not a size: usage error"
run_gw sim --pods "$TMP/pods.csv" --nodes "$TMP/nodes.csv" --vram-sizes 8G --replay times
is "$rc" 2 "--vram-sizes with --replay: usage error"
like "$err" "does not go with --replay" "... said"
run_gw sim --help
like "$out" "--vram-sizes LIST" "sim --help lists --vram-sizes"
done_testing
