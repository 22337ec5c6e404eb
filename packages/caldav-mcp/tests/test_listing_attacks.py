"""Kept listings under attack: a calendar that changes and changes back, many windows, cursors edited by the caller.

Against the real Radicale; a hostile or failing server is played by test doubles in front of it
(``report_fault_proxy``: refusing, failing or acting during chosen requests; ``rewriting_proxy``: rewriting answers).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import re
from typing import Any

import anyio
import caldav
import pytest
from dav_servers import radicale
from rewriting_proxy import rewriting_proxy

from approval_core import ApprovalSettings
from approval_core.testing import connect
from caldav_helpers import structured
from caldav_mcp.listings import Listing, Listings
from caldav_mcp.server import build_server
from caldav_mcp.settings import CalDAVSettings
from caldav_mcp.tools import window_reads, windows
from report_fault_proxy import Action, FaultProxy, report_fault_proxy
from test_listings import WINDOW, AddsDuringRead, day_event, fill, through

pytestmark = pytest.mark.anyio

Account = Any  # the caldav-mcp conftest's Account fixture value


async def test_an_event_added_and_removed_again_elsewhere_is_not_listed_after_its_removal(account: Account) -> None:
    # Radicale's CTag is a digest of what the calendar holds: removing what was added gives the old CTag again.
    fill(account, 3)
    async with connect(account.build(), revision="2026-07-28") as client:
        await client.call_tool("list_calendars", {})  # notes each calendar's CTag
        account.put(account.work, "brief.ics", day_event("brief", 5, "There for a moment"))
        seen = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW}))
        account.dav.delete(account.server.url.rstrip("/") + account.work + "brief.ics")
        after = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW}))
    assert "brief" in [e["uid"] for e in seen["events"]]
    assert "brief" not in [e["uid"] for e in after["events"]]


def test_empty_listings_count_against_the_limit() -> None:
    kept = Listings(limit=100)
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    for i in range(1000):
        lo = start + dt.timedelta(seconds=i)
        kept.put(("/cal/", lo, lo + dt.timedelta(days=1)), Listing("getctag:x|0", (), ()))
    assert len(kept) <= 100


async def test_a_server_refusing_every_query_is_asked_a_bounded_number_of_times(account: Account) -> None:
    fill(account, 3)

    def rule(method: str, path: str, body: bytes) -> Action:
        return "refuse" if b"calendar-query" in body else "pass"

    with report_fault_proxy(account.server.url, rule) as proxy:
        async with connect(through(account, proxy.url), revision="2026-07-28") as client:
            result = await client.call_tool(
                "list_events", {"calendar": account.work, "start": "2026-01-01", "end": "2027-01-01"}
            )
    assert result.is_error
    assert "narrow the window" in result.content[0].text
    assert len(proxy.reports("calendar-query")) == 1 + window_reads.MAX_SPLITS  # the first part refused ends it


async def test_a_server_refusing_every_long_window_is_asked_at_most_31_times(account: Account) -> None:
    fill(account, 3)

    def rule(method: str, path: str, body: bytes) -> Action:
        if b"calendar-query" not in body:
            return "pass"
        found = re.search(rb'start="(\d{8})T\d{6}Z" end="(\d{8})T\d{6}Z"', body)
        assert found is not None
        start, end = (dt.datetime.strptime(part.decode(), "%Y%m%d") for part in found.groups())
        return "refuse" if end - start > dt.timedelta(days=24) else "pass"

    with report_fault_proxy(account.server.url, rule) as proxy:
        async with connect(through(account, proxy.url), revision="2026-07-28") as client:
            result = structured(
                await client.call_tool(
                    "list_events", {"calendar": account.work, "start": "2026-01-01", "end": "2027-01-01"}
                )
            )
    assert sorted(e["uid"] for e in result["events"]) == ["e00", "e01", "e02"]
    assert len(proxy.reports("calendar-query")) == 1 + 2 + 4 + 8 + 16 == 2 ** (window_reads.MAX_SPLITS + 1) - 1


async def test_a_server_refusing_the_window_and_failing_its_halves_reads_the_calendar_a_bounded_number_of_times(
    account: Account,
) -> None:
    fill(account, 3)

    def rule(method: str, path: str, body: bytes) -> Action:
        if b"calendar-query" in body:
            return "refuse" if b'start="20260101T000000Z"' in body and b'end="20270101T000000Z"' in body else "fail"
        return "fail" if b"calendar-multiget" in body else "pass"

    with report_fault_proxy(account.server.url, rule) as proxy:
        async with connect(through(account, proxy.url), revision="2026-07-28") as client:
            result = structured(
                await client.call_tool(
                    "list_events", {"calendar": account.work, "start": "2026-01-01", "end": "2027-01-01"}
                )
            )
    gets = [s for s in proxy.seen if s.method == "GET"]
    assert sorted(e["uid"] for e in result["events"]) == ["e00", "e01", "e02"]
    # Bounded, not minimal: each half failed as a whole reads every entry of the calendar, one by one (up to
    # 16 parts, so 16 reads of the calendar from a server that answers so).
    assert len(gets) == 2 * 3, [s.path for s in gets]


def test_the_text_of_kept_entries_is_bounded() -> None:
    from caldav_mcp.dav import Resource

    kept = Listings(text_limit=10_000)
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    long_entry = (Resource("/cal/long.ics", '"1"', "X" * 4_000),)
    for i in range(10):
        lo = start + dt.timedelta(days=i)
        kept.put(("/cal/", lo, lo + dt.timedelta(days=1)), Listing("getctag:x|0", (), (), long_entry))
    kept.put(("/cal/", start, start + dt.timedelta(days=30)), Listing("getctag:x|0", (), (), long_entry * 3))
    assert len(kept) == 2  # 8,000 characters of the last two windows; the listing of 12,000 is not kept


async def test_a_cursor_whose_calendar_version_cannot_be_read_any_more_says_the_window_was_read_again(
    account: Account, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(windows, "CONFIRMED_SECONDS", 0.0)  # every page asks the server for the version
    fill(account, 6)
    failing = {"on": False}

    def rule(method: str, path: str, body: bytes) -> Action:
        version_request = method == "PROPFIND" and b"<d:prop><cs:getctag/></d:prop>" in body
        return "fail" if failing["on"] and version_request else "pass"

    with report_fault_proxy(account.server.url, rule) as proxy:
        async with connect(through(account, proxy.url), revision="2026-07-28") as client:
            first = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW, "limit": 4}))
            account.put(account.work, "early.ics", day_event("early", 1))  # before the cursor's place
            failing["on"] = True
            arguments = {"calendar": account.work, **WINDOW, "limit": 4, "cursor": first["next_cursor"]}
            second = structured(await client.call_tool("list_events", arguments))
    assert [e["uid"] for e in first["events"]] == ["e00", "e01", "e02", "e03"]
    assert second["reread"] is not None  # the pages may come from two versions: the caller is told


def _cursor(data: dict[str, Any]) -> str:
    raw = json.dumps(data, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


async def test_an_edited_cursor_never_serves_another_calendars_listing_nor_fails_badly(account: Account) -> None:
    fill(account, 6)
    account.put(account.home, "h.ics", day_event("h", 3, "At home"))
    async with connect(account.build(), revision="2026-07-28") as client:
        work = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW, "limit": 2}))
        home = structured(await client.call_tool("list_events", {"calendar": account.home, **WINDOW, "limit": 2}))
        data = json.loads(base64.urlsafe_b64decode(work["next_cursor"] + "=" * (-len(work["next_cursor"]) % 4)))
        data["q"] = ["list", account.home, WINDOW["start"], WINDOW["end"]]  # the work calendar's cursor, renamed
        moved = structured(
            await client.call_tool("list_events", {"calendar": account.home, **WINDOW, "cursor": _cursor(data)})
        )
        odd = {**data, "q": ["list", account.work, WINDOW["start"], WINDOW["end"]], "k": {"not": "a key"}}
        strange = await client.call_tool("list_events", {"calendar": account.work, **WINDOW, "cursor": _cursor(odd)})
    assert [e["uid"] for e in home["events"]] == ["h"]
    assert [e["uid"] for e in moved["events"]] == ["h"]  # the home calendar's own listing, from its first occurrence
    assert moved["reread"] is not None  # the cursor's version is not this calendar's
    assert strange.is_error
    assert "cursor" in strange.content[0].text


_RESPONSE = re.compile(rb"<(?:[A-Za-z0-9]+:)?response>.*?</(?:[A-Za-z0-9]+:)?response>", re.S)


def _every_entry_twice(body: bytes) -> bytes:
    if b"calendar-data" not in body:
        return body
    return _RESPONSE.sub(lambda found: found.group(0) * 2, body)


async def test_a_server_naming_each_entry_twice_lists_each_occurrence_once(account: Account) -> None:
    fill(account, 3)
    with rewriting_proxy(account.server.url, _every_entry_twice) as proxy:
        async with connect(through(account, proxy.url), revision="2026-07-28") as client:
            listed = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW}))
            found = structured(
                await client.call_tool("search_events", {"query": "event", **WINDOW, "calendars": [account.work]})
            )
    assert [e["uid"] for e in listed["events"]] == ["e00", "e01", "e02"]
    assert [e["uid"] for e in found["events"]] == ["e00", "e01", "e02"]


async def test_a_calendar_named_many_times_is_searched_once(account: Account) -> None:
    fill(account, 2)
    with report_fault_proxy(account.server.url, lambda method, path, body: "pass") as proxy:
        async with connect(through(account, proxy.url), revision="2026-07-28") as client:
            await client.call_tool("list_calendars", {})
            before = len(proxy.seen)
            args = {"query": "event e00", **WINDOW, "calendars": [account.work, account.work.rstrip("/")] * 50}
            found = structured(await client.call_tool("search_events", args))
            asked = proxy.seen[before:]
    assert [e["uid"] for e in found["events"]] == ["e00"]
    assert len([s for s in asked if s.method == "REPORT"]) <= 12, len(asked)  # one calendar's narrowing and read


async def test_a_search_of_a_window_the_server_refuses_as_too_large_is_read_in_parts(tmp_path) -> None:
    # Radicale refuses a REPORT answering with more VEVENTs than its max_expand_occurrence (400).
    with radicale(tmp_path, {"willi": "secret"}, ["--reporting-max-expand-occurrence", "8"]) as server:
        dav = caldav.DAVClient(url=server.url, username="willi", password="secret")
        dav.principal().make_calendar(name="Busy", cal_id="busy")
        for i in range(20):
            summary = "Dentist" if i == 15 else None
            url = f"{server.url.rstrip('/')}/willi/busy/b{i:02d}.ics"
            assert dav.put(url, day_event(f"b{i:02d}", 1 + i, summary), {"Content-Type": "text/calendar"}).status == 201
        settings = CalDAVSettings(server.url, "willi", "secret")
        async with connect(build_server(ApprovalSettings(), settings), revision="2026-07-28") as client:
            search = {"query": "dentist", "start": "2026-12-01", "end": "2026-12-25", "calendars": ["/willi/busy/"]}
            result = await client.call_tool("search_events", search)
    assert not result.is_error, result.content[0].text
    assert [e["uid"] for e in structured(result)["events"]] == ["b15"]


async def test_a_search_from_a_kept_listing_sees_only_its_own_window_and_the_calendar_as_it_is(
    account: Account,
) -> None:
    account.put(account.work, "early.ics", day_event("early", 2, "Dentist early"))
    account.put(account.work, "inside.ics", day_event("inside", 10, "Dentist inside"))
    account.put(account.work, "late.ics", day_event("late", 25, "Dentist late"))
    search = {"query": "dentist", "start": "2026-12-05", "end": "2026-12-20", "calendars": [account.work]}
    async with connect(account.build(), revision="2026-07-28") as client:
        structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW}))
        first = structured(await client.call_tool("search_events", search))
        account.put(account.work, "inside.ics", day_event("inside", 10, "Renamed elsewhere"))
        second = structured(await client.call_tool("search_events", search))
    assert [e["uid"] for e in first["events"]] == ["inside"]
    assert second["events"] == []


async def version_after_read_answered(proxy: FaultProxy) -> None:
    """Wait until the real server has answered a PROPFIND sent after the last REPORT."""
    with anyio.fail_after(20):
        while True:
            answered = {id(seen) for seen in proxy.answered}
            last = max(i for i, seen in enumerate(proxy.seen) if seen.method == "REPORT")
            if any(seen.method == "PROPFIND" and id(seen) in answered for seen in proxy.seen[last:]):
                return
            await anyio.sleep(0.01)


async def test_an_event_added_during_a_read_and_removed_later_is_not_listed_after_its_removal(
    account: Account,
) -> None:
    # The double relays to Radicale; just before the read another client adds an event, so the read sees it
    # under a version taken without it. It is removed again once the server has answered the version request
    # that follows the read (where the calendar's last change is settled, the page is served before that
    # answer; see test_version_after_read): Radicale's CTag is a digest of the entries, so the version is
    # back to the one the read was started under.
    fill(account, 2)
    during = AddsDuringRead(account, armed=False)

    with report_fault_proxy(account.server.url, during.rule) as proxy:
        async with connect(through(account, proxy.url), revision="2026-07-28") as client:
            structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW}))
            account.put(account.work, "other.ics", day_event("other", 6))  # the calendar changes: read again
            during.armed = True
            seen = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW}))
            await version_after_read_answered(proxy)
            account.dav.delete(account.server.url.rstrip("/") + account.work + "brief.ics")
            after = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW}))
    assert "brief" in [e["uid"] for e in seen["events"]]
    assert "brief" not in [e["uid"] for e in after["events"]]
