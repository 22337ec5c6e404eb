"""Long reads: one read of a window per version, its pages from what was kept, changes always seen, progress.

The request counts come from a recording proxy (a test double relaying to the real Radicale unchanged).
"""

from __future__ import annotations

import datetime as dt
import os
import time
from pathlib import Path
from typing import Any

import anyio
import caldav
import pytest
from dav_servers import radicale
from rewriting_proxy import rewriting_proxy

from approval_core import ApprovalSettings
from approval_core.testing import connect
from caldav_helpers import ics, structured, vevent
from caldav_mcp.server import build_server
from caldav_mcp.settings import CalDAVSettings
from caldav_mcp.tools import windows

pytestmark = pytest.mark.anyio

Account = Any  # the caldav-mcp conftest's Account fixture value: a Radicale account with fresh calendars

WINDOW = {"start": "2026-12-01", "end": "2027-01-01"}


def day_event(uid: str, day: int, summary: str | None = None) -> str:
    start = dt.datetime(2026, 12, day, 9, tzinfo=dt.UTC)
    stamp = start.strftime("%Y%m%dT%H%M%SZ")
    end = (start + dt.timedelta(hours=1)).strftime("%Y%m%dT%H%M%SZ")
    return ics(vevent(uid, f":{stamp}", f":{end}", summary or f"Event {uid}"))


class AddsDuringRead:
    """A fault-proxy rule (``report_fault_proxy``): once armed, the next calendar-query first has another client
    add an event ("brief", on the 5th), so the read sees a change made after the version it was started under."""

    def __init__(self, account: Account, *, armed: bool) -> None:
        self.account = account
        self.armed = armed

    def rule(self, method: str, path: str, body: bytes) -> str:
        if self.armed and b"calendar-query" in body:
            self.armed = False
            self.account.put(self.account.work, "brief.ics", day_event("brief", 5, "There for a moment"))
        return "pass"


def backdate(account: Account) -> None:
    """Date the work calendar's folder, its properties and its entries an hour back (its last change settled)."""
    folder = Path(account.server.data_dir) / "collection-root" / account.work.strip("/")
    then = time.time() - 3600
    for path in [folder, *(p for p in folder.iterdir() if p.is_file())]:
        os.utime(path, (then, then))


def fill(account: Account, count: int) -> None:
    for i in range(count):
        account.put(account.work, f"e{i:02d}.ics", day_event(f"e{i:02d}", 1 + i % 28))


def through(account: Account, url: str) -> Any:
    proxied = url.rstrip("/") + "/"
    return build_server(ApprovalSettings(), CalDAVSettings(proxied, "willi", "secret"))


async def keeper_learnt(proxy: Any) -> None:
    """Wait until the sync-token request that tells the server, and the last change asked after it, are answered.

    A first listing asks the sync-token once its REPORT is answered, where no call waits, and then (the server
    found to keep its last change) the last change once more, which settles the listing; a test counting a
    later call's requests waits for both first, so that none of them is counted as that call's.

    The read's own check of the last change goes out with the sync-token and may reach the proxy after it, so
    the one asked again is told by count: the second last-change request after that read's REPORT.
    """
    with anyio.fail_after(20):
        while True:
            asked = [i for i, body in enumerate(proxy.bodies) if b"sync-token" in body]
            if asked:
                read = max(i for i in range(asked[0]) if proxy.requests[i].startswith("REPORT "))
                bodies = list(enumerate(proxy.bodies))[read + 1 :]
                checks = [i for i, body in bodies if b"getlastmodified" in body and b"sync-token" not in body]
                if len(checks) >= 2 and proxy.answered > checks[1]:
                    return
            await anyio.sleep(0.01)


async def after_read_version_asked(proxy: Any) -> None:
    """Wait until the CTag request that follows the last REPORT has gone out (a first read may not wait for it)."""
    with anyio.fail_after(20):
        while True:
            last = max(i for i, (method, _, _) in enumerate(proxy.heads) if method == "REPORT")
            if any(b"getctag" in body for body in proxy.bodies[last:]):
                return
            await anyio.sleep(0.01)


async def all_pages(client: Any, calendar: str, limit: int) -> list[dict[str, Any]]:
    pages = [structured(await client.call_tool("list_events", {"calendar": calendar, **WINDOW, "limit": limit}))]
    while pages[-1]["next_cursor"]:
        arguments = {"calendar": calendar, **WINDOW, "limit": limit, "cursor": pages[-1]["next_cursor"]}
        pages.append(structured(await client.call_tool("list_events", arguments)))
    return pages


