"""A hostile CalDAV server double on 127.0.0.1: answers every request with one chosen fault.

A test double (no real server sends these): entity bombs, huge or endless
bodies, a body that drips, a status line or headers that drip, ``100
Continue`` without end, HTML or JSON where XML belongs, malformed XML,
redirect loops, redirects to another origin, and bytes that are not HTTP.
In ``pair`` mode it holds every request until a second one has arrived (to
see whether two calls can be in flight at once).
"""

from __future__ import annotations

import contextlib
import socket
import socketserver
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

BOMB = (
    b'<?xml version="1.0"?>\n<!DOCTYPE lolz [\n<!ENTITY lol "lol">\n'
    + b"".join(
        f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">\n'.encode() for i in range(1, 10)
    )
    + b']>\n<d:multistatus xmlns:d="DAV:"><d:response><d:href>&lol9;</d:href></d:response></d:multistatus>'
)
MALFORMED = b'<?xml version="1.0"?><d:multistatus xmlns:d="DAV:"><d:response><d:href>/x/</d:multistatus>'
HTML = b"<html><body><form>Sign in to continue</form></body></html>"


@dataclass
class Hostile:
    """The double's address, what it answers, and the request lines it saw."""

    port: int
    mode: str
    target_port: int = 0
    seen: list[str] = field(default_factory=lambda: [])
    arrived: threading.Condition = field(default_factory=threading.Condition)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"


def _head(status: str, **headers: object) -> bytes:
    """A status line and headers (each answer closes its connection)."""
    lines = [f"HTTP/1.1 {status}", "Connection: close"]
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _answer(conn: socket.socket, hostile: Hostile) -> None:
    mode = hostile.mode
    multistatus = "207 Multi-Status"
    if mode == "bomb":
        conn.sendall(_head(multistatus, Content_Type="text/xml", Content_Length=len(BOMB)) + BOMB)
    elif mode == "announced-huge":
        conn.sendall(_head(multistatus, Content_Type="text/xml", Content_Length=62914560) + b"<d:")
    elif mode == "endless":
        conn.sendall(_head(multistatus, Content_Type="text/xml", Transfer_Encoding="chunked"))
        chunk = b"<d:x xmlns:d='DAV:'>" + b"a" * 65000 + b"</d:x>"
        for _ in range(2000):  # 130 MB at most, if nobody stops reading
            conn.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
    elif mode == "slow":
        conn.sendall(_head(multistatus, Content_Type="text/xml", Content_Length=100000) + b"<")
        for _ in range(600):
            time.sleep(0.25)
            conn.sendall(b" ")
    elif mode == "header-drip":  # every header within the per-read timeout, the headers never done
        conn.sendall(b"HTTP/1.1 207 Multi-Status\r\n")
        for i in range(40):
            time.sleep(0.25)
            conn.sendall(b"X-Drip-%d: a\r\n" % i)
    elif mode == "status-drip":
        for i in range(40):
            conn.sendall(b"HTTP/1.1 207 Multi-Status"[i : i + 1] or b"a")
            time.sleep(0.25)
    elif mode == "continue-forever":
        for _ in range(40):
            conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
            time.sleep(0.25)
    elif mode == "pair":
        with hostile.arrived:
            hostile.arrived.wait_for(lambda: len(hostile.seen) >= 2, timeout=30)
        conn.sendall(_head("200 OK", Content_Type="text/html", Content_Length=len(HTML)) + HTML)
    elif mode in {"html", "json"}:
        body, kind = (HTML, "text/html") if mode == "html" else (b'{"error": "no"}', "application/json")
        conn.sendall(_head("200 OK", Content_Type=kind, Content_Length=len(body)) + body)
    elif mode == "malformed":
        conn.sendall(_head(multistatus, Content_Type="text/xml", Content_Length=len(MALFORMED)) + MALFORMED)
    elif mode == "loop":
        conn.sendall(_head("301 Moved", Location=f"{hostile.url}again/", Content_Length=0))
    elif mode == "away":
        location = f"http://127.0.0.1:{hostile.target_port}/willi/"
        conn.sendall(_head("307 Elsewhere", Location=location, Content_Length=0))
    elif mode == "not-http":
        conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n\x00\x01garbage\r\n\r\n")
    else:  # pragma: no cover
        raise AssertionError(mode)


@contextlib.contextmanager
def hostile_server(mode: str, target_port: int = 0) -> Iterator[Hostile]:
    """Run the double in ``mode`` on a free port until the block ends."""
    hostile = Hostile(0, mode, target_port)

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            conn: socket.socket = self.request
            conn.settimeout(5)
            data = b""
            with contextlib.suppress(OSError):
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                with hostile.arrived:
                    hostile.seen.append(data.split(b"\r\n", 1)[0].decode(errors="replace"))
                    hostile.arrived.notify_all()
                _answer(conn, hostile)

    class Server(socketserver.ThreadingTCPServer):
        daemon_threads = True
        allow_reuse_address = True

    server = Server(("127.0.0.1", 0), Handler)
    hostile.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield hostile
    finally:
        server.shutdown()
        server.server_close()
