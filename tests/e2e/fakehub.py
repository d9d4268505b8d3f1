#!/usr/bin/env python3
"""A fake Hugging Face Hub and Ollama registry on 127.0.0.1 for tests/e2e/hub.t.

usage: fakehub.py ROOT PORTFILE LOGFILE

ROOT/hf/ORG/NAME/...        the files of repository ORG/NAME (its commit: the
                            SHA-1 of "ORG/NAME", 40 hex digits)
ROOT/ollama/NS/NAME/TAG.json  a manifest; ROOT/ollama/blobs/sha256-HEX: the blobs

The Hub's protocol, as huggingface_hub speaks it:
  GET /api/models/ORG/NAME/revision/REV  -> {"id", "sha", "siblings": [{"rfilename"}]}
  GET /ORG/NAME/resolve/REV/FILE         -> small files (.json) directly, large
      ones (.safetensors, .gguf) by a 302 to http://localhost:PORT/cdn/ORG/NAME/FILE,
      another host, as the real Hub sends them to its CDN (which refuses, 400,
      a request that carries the Hub's token); X-Repo-Commit on the Hub's replies
  errors: 401 + X-Error-Code RepoNotFound for a repository that is not there,
      GatedRepo for ORG "gated" without "Authorization: Bearer good-token",
      404 + EntryNotFound for a missing file.
The registry: GET /v2/NS/NAME/manifests/TAG, GET /v2/NS/NAME/blobs/DIGEST (307
to /cdn-blobs/DIGEST).  Byte ranges (Range: bytes=A-B) answer 206 with
Content-Range; a request for a whole large file is refused (500) and logged,
so that a client that would download weights fails loudly.

Misbehaving repositories: ORG "slow" waits 5 s before its headers ("slowok"
1.5 s, once per file); ORG "trunc"
announces a Content-Length larger than what it sends, then closes; ORG "loop"
redirects its files to themselves; ORG "norange" ignores Range and starts
sending the whole file.

Every request is logged as one line: METHOD PATH STATUS BODY_BYTES RANGE.
"""
import hashlib
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT, PORTFILE, LOGFILE = sys.argv[1], sys.argv[2], sys.argv[3]
LOCK = threading.Lock()
WHOLE_LIMIT = 1 << 20  # the most a request without Range may take of a large file


SEEN = set()


def rng_seen(path):
    with LOCK:
        seen = path in SEEN
        SEEN.add(path)
    return seen