async def test_paging_through_a_window_reads_it_from_the_server_once(account: Account) -> None:
    fill(account, 25)
    with rewriting_proxy(account.server.url, lambda body: body) as proxy:
        async with connect(through(account, proxy.url), revision="2026-07-28") as client:
            await client.call_tool("list_calendars", {})
            before = len(proxy.requests)
            pages = await all_pages(client, account.work, 10)
    reports = [r for r in proxy.requests[before:] if r.startswith("REPORT ")]
    assert len(pages) == 3
    assert [e["uid"] for p in pages for e in p["events"]] == sorted(
        (f"e{i:02d}" for i in range(25)), key=lambda uid: (int(uid[1:]) % 28, uid)
    )
    assert len(reports) == 1, proxy.requests[before:]
    assert all(p["reread"] is None for p in pages)


async def test_an_unchanged_window_asked_again_costs_one_small_request(account: Account) -> None:
    # The calendar's last change is settled: Radicale's (which follows every entry) checks the kept listing.
    fill(account, 5)
    backdate(account)
    with rewriting_proxy(account.server.url, lambda body: body) as proxy:
        async with connect(through(account, proxy.url), revision="2026-07-28") as client:
            await client.call_tool("list_calendars", {})
            first = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW}))
            await keeper_learnt(proxy)
            before = len(proxy.requests)
            again = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW}))
            asked = proxy.heads[before:]
            bodies = proxy.bodies[before:]
    assert again["events"] == first["events"]
    assert [(method, head.get("depth")) for method, _, head in asked] == [("PROPFIND", "0")]
    assert b"getlastmodified" in bodies[0]
    assert b"getctag" not in bodies[0]  # the CTag, which Radicale computes from every entry, is not asked


async def test_changes_made_by_another_client_between_two_calls_are_seen(account: Account) -> None:
    fill(account, 3)
    async with connect(account.build(), revision="2026-07-28") as client:
        first = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW}))
        account.put(account.work, "e00.ics", day_event("e00", 1, "Renamed elsewhere"))
        account.put(account.work, "new.ics", day_event("new", 20))
        account.dav.delete(account.server.url.rstrip("/") + account.work + "e02.ics")
        second = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW}))
    assert {e["uid"] for e in first["events"]} == {"e00", "e01", "e02"}
    assert {e["uid"]: e["summary"] for e in second["events"]} == {
        "e00": "Renamed elsewhere",
        "e01": "Event e01",
        "new": "Event new",
    }


async def test_a_cursor_whose_calendar_changed_reads_again_and_starts_over(
    account: Account, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(windows, "CONFIRMED_SECONDS", 0.0)  # every page asks the server for the version
    fill(account, 6)
    async with connect(account.build(), revision="2026-07-28") as client:
        first = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW, "limit": 4}))
        account.put(account.work, "early.ics", day_event("early", 1))
        arguments = {"calendar": account.work, **WINDOW, "limit": 4, "cursor": first["next_cursor"]}
        second = structured(await client.call_tool("list_events", arguments))
        text = (await client.call_tool("list_events", arguments)).content[0].text
    assert second["reread"] is not None
    assert "changed" in second["reread"]
    assert [e["uid"] for e in second["events"]] == ["e00", "early", "e01", "e02"]  # from the first again
    assert "Note: the calendar changed" in text


async def test_a_write_through_this_server_is_seen_by_the_next_page_at_once(account: Account) -> None:
    fill(account, 6)
    async with connect(account.build(), revision="2026-07-28") as client:
        first = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW, "limit": 4}))
        structured(
            await client.call_tool(
                "create_event",
                {"calendar": account.work, "summary": "Added here", "start": "2026-12-02T08:00:00Z"},
            )
        )
        arguments = {"calendar": account.work, **WINDOW, "limit": 4, "cursor": first["next_cursor"]}
        second = structured(await client.call_tool("list_events", arguments))
    assert second["reread"] is not None
    assert "changed" in second["reread"]
    assert "Added here" in [e["summary"] for e in second["events"]]


async def test_a_cursor_whose_listing_is_gone_reads_again_and_continues(account: Account) -> None:
    fill(account, 6)
    backdate(account)  # both processes check the same kind of version (the settled last change)
    async with connect(account.build(), revision="2026-07-28") as client:
        first = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW, "limit": 4}))
    async with connect(account.build(), revision="2026-07-28") as fresh:  # another process: nothing kept
        arguments = {"calendar": account.work, **WINDOW, "limit": 4, "cursor": first["next_cursor"]}
        second = structured(await fresh.call_tool("list_events", arguments))
    assert second["reread"] is not None
    assert "no longer kept" in second["reread"]
    assert [e["uid"] for e in first["events"] + second["events"]] == [f"e{i:02d}" for i in range(6)]


