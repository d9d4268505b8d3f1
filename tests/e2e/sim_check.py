#!/usr/bin/env python3
"""sim_check.py SIM.json: the checks of sim.t and sim-seeds.t on a `gpuwise sim
--json` inflation run: no allocation above arrival, nothing past --stop,
and at 100% arrived gpuwise >= fgd, > best-fit, > exclusive on every seed.
Prints "ok N seeds: ..." or one line per failure."""
import json, sys
d = json.load(open(sys.argv[1]))
pol = {p['policy']: p for p in d['inflation']['policies']}
bad = []
for name, p in pol.items():
    for r in p['runs']:
        for m in r['marks']:
            a = m['alloc_pct']
            if m['arrived_pct'] > d['inflation']['stop_pct']:
                if a is not None:
                    bad.append('%s: a mark past --stop has a value' % name)
                continue
            # a mark is taken after the pod that crosses it (at most 8 GPUs, 0.13%)
            if a is None or a > m['arrived_pct'] + 0.2:
                bad.append('%s seed %d: %s%% allocated at %s%% arrived' % (name, r['seed'], a, m['arrived_pct']))
        if r['pods_placed'] > r['pods_arrived']:
            bad.append('%s: more placed than arrived' % name)
def at100(name):
    return [[m['alloc_pct'] for m in r['marks'] if m['arrived_pct'] == 100][0] for r in pol[name]['runs']]
g, f, b, e = at100('gpuwise'), at100('fgd'), at100('best-fit'), at100('exclusive')
for i in range(len(g)):
    if not g[i] >= f[i]:
        bad.append('seed %d: gpuwise %.3f < fgd %.3f' % (i, g[i], f[i]))
    if not g[i] > b[i]:
        bad.append('seed %d: gpuwise %.3f <= best-fit %.3f' % (i, g[i], b[i]))
    if not g[i] > e[i]:
        bad.append('seed %d: gpuwise %.3f <= exclusive %.3f' % (i, g[i], e[i]))
print('\n'.join(bad) if bad else 'ok %d seeds: gpuwise %s fgd %s best-fit %s exclusive %s' % (len(g), g, f, b, e))
