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
