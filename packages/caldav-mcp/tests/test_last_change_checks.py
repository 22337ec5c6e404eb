"""Kept listings checked by the calendar's settled last change (``DAV:getlastmodified``), where the server keeps it.

Radicale computes its CTag from every entry (about the cost of a month's REPORT on 2,000 entries) and answers
the last change from its files' times, which move with every change. A first listing after the calendar
list reads under the last change the list noted and asks no CTag; the same window again asks the last
change alone. Only a server whose sync-token is Radicale's is trusted with its last change: one that is
not (a rewriting double in front of Radicale, renaming the sync-token and freezing the last change) is
checked by the CTag from its first listing. A server whose last change stays while its CTag moves (the
double freezing the value only) is found out by the next answer giving both, and its listings are checked
by the CTag from then on. The calendar's files are dated back an hour so that the noted last change is settled.
"""

from __future__ import annotations

import re
import threading
from typing import Any

import anyio
import pytest
from rewriting_proxy import rewriting_proxy

from approval_core.testing import connect
from caldav_helpers import structured
from caldav_mcp.tools import window_reads, windows
from report_fault_proxy import Action, report_fault_proxy
from test_listings import WINDOW, backdate, day_event, fill, keeper_learnt, through
from webdav_core import keeper as keeper_module

pytestmark = pytest.mark.anyio

Account = Any  # the caldav-mcp conftest's Account fixture value

_MODIFIED = re.compile(rb"(<(?:[A-Za-z0-9]+:)?getlastmodified>)[^<]*(<)")


def frozen(body: bytes) -> bytes:
    """Every ``getlastmodified`` in an answer as one fixed date: a server whose last change never moves."""
    return _MODIFIED.sub(rb"\1Sat, 01 Jan 2000 00:00:00 GMT\2", body)


async def test_a_first_listing_after_the_calendar_list_asks_no_ctag_and_is_kept(account: Account) -> None:
    fill(account, 6)
    backdate(account)
    with rewriting_proxy(account.server.url, lambda body: body) as proxy:
        async with connect(through(account, proxy.url), revision="2026-07-28") as client:
            await client.call_tool("list_calendars", {})
            before = len(proxy.requests)
            first = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW, "limit": 4}))
            arguments = {"calendar": account.work, **WINDOW, "limit": 4, "cursor": first["next_cursor"]}
            second = structured(await client.call_tool("list_events", arguments))
            again = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW, "limit": 4}))
            bodies = proxy.bodies[before:]
            asked = proxy.requests[before:]
    assert [e["uid"] for e in first["events"] + second["events"]] == [f"e{i:02d}" for i in range(6)]
    assert again["events"] == first["events"]
    assert second["reread"] is None
    assert [r.split()[0] for r in asked].count("REPORT") == 1  # read once; the rest from what was kept
    assert not any(b"getctag" in body for body in bodies)


async def test_a_change_by_another_client_moves_the_last_change_and_is_seen(account: Account) -> None:
    fill(account, 3)
    backdate(account)
    async with connect(account.build(), revision="2026-07-28") as client:
        await client.call_tool("list_calendars", {})
        first = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW}))
        account.put(account.work, "new.ics", day_event("new", 20))
        account.dav.delete(account.server.url.rstrip("/") + account.work + "e01.ics")
        second = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW}))
    assert {e["uid"] for e in first["events"]} == {"e00", "e01", "e02"}
    assert {e["uid"] for e in second["events"]} == {"e00", "e02", "new"}


async def test_a_server_whose_last_change_never_moves_is_checked_by_ctag_once_found_out(account: Account) -> None:
    fill(account, 3)
    backdate(account)
    with rewriting_proxy(account.server.url, frozen) as proxy:
        async with connect(through(account, proxy.url), revision="2026-07-28") as client:
            await client.call_tool("list_calendars", {})  # the CTag with the (frozen) last change
            structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW}))
            account.put(account.work, "new.ics", day_event("new", 20))
            await client.call_tool("list_calendars", {})  # the CTag moved, the last change did not: found out
            seen = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW}))
            account.put(account.work, "later.ics", day_event("later", 21))
            later = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW}))
    assert "new" in {e["uid"] for e in seen["events"]}
    assert "later" in {e["uid"] for e in later["events"]}


