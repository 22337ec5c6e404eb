"""Test doubles: TCP proxies on 127.0.0.1 in front of a real DAV server, rewriting or withholding its answers.

:func:`rewriting_proxy` passes every answer's body (and head) through a rewrite, as a compromised or buggy
server, or a proxy, could answer; :func:`no_etag_proxy` is that proxy withholding ETags (``getetag`` from
every multistatus, and with ``headers=True`` every ``ETag`` header), as some real servers list entries. Each
records every request's method, path and headers, so a test can check the preconditions a write carried
(:func:`writes`). Shared by the servers' tests and the family tests in ``tests/``.
"""

from __future__ import annotations

import contextlib
import re
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

__all__ = ["RewritingProxy", "no_etag_proxy", "on_loopback", "read_message", "rewriting_proxy", "upstream_of", "writes"]


def read_message(sock: socket.socket, buffer: bytes, *, head_only: bool = False) -> tuple[bytes, bytes] | None:
    """One HTTP/1.1 message (head and Content-Length body) from ``sock``; None at end of stream."""
    while b"\r\n\r\n" not in buffer:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        buffer += chunk
    head, _, rest = buffer.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    status_line = head.split(b"\r\n", 1)[0]
    if head_only or status_line.split(b" ")[1:2] in ([b"204"], [b"304"]):
        length = 0
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        rest += chunk
    return head + b"\r\n\r\n" + rest[:length], rest[length:]


@contextlib.contextmanager
def on_loopback(handle: Callable[[socket.socket], None]) -> Iterator[int]:
    """A TCP listener on 127.0.0.1 handing each connection to ``handle`` in its own thread; yields its port."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.2)
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()


def upstream_of(target: str) -> tuple[str, int]:
    """The (host, port) a proxy double forwards to."""
    parts = urlsplit(target)
    return parts.hostname or "127.0.0.1", parts.port or 80


@dataclass
class RewritingProxy:
    """A test double: a TCP proxy on 127.0.0.1 in front of the real Radicale that rewrites answers.

    Every answer's body passes through ``rewrite`` (asked for uncompressed; Content-Length fixed up),
    as a compromised or buggy server (or a proxy) could answer.

    Attributes:
        url: The proxy's base URL.
        requests: ``METHOD path`` of every request relayed.
        heads: (method, path, header fields lower-cased) of every request relayed.
        bodies: The body of every request relayed.
        answered: How many answers were relayed back (a request counted in ``requests`` is still out until then).
        rewrite_head: What is done to every answer's head (its lines but Content-Length), as ``rewrite`` to bodies.
    """

    url: str
    rewrite: Callable[[bytes], bytes]
    requests: list[str] = field(default_factory=lambda: [])
    heads: list[tuple[str, str, dict[str, str]]] = field(default_factory=lambda: [])
    bodies: list[bytes] = field(default_factory=lambda: [])
    answered: int = 0
    rewrite_head: Callable[[list[bytes]], list[bytes]] = lambda lines: lines


def _relay(proxy: RewritingProxy, client: socket.socket, upstream: tuple[str, int]) -> None:
    with client, socket.create_connection(upstream) as server, contextlib.suppress(OSError):
        pending = b""
        while True:
            request = read_message(client, pending)
            if request is None:
                return
            message, pending = request
            head, _, rest = message.partition(b"\r\n\r\n")
            kept = [line for line in head.split(b"\r\n") if not line.lower().startswith(b"accept-encoding:")]
            message = b"\r\n".join([*kept, b"Accept-Encoding: identity"]) + b"\r\n\r\n" + rest  # bodies to rewrite
            lines = message.partition(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
            method, path = lines[0].split(" ")[:2]
            proxy.requests.append(f"{method} {path}")
            proxy.heads.append((method, path, {k.strip().lower(): v.strip() for k, _, v in
                                               (line.partition(":") for line in lines[1:])}))  # fmt: skip
            proxy.bodies.append(rest)
            server.sendall(message)
            answer = read_message(server, b"", head_only=message.startswith(b"HEAD "))
            if answer is None:
                return
            head, _, body = answer[0].partition(b"\r\n\r\n")
            body = proxy.rewrite(body)
            lines = proxy.rewrite_head(
                [line for line in head.split(b"\r\n") if not line.lower().startswith(b"content-length:")]
            )
            client.sendall(b"\r\n".join([*lines, b"Content-Length: %d" % len(body)]) + b"\r\n\r\n" + body)
            proxy.answered += 1


@contextlib.contextmanager
def rewriting_proxy(
    target: str, rewrite: Callable[[bytes], bytes], rewrite_head: Callable[[list[bytes]], list[bytes]] | None = None
) -> Iterator[RewritingProxy]:
    """Run a :class:`RewritingProxy` in front of ``target`` until the block ends."""
    upstream = upstream_of(target)
    proxy: RewritingProxy | None = None
    with on_loopback(lambda conn: _relay(proxy, conn, upstream)) as port:  # type: ignore[arg-type]
        proxy = RewritingProxy(f"http://127.0.0.1:{port}/", rewrite)
        if rewrite_head is not None:
            proxy.rewrite_head = rewrite_head
        yield proxy


_GETETAG = re.compile(rb"<(?:[A-Za-z0-9]+:)?getetag\b[^>]*?(?:/>|>.*?</(?:[A-Za-z0-9]+:)?getetag>)", re.S)


def writes(proxy: RewritingProxy) -> list[tuple[str, str, dict[str, str]]]:
    """The PUT, DELETE and MOVE requests the proxy relayed: (method, path, headers lower-cased)."""
    return [h for h in proxy.heads if h[0] in {"PUT", "DELETE", "MOVE"}]


@contextlib.contextmanager
def no_etag_proxy(target: str, *, headers: bool = False) -> Iterator[RewritingProxy]:
    """Run the double in front of ``target`` until the block ends (``headers``: strip ETag headers too)."""

    def strip_head(lines: list[bytes]) -> list[bytes]:
        return [line for line in lines if not (headers and line.lower().startswith(b"etag:"))]

    with rewriting_proxy(target, lambda body: _GETETAG.sub(b"", body), strip_head) as proxy:
        yield proxy
