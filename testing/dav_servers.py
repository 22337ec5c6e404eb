"""Real CalDAV/CardDAV servers for the tests, started on 127.0.0.1.

Test support shared by the caldav-mcp and carddav-mcp test suites (a test's
conftest puts this folder on ``sys.path``). Nothing here is a double: these
are the real Radicale and Xandikos from PyPI, each in its own process with a
temporary storage folder. A server that cannot start raises
:class:`ServerDidNotStart` with its output, so a test fails rather than skips.

Radicale: htpasswd with plain passwords (bcrypt would cost ~0.2 s a request)
and no auth delay, owner-only rights; a new user starts with no collections,
its principal path ``/<user>/`` is also its calendar and address-book home.

Xandikos (the second implementation, and the one with RFC 6638 scheduling):
plain HTTP on loopback, trusting the ``X-Remote-User`` header from
127.0.0.1, so a client picks the principal with that header (see
``headers_for``); ``--defaults`` gives each principal a calendar and an
address book.
"""

from __future__ import annotations

import contextlib
import http.client
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from processes import free_port, started

__all__ = ["DavServer", "Front", "ServerDidNotStart", "apache_front", "radicale", "xandikos"]

STARTUP_SECONDS = 30.0


class ServerDidNotStart(RuntimeError):
    """A test server exited or did not answer in time; the message carries its output."""


@dataclass
class DavServer:
    """A running DAV server.

    Attributes:
        url: Base URL, e.g. ``http://127.0.0.1:5232/``.
        users: Username → password (Radicale); empty for header-auth servers.
        kind: ``radicale`` or ``xandikos``.
        data_dir: Where it keeps its collections.
    """

    url: str
    kind: str
    data_dir: Path
    users: Mapping[str, str] = field(default_factory=dict)

    def headers_for(self, user: str) -> dict[str, str]:
        """Request headers that authenticate as ``user`` on a header-auth server (Xandikos)."""
        return {"X-Remote-User": user}


def _answers(port: int) -> bool:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        conn.request("OPTIONS", "/")
        conn.getresponse().read()
        return True
    except http.client.HTTPException:
        # Not an HTTP server yet. Under ephemeral-port pressure a connect to a port nobody listens on can
        # be given that same port as its source and reach itself (TCP simultaneous open): it then reads
        # back its own request line, which is not a status line.
        return False
    finally:
        conn.close()


@contextlib.contextmanager
def _running(argv: list[str], name: str, port: int, workdir: Path) -> Iterator[None]:
    with started(
        argv,
        name=name,
        port=port,
        workdir=workdir,
        log=workdir / "server.log",
        ready=lambda: _answers(port),
        error=ServerDidNotStart,
        seconds=STARTUP_SECONDS,
    ):
        yield


@contextlib.contextmanager
def radicale(workdir: Path, users: Mapping[str, str] | None = None) -> Iterator[DavServer]:
    """Run Radicale on 127.0.0.1 with ``users`` (default ``{"willi": "secret"}``)."""
    users = dict(users or {"willi": "secret"})
    workdir.mkdir(parents=True, exist_ok=True)
    htpasswd = workdir / "users"
    htpasswd.write_text("".join(f"{name}:{password}\n" for name, password in users.items()))
    storage = workdir / "collections"
    port = free_port()
    argv = [
        sys.executable, "-m", "radicale",
        "--server-hosts", f"127.0.0.1:{port}",
        "--auth-type", "htpasswd",
        "--auth-htpasswd-filename", str(htpasswd),
        "--auth-htpasswd-encryption", "plain",
        "--auth-delay", "0",
        "--rights-type", "owner_only",
        "--storage-filesystem-folder", str(storage),
        "--logging-level", "warning",
    ]  # fmt: skip
    with _running(argv, "radicale", port, workdir):
        yield DavServer(f"http://127.0.0.1:{port}/", "radicale", storage, users)


@contextlib.contextmanager
def xandikos(workdir: Path) -> Iterator[DavServer]:
    """Run Xandikos (multi-user, RFC 6638 scheduling) on 127.0.0.1 with header auth."""
    workdir.mkdir(parents=True, exist_ok=True)
    data, state = workdir / "data", workdir / "state"
    port = free_port()
    argv = [
        sys.executable, "-m", "xandikos", "multi-user",
        "-d", str(data), "--state-dir", str(state),
        "-l", "127.0.0.1", "-p", str(port),
        "--defaults", "--no-detect-systemd",
        "--trust-x-remote-user-from", "127.0.0.1",
    ]  # fmt: skip
    with _running(argv, "xandikos", port, workdir):
        yield DavServer(f"http://127.0.0.1:{port}/", "xandikos", data)


@dataclass
class Front:
    """A running :func:`apache_front` double.

    Attributes:
        url: Its root, ``http://127.0.0.1:<port>/`` (use it as CALDAV_URL / CARDDAV_URL).
        seen: ``METHOD path`` of every request it received, in order.
    """

    url: str
    seen: list[str] = field(default_factory=lambda: [])


@contextlib.contextmanager
def apache_front(upstream: DavServer, redirects: Mapping[str, str]) -> Iterator[Front]:
    """A test double in front of a real DAV server, shaped like DAViCal behind Apache.

    A double, not a server: ``/`` answers every method with 405 (Apache's
    ``index.php`` site root takes no PROPFIND), each path in ``redirects``
    answers 301 to its value (``/.well-known/caldav`` → ``/willi/``; a value may
    be an absolute URL on another origin), and every other request is passed to
    ``upstream`` and its answer passed back unchanged.
    """
    import http.server
    import threading
    from urllib.parse import urlsplit

    target = urlsplit(upstream.url)
    front = Front("")

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def _reply(self, status: int, headers: Mapping[str, str], body: bytes = b"") -> None:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _handle(self) -> None:
            front.seen.append(f"{self.command} {self.path}")
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            path = urlsplit(self.path).path
            if path == "/":
                self._reply(405, {"Allow": "GET, HEAD, POST, OPTIONS", "Content-Type": "text/html"}, b"<html/>")
                return
            if path in redirects:
                self._reply(301, {"Location": redirects[path], "Content-Type": "text/html"})
                return
            conn = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
            try:
                sent = {k: v for k, v in self.headers.items() if k.lower() not in {"host", "connection"}}
                conn.request(self.command, self.path, body=body or None, headers=sent)
                answer = conn.getresponse()
                data = answer.read()
                kept = {
                    k: v
                    for k, v in answer.getheaders()
                    if k.lower() not in {"content-length", "connection", "transfer-encoding"}
                }
                self._reply(answer.status, kept, data)
            finally:
                conn.close()

        do_GET = do_HEAD = do_PUT = do_DELETE = do_OPTIONS = do_POST = _handle
        do_PROPFIND = do_PROPPATCH = do_REPORT = do_MKCOL = do_MKCALENDAR = do_MOVE = _handle

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    front.url = f"http://127.0.0.1:{httpd.server_address[1]}/"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield front
    finally:
        httpd.shutdown()
        httpd.server_close()