async def test_a_long_listing_reports_progress_with_real_counts(account: Account) -> None:
    count = windows.EXPAND_BATCH + 20
    for i in range(count):
        account.put(account.work, f"p{i:03d}.ics", day_event(f"p{i:03d}", 1 + i % 28))
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    async with connect(account.build(), revision="2025-11-25") as client:
        result = await client.call_tool(
            "list_events", {"calendar": account.work, **WINDOW, "limit": 5}, progress_callback=progress
        )
    assert not result.is_error
    assert seen == [
        (0, count, "entries read; expanding them"),
        (windows.EXPAND_BATCH, count, "entries expanded"),
        (count, count, "entries expanded"),
    ]


async def test_a_window_the_server_refuses_as_too_large_is_read_in_parts(tmp_path) -> None:
    # Radicale refuses a REPORT answering with more VEVENTs than its max_expand_occurrence (400).
    with radicale(tmp_path, {"willi": "secret"}, ["--reporting-max-expand-occurrence", "8"]) as server:
        dav = caldav.DAVClient(url=server.url, username="willi", password="secret")
        dav.principal().make_calendar(name="Busy", cal_id="busy")
        busy = "/willi/busy/"
        for i in range(20):
            response = dav.put(
                f"{server.url.rstrip('/')}{busy}b{i:02d}.ics",
                day_event(f"b{i:02d}", 1 + i),
                {"Content-Type": "text/calendar"},
            )
            assert response.status == 201
        for i in range(10):  # ten on one day: no halving of a day gets under the limit
            response = dav.put(
                f"{server.url.rstrip('/')}{busy}d{i:02d}.ics",
                day_event(f"d{i:02d}", 28),
                {"Content-Type": "text/calendar"},
            )
            assert response.status == 201
        settings = CalDAVSettings(server.url, "willi", "secret")
        async with connect(build_server(ApprovalSettings(), settings), revision="2026-07-28") as client:
            parts = structured(
                await client.call_tool("list_events", {"calendar": busy, "start": "2026-12-01", "end": "2026-12-25"})
            )
            refused = await client.call_tool(
                "list_events", {"calendar": busy, "start": "2026-12-28", "end": "2026-12-29"}
            )
    assert sorted(e["uid"] for e in parts["events"]) == [f"b{i:02d}" for i in range(20) if 1 + i < 25]
    assert refused.is_error
    assert "narrow the window" in refused.content[0].text
    assert "max_expand_occurrence" in refused.content[0].text


async def test_a_search_inside_a_listed_unchanged_window_reads_no_entries_again(account: Account) -> None:
    fill(account, 6)
    account.put(account.work, "dentist.ics", day_event("dentist", 10, "Dentist appointment"))
    search = {"query": "dentist", "start": "2026-12-05", "end": "2026-12-20", "calendars": [account.work]}
    backdate(account)  # the calendar's last change settled: it checks the kept listing
    with rewriting_proxy(account.server.url, lambda body: body) as proxy:
        async with connect(through(account, proxy.url), revision="2026-07-28") as client:
            await client.call_tool("list_calendars", {})
            structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW}))
            await keeper_learnt(proxy)
            before = len(proxy.requests)
            kept = structured(await client.call_tool("search_events", search))
            asked = proxy.heads[before:]
            account.put(account.work, "dentist2.ics", day_event("dentist2", 12, "Dentist again"))
            before = len(proxy.requests)
            changed = structured(await client.call_tool("search_events", search))
            reports = [r for r in proxy.requests[before:] if r.startswith("REPORT ")]
    assert [e["uid"] for e in kept["events"]] == ["dentist"]
    assert [(method, head.get("depth")) for method, _, head in asked] == [("PROPFIND", "0")]
    assert [e["uid"] for e in changed["events"]] == ["dentist", "dentist2"]
    assert reports  # the calendar changed: the server is asked again


async def test_a_cursor_whose_place_is_not_one_this_server_writes_is_refused(account: Account) -> None:
    import base64
    import json

    fill(account, 3)
    query = ["list", account.work, WINDOW["start"], WINDOW["end"]]
    forged = base64.urlsafe_b64encode(json.dumps({"k": 5, "q": query}).encode()).decode().rstrip("=")
    async with connect(account.build(), revision="2026-07-28") as client:
        result = await client.call_tool("list_events", {"calendar": account.work, **WINDOW, "cursor": forged})
    assert result.is_error
    assert result.content[0].text.startswith("cursor:")
