"""Hostile ids and a hostile backend: nothing leaves the configured origin, every failure is a clear tool error.

The backends here are DOUBLES on 127.0.0.1 (a redirecting server, a server answering garbage), because no
real ntfy misbehaves on demand; the ids are fed to the real ntfy's configuration.
"""

from __future__ import annotations

import contextlib
import http.server
import logging
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2
import pytest
from ntfy_conftest import real_server
from ntfy_server import NtfyServer

from approval_core import ApprovalSettings
from approval_core.testing import connect, escape_corpus, listening
from ntfy_mcp import build_server
from ntfy_mcp.client import NtfyClient
from ntfy_mcp.errors import InputError, NtfyUnavailable
from ntfy_mcp.settings import NtfySettings

pytestmark = pytest.mark.anyio


def id_calls(value: str) -> list[tuple[str, dict[str, Any]]]:
    """Every tool argument that names something on the server, given ``value``."""
    return [
        ("publish_message", {"topics": [value], "message": "m"}),
        ("list_messages", {"topics": [value]}),
        ("list_messages", {"topics": ["ok-topic"], "id": value}),
        ("list_messages", {"topics": ["ok-topic"], "cursor": value}),
        ("list_messages", {"topics": ["ok-topic"], "since": value}),
        ("get_message", {"topic": value, "id": "AAAAAAAAAAAA"}),
        ("get_message", {"topic": "ok-topic", "id": value}),
        ("mark_messages_read", {"topic": value, "sequence_ids": ["abc"]}),
        ("mark_messages_read", {"topic": "ok-topic", "sequence_ids": [value]}),
        ("update_message", {"topic": value, "sequence_id": "abc", "message": "m"}),
        ("update_message", {"topic": "ok-topic", "sequence_id": value, "message": "m"}),
        ("delete_messages", {"topic": value, "sequence_ids": ["abc"]}),
        ("delete_messages", {"topic": "ok-topic", "sequence_ids": [value]}),
        ("check_topic_access", {"topic": value}),
        ("create_user", {"username": value, "password": "long-enough-1"}),
        ("delete_user", {"username": value}),
        ("manage_user_access", {"username": value, "topic": "ok-topic", "permission": "read-only"}),
        ("manage_user_access", {"username": "nobody", "topic": value, "permission": "read-only"}),
    ]


async def test_no_id_of_any_tool_leads_a_request_off_the_configured_server(ntfy: NtfyServer) -> None:
    with listening() as listener:
        corpus = escape_corpus(listener.port, "ok-topic")
        async with connect(real_server(ntfy, elicitation=False), revision="2025-11-25") as client:
            for value in corpus:
                for tool, args in id_calls(value):
                    result = await client.call_tool(tool, args)
                    assert result.is_error, (tool, args)
                    assert "Error executing tool" not in result.content[0].text or "validation error" in (
                        result.content[0].text
                    )
    assert listener.received == []


def test_the_one_place_urls_are_made_refuses_every_escape_naming_the_field() -> None:
    """Even a value no tool pattern stopped cannot leave: NtfyClient.url checks after decoding, and the origin."""
    client = NtfyClient(NtfySettings(url="http://127.0.0.1:8/ntfy"))
    for value in escape_corpus(9, "ok-topic"):
        with pytest.raises(InputError, match=r"^topic: "):
            client.url(("topic", value), route="json")
    assert str(client.url(("topics", "a,b"), route="json")) == "http://127.0.0.1:8/ntfy/a,b/json"
    assert str(client.url(route="v1/users")) == "http://127.0.0.1:8/ntfy/v1/users"


def test_a_url_kept_for_reuse_is_one_that_passed_and_the_rules_still_hold_once_many_are_kept() -> None:
    """NtfyClient.url keeps the URLs it made (up to 256): a refused value is never kept, and is refused again."""
    client = NtfyClient(NtfySettings(url="http://127.0.0.1:8/ntfy"))
    first = client.url(("topic", "alerts"), route="json")
    assert client.url(("topic", "alerts"), route="json") is first
    assert str(client.url(("topic", "alerts"))) == "http://127.0.0.1:8/ntfy/alerts"
    for n in range(300):  # more than are kept
        assert str(client.url(("topic", f"t{n}"))) == f"http://127.0.0.1:8/ntfy/t{n}"
    for _ in range(2):
        for value in escape_corpus(9, "ok-topic"):
            with pytest.raises(InputError, match=r"^topic: "):
                client.url(("topic", value), route="json")


async def test_a_poll_stops_reading_an_endless_answer_once_it_holds_the_lines_it_needs() -> None:
    """A DOUBLE answering a poll with lines without end (two a chunk): the poll reads three chunks for five events."""
    pulled = 0

    async def endless() -> AsyncIterator[bytes]:
        nonlocal pulled
        for n in range(100_000):
            pulled += 1
            yield b"".join(b'{"id":"m%d","time":1,"event":"message"}\n' % (2 * n + k) for k in range(2))

    transport = httpx2.MockTransport(lambda request: httpx2.Response(200, content=endless()))
    async with NtfyClient(NtfySettings(url="http://127.0.0.1:8", token="tk_x"), transport=transport) as client:
        events = await client.poll(["alerts"], {"since": "all"}, limit=5)
    assert [event["id"] for event in events] == ["m0", "m1", "m2", "m3", "m4"]
    assert pulled == 3


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b'{"id":"m1","time":1', "held a line that is not JSON"),
        (b'{"id":"m1","title":"\\ud800"}', "held a line that is not JSON"),  # an unpaired surrogate escape
        (b'["m1"]', "held a line that is not a JSON object"),
    ],
)
async def test_a_poll_answer_with_a_line_that_is_no_message_is_refused(line: bytes, expected: str) -> None:
    """A DOUBLE answering a poll with one good line and one bad: the listing fails, saying what was wrong."""
    good = b'{"id":"m0","time":1,"event":"message"}\n'
    transport = httpx2.MockTransport(lambda request: httpx2.Response(200, content=good + line + b"\n"))
    async with NtfyClient(NtfySettings(url="http://127.0.0.1:8", token="tk_x"), transport=transport) as client:
        with pytest.raises(NtfyUnavailable, match=expected):
            await client.poll(["alerts"], {"since": "all"})


