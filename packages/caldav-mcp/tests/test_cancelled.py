"""Cancelled events in listings and searches (STATUS:CANCELLED, RFC 5545 §3.8.1.11), against a real Radicale."""

from __future__ import annotations

import pytest

from approval_core.testing import accept, connect
from caldav_helpers import ics, structured, vevent

pytestmark = pytest.mark.anyio

BERLIN = ";TZID=Europe/Berlin:"

SERIES = ics(
    vevent(
        "weekly@example.org",
        f"{BERLIN}20261201T090000",
        f"{BERLIN}20261201T100000",
        "Review",
        "RRULE:FREQ=WEEKLY;COUNT=3\n",
    ),
    vevent(
        "weekly@example.org",
        f"{BERLIN}20261208T090000",
        f"{BERLIN}20261208T100000",
        "Review",
        f"RECURRENCE-ID{BERLIN}20261208T090000\nSTATUS:CANCELLED\n",
    ),
)
CALLED_OFF = ics(
    vevent(
        "off@example.org", f"{BERLIN}20261202T120000", f"{BERLIN}20261202T130000", "Review lunch", "STATUS:cancelled\n"
    )
)
PLAIN_CANCELLED = ics(
    vevent(
        "plain@example.org",
        f"{BERLIN}20261203T150000",
        f"{BERLIN}20261203T160000",
        "Review call",
        "RRULE:FREQ=DAILY;COUNT=2\nSTATUS:CANCELLED\n",
    )
)
WINDOW = {"start": "2026-12-01", "end": "2026-12-31"}


def _put_all(account) -> None:
    account.put(account.work, "weekly.ics", SERIES)
    account.put(account.work, "off.ics", CALLED_OFF)
    account.put(account.work, "plain.ics", PLAIN_CANCELLED)


async def test_listing_carries_each_occurrences_status_and_says_cancelled(account) -> None:
    _put_all(account)
    async with connect(account.build(), revision="2026-07-28", answer=accept) as client:
        result = await client.call_tool("list_events", {"calendar": account.work, **WINDOW})
    listed = structured(result)
    status = {e["id"]: e["status"] for e in listed["events"]}
    assert status == {
        "weekly@example.org#20261201T080000Z": None,
        "off@example.org": "CANCELLED",
        "plain@example.org#20261203T140000Z": "CANCELLED",
        "plain@example.org#20261204T140000Z": "CANCELLED",
        "weekly@example.org#20261208T080000Z": "CANCELLED",
        "weekly@example.org#20261215T080000Z": None,
    }
    lines = result.content[0].text.splitlines()
    cancelled = [line for line in lines if " cancelled " in line]
    assert len(cancelled) == 4
    assert all("weekly@example.org#20261201" not in line for line in cancelled)


async def test_cancelled_occurrences_can_be_left_out_of_a_paged_listing(account) -> None:
    _put_all(account)
    args = {"calendar": account.work, **WINDOW, "include_cancelled": False, "limit": 1}
    async with connect(account.build(), revision="2026-07-28", answer=accept) as client:
        first = structured(await client.call_tool("list_events", args))
        second = structured(await client.call_tool("list_events", {**args, "cursor": first["next_cursor"]}))
        mixed = await client.call_tool(
            "list_events", {**args, "include_cancelled": True, "cursor": first["next_cursor"]}
        )
    assert [e["id"] for e in first["events"]] == ["weekly@example.org#20261201T080000Z"]
    assert first["truncated"] is True
    assert [e["id"] for e in second["events"]] == ["weekly@example.org#20261215T080000Z"]
    assert second["truncated"] is False
    assert mixed.is_error
    assert "different query" in mixed.content[0].text


async def test_search_marks_and_can_leave_out_cancelled_occurrences(account) -> None:
    _put_all(account)
    async with connect(account.build(), revision="2026-07-28", answer=accept) as client:
        args = {"query": "review", "calendars": [account.work], **WINDOW}
        everything = structured(await client.call_tool("search_events", args))
        kept = structured(await client.call_tool("search_events", {**args, "include_cancelled": False}))
    assert sum(e["status"] == "CANCELLED" for e in everything["events"]) == 4
    assert len(everything["events"]) == 6
    assert [e["id"] for e in kept["events"]] == [
        "weekly@example.org#20261201T080000Z",
        "weekly@example.org#20261215T080000Z",
    ]


async def test_free_busy_still_ignores_cancelled_occurrences(account) -> None:
    _put_all(account)
    async with connect(account.build(), revision="2026-07-28", answer=accept) as client:
        busy = structured(
            await client.call_tool(
                "get_free_busy", {"calendars": [account.work], "start": "2026-12-01", "end": "2026-12-16"}
            )
        )
    assert [b["start"] for b in busy["busy"]] == ["2026-12-01T09:00:00+01:00", "2026-12-15T09:00:00+01:00"]
