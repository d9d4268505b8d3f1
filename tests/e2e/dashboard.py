#!/usr/bin/env python3
"""Turn a real scrape of `gpuwise status --serve` into a `promtool test rules`
unit-test file that evaluates the dcgm-exporter dashboard's queries.

usage: dashboard.py QUERIES.tsv SCRAPE.txt STATUS.json INSTANCE GPU_REGEX OUT.yml

Input series: every sample of the scrape, with the `instance` and `job`
labels a Prometheus scrape adds.  Expected results: computed from
`gpuwise status --json` (an independent reading of the same fake NVML), so
promtool checks both that each query returns series and that their values
are the JSON's, converted to dcgm-exporter's units.  Prints one line per
query: `panel<TAB>series expected`.
"""
import json
import re
import sys

MIB = 1 << 20
LINE = re.compile(r'^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"')

# metric -> (GPU JSON key, scale to dcgm's unit), MIG instance key
FIELDS = {
    "DCGM_FI_DEV_GPU_TEMP": ("temperature_c", 1, None),
    "DCGM_FI_DEV_POWER_USAGE": ("power_w", 1, None),
    "DCGM_FI_DEV_SM_CLOCK": ("clock_sm_mhz", 1, None),
    "DCGM_FI_DEV_GPU_UTIL": ("utilization_gpu_pct", 1, None),
    "DCGM_FI_DEV_FB_USED": ("memory_used_bytes", 1 / MIB, "memory_used_bytes"),
}


def unescape(v):
    """A label value of the exposition format: \\\\, \\" and \\n are escaped."""
    return re.sub(r'\\(.)', lambda m: "\n" if m.group(1) == "n" else m.group(1), v)


def parse_scrape(text):
    series = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = LINE.match(line)
        if not m:
            sys.exit("unparsable exposition line: %r" % line)
        labels = dict((k, unescape(v)) for k, v in LABEL.findall(m.group(2) or ""))
        series.append((m.group(1), labels, float(m.group(3))))
    return series


def selector(name, labels):
    return name + "{" + ",".join('%s=%s' % (k, json.dumps(v)) for k, v in sorted(labels.items())) + "}"


def main():
    qfile, scrape, status, instance, gpu_re, out = sys.argv[1:7]
    queries = []
    for line in open(qfile, encoding="utf-8"):
        if line.startswith("#") or not line.strip():
            continue
        panel, expr = line.rstrip("\n").split("\t")
        queries.append((panel, expr))
    samples = parse_scrape(open(scrape, encoding="utf-8").read())
    doc = json.load(open(status, encoding="utf-8"))
    extra = {"instance": instance, "job": "gpuwise"}
    lines = ["rule_files: []", "evaluation_interval: 1m", "tests:", "  - interval: 15s", "    input_series:"]
    for name, labels, value in samples:
        lines.append("      - series: %s" % json.dumps(selector(name, dict(labels, **extra))))
        lines.append("        values: %s" % json.dumps("%.17gx8" % value))
    lines.append("    promql_expr_test:")
    gpu_pat = re.compile("^(?:%s)$" % gpu_re)
    report = []
    for panel, expr in queries:
        e = expr.replace("$instance", ".*").replace("$gpu", gpu_re)
        metric = re.search(r"DCGM_FI_[A-Z_]+", e).group(0)
        want = []  # (labels, value)
        if metric in FIELDS:
            key, scale, mig_key = FIELDS[metric]
            for g in doc["gpus"]:
                if g[key] is None or not gpu_pat.match(str(g["index"])):
                    continue
                found = [l for n, l, _ in samples if n == metric and l["gpu"] == str(g["index"]) and "GPU_I_ID" not in l]
                if len(found) != 1:
                    sys.exit("%s: GPU %d has %s in JSON but %d series in the scrape" % (metric, g["index"], key, len(found)))
                want.append((dict(found[0], **extra), g[key] * scale))
                for m in g["mig_devices"] if mig_key else []:
                    if m[mig_key] is None:
                        continue
                    found = [l for n, l, _ in samples if n == metric and l["gpu"] == str(g["index"])
                             and l.get("GPU_I_ID") == str(m["gpu_instance_id"])]
                    if len(found) != 1:
                        sys.exit("%s: MIG instance %s of GPU %d not scraped" % (metric, m["gpu_instance_id"], g["index"]))
                    want.append((dict(found[0], **extra), m[mig_key] * scale))
        agg = re.match(r"^(avg|sum)\(", e)
        if agg and want:
            vals = [v for _, v in want]
            want = [({}, sum(vals) / len(vals) if agg.group(1) == "avg" else sum(vals))]
        mult = re.search(r"\*\s*([0-9.e+]+)\s*$", e)
        keep_name = not agg and not mult
        if mult:
            want = [(l, v * float(mult.group(1))) for l, v in want]
        if agg and want:
            # avg and sum add in the order Prometheus holds the series, which
            # varies, so the last bit of the result does too: the panel's
            # query is evaluated unchanged inside round(... * 1000)
            e = "round((%s) * 1000)" % e
            want = [(l, round(v * 1000)) for l, v in want]
        lines.append("      - expr: %s" % json.dumps(e))
        lines.append("        eval_time: 1m")
        if not want:
            lines.append("        exp_samples: []")
        else:
            lines.append("        exp_samples:")
            for l, v in want:
                lab = selector(metric if keep_name else "", l)
                lines.append("          - labels: %s" % json.dumps(lab))
                lines.append("            value: %.17g" % v)
        report.append("%s\t%d" % (panel, len(want)))
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(report))


if __name__ == "__main__":
    main()
