"""A write whose answer is lost says what happened: changed, not changed, or (after a timeout) not known.

The faults come from ``LossyProxy`` (a test double: a TCP proxy in front of the
real Radicale, see test_create_retry.py); everything else is real.
"""

from __future__ import annotations

import pytest

from approval_core import ApprovalSettings
from approval_core.testing import accept, connect
from caldav_helpers import ics, structured, vevent
from caldav_mcp.server import build_server
from caldav_mcp.settings import CalDAVSettings
from test_create_retry import lossy_proxy, stored_uids

pytestmark = pytest.mark.anyio

UID = "lost@example.org"


def _build(proxy, timeout: float = 30.0):
    return build_server(ApprovalSettings(), CalDAVSettings(proxy.url, "willi", "secret", timeout=timeout))


def _stored(account, calendar: str = "") -> str:
    status, body = account.get(calendar or account.work, f"{UID}.ics")
    return body if status == 200 else ""


@pytest.fixture
def event(account):
    account.put(account.work, f"{UID}.ics", ics(vevent(UID, ":20261201T090000Z", ":20261201T100000Z", "Before")))
    return account


async def test_an_update_whose_answer_was_lost_but_that_was_made_says_so(event) -> None:
    with lossy_proxy(event.server.url) as proxy:
        async with connect(_build(proxy), revision="2026-07-28") as client:
            proxy.mode = "drop_reply"
            result = await client.call_tool("update_event", {"calendar": event.work, "id": UID, "summary": "After"})
    written = structured(result)
    assert written["action"] == "updated"
    assert written["note"].startswith("The server's answer to the write was lost (")
    assert written["note"].endswith("reading back showed the change was made.")
    assert "SUMMARY:After" in _stored(event)


async def test_an_update_that_never_arrived_says_not_changed(event) -> None:
    with lossy_proxy(event.server.url) as proxy:
        async with connect(_build(proxy), revision="2026-07-28") as client:
            proxy.mode = "drop_request"
            result = await client.call_tool("update_event", {"calendar": event.work, "id": UID, "summary": "After"})
    assert result.is_error
    text = result.content[0].text
    assert "closed the connection without answering" in text
    assert "Read back afterwards: the entry still has the ETag it was read with: NOT changed." in text
    assert "SUMMARY:Before" in _stored(event)


async def test_an_update_that_timed_out_is_not_known_and_may_land_later(event) -> None:
    with lossy_proxy(event.server.url) as proxy:
        async with connect(_build(proxy, timeout=1.0), revision="2026-07-28") as client:
            proxy.mode = "hold"
            result = await client.call_tool("update_event", {"calendar": event.work, "id": UID, "summary": "After"})
            proxy.release.set()
            assert proxy.forwarded.wait(30)
    assert result.is_error
    text = result.content[0].text
    assert "did not answer" in text
    assert "Whether the change happened is NOT KNOWN: the server may still be applying it." in text
    assert "read it again with get_event" in text
    assert "NOT changed" not in text
    assert "SUMMARY:After" in _stored(event)  # it did land, after the answer had been given up on


async def test_a_create_that_timed_out_is_not_known_never_not_created(account) -> None:
    """The review's Feb-31 case: the PUT timed out, and the entry landed afterwards."""
    call = {"calendar": account.work, "summary": "Late", "start": "2026-12-03T10:00:00Z", "uid": "late@example.org"}
    with lossy_proxy(account.server.url) as proxy:
        async with connect(_build(proxy, timeout=1.0), revision="2026-07-28") as client:
            proxy.mode = "hold"
            result = await client.call_tool("create_event", call)
            proxy.release.set()
            assert proxy.forwarded.wait(30)
            retry = await client.call_tool("create_event", call)
    assert result.is_error
    text = result.content[0].text
    assert "NOT created" not in text
    assert "whether it was created is NOT KNOWN" in text
    assert 'Check later with get_event (uid "late@example.org")' in text
    assert stored_uids(account, account.work) == ["late@example.org"]
    assert "already exists" in retry.content[0].text


async def test_a_delete_whose_answer_was_lost_reads_back_gone_or_still_there(event) -> None:
    with lossy_proxy(event.server.url) as proxy:
        async with connect(_build(proxy), revision="2026-07-28", answer=accept) as client:
            proxy.method, proxy.mode = b"DELETE", "drop_request"
            kept = await client.call_tool("delete_event", {"calendar": event.work, "id": UID})
            assert _stored(event)
            proxy.method, proxy.mode = b"DELETE", "drop_reply"
            deleted = structured(await client.call_tool("delete_event", {"calendar": event.work, "id": UID}))
    assert kept.is_error
    assert "the entry is still there, with the ETag it was read with: NOT changed" in kept.content[0].text
    assert deleted["note"].endswith("reading back showed the entry is gone: it was deleted.")
    assert deleted["already_gone"] is False
    assert _stored(event) == ""


async def test_a_move_whose_answer_was_lost_reads_both_calendars_back(event) -> None:
    with lossy_proxy(event.server.url) as proxy:
        async with connect(_build(proxy), revision="2026-07-28", answer=accept) as client:
            call = {"calendar": event.work, "id": UID, "destination": event.home}
            proxy.method, proxy.mode = b"MOVE", "drop_request"
            kept = await client.call_tool("move_event", call)
            proxy.method, proxy.mode = b"MOVE", "drop_reply"
            moved = structured(await client.call_tool("move_event", call))
    assert kept.is_error
    assert f"the event is still in {event.work} and not in {event.home}: NOT changed" in kept.content[0].text
    assert moved["note"].endswith(f"reading back showed the event is in {event.home} and no longer in {event.work}.")
    assert _stored(event) == ""
    assert _stored(event, event.home)


async def test_a_task_update_whose_answer_was_lost_but_that_was_made_says_so(account) -> None:
    task = "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//t//t//EN\nBEGIN:VTODO\nUID:task@x\nDTSTAMP:20261101T000000Z\n"
    account.put(account.tasks_only, "task@x.ics", task + "SUMMARY:Before\nEND:VTODO\nEND:VCALENDAR\n")
    with lossy_proxy(account.server.url) as proxy:
        async with connect(_build(proxy), revision="2026-07-28") as client:
            proxy.mode = "drop_reply"
            result = await client.call_tool(
                "update_task", {"calendar": account.tasks_only, "uid": "task@x", "summary": "After"}
            )
    written = structured(result)
    assert written["note"].endswith("reading back showed the change was made.")
    assert "SUMMARY:After" in account.get(account.tasks_only, "task@x.ics")[1]
