#!/usr/bin/env python3
"""Hostile and measuring clients for tests/e2e/queue-avail.t (issue 20).
Every loop is bounded in count and in time.

  probe SOCK N OP            N requests, a new connection each; prints
                             "answered A median_ms M max_ms X errors E"
  pipeline SOCK N SECONDS    one connection writes N `queue` requests and
                             never reads, then holds it SECONDS
  trickle SOCK N SECONDS     opens N connections (as fast as it can), each
                             sending one byte of a never-ending line every
                             0.5 s for SECONDS; prints "open O refused R
                             reason TEXT" (R: closed with a reply)
  partial SOCK N BYTES SECONDS  N connections, each BYTES of one unfinished line
  submit SOCK N PROJECT      N pipelined submissions of `true`; prints "ok K
                             refused R last_error TEXT"
  cpu PID SECONDS            the process's CPU use over SECONDS, in percent
  cancel SOCK FIRST LAST     cancel ids FIRST..LAST, 1024 a request, 8 in
                             flight; prints
                             "cancelled C errors E seconds S"
  pages SOCK [all]           one raw `queue` request: "jobs N next CURSOR";
                             then every page: "total T pages P"
"""
import json
import os
import select
import socket
import statistics
import sys
import time


def connect(path, timeout=2.0):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(path)
    return s


def read_line(s, deadline):
    buf = b""
    while not buf.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no reply")
        s.settimeout(left)
        chunk = s.recv(1 << 20)
        if not chunk:
            raise ConnectionError("closed: " + buf.decode(errors="replace"))
        buf += chunk
    return json.loads(buf)


def probe(path, n, op):
    times, errors, last = [], 0, ""
    for _ in range(n):
        t0 = time.monotonic()
        try:
            s = connect(path)
            try:
                s.sendall((json.dumps({"v": 1, "op": op}) + "\n").encode())
            except BrokenPipeError:
                pass  # refused at the door: the reason is waiting to be read
            r = read_line(s, t0 + 2.0)
            s.close()
            if not r.get("ok"):
                errors += 1
                last = r.get("error", "")
                continue
            times.append((time.monotonic() - t0) * 1000)
        except (OSError, ValueError) as e:
            errors += 1
            last = str(e)
        time.sleep(0.01)
    med = statistics.median(times) if times else -1
    mx = max(times) if times else -1
    print("answered %d median_ms %.1f max_ms %.1f errors %d last %s" % (len(times), med, mx, errors, last or "-"))


def pipeline(path, n, seconds):
    s = connect(path)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    line = (json.dumps({"v": 1, "op": "queue"}) + "\n").encode()
    data = line * n
    s.setblocking(False)
    off, end = 0, time.monotonic() + seconds
    # write what the daemon takes; never read
    while time.monotonic() < end:
        if off < len(data):
            try:
                off += s.send(data[off:off + 65536])
                continue
            except BlockingIOError:
                pass
        time.sleep(0.05)
    print("sent %d of %d bytes" % (off, len(data)))
    s.close()


def trickle(path, n, seconds):
    conns, refused, reason = [], 0, ""
    for _ in range(n):
        try:
            s = connect(path, 1.0)
            s.setblocking(False)
            conns.append(s)
        except OSError as e:
            refused += 1
            reason = str(e)
    end = time.monotonic() + seconds
    alive = list(conns)
    first = True
    while time.monotonic() < end and alive:
        # a connection the daemon refused gets one reply line and is closed
        poller = select.poll()
        byfd = {}
        for s in alive:
            poller.register(s, select.POLLIN)
            byfd[s.fileno()] = s
        r = [byfd[fd] for fd, _ in poller.poll(200 if first else 0)]
        first = False
        for s in r:
            try:
                got = s.recv(4096)
            except OSError:
                got = b""
            if got:
                try:
                    reason = json.loads(got.split(b"\n")[0]).get("error", reason)
                except ValueError:
                    pass
            refused += 1
            alive.remove(s)
        still = []
        for s in alive:
            try:
                s.send(b"{")
                still.append(s)
            except OSError:
                refused += 1
        alive = still
        time.sleep(0.5)
    print("open %d refused %d reason %s" % (len(alive), refused, reason or "-"))
    for s in conns:
        s.close()


