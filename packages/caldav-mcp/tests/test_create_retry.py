"""A create is never silently lost or doubled: a caller-given uid, If-None-Match: *, and a read-back."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

import pytest
from rewriting_proxy import on_loopback, read_message, upstream_of

from approval_core import ApprovalSettings
from approval_core.testing import connect
from caldav_helpers import structured
from caldav_mcp.server import build_server
from caldav_mcp.settings import CalDAVSettings

pytestmark = pytest.mark.anyio

Mode = Literal["pass", "drop_reply", "drop_request", "hold"]


@dataclass
class LossyProxy:
    """A test double: a TCP proxy on 127.0.0.1 in front of the real Radicale.

    It relays every request and answer, except the next request of ``method`` (PUT
    unless set) while ``mode`` is armed: ``drop_reply`` forwards it to Radicale and
    closes the client's connection instead of relaying the answer (the write
    happened, the reply was lost); ``drop_request`` closes the connection without
    forwarding it (nothing happened); ``hold`` keeps it, unanswered, until
    ``release`` is set, and only then forwards it (a server still working on the
    request after the client timed out), setting ``forwarded`` once Radicale answered.

    Attributes:
        url: The proxy's base URL.
        mode: What happens to the next request of ``method``; back to ``pass`` once it has happened.
        method: The HTTP method ``mode`` applies to.
        puts: How many PUTs reached Radicale through the proxy.
    """

    url: str
    mode: Mode = "pass"
    method: bytes = b"PUT"
    puts: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    release: threading.Event = field(default_factory=threading.Event)
    forwarded: threading.Event = field(default_factory=threading.Event)


def _serve(proxy: LossyProxy, client: socket.socket, upstream: tuple[str, int]) -> None:
    with client, socket.create_connection(upstream) as server:
        pending = b""
        while True:
            request = read_message(client, pending)
            if request is None:
                return
            message, pending = request
            method = message.split(b" ", 1)[0]
            with proxy.lock:
                mode = proxy.mode if method == proxy.method else "pass"
                if mode != "pass":
                    proxy.mode = "pass"
            if mode == "drop_request":
                return
            if mode == "hold":
                proxy.release.wait(60)
                server.sendall(message)
                read_message(server, b"")
                proxy.forwarded.set()
                return
            server.sendall(message)
            if method == b"PUT":
                proxy.puts += 1
            answer = read_message(server, b"", head_only=method == b"HEAD")
            if answer is None or mode == "drop_reply":
                client.shutdown(socket.SHUT_RDWR)
                return
            client.sendall(answer[0])


@contextlib.contextmanager
def lossy_proxy(target: str) -> Iterator[LossyProxy]:
    upstream = upstream_of(target)
    proxy: LossyProxy | None = None
    with on_loopback(lambda conn: _serve(proxy, conn, upstream)) as port:  # type: ignore[arg-type]
        proxy = LossyProxy(f"http://127.0.0.1:{port}/")
        yield proxy


def stored_uids(account, calendar: str) -> list[str]:
    """The UIDs stored in a calendar, read with the caldav library straight from Radicale."""
    cal = account.dav.calendar(url=account.server.url.rstrip("/") + calendar)
    found = []
    for item in cal.objects():
        item.load()
        found.extend(line[4:].strip() for line in item.data.splitlines() if line.startswith("UID:"))
    return sorted(found)


CREATES = {
    "create_event": {"summary": "Dentist", "start": "2026-12-03T10:00:00Z"},
    "create_task": {"summary": "Call back"},
    "create_journal": {"summary": "Notes", "date": "2026-12-03"},
}


def server_behind(proxy: LossyProxy):
    return build_server(ApprovalSettings(), CalDAVSettings(proxy.url, "willi", "secret"))


@pytest.mark.parametrize("tool", sorted(CREATES))
async def test_a_lost_reply_is_reported_as_created_and_a_retry_makes_no_second_copy(account, tool) -> None:
    call = {"calendar": account.work, **CREATES[tool], "uid": f"{tool}-1@example.org"}
    with lossy_proxy(account.server.url) as proxy:
        async with connect(server_behind(proxy), revision="2026-07-28") as client:
            proxy.mode = "drop_reply"
            first = structured(await client.call_tool(tool, call))
            retry = await client.call_tool(tool, call)
    assert proxy.puts == 1
    assert first["action"] == "created"
    assert first["id"] == f"{tool}-1@example.org"
    assert first["note"].startswith("The server's answer to the write was lost")
    assert retry.is_error
    assert f"uid: an entry with UID '{tool}-1@example.org' already exists in {account.work} (its id is " in (
        retry.content[0].text
    )
    assert stored_uids(account, account.work) == [f"{tool}-1@example.org"]


async def test_a_lost_reply_without_a_given_uid_is_still_reported_as_created(account) -> None:
    """The issue's reproduction: the PUT is stored, the answer lost; the tool must not say it failed."""
    with lossy_proxy(account.server.url) as proxy:
        async with connect(server_behind(proxy), revision="2026-07-28") as client:
            proxy.mode = "drop_reply"
            result = await client.call_tool("create_event", {"calendar": account.work, **CREATES["create_event"]})
    created = structured(result)
    assert created["action"] == "created"
    assert stored_uids(account, account.work) == [created["uid"]]


async def test_a_request_that_never_arrived_is_reported_as_not_created_and_can_be_repeated(account) -> None:
    call = {"calendar": account.work, **CREATES["create_event"], "uid": "dentist-2@example.org"}
    with lossy_proxy(account.server.url) as proxy:
        async with connect(server_behind(proxy), revision="2026-07-28") as client:
            proxy.mode = "drop_request"
            first = await client.call_tool("create_event", call)
            assert stored_uids(account, account.work) == []
            second = structured(await client.call_tool("create_event", call))
    assert first.is_error
    text = first.content[0].text
    assert "Checked afterwards: no event with UID 'dentist-2@example.org' is in" in text
    assert "so it was NOT created" in text
    assert 'Repeating the call with uid="dentist-2@example.org" is safe' in text
    assert second["action"] == "created"
    assert stored_uids(account, account.work) == ["dentist-2@example.org"]


async def test_a_uid_taken_by_an_entry_under_another_name_is_already_there(account) -> None:
    from caldav_helpers import ics, vevent

    account.put(account.work, "other-name.ics", ics(vevent("taken@x", ":20261201T090000Z", ":20261201T100000Z")))
    async with connect(account.build(), revision="2026-07-28") as client:
        result = await client.call_tool(
            "create_event", {"calendar": account.work, **CREATES["create_event"], "uid": "taken@x"}
        )
    assert result.is_error
    assert "uid: an entry with UID 'taken@x' already exists" in result.content[0].text
    assert stored_uids(account, account.work) == ["taken@x"]


@pytest.mark.parametrize("uid", ["", "has space", "../escape", "a/b", "x" * 201, "-leading", "naïve", "a\nb"])
async def test_a_caller_given_uid_must_be_sane(account, uid) -> None:
    async with connect(account.build(), revision="2026-07-28") as client:
        result = await client.call_tool(
            "create_event", {"calendar": account.work, **CREATES["create_event"], "uid": uid}
        )
    assert result.is_error
    assert "uid" in result.content[0].text
    assert stored_uids(account, account.work) == []
