"""carddav-mcp against a hostile backend: every bad answer ends in a clear tool error, bounded in time and memory.

The backend here is a double, an HTTP server on 127.0.0.1 that answers every request in one hostile
way (an XML entity bomb, a body past the size limit with and without Content-Length, a body sent a
byte at a time, a wrong content type, broken XML, a redirect loop); no real CardDAV server can be made
to answer like that. Each call must fail with carddav-mcp's own error naming what failed: never the
boundary's "unexpected internal error", and never a traceback in the log.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from approval_core import ApprovalSettings
from approval_core.testing import connect
from carddav_mcp.server import build_server
from carddav_mcp.settings import CardDavSettings

pytestmark = pytest.mark.anyio

LIMIT = 64 * 1024
_LEVELS = "".join(f'<!ENTITY lol{i} "{(f"&lol{i - 1};" if i else "&lol;") * 10}">' for i in range(9))
BOMB = (
    b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
    + _LEVELS.encode()
    + b']><d:multistatus xmlns:d="DAV:"><d:response><d:href>&lol8;</d:href></d:response></d:multistatus>'
)
MULTISTATUS_START = b'<?xml version="1.0"?><d:multistatus xmlns:d="DAV:"><d:response><d:href>/a/</d:href>'


class _Hostile(BaseHTTPRequestHandler):
    """The double; ``mode`` picks how it misbehaves."""

    mode = ""
    protocol_version = "HTTP/1.1"

    def _answer(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        mode = self.mode
        if mode == "redirect-loop":
            self._head(301, {"Location": self.path, "Content-Length": "0"})
        elif mode == "bomb":
            self._body(207, "text/xml", BOMB)
        elif mode == "wrong-type":
            self._body(207, "text/html", b"<html><body>Welcome to the login portal</body></html>")
        elif mode == "malformed":
            self._body(207, "text/xml", MULTISTATUS_START + b"<d:propstat><d:prop>")
        elif mode == "huge-declared":
            self._head(207, {"Content-Type": "text/xml", "Content-Length": str(LIMIT * 100)})
            self._drip(MULTISTATUS_START + b" " * (LIMIT * 2), pause=0)
        elif mode == "huge-chunked":
            self._head(207, {"Content-Type": "text/xml", "Transfer-Encoding": "chunked"})
            try:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(MULTISTATUS_START), MULTISTATUS_START))
                for _ in range(1000):  # 64 MiB if nobody stops reading
                    block = b" " * 65536
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(block), block))
            except OSError:
                pass
        elif mode == "slow":
            body = MULTISTATUS_START + b" " * 20000  # within the size limit, but a byte every 50 ms
            self._head(207, {"Content-Type": "text/xml", "Content-Length": str(len(body))})
            self._drip(body, pause=0.05)

    def _head(self, status: int, headers: dict[str, str]) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()

    def _body(self, status: int, media: str, body: bytes) -> None:
        self._head(status, {"Content-Type": media, "Content-Length": str(len(body))})
        self.wfile.write(body)

    def _drip(self, body: bytes, pause: float) -> None:
        try:
            for start in range(0, len(body), 1 if pause else 65536):
                self.wfile.write(body[start : start + (1 if pause else 65536)])
                self.wfile.flush()
                if pause:
                    time.sleep(pause)
        except OSError:
            pass

    do_GET = do_PROPFIND = do_REPORT = do_OPTIONS = do_PUT = do_DELETE = _answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def hostile() -> Iterator[tuple[ThreadingHTTPServer, type[_Hostile]]]:
    handler = type("Hostile", (_Hostile,), {})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server, handler
    finally:
        server.shutdown()
        server.server_close()


CASES = {
    "bomb": "could not be read",
    "wrong-type": "that is not a WebDAV XML answer",
    "malformed": "could not be read",
    "huge-declared": f"larger than CARDDAV_MAX_RESPONSE_BYTES ({LIMIT:,} bytes)",
    "huge-chunked": f"larger than CARDDAV_MAX_RESPONSE_BYTES ({LIMIT:,} bytes)",
    "slow": "within CARDDAV_TIMEOUT (1 s)",
    "redirect-loop": "redirect loop",
}


@pytest.mark.parametrize("mode", list(CASES))
async def test_a_hostile_answer_is_a_clear_tool_error_without_a_traceback(
    hostile: tuple[ThreadingHTTPServer, type[_Hostile]], mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    server, handler = hostile
    handler.mode = mode
    settings = CardDavSettings(
        url=f"http://127.0.0.1:{server.server_address[1]}/willi/",
        username="willi",
        password="hunter2",
        addressbooks=frozenset({"/willi/book/"}),
        timeout=1,
        max_response_bytes=LIMIT,
    )
    caplog.set_level(logging.DEBUG)
    async with connect(build_server(ApprovalSettings(), settings), revision="2025-11-25") as client:
        results = [
            await client.call_tool("list_address_books", {}),
            await client.call_tool("get_server_info", {}),
            await client.call_tool("list_contacts", {"address_book": "/willi/book/"}),
        ]
    for result in results:
        text = result.content[0].text
        assert result.is_error
        assert CASES[mode] in text, text
        assert "unexpected internal error" not in text
        assert "hunter2" not in text
    assert not [r for r in caplog.records if r.exc_info], "a handled case logged a traceback"
    assert "Traceback" not in caplog.text