def commit_of(repo):
    return hashlib.sha1(repo.encode()).hexdigest()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # quiet on stderr
        pass

    def log(self, status, nbytes):
        with LOCK, open(LOGFILE, "a") as f:
            f.write("%s %s %d %d %s\n" % (self.command, self.path, status, nbytes,
                                          self.headers.get("Range", "-")))

    def send(self, status, body=b"", headers=None, ctype="application/json"):
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.log(status, len(body))

    def error(self, status, code, msg, headers=None):
        h = {"X-Error-Code": code, "X-Error-Message": msg}
        h.update(headers or {})
        self.send(status, json.dumps({"error": msg}).encode(), h)

    def serve_file(self, path, org):
        size = os.path.getsize(path)
        rng = self.headers.get("Range")
        if org == "slow":
            time.sleep(5)
        if org == "slowok" and not rng_seen(path):
            time.sleep(1.5)  # once: long enough for the client's progress line
        if rng and org != "norange":
            m = re.fullmatch(r"bytes=(\d+)-(\d*)", rng)
            if not m:
                return self.send(416, b"", {"Content-Range": "bytes */%d" % size})
            a = int(m.group(1))
            b = int(m.group(2)) if m.group(2) else size - 1
            if a >= size:
                return self.send(416, b"", {"Content-Range": "bytes */%d" % size})
            b = min(b, size - 1)
            with open(path, "rb") as f:
                f.seek(a)
                body = f.read(b - a + 1)
            status, headers = 206, {"Content-Range": "bytes %d-%d/%d" % (a, b, size), "Accept-Ranges": "bytes"}
        else:
            if size > WHOLE_LIMIT and org != "norange":
                return self.send(500, b"whole large file refused by the fake server")
            with open(path, "rb") as f:
                body = f.read(min(size, 4 << 20))
            status, headers = 200, {}
        if org == "trunc":
            # announce everything, send half, close
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            half = body[: len(body) // 2]
            self.wfile.write(half)
            self.wfile.flush()
            self.close_connection = True
            self.log(status, len(half))
            return
        if org == "norange":
            # the whole file's length, and as much of it as the client takes
            self.send_response(200)
            self.send_header("Content-Length", str(size))
            self.end_headers()
            sent = 0
            try:
                with open(path, "rb") as f:
                    while sent < 8 << 20:
                        chunk = f.read(65536)
                        if not chunk:
                            break
                        self.wfile.write(chunk)
                        sent += len(chunk)
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True
            self.log(200, sent)
            return
        self.send(status, body, headers, "application/octet-stream")

    def do_GET(self):
        p = self.path.split("?")[0]
        parts = [x for x in p.split("/") if x]
        try:
            if parts[:2] == ["api", "models"] and len(parts) >= 4:
                return self.api(parts[2], parts[3], parts[5] if len(parts) > 5 else "main")
            if parts and parts[0] == "cdn" and len(parts) >= 4:
                org, name, rest = parts[1], parts[2], "/".join(parts[3:])
                if self.headers.get("Authorization") and self.headers.get("Host", "").startswith("localhost"):
                    return self.error(400, "TokenLeak", "the CDN got the Hub's token")
                return self.serve_file(os.path.join(ROOT, "hf", org, name, rest), org)
            if len(parts) >= 5 and parts[2] == "resolve":
                return self.resolve(parts[0], parts[1], parts[3], "/".join(parts[4:]))
            if parts and parts[0] == "v2":
                return self.registry(parts[1:])
            if parts and parts[0] == "cdn-blobs":
                return self.serve_file(os.path.join(ROOT, "ollama", "blobs", parts[1].replace(":", "-")), "")
        except (FileNotFoundError, IndexError):
            pass
        self.error(404, "EntryNotFound", "not found")

    def repo_dir(self, org, name):
        d = os.path.join(ROOT, "hf", org, name)
        return d if os.path.isdir(d) else None

    def gated_refused(self, org):
        return org == "gated" and self.headers.get("Authorization") != "Bearer good-token"

    def api(self, org, name, rev):
        d = self.repo_dir(org, name)
        if not d:
            return self.error(401, "RepoNotFound", "Repository not found")
        sha = commit_of(org + "/" + name)
        if rev not in ("main", sha):
            return self.error(404, "RevisionNotFound", "Invalid rev id: " + rev)
        files = []
        for base, _, names in os.walk(d):
            for n in names:
                files.append(os.path.relpath(os.path.join(base, n), d))
        body = {"id": org + "/" + name, "sha": sha, "gated": "manual" if org == "gated" else False,
                "siblings": [{"rfilename": f} for f in sorted(files)]}
        self.send(200, json.dumps(body).encode())

    def resolve(self, org, name, rev, file):
        d = self.repo_dir(org, name)
        if not d:
            return self.error(401, "RepoNotFound", "Repository not found")
        sha = commit_of(org + "/" + name)
        if self.gated_refused(org):
            return self.error(401, "GatedRepo", "Access to model %s/%s is restricted" % (org, name))
        path = os.path.join(d, file)
        if not os.path.isfile(path):
            return self.error(404, "EntryNotFound", "Entry not found", {"X-Repo-Commit": sha})
        if org == "loop":
            return self.send(302, b"", {"Location": self.path, "X-Repo-Commit": sha})
        if file.endswith(".json"):
            with open(path, "rb") as f:
                return self.send(200, f.read(), {"X-Repo-Commit": sha})
        # the CDN is another host name (localhost), as the real one is: the
        # Hub's token must not follow the redirect
        cdn = "http://localhost:%d/cdn/%s/%s/%s" % (self.server.server_address[1], org, name, file)
        self.send(302, b"", {"Location": cdn, "X-Repo-Commit": sha})

    def registry(self, parts):
        # NS/NAME/manifests/TAG or NS/NAME/blobs/DIGEST
        if len(parts) != 4:
            return self.error(404, "NOT_FOUND", "not found")
        ns, name, kind, ref = parts
        if kind == "manifests":
            path = os.path.join(ROOT, "ollama", ns, name, ref + ".json")
            if not os.path.isfile(path):
                return self.send(404, b'{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}')
            with open(path, "rb") as f:
                return self.send(200, f.read(), {}, "application/vnd.docker.distribution.manifest.v2+json")
        if kind == "blobs":
            if not os.path.isfile(os.path.join(ROOT, "ollama", "blobs", ref.replace(":", "-"))):
                return self.send(404, b'{"errors":[{"code":"BLOB_UNKNOWN"}]}')
            return self.send(307, b"", {"Location": "/cdn-blobs/" + ref})
        self.error(404, "NOT_FOUND", "not found")


def main():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    with open(PORTFILE + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(PORTFILE + ".tmp", PORTFILE)
    srv.serve_forever()


if __name__ == "__main__":
    main()
