"""Entry hrefs a server names: decoded once, sent back to the same resource, never outside the calendar queried."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest

from approval_core import ApprovalSettings
from approval_core.testing import approval_of, connect
from caldav_helpers import ics, vevent
from caldav_mcp.server import build_server
from caldav_mcp.settings import CalDAVSettings
from test_create_retry import _read_message, on_loopback, upstream_of

pytestmark = pytest.mark.anyio

OFF = ApprovalSettings(elicitation=False)


async def _confirmed(client, tool: str, args: dict):
    """Call a guarded tool with approval switched off: ask for the token, then repeat with it."""
    first = await client.call_tool(tool, args)
    if not first.is_error or "confirm_token=" not in first.content[0].text:
        return first  # done, or refused before any token
    return await client.call_tool(tool, {**args, "confirm_token": approval_of(first)["confirm_token"]})


async def test_an_entry_named_with_a_percent_is_the_one_written_and_deleted(account) -> None:
    # Stored as "a%41.ics" (its href is "a%2541.ics"); its sibling "aA.ics" is what a second decoding would name.
    account.put(account.work, "a%2541.ics", ics(vevent("pct@example.org", ":20261201T090000Z", ":20261201T100000Z")))
    account.put(account.work, "aA.ics", ics(vevent("other@example.org", ":20261201T090000Z", ":20261201T100000Z")))
    call = {"calendar": account.work, "id": "pct@example.org"}
    async with connect(account.build(OFF), revision="2026-07-28") as client:
        updated = await _confirmed(client, "update_event", {**call, "summary": "Renamed"})
        assert not updated.is_error, updated.content[0].text
        assert "SUMMARY:Renamed" in account.get(account.work, "a%2541.ics")[1]
        deleted = await _confirmed(client, "delete_event", call)
    assert not deleted.is_error, deleted.content[0].text
    assert deleted.structured_content["already_gone"] is False
    assert account.get(account.work, "a%2541.ics")[0] == 404
    status, sibling = account.get(account.work, "aA.ics")
    assert status == 200
    assert "UID:other@example.org" in sibling
    assert "Renamed" not in sibling


@dataclass
class RewritingProxy:
    """A test double: a TCP proxy on 127.0.0.1 in front of the real Radicale that rewrites answers.

    Every answer's body passes through ``rewrite`` (asked for uncompressed; Content-Length fixed up),
    as a compromised or buggy server (or a proxy) could answer.

    Attributes:
        url: The proxy's base URL.
        requests: ``METHOD path`` of every request relayed.
        heads: (method, path, header fields lower-cased) of every request relayed.
        rewrite_head: What is done to every answer's head (its lines but Content-Length), as ``rewrite`` to bodies.
    """

    url: str
    rewrite: Callable[[bytes], bytes]
    requests: list[str] = field(default_factory=lambda: [])
    heads: list[tuple[str, str, dict[str, str]]] = field(default_factory=lambda: [])
    rewrite_head: Callable[[list[bytes]], list[bytes]] = lambda lines: lines


def _relay(proxy: RewritingProxy, client: socket.socket, upstream: tuple[str, int]) -> None:
    with client, socket.create_connection(upstream) as server, contextlib.suppress(OSError):
        pending = b""
        while True:
            request = _read_message(client, pending)
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
            server.sendall(message)
            answer = _read_message(server, b"", head_only=message.startswith(b"HEAD "))
            if answer is None:
                return
            head, _, body = answer[0].partition(b"\r\n\r\n")
            body = proxy.rewrite(body)
            lines = proxy.rewrite_head(
                [line for line in head.split(b"\r\n") if not line.lower().startswith(b"content-length:")]
            )
            client.sendall(b"\r\n".join([*lines, b"Content-Length: %d" % len(body)]) + b"\r\n\r\n" + body)


@contextlib.contextmanager
def rewriting_proxy(
    target: str, rewrite: Callable[[bytes], bytes], rewrite_head: Callable[[list[bytes]], list[bytes]] | None = None
) -> Iterator[RewritingProxy]:
    upstream = upstream_of(target)
    proxy: RewritingProxy | None = None
    with on_loopback(lambda conn: _relay(proxy, conn, upstream)) as port:  # type: ignore[arg-type]
        proxy = RewritingProxy(f"http://127.0.0.1:{port}/", rewrite)
        if rewrite_head is not None:
            proxy.rewrite_head = rewrite_head
        yield proxy


INSIDE_NOT = "not directly inside it"


@pytest.mark.parametrize(
    ("elsewhere", "said"),
    [
        ("{home}h1.ics", INSIDE_NOT),  # another calendar this server may use
        ("{work}sub/e1.ics", INSIDE_NOT),
        ("{work}%2e%2e/{home_name}/h1.ics", INSIDE_NOT),
        ("{work}", "no event with UID"),  # the caldav library drops the collection's own href
    ],
)
async def test_an_href_outside_the_calendar_queried_is_refused_before_any_write(
    account, elsewhere: str, said: str
) -> None:
    account.put(account.work, "e1.ics", ics(vevent("e1@example.org", ":20261201T090000Z", ":20261201T100000Z")))
    account.put(account.home, "h1.ics", ics(vevent("h1@example.org", ":20261201T090000Z", ":20261201T100000Z")))
    href = elsewhere.format(work=account.work, home=account.home, home_name=account.home.strip("/").rsplit("/")[-1])
    real = f">{account.work}e1.ics<".encode()

    with rewriting_proxy(account.server.url, lambda body: body.replace(real, f">{href}<".encode())) as proxy:
        settings = CalDAVSettings(proxy.url, "willi", "secret")
        async with connect(build_server(OFF, settings), revision="2026-07-28") as client:
            results = [
                await _confirmed(client, tool, {"calendar": account.work, "id": "e1@example.org", **extra})
                for tool, extra in [
                    ("update_event", {"summary": "Changed"}),
                    ("delete_event", {}),
                    ("move_event", {"destination": account.home}),
                ]
            ]
    for result in results:
        assert result.is_error
        assert said in result.content[0].text, result.content[0].text
    writes = [r for r in proxy.requests if r.split(" ")[0] in {"PUT", "DELETE", "MOVE"}]
    assert writes == []
    assert "SUMMARY:Meeting" in account.get(account.home, "h1.ics")[1]
    assert "SUMMARY:Meeting" in account.get(account.work, "e1.ics")[1]
