#!/usr/bin/env python3
"""Plan every row of serving-throughput.tsv with `gpuwise plan --parallel N`
(the row's engine, GPU, model, quantization and context), print the
predicted per-request or aggregate decode tok/s against the published
figure with the error, and a summary per set (fit / holdout).

Usage: validate_serving.py GPUWISE TSV
Prints '# ...' lines, then one JSON line: {"holdout": [median, worst, n], ...}.
"""
import csv
import json
import statistics
import subprocess
import sys

gw, tsv = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader((l for l in open(tsv) if not l.startswith('#')), delimiter='\t'))
res = {}
eng = {}
for r in rows:
    cmd = [gw, 'plan', r['model'], '--gpu', r['gpu'], '--engine', r['engine'], '--quant', r['quant'],
           '--ctx', r['ctx'], '--parallel', r['n'], '--per-user-tps', '1', '--json']
    p = subprocess.run(cmd, capture_output=True, text=True)
    try:
        s = json.loads(p.stdout)['serving']
        pt = s['at_parallel']
    except (ValueError, KeyError, TypeError):
        print('# cannot plan %s on %s: %s' % (r['model'], r['gpu'], p.stderr.strip()))
        res.setdefault('error', []).append(1.0)
        continue
    pred = pt['per_request_tok_s'] if r['metric'] == 'per_request' else pt['aggregate_tok_s']
    meas = float(r['tok_s'])
    e = (pred - meas) / meas
    print('# %-7s %-6s %-13s %-16s N=%-3s %-11s measured %7.1f predicted %7.1f error %+6.1f%%  %s' % (
        r['set'], r['engine'], r['gpu'], r['model'], r['n'], r['metric'], meas, pred, 100 * e, r['url']))
    res.setdefault(r['set'], []).append(abs(e))
    eng.setdefault((r['set'], r['engine']), []).append(abs(e))
for k in sorted(res):
    v = res[k]
    print('# %s: %d rows, median |error| %.1f%%, worst %.1f%%' % (k, len(v), 100 * statistics.median(v), 100 * max(v)))
for k in sorted(eng):
    v = eng[k]
    print('# %s %s: %d rows, median |error| %.1f%%, worst %.1f%%' % (k[0], k[1], len(v), 100 * statistics.median(v), 100 * max(v)))
print(json.dumps({k: [statistics.median(v), max(v), len(v)] for k, v in res.items()}))
