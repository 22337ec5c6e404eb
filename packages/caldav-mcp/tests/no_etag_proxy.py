"""A test double: a proxy on 127.0.0.1 in front of the real Radicale that withholds ETags.

It strips ``getetag`` from every multistatus body (as some real servers list
entries without it), and, with ``headers=True``, the ``ETag`` header of every
answer too (a server that gives no ETag at all). It records the head of every
request it relays, so a test can check the preconditions each write carried.
"""

from __future__ import annotations

import contextlib
import re
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field

from test_create_retry import _read_message, on_loopback, upstream_of

__all__ = ["NoEtagProxy", "no_etag_proxy"]

_GETETAG = re.compile(rb"<(?:[A-Za-z0-9]+:)?getetag\b[^>]*?(?:/>|>.*?</(?:[A-Za-z0-9]+:)?getetag>)", re.S)


@dataclass
class NoEtagProxy:
    """The double's base URL, whether it strips ETag headers too, and the request heads it relayed.

    Attributes:
        url: The proxy's base URL.
        headers: Strip the ``ETag`` header of answers as well as ``getetag`` from multistatus bodies.
        heads: (method, path, headers lower-cased) of every request relayed.
    """

    url: str
    headers: bool
    heads: list[tuple[str, str, dict[str, str]]] = field(default_factory=lambda: [])

    def writes(self) -> list[tuple[str, str, dict[str, str]]]:
        """The PUT, DELETE and MOVE requests relayed."""
        return [h for h in self.heads if h[0] in {"PUT", "DELETE", "MOVE"}]


def _relay(proxy: NoEtagProxy, client: socket.socket, upstream: tuple[str, int]) -> None:
    with client, socket.create_connection(upstream) as server, contextlib.suppress(OSError):
        pending = b""
        while True:
            request = _read_message(client, pending)
            if request is None:
                return
            message, pending = request
            head, _, rest = message.partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path = lines[0].split(" ")[:2]
            fields = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
            proxy.heads.append((method, path, fields))
            kept = [line for line in head.split(b"\r\n") if not line.lower().startswith(b"accept-encoding:")]
            server.sendall(b"\r\n".join([*kept, b"Accept-Encoding: identity"]) + b"\r\n\r\n" + rest)
            answer = _read_message(server, b"", head_only=method == "HEAD")
            if answer is None:
                return
            head, _, body = answer[0].partition(b"\r\n\r\n")
            if b" 207 " in head.split(b"\r\n", 1)[0] + b" ":
                body = _GETETAG.sub(b"", body)
            drop = (b"content-length:", b"etag:") if proxy.headers else (b"content-length:",)
            kept = [line for line in head.split(b"\r\n") if not line.lower().startswith(drop)]
            client.sendall(b"\r\n".join([*kept, b"Content-Length: %d" % len(body)]) + b"\r\n\r\n" + body)


@contextlib.contextmanager
def no_etag_proxy(target: str, *, headers: bool = False) -> Iterator[NoEtagProxy]:
    """Run the double in front of ``target`` until the block ends."""
    upstream = upstream_of(target)
    proxy: NoEtagProxy | None = None
    with on_loopback(lambda conn: _relay(proxy, conn, upstream)) as port:  # type: ignore[arg-type]
        proxy = NoEtagProxy(f"http://127.0.0.1:{port}/", headers)
        yield proxy