def unknown(body: bytes) -> bytes:
    """A server not known to keep its last change (another sync-token) whose last change never moves."""
    return frozen(body).replace(b"http://radicale.org/ns/sync/", b"urn:example:sync:")


async def test_a_server_not_known_to_keep_its_last_change_is_checked_by_ctag_from_the_first_listing(
    account: Account,
) -> None:
    # Nothing needs to find it out: a change by another client is seen at once, even by a listing kept under a
    # last change that does not move.
    fill(account, 3)
    backdate(account)
    with rewriting_proxy(account.server.url, unknown) as proxy:
        async with connect(through(account, proxy.url), revision="2026-07-28") as client:
            await client.call_tool("list_calendars", {})
            first = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW}))
            account.put(account.work, "new.ics", day_event("new", 20))
            seen = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW}))
            account.dav.delete(account.server.url.rstrip("/") + account.work + "e01.ics")
            later = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW}))
            bodies = proxy.bodies
    assert {e["uid"] for e in first["events"]} == {"e00", "e01", "e02"}
    assert {e["uid"] for e in seen["events"]} == {"e00", "e01", "e02", "new"}
    assert {e["uid"] for e in later["events"]} == {"e00", "e02", "new"}
    assert sum(b"sync-token" in body for body in bodies) == 1  # asked once, at the first listing


async def test_a_first_read_long_after_the_calendar_list_asks_the_last_change_not_the_ctag(
    account: Account, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The calendar list's note has expired: the read is preceded by the cheapest check the server keeps.
    monkeypatch.setattr(windows, "NOTED_SECONDS", -1.0)
    monkeypatch.setattr(keeper_module, "COSTLIER", 0.0)  # the CTag the first listing timed counts as costlier
    fill(account, 3)
    backdate(account)
    with rewriting_proxy(account.server.url, lambda body: body) as proxy:
        async with connect(through(account, proxy.url), revision="2026-07-28") as client:
            await client.call_tool("list_calendars", {})
            listed = len(proxy.requests)
            await client.call_tool(
                "list_events", {"calendar": account.work, "start": "2027-02-01", "end": "2027-03-01"}
            )
            await keeper_learnt(proxy)  # asked in the background once that first listing's REPORT was answered
            learning = proxy.bodies[listed:]
            before = len(proxy.requests)
            first = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW}))
            asked = proxy.requests[before:]
            bodies = proxy.bodies[before:]
            middle = len(proxy.requests)
            again = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW}))
            repeated = proxy.requests[middle:]
            every = proxy.bodies
    assert again["events"] == first["events"]
    # The server not yet known: the CTag with the last change before the read, the read, the last change alone
    # after it (the page waits for nothing else), then, where no call waits, the sync-token and the last change
    # once more, which settles the listing: one CTag in all.
    assert [r.split()[0] for r in proxy.requests[listed:before]] == ["PROPFIND", "REPORT"] + ["PROPFIND"] * 3
    assert b"getctag" in learning[0]
    assert b"getlastmodified" in learning[0]
    # The check and the sync-token go out together once the REPORT is answered (either may arrive first); the
    # last change is asked again once the sync-token has answered.
    assert sorted(b"sync-token" in body for body in learning[2:4]) == [False, True]
    assert all(b"getlastmodified" in body for body in learning[2:4] if b"sync-token" not in body)
    assert b"getlastmodified" in learning[4]
    assert sum(b"getctag" in body for body in learning) == 1
    # The server is known (Radicale's sync-token, asked once per client): the last change, the read, the last change.
    assert [r.split()[0] for r in asked] == ["PROPFIND", "REPORT", "PROPFIND"]
    assert sum(b"sync-token" in body for body in every) == 1
    assert not any(b"getctag" in body for body in bodies)
    assert [r.split()[0] for r in repeated] == ["PROPFIND"]  # kept: the last change alone


async def test_an_entry_removed_by_another_client_is_not_listed_again(account: Account) -> None:
    # A removal changes no entry's file: Radicale's last change of the calendar follows its folder too.
    fill(account, 3)
    backdate(account)
    async with connect(account.build(), revision="2026-07-28") as client:
        await client.call_tool("list_calendars", {})
        first = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW}))
        account.dav.delete(account.server.url.rstrip("/") + account.work + "e01.ics")
        second = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW}))
    assert {e["uid"] for e in first["events"]} == {"e00", "e01", "e02"}
    assert {e["uid"] for e in second["events"]} == {"e00", "e02"}