class Double(http.server.ThreadingHTTPServer):
    """A hostile HTTP DOUBLE of an ntfy server: every request gets the answer named by ``mode``."""

    daemon_threads = True
    mode = "redirect-away"
    away = 0  # a port to redirect to
    seen: list[tuple[str, str, str | None]]


class Handler(http.server.BaseHTTPRequestHandler):
    server: Double

    def log_message(self, *args: object) -> None:
        pass

    def answer(self) -> None:
        self.server.seen.append((self.command, self.path, self.headers.get("Authorization")))
        mode = self.server.mode
        if mode == "redirect-away":
            self.reply(302, b"", "text/plain", location=f"http://127.0.0.1:{self.server.away}/stolen")
        elif mode == "redirect-loop":
            self.reply(301, b"", "text/plain", location=self.path)
        elif mode == "huge":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()  # no length: the body just keeps coming
            with contextlib.suppress(OSError):
                for _ in range(64):
                    self.wfile.write(b"[" + b"0," * 32768)
        elif mode == "slow":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "100")
            self.end_headers()
            with contextlib.suppress(OSError):
                for _ in range(100):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.2)
        elif mode == "html":
            self.reply(200, b"<html><body>Welcome to nginx!</body></html>", "text/html")
        elif mode == "malformed":
            self.reply(200, b'{"healthy": tru', "application/json")
        elif mode == "error-html":
            self.reply(403, b"<html>Forbidden by the proxy</html>", "text/html")
        elif mode == "nested":  # JSON nested deeper than Python's json reads: RecursionError, not ValueError
            self.reply(200, b"[" * 50_000, "application/json")
        elif mode == "error-nested":
            self.reply(403, b"[" * 50_000, "application/json")

    def reply(self, status: int, body: bytes, kind: str, location: str | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        if location:
            self.send_header("Location", location)
        self.end_headers()
        with contextlib.suppress(OSError):
            self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_DELETE = answer


@contextlib.contextmanager
def double(mode: str, away: int = 0) -> Iterator[Double]:
    server = Double(("127.0.0.1", 0), Handler)
    server.mode, server.away, server.seen = mode, away, []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def against(server: Double, **settings: Any) -> Any:
    url = f"http://127.0.0.1:{server.server_address[1]}"
    return build_server(ApprovalSettings(), NtfySettings(url=url, token="tk_secret_for_the_double", **settings))


CALLS = [
    ("get_server_info", {}),
    ("get_account", {}),
    ("list_users", {}),
    ("list_messages", {"topics": ["alerts"]}),
    ("publish_message", {"topics": ["alerts"], "message": "m"}),
    ("check_topic_access", {"topic": "alerts"}),
]


async def test_a_redirect_to_another_origin_is_not_followed_and_carries_no_credential() -> None:
    with listening() as listener, double("redirect-away", away=listener.port) as backend:
        async with connect(against(backend), revision="2025-11-25") as client:
            results = [await client.call_tool(tool, args) for tool, args in CALLS]
    assert listener.received == []
    for result in results:
        assert result.is_error
        assert "redirect (HTTP 302) to another server; redirects are not followed" in result.content[0].text
    assert backend.seen  # the configured origin did get the credential, and only it
    assert all(auth == "Bearer tk_secret_for_the_double" for _, _, auth in backend.seen)


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("redirect-loop", "redirects are not followed"),
        ("huge", "larger than NTFY_MAX_RESPONSE_BYTES (65536 bytes); it was not read further"),
        ("slow", "did not answer GET /v1/health in full within 1 s"),
        ("html", "was not JSON"),
        ("malformed", "was not JSON"),
        ("error-html", "not allowed to do that (ntfy's access rules) (HTTP 403, code 0)"),
        ("nested", "was not JSON"),
        ("error-nested", "not allowed to do that (ntfy's access rules) (HTTP 403, code 0)"),
    ],
)
async def test_a_hostile_backend_gives_clear_tool_errors_and_no_traceback(
    mode: str, expected: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    # Only the slow double is about the deadline; the others get one a loaded machine meets.
    timeout = 1 if mode == "slow" else 30
    with double(mode) as backend:
        async with connect(
            against(backend, timeout=timeout, max_response_bytes=65536), revision="2025-11-25"
        ) as client:
            result = await client.call_tool("get_server_info", {})
    assert result.is_error
    text = result.content[0].text
    assert expected in text
    assert "Error executing tool" not in text
    assert "unexpected internal error" not in text
    assert [r for r in caplog.records if r.exc_info] == []
    assert "Traceback" not in caplog.text
