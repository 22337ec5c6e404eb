"""A loopback HTTP double that closes a kept-alive connection instead of answering its next request.

A double, not a server, named as such: it reproduces what sogod (SOGo 5.8)
does on a fresh connection, which no real server does on demand. On each
connection the first request is answered, keeping the connection open (no
``Connection: close``): with a 401 Basic challenge when ``challenge`` is set
and the request carries no ``Authorization``, else with a small WebDAV answer
(207 multistatus naming ``/willi/`` as the current-user-principal for
PROPFIND and REPORT, 201 for other methods). The next request on that
connection is read whole, recorded, and the connection closed without a byte
of answer. So a client that sends its next request on the same connection
(the credentials after the challenge, or any later request) is never
answered there.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = ["Closing", "closing_server"]

_MULTISTATUS = (
    b'<?xml version="1.0" encoding="utf-8"?>\n<d:multistatus xmlns:d="DAV:"><d:response><d:href>/willi/</d:href>'
    b"<d:propstat><d:prop><d:resourcetype><d:collection/></d:resourcetype><d:current-user-principal>"
    b"<d:href>/willi/</d:href></d:current-user-principal></d:prop><d:status>HTTP/1.1 200 OK</d:status>"
    b"</d:propstat></d:response></d:multistatus>"
)


@dataclass
class Closing:
    """A running :func:`closing_server`.

    Attributes:
        url: Its root, ``http://127.0.0.1:<port>/``.
        seen: ``METHOD path`` of every request it read whole, in order (answered or not).
        unanswered: ``METHOD path`` of each request it closed the connection on.
    """

    url: str
    seen: list[str] = field(default_factory=lambda: [])
    unanswered: list[str] = field(default_factory=lambda: [])


def _read_request(conn: socket.socket, buffered: bytes) -> tuple[str, dict[str, str], bytes] | None:
    """One request (request line, headers, body) from ``conn``; None when the client closed first."""
    data = buffered
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    length = int(headers.get("content-length", "0") or 0)
    while len(rest) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        rest += chunk
    return lines[0], headers, rest[length:]


def _answer(method: str, headers: dict[str, str], challenge: bool) -> bytes:
    if challenge and "authorization" not in headers:
        status, extra, body = "401 Unauthorized", 'WWW-Authenticate: Basic realm="SOGo"\r\n', b""
    elif method in {"PROPFIND", "REPORT"}:
        status, extra, body = "207 Multi-Status", "Content-Type: text/xml; charset=utf-8\r\n", _MULTISTATUS
    else:
        status, extra, body = "201 Created", "", b""
    return f"HTTP/1.1 {status}\r\n{extra}Content-Length: {len(body)}\r\n\r\n".encode() + body


@contextlib.contextmanager
def closing_server(*, challenge: bool = False) -> Iterator[Closing]:
    """Run the double on a free 127.0.0.1 port (see the module docstring)."""
    listener = socket.create_server(("127.0.0.1", 0))
    closing = Closing(f"http://127.0.0.1:{listener.getsockname()[1]}/")
    stop = threading.Event()

    def serve(conn: socket.socket) -> None:
        with conn:
            conn.settimeout(10)
            with contextlib.suppress(OSError):
                first = _read_request(conn, b"")
                if first is None:
                    return
                line, headers, rest = first
                method, path = line.split(" ")[:2]
                closing.seen.append(f"{method} {path}")
                conn.sendall(_answer(method, headers, challenge))
                second = _read_request(conn, rest)
                if second is not None:
                    closing.seen.append(" ".join(second[0].split(" ")[:2]))
                    closing.unanswered.append(" ".join(second[0].split(" ")[:2]))

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield closing
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()