async def answered(proxy: Any, marker: bytes, count: int) -> None:
    """Wait until the ``count``-th request whose body holds ``marker`` has been answered (asked in the background)."""
    with anyio.fail_after(20):
        while True:
            asked = [i for i, body in enumerate(proxy.bodies) if marker in body]
            if len(asked) >= count and proxy.answered > asked[count - 1]:
                return
            await anyio.sleep(0.01)


async def test_a_listing_kept_under_the_ctag_finds_out_a_last_change_that_never_moves(
    account: Account, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The first sync-token answer fails, so the first listing is read and kept under the calendar list's CTag;
    # the server is then learnt to be Radicale, and that CTag listing is checked by its paired last change.
    # A server whose last change never moves must still be found out by the CTag asked with it now and then,
    # as a listing kept under the last change itself is (PAIRED_SECONDS).
    monkeypatch.setattr(window_reads, "PAIRED_SECONDS", -1.0)  # every check by the last change pairs it again
    monkeypatch.setattr(keeper_module, "COSTLIER", 0.0)  # the CTag counts as costlier, whatever the timings
    broken: list[bytes] = []

    def rewrite(body: bytes) -> bytes:
        if b"sync-token" in body and not broken:
            broken.append(body)
            return b"<not xml"
        return frozen(body)

    fill(account, 3)
    backdate(account)
    with rewriting_proxy(account.server.url, rewrite) as proxy:
        async with connect(through(account, proxy.url), revision="2026-07-28") as client:
            await client.call_tool("list_calendars", {})
            first = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW}))
            await answered(proxy, b"sync-token", 1)  # failed: not known
            await client.call_tool("list_calendars", {})  # the same CTag and last change
            await client.call_tool("list_events", {"calendar": account.work, **WINDOW})  # kept: checked by the CTag
            await answered(proxy, b"sync-token", 2)  # asked again after that listing: Radicale
            account.put(account.work, "new.ics", day_event("new", 20))
            pairs = sum(b"getctag" in body for body in proxy.bodies)
            await client.call_tool("list_events", {"calendar": account.work, **WINDOW})
            await answered(proxy, b"getctag", pairs + 1)  # the CTag with the last change, in the background
            later = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW}))
    assert broken
    assert {e["uid"] for e in first["events"]} == {"e00", "e01", "e02"}
    assert {e["uid"] for e in later["events"]} == {"e00", "e01", "e02", "new"}


async def test_a_listing_settled_by_a_slow_sync_token_counts_as_confirmed_when_the_last_change_is_asked_again(
    account: Account, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The sync-token that tells Radicale is held until well past CONFIRMED_SECONDS after the read's own check of
    # the last change, and another client removes an entry meanwhile. Settling the listing by that old check
    # would let the cursor be served from it without asking; the last change is asked again instead.
    monkeypatch.setattr(windows, "CONFIRMED_SECONDS", 0.5)
    fill(account, 6)
    backdate(account)
    reached, released = threading.Event(), threading.Event()

    def rule(method: str, path: str, body: bytes) -> Action:
        if method == "PROPFIND" and b"sync-token" in body and not reached.is_set():
            reached.set()
            released.wait(20)
        return "pass"

    with report_fault_proxy(account.server.url, rule) as proxy:
        async with connect(through(account, proxy.url), revision="2026-07-28") as client:
            await client.call_tool("list_calendars", {})
            first = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW, "limit": 3}))
            with anyio.fail_after(20):
                while not reached.is_set():  # noqa: ASYNC110 - set by a proxy thread
                    await anyio.sleep(0.01)
            account.dav.delete(account.server.url.rstrip("/") + account.work + "e04.ics")
            await anyio.sleep(1.0)  # longer than CONFIRMED_SECONDS since the read's check
            released.set()
            arguments = {"calendar": account.work, **WINDOW, "limit": 3, "cursor": first["next_cursor"]}
            second = structured(await client.call_tool("list_events", arguments))
            asked = [seen.body for seen in proxy.seen]
    assert [e["uid"] for e in first["events"]] == ["e00", "e01", "e02"]
    assert second["reread"] is not None
    assert "e04" not in [e["uid"] for e in second["events"]]
    assert sum(b"sync-token" in body for body in asked) == 1
