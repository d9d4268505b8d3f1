#!/usr/bin/env python3
"""Plan every row of cpu-llama-bench.tsv with `gpuwise plan --gpu none`
(the row's threads, host bandwidth, quantization and context), print the
prediction against the published figure with the error, and a summary per
set (fit / holdout) and test (tg decode, pp prefill).  Prefill rows of 2023
builds (before llama.cpp's llamafile GEMM) are printed, not counted.

Usage: validate_cpu.py GPUWISE TSV
Prints '# ...' lines, then one JSON line: {"holdout_tg": [median, worst, n], ...}.
"""
import csv
import json
import statistics
import subprocess
import sys

gw, tsv = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader((l for l in open(tsv) if not l.startswith('#')), delimiter='\t'))
res = {}
for r in rows:
    if '[not expressible:' in r['note']:
        print('# skip    %-2s %-28s %-16s (%s)' % (r['test'], r['cpu'][:28], r['model'],
                                             r['note'].split('[not expressible: ')[1].rstrip(']')))
        continue
    cmd = [gw, 'plan', r['model'], '--gpu', 'none', '--ram', '1024G', '--quant', r['quant'], '--ctx', r['ctx'],
           '--threads', r['threads'], '--host-bw', r['host_bw_gbs'], '--json']
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        print('# cannot plan %s: %s' % (r['model'], p.stderr.strip()))
        res.setdefault(('error', r['test']), []).append(1.0)
        continue
    d = json.loads(p.stdout)
    pred = d['decode_tok_s'] if r['test'] == 'tg' else d['prefill_tok_s']
    meas = float(r['tok_s'])
    e = (pred - meas) / meas
    old = r['old_build'] == '1' and r['test'] == 'pp'
    print('# %-7s %-2s %-28s %-16s %-7s measured %7.2f predicted %7.2f error %+6.1f%%%s  %s' % (
        r['set'], r['test'], r['cpu'][:28], r['model'], r['quant'], meas, pred, 100 * e,
        ' (2023 build: not counted)' if old else '', r['url']))
    if not old:
        res.setdefault((r['set'], r['test']), []).append(abs(e))
for k in sorted(res):
    v = res[k]
    print('# %s %s: %d rows, median |error| %.1f%%, worst %.1f%%' % (
        k[0], k[1], len(v), 100 * statistics.median(v), 100 * max(v)))
print(json.dumps({'%s_%s' % k: [statistics.median(v), max(v), len(v)] for k, v in res.items()}))
