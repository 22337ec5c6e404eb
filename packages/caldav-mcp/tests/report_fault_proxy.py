"""A test double: a TCP proxy on 127.0.0.1 in front of the real Radicale, failing requests chosen by their body.

It plays what no real server can be made to do on demand: fail a REPORT as a
whole because of one stored entry (500, or a 207 whose body is cut off), fail
the GET of that one entry, or ignore part of a query (its body rewritten before
the real server sees it). Every other request goes to the real Radicale and its
answer comes back unchanged. Mirrors carddav-mcp's ``fault_proxy`` (one upstream
connection per request, ``Connection: close`` both ways), with the request's
body given to the rule, since a calendar-query and a calendar-multiget are both
a REPORT on the calendar.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlsplit

Action = Literal["pass", "fail", "cut", "refuse"]
"""``pass``: forward and answer; ``fail``: answer 500 without forwarding; ``cut``: answer 207 with a body cut off;
``refuse``: answer 400 without forwarding (as Radicale refuses a query holding too many entries)."""

CUT_BODY = b'<?xml version="1.0" encoding="utf-8"?>\n<D:multistatus xmlns:D="DAV:"><D:response><D:href>/'


@dataclass
class Seen:
    """One request as the double received it (the body as the client sent it)."""

    method: str
    path: str
    body: bytes
    action: Action


@dataclass
class ReportFaultProxy:
    """A running double: ``url`` to use in place of Radicale's, ``seen`` every request in order."""

    url: str
    seen: list[Seen] = field(default_factory=lambda: [])

    def reports(self, kind: str) -> list[Seen]:
        """The REPORTs whose body is of ``kind`` (``calendar-query``, ``calendar-multiget``)."""
        return [s for s in self.seen if s.method == "REPORT" and f":{kind}".encode() in s.body]


def _read(conn: socket.socket) -> tuple[bytes, bytes] | None:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        body += chunk
    return head, body


def _closing(head: bytes, body: bytes) -> bytes:
    lines = [
        line
        for line in head.split(b"\r\n")
        if not line.lower().startswith((b"connection:", b"content-length:", b"accept-encoding:"))
    ]
    return b"\r\n".join([*lines, b"Connection: close", b"Content-Length: %d" % len(body)]) + b"\r\n\r\n" + body


@contextmanager
def report_fault_proxy(
    upstream_url: str,
    rule: Callable[[str, str, bytes], Action],
    rewrite: Callable[[bytes], bytes] | None = None,
) -> Iterator[ReportFaultProxy]:
    """The double in front of ``upstream_url``: ``rule(method, path, body)`` decides; ``rewrite`` changes bodies."""
    parts = urlsplit(upstream_url)
    upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.2)
    proxy = ReportFaultProxy(f"http://127.0.0.1:{listener.getsockname()[1]}/")
    stop = threading.Event()

    def handle(conn: socket.socket) -> None:
        with conn:
            conn.settimeout(30)
            request = _read(conn)
            if request is None:
                return
            head, body = request
            method, path = head.decode("latin-1").split(" ", 2)[:2]
            action = rule(method, path, body)
            proxy.seen.append(Seen(method, path, body, action))
            if action == "fail":
                conn.sendall(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            if action == "refuse":
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            if action == "cut":
                conn.sendall(_closing(b"HTTP/1.1 207 Multi-Status\r\nContent-Type: text/xml; charset=utf-8", CUT_BODY))
                return
            with socket.create_connection(upstream, timeout=30) as up:
                up.sendall(_closing(head, rewrite(body) if rewrite is not None else body))
                reply = b""
                while chunk := up.recv(65536):
                    reply += chunk
            reply_head, _, reply_body = reply.partition(b"\r\n\r\n")  # passed back as it came, but for Connection
            kept = [line for line in reply_head.split(b"\r\n") if not line.lower().startswith(b"connection:")]
            conn.sendall(b"\r\n".join([*kept, b"Connection: close"]) + b"\r\n\r\n" + reply_body)

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=serve, name="report-fault-proxy", daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()
