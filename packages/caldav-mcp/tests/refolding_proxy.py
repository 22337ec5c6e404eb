"""A replaying double in front of the real Radicale: calendar data refolded by octets, inside characters.

A test double. RFC 5545 §3.1 folds a content line after 75 octets, and some
servers store lines folded exactly there, inside a multi-byte UTF-8 sequence.
Radicale never returns such bytes (it re-serialises what it stores, decoding
an upload that is not UTF-8 as Latin-1), so this proxy forwards every request
to a real Radicale unchanged and rewrites only the calendar data in its
answers (GET bodies and ``calendar-data`` in a REPORT's multistatus): each
line unfolded, then folded again every 75 octets regardless of characters.

``corrupt`` names hrefs whose calendar data is served as Latin-1 instead (bytes
that are not UTF-8 however they are unfolded). ``puts`` records each PUT body
as sent, to check what a client writes.
"""

from __future__ import annotations

import contextlib
import http.server
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx

_DATA = re.compile(rb"(<(?:[A-Za-z0-9_]+:)?calendar-data[^>]*>)(.*?)(</(?:[A-Za-z0-9_]+:)?calendar-data>)", re.S)
_HREF = re.compile(rb"<(?:[A-Za-z0-9_]+:)?href>([^<]*)</(?:[A-Za-z0-9_]+:)?href>")
_ESCAPES = ((b"&", b"&amp;"), (b"<", b"&lt;"), (b">", b"&gt;"))


def fold_octets(raw: bytes, width: int = 75) -> bytes:
    """Unfold ``raw`` and fold every line after ``width`` octets, even inside a UTF-8 sequence."""
    lines = re.sub(rb"\r?\n[ \t]", b"", raw).replace(b"\r\n", b"\n").split(b"\n")
    out: list[bytes] = []
    for line in lines:
        if not line:
            continue
        parts = [line[:width]]
        rest = line[width:]
        while rest:
            parts.append(b" " + rest[: width - 1])
            rest = rest[width - 1 :]
        out.append(b"\r\n".join(parts))
    return b"\r\n".join(out) + b"\r\n"


def _unescape(text: bytes) -> bytes:
    text = text.replace(b"&#13;", b"\r").replace(b"&#xD;", b"\r")
    for plain, escaped in reversed(_ESCAPES):
        text = text.replace(escaped, plain)
    return text


def _escape(text: bytes) -> bytes:
    for plain, escaped in _ESCAPES:
        text = text.replace(plain, escaped)
    return text


@dataclass
class Refolding:
    """The proxy's address, the hrefs it serves undecodable, and the PUT bodies it forwarded."""

    port: int = 0
    corrupt: set[str] = field(default_factory=lambda: set[str]())
    puts: list[bytes] = field(default_factory=lambda: list[bytes]())

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def rewrite(self, href: str, data: bytes) -> bytes:
        if href in self.corrupt:
            return fold_octets(data.decode("utf-8").encode("latin-1", errors="replace"))
        return fold_octets(data)


@contextlib.contextmanager
def refolding_proxy(target: str) -> Iterator[Refolding]:
    """Run the proxy in front of ``target`` (a Radicale base URL) until the block ends."""
    proxy = Refolding()
    upstream = httpx.Client(base_url=target.rstrip("/"), timeout=30)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def _any(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            if self.command == "PUT":
                proxy.puts.append(body)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in {"host", "content-length"}}
            answer = upstream.request(self.command, self.path, content=body, headers=headers)
            content = answer.content
            kind = answer.headers.get("Content-Type", "")
            if self.command == "GET" and kind.startswith("text/calendar") and answer.status_code == 200:
                content = proxy.rewrite(self.path, content)
            elif answer.status_code == 207 and b"calendar-data" in content:
                content = self._refold_multistatus(content)
            self.send_response(answer.status_code)
            for name, value in answer.headers.items():
                if name.lower() not in {"content-length", "transfer-encoding", "connection", "content-encoding"}:
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

        def _refold_multistatus(self, content: bytes) -> bytes:
            pieces = re.split(rb"(?=<(?:[A-Za-z0-9_]+:)?response>)", content)
            out: list[bytes] = []
            for piece in pieces:
                found = _HREF.search(piece)
                href = found.group(1).decode() if found else ""
                out.append(
                    _DATA.sub(
                        lambda m, href=href: (
                            m.group(1) + _escape(proxy.rewrite(href, _unescape(m.group(2)))) + m.group(3)
                        ),
                        piece,
                    )
                )
            return b"".join(out)

        do_GET = do_PUT = do_DELETE = do_HEAD = do_OPTIONS = do_POST = _any
        do_PROPFIND = do_REPORT = do_MKCALENDAR = do_MOVE = do_PROPPATCH = _any

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    proxy.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        server.shutdown()
        server.server_close()
        upstream.close()
