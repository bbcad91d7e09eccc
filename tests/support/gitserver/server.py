"""A git server for the tests: real `git http-backend` (Git's own smart-HTTP server) behind a
small stdlib HTTP front, plus static files (a registry.json) from the same root.

    python3 server.py ROOT PORT

- `/git/<repo>.git/...`: handed to `git http-backend` as CGI (GIT_PROJECT_ROOT=ROOT/git, every
  repository exported, pushes allowed), so clients speak Git's smart-HTTP protocol to Git itself;
- `POST /init/<repo>.git`: creates the bare repository a test then pushes to; as GitHub's, it
  takes a want of any commit (a pinned commit no branch points at) and object filters (a
  trees-only fetch, then the blobs asked for);
- `PUT /files/<path>` writes a file, `GET /files/<path>` serves it (registry.json by URL);
- `GET /healthz` for the pod's readiness probe.

Stdlib only: it runs in the test image on Debian's python3, and on the host for unit runs.
"""

from __future__ import annotations

import http.server
import os
import shutil
import subprocess
import sys
from pathlib import Path

GIT = shutil.which("git") or "/usr/bin/git"


class Handler(http.server.BaseHTTPRequestHandler):
    root: Path

    def _body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _reply(self, code: int, body: bytes = b"", content_type: str = "text/plain") -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _safe(self, base: Path, rel: str) -> Path | None:
        target = (base / rel).resolve()
        return target if target.is_relative_to(base.resolve()) else None

    def do_GET(self) -> None:
        self._route()

    def do_POST(self) -> None:
        self._route()

    def do_PUT(self) -> None:
        path = self._safe(self.root / "files", self.path.split("?", 1)[0].removeprefix("/files/"))
        if not self.path.startswith("/files/") or path is None:
            return self._reply(404)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self._body())
        return self._reply(201)

    def _route(self) -> None:
        route, _, query = self.path.partition("?")
        if route.startswith("/git/"):
            return self._cgi(route.removeprefix("/git"), query)
        if route.startswith("/init/") and self.command == "POST":
            repo = self._safe(self.root / "git", route.removeprefix("/init/"))
            if repo is None:
                return self._reply(400)
            if not repo.is_dir():
                subprocess.run([GIT, "init", "-q", "--bare", "-b", "main", str(repo)], check=True)
                for key, value in (("http.receivepack", "true"), ("uploadpack.allowAnySHA1InWant", "true"),
                                   ("uploadpack.allowFilter", "true")):
                    subprocess.run([GIT, "-C", str(repo), "config", key, value], check=True)
            return self._reply(201)
        if route == "/healthz":
            return self._reply(200, b"ok\n")
        if route.startswith("/files/") and self.command == "GET":
            path = self._safe(self.root / "files", route.removeprefix("/files/"))
            if path is None or not path.is_file():
                return self._reply(404, b"no such file\n")
            return self._reply(200, path.read_bytes(), "application/json")
        return self._reply(404)

    def _cgi(self, path_info: str, query: str) -> None:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": str(self.root / "git"),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path_info,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": self.headers.get("Content-Length", ""),
            "REMOTE_ADDR": self.client_address[0],
            "REMOTE_USER": "test",
        }
        for header in ("Git-Protocol", "Content-Encoding"):
            if value := self.headers.get(header):
                env["HTTP_" + header.upper().replace("-", "_")] = value
        done = subprocess.run([GIT, "http-backend"], input=self._body(), env=env, capture_output=True)
        # a CGI answer: header lines, a blank line, the body (git writes CRLF; LF is allowed too)
        head, sep, body = done.stdout.partition(b"\r\n\r\n")
        if not sep:
            head, sep, body = done.stdout.partition(b"\n\n")
        status, headers = 200, []
        for line in head.decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        if done.returncode and done.stderr:
            sys.stderr.write(done.stderr.decode(errors="replace"))


def main(argv: list[str]) -> None:
    root, port = Path(argv[1]), int(argv[2])
    (root / "git").mkdir(parents=True, exist_ok=True)
    (root / "files").mkdir(parents=True, exist_ok=True)
    Handler.root = root
    http.server.ThreadingHTTPServer(("", port), Handler).serve_forever()


if __name__ == "__main__":
    main(sys.argv)
