#!/bin/sh
# gpuwise sim: time of one inflation run of all five policies on the full
# openb trace (6,212 GPUs, to 130% arrived demand, one seed; issue 12's
# target is under 10 s), wall and CPU, the best of 3; and of the default
# five seeds.  Env: GW (release binary).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
GW=${GW:-$top/gpuwise}
echo "== gpuwise sim (bench/sim.sh): openb, 1,213 nodes, 6,212 GPUs, all policies to 130%"
python3 - "$GW" "$top/tests/fixtures/openb" <<'PY'
import resource, subprocess, sys, time
gw, d = sys.argv[1], sys.argv[2]
def run(*extra):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    subprocess.run([gw, 'sim', '--pods', d + '/openb_pod_list_default.csv',
                    '--nodes', d + '/openb_node_list_gpu_node.csv', *extra],
                   check=True, stdout=subprocess.DEVNULL)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.monotonic() - t0, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
w, c = min(run('--seeds', '1') for _ in range(3))
print('one inflation run, all 5 policies, 1 seed: %.2f s wall, %.2f s CPU (best of 3)' % (w, c))
w, c = run()
print('default run, all 5 policies, 5 seeds:     %.2f s wall, %.2f s CPU' % (w, c))
PY