def partial(path, n, nbytes, seconds):
    conns = []
    chunk = b'{"op":"ping","pad":"' + b"x" * (nbytes - 20)
    for _ in range(n):
        try:
            s = connect(path, 1.0)
            s.setblocking(False)
            conns.append([s, 0])
        except OSError:
            pass
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for c in conns:
            if c[1] < len(chunk):
                try:
                    c[1] += c[0].send(chunk[c[1]:c[1] + 65536])
                except OSError:
                    pass
        time.sleep(0.05)
    print("connections %d bytes_sent %d" % (len(conns), sum(c[1] for c in conns)))
    for c in conns:
        c[0].close()


def submit(path, n, project):
    s = connect(path, 10.0)
    job = {"argv": ["true"], "cwd": "/", "project": project, "vram_bytes": 1 << 30}
    sent = acked = ok = refused = 0
    last = "-"
    buf = b""
    deadline = time.monotonic() + 60
    while acked < n and time.monotonic() < deadline:
        while sent < n and sent - acked < 64:
            s.sendall((json.dumps({"v": 1, "op": "submit", "job": job}) + "\n").encode())
            sent += 1
        while b"\n" not in buf:
            chunk = s.recv(1 << 16)
            if not chunk:
                raise SystemExit("the daemon closed the connection")
            buf += chunk
        line, buf = buf.split(b"\n", 1)
        r = json.loads(line)
        acked += 1
        if r.get("ok"):
            ok += 1
        else:
            refused += 1
            last = r.get("error", "")
    print("ok %d refused %d last_error %s" % (ok, refused, last))


def cpu(pid, seconds):
    def ticks():
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    a = ticks()
    time.sleep(seconds)
    b = ticks()
    print("%.0f" % ((b - a) / os.sysconf("SC_CLK_TCK") / seconds * 100))


def cancel(path, first, last):
    s = connect(path, 60.0)
    t0 = time.monotonic()
    done = errors = 0
    ids = list(range(first, last + 1))
    # pipelined, 8 requests in flight: the daemon commits what arrived together once
    reqs = [(json.dumps({"v": 1, "op": "cancel", "ids": ids[k:k + 1024]}) + "\n").encode()
            for k in range(0, len(ids), 1024)]
    f = s.makefile("rb")
    sent = 0
    for got in range(len(reqs)):
        while sent < len(reqs) and sent - got < 8:
            s.sendall(reqs[sent])
            sent += 1
        r = json.loads(f.readline())
        for e in r["results"]:
            if e.get("state") == "cancelled":
                done += 1
            else:
                errors += 1
    print("cancelled %d errors %d seconds %.2f" % (done, errors, time.monotonic() - t0))


def pages(path, all_):
    s = connect(path, 30.0)
    req = {"v": 1, "op": "queue"}
    if all_:
        req["all"] = True
        req["limit"] = 1000000
    s.sendall((json.dumps(req) + "\n").encode())
    r = read_line(s, time.monotonic() + 30)
    print("jobs %d next %s" % (len(r["jobs"]), r.get("next", "-")))
    total, n, ids = len(r["jobs"]), 1, [j["id"] for j in r["jobs"]]
    while r.get("next"):
        s.sendall((json.dumps(dict(req, cursor=r["next"])) + "\n").encode())
        r = read_line(s, time.monotonic() + 30)
        total += len(r["jobs"])
        ids += [j["id"] for j in r["jobs"]]
        n += 1
    print("total %d pages %d distinct %d" % (total, n, len(set(ids))))


def main():
    cmd, a = sys.argv[1], sys.argv[2:]
    if cmd == "probe":
        probe(a[0], int(a[1]), a[2] if len(a) > 2 else "ping")
    elif cmd == "pipeline":
        pipeline(a[0], int(a[1]), float(a[2]))
    elif cmd == "trickle":
        trickle(a[0], int(a[1]), float(a[2]))
    elif cmd == "partial":
        partial(a[0], int(a[1]), int(a[2]), float(a[3]))
    elif cmd == "submit":
        submit(a[0], int(a[1]), a[2])
    elif cmd == "cancel":
        cancel(a[0], int(a[1]), int(a[2]))
    elif cmd == "pages":
        pages(a[0], len(a) > 1 and a[1] == "all")
    elif cmd == "cpu":
        cpu(int(a[0]), float(a[1]))
    else:
        raise SystemExit("unknown command " + cmd)


if __name__ == "__main__":
    main()
