#!/usr/bin/env python3
"""Helpers for the queue tests: talk to the daemon's socket (JSON lines),
sample the queue, and check what the samples show."""
import json
import re
import socket
import subprocess
import sys
import time

RESERVE = 512 * 1024 ** 2


def call(sock, req):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock)
    req["v"] = 1
    s.sendall((json.dumps(req) + "\n").encode())
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = s.recv(1 << 20)
        if not chunk:
            break
        buf += chunk
    s.close()
    return json.loads(buf)


def all_jobs(sock):
    """Every active job: the daemon answers in pages ('next' continues)."""
    r = call(sock, {"op": "queue"})
    out = list(r["jobs"])
    while r.get("next"):
        r = call(sock, {"op": "queue", "cursor": r["next"]})
        out += r["jobs"]
    return out


def show(gw, jid):
    out = subprocess.run([gw, "show", "--json", str(jid)], capture_output=True, text=True).stdout
    return json.loads(out)


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    cmd = sys.argv[1]
    a = sys.argv[2:]
    if cmd == "active":
        print(" ".join(str(j["id"]) for j in all_jobs(a[0])))
    elif cmd == "load":
        # LOAD SOCK CLIENT COUNT ACKFILE: submit COUNT jobs, pipelined 32 deep;
        # each acknowledged one is appended as "name id" before the next read.
        sock, client, count, ackfile = a[0], int(a[1]), int(a[2]), a[3]
        job = json.loads(a[4])
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(sock)
        f = open(ackfile, "a")
        sent = acked = 0
        buf = b""
        try:
            while acked < count:
                while sent < count and sent - acked < 32:
                    j = dict(job, name=f"c{client}-{sent}")
                    s.sendall((json.dumps({"v": 1, "op": "submit", "job": j}) + "\n").encode())
                    sent += 1
                while b"\n" not in buf:
                    chunk = s.recv(1 << 16)
                    if not chunk:
                        raise ConnectionError("closed")
                    buf += chunk
                line, buf = buf.split(b"\n", 1)
                r = json.loads(line)
                if r.get("ok"):
                    f.write(f"c{client}-{acked} {r['id']}\n")
                    f.flush()
                acked += 1
        except (ConnectionError, OSError):
            pass
        f.close()
    elif cmd == "check-crash":
        # ACKS DUMP: every acknowledged job is in the daemon exactly once
        acks = [l.split() for l in open(a[0]) if l.strip()]
        jobs = json.load(open(a[1]))["jobs"]
        names = {}
        for j in jobs:
            names.setdefault(j["name"], []).append(j["id"])
        dup = [n for n, ids in names.items() if len(ids) > 1]
        missing = [n for n, i in acks if names.get(n) != [int(i)]]
        print(f"{len(acks)} acknowledged, {len(jobs)} stored, {len(missing)} missing or moved, {len(dup)} twice")
        # the details, for the test's diagnostics
        byid = {j["id"]: j for j in jobs}
        for n in dup[:5]:
            print(f"twice: {n}: " + ", ".join(f"id {i} ({byid[i]['state']}, submitted {byid[i].get('submit_time_ms', byid[i].get('submitted_ms', '?'))})" for i in names[n]), file=sys.stderr)
        for n, i in [(n, i) for n, i in acks if names.get(n) != [int(i)]][:5]:
            print(f"missing or moved: {n} acknowledged as {i}, stored as {names.get(n)}", file=sys.stderr)
    elif cmd == "raw":
        # RAW SOCK: hostile clients; prints one "case: outcome" line each
        sock = a[0]

        def conn():
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.connect(sock)
            c.settimeout(10)
            return c

        def reply(c):
            buf = b""
            while not buf.endswith(b"\n"):
                chunk = c.recv(1 << 16)
                if not chunk:
                    return None
                buf += chunk
            return json.loads(buf.split(b"\n")[0])

        def ask(c, text):
            c.sendall(text)
            return reply(c)

        def ping_ok():
            c = conn()
            r = ask(c, b'{"v":1,"op":"ping"}\n')
            c.close()
            return "ping ok" if r and r.get("ok") else f"ping failed: {r}"

        c = conn()
        for name, text in [
            ("malformed", b'{"v":1,"op":\n'),
            ("not-object", b'"hello"\n'),
            ("unknown-field", b'{"v":1,"op":"queue","color":"red"}\n'),
            ("unknown-op", b'{"v":1,"op":"shutdown"}\n'),
            ("negative", b'{"v":1,"op":"submit","job":{"argv":["x"],"cwd":"/","vram_bytes":-1}}\n'),
            ("overflow", b'{"v":1,"op":"submit","job":{"argv":["x"],"cwd":"/","vram_bytes":184467440737095516160}}\n'),
            ("too-large", b'{"v":1,"op":"submit","job":{"argv":["x"],"cwd":"/","vram_bytes":9223372036854775807}}\n'),
            ("binary", b'\x00\xff\xfe garbage\n'),
            ("uid-claim", b'{"v":1,"op":"submit","job":{"argv":["x"],"cwd":"/","vram_bytes":1,"uid":0}}\n'),
            ("too-big-for-gpus", b'{"v":1,"op":"submit","job":{"argv":["x"],"cwd":"/","vram_bytes":1099511627776}}\n'),
            ("no-project", b'{"v":1,"op":"submit","job":{"argv":["x"],"cwd":"/","vram_bytes":1,"project":"nope"}}\n'),
        ]:
            r = ask(c, text)
            print(f"{name}: " + ("error " + r["error"] if r and not r.get("ok") else f"unexpected {r}"))
        # a huge line: an error, then the same connection still works
        r = ask(c, b"[" + b"1," * (1 << 20) + b"1]\n")
        print("huge: " + ("error " + r["error"] if r and not r.get("ok") else f"unexpected {r}"))
        r = ask(c, b'{"v":1,"op":"ping"}\n')
        print("after-huge: " + ("ping ok" if r and r.get("ok") else f"unexpected {r}"))
        c.close()
        # a silent client does not block the others, and is dropped after client_timeout
        silent = conn()
        print("while-silent: " + ping_ok())
        t0 = time.time()
        try:
            got = silent.recv(1)
            print("silent: dropped after %.1f s" % (time.time() - t0) if got == b"" else "silent: got data")
        except socket.timeout:
            print("silent: never dropped")
        # a client that disconnects mid-request
        d = conn()
        d.sendall(b'{"v":1,"op":"submit","job":{"argv":["x"],')
        d.close()
        print("after-disconnect: " + ping_ok())
        # a client that sends requests and never reads the replies
        g = conn()
        g.setblocking(False)
        sent = 0
        try:
            for _ in range(100000):
                g.send(b'{"v":1,"op":"queue","all":true}\n')
                sent += 1
        except BlockingIOError:
            pass
        print("while-greedy: " + ping_ok())
        g.close()
        print("after-all: " + ping_ok())
    elif cmd == "topology":
        for g in call(a[0], {"op": "ping"})["topology"]:
            print(g["index"], g["numa"], g["pcie_switch"], g["mig_instances"])
    elif cmd == "nvlink":
        print(" ".join(str(g["nvlink_group"]) for g in call(a[0], {"op": "ping"})["topology"]))
    elif cmd == "running":
        print(" ".join(str(j["id"]) for j in all_jobs(a[0]) if j["state"] == "running"))
    elif cmd == "drain":
        end = time.time() + float(a[1])
        while time.time() < end and call(a[0], {"op": "queue"})["jobs"]:
            time.sleep(0.1)
    elif cmd == "wait":
        sock, jid, want, secs = a[0], int(a[1]), a[2], float(a[3])
        end = time.time() + secs
        while time.time() < end:
            r = call(sock, {"op": "show", "id": jid})
            if r.get("ok") and r["job"]["state"] == want:
                return 0
            time.sleep(0.05)
        return 1
    elif cmd == "sample":
        sock, path, secs = a[0], a[1], float(a[2])
        end = time.time() + secs
        with open(path, "w") as f:
            while time.time() < end:
                r = {"jobs": all_jobs(sock)}
                f.write(json.dumps(r["jobs"]) + "\n")
                if not r["jobs"]:
                    return 0
                time.sleep(0.05)
        return 1
    elif cmd == "check-samples":
        samples, gpu_gib, quotas = load(a[0]), float(a[1]), json.loads(a[2])
        for n, jobs in enumerate(samples):
            use = {}
            per_gpu = {}
            for j in jobs:
                if j["state"] != "running":
                    continue
                p = use.setdefault(j["project"], {"vram": 0, "jobs": 0})
                p["vram"] += j["vram_request_bytes"] * j["gpus_requested"]
                p["jobs"] += 1
                for g in j["gpus"]:
                    per_gpu[g] = per_gpu.get(g, 0) + j["vram_request_bytes"] + RESERVE
            for proj, q in quotas.items():
                for k, lim in q.items():
                    if use.get(proj, {}).get(k, 0) > lim:
                        print(f"sample {n}: project {proj} uses {use[proj][k]} {k} > {lim}")
                        return 0
            for g, b in per_gpu.items():
                if b > gpu_gib * 1024 ** 3:
                    print(f"sample {n}: GPU {g} holds {b} bytes of requests")
                    return 0
        print("ok" if samples else "no samples")
    elif cmd == "max-per-gpu":
        best = 0
        for jobs in load(a[0]):
            per = {}
            for j in jobs:
                if j["state"] == "running" and j["mode"] == "shared":
                    for g in j["gpus"]:
                        per[g] = per.get(g, 0) + 1
            best = max([best] + list(per.values()))
        print(best)
    elif cmd == "fair":
        first, second = a[1], a[2]
        for jobs in load(a[0]):
            if any(j["state"] == "running" and j["project"] == second for j in jobs):
                waiting = [j for j in jobs if j["state"] == "queued" and j["project"] == first]
                print("ok" if waiting else "the first project had drained before the second ran")
                return 0
        print("the second project never ran")
    elif cmd == "saw-reason":
        rx = re.compile(a[1])
        for jobs in load(a[0]):
            if any(j["reason"] and rx.search(j["reason"]) for j in jobs):
                print("ok")
                return 0
        print("never")
    elif cmd == "backfill":
        gw, fa, fb, head = a[0], show(a[0], a[1]), show(a[0], a[2]), show(a[0], a[3])
        smalls = [show(gw, s) for s in a[4:]]
        print("backfilled" if any(s["start_ms"] < head["start_ms"] for s in smalls) else "no backfill")
        first_end = min(fa["end_ms"], fb["end_ms"])
        print("no-starvation" if head["start_ms"] <= first_end + 2000 else
              f"head started {head['start_ms'] - first_end} ms after a 30 GiB job ended")
    elif cmd == "preempted":
        gw = a[0]
        end = time.time() + 15
        while time.time() < end:
            js = [show(gw, i) for i in a[1:]]
            pre = [j for j in js if j["state"] == "queued" and "preempted" in (j["reason"] or "")]
            if pre:
                print(len(pre))
                print(pre[0]["reason"])
                print(pre[0]["id"])
                return 0
            time.sleep(0.1)
        print(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
