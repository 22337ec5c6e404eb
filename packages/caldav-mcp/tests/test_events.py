"""Events against a real Radicale: create, list with expansion, get, update, delete, search."""

from __future__ import annotations

import base64
import json
import re

import pytest

from approval_core.testing import accept, connect
from caldav_helpers import ics, structured, vevent

pytestmark = pytest.mark.anyio

SERIES = ics(
    vevent(
        "standup@example.org",
        ";TZID=Europe/Berlin:20261201T090000",
        ";TZID=Europe/Berlin:20261201T091500",
        "Standup",
        "RRULE:FREQ=DAILY;COUNT=5\nEXDATE;TZID=Europe/Berlin:20261203T090000\n",
    ),
    vevent(
        "standup@example.org",
        ";TZID=Europe/Berlin:20261204T110000",
        ";TZID=Europe/Berlin:20261204T111500",
        "Standup (moved)",
        "RECURRENCE-ID;TZID=Europe/Berlin:20261204T090000\n",
    ),
)


async def test_a_series_is_expanded_with_its_exdate_and_override(account) -> None:
    account.put(account.work, "standup.ics", SERIES)
    async with connect(account.build(), revision="2026-07-28", answer=accept) as client:
        listed = structured(
            await client.call_tool(
                "list_events", {"calendar": account.work, "start": "2026-12-01", "end": "2026-12-31"}
            )
        )
    events = listed["events"]
    assert [e["start"] for e in events] == [
        "2026-12-01T09:00:00+01:00",
        "2026-12-02T09:00:00+01:00",
        "2026-12-04T11:00:00+01:00",
        "2026-12-05T09:00:00+01:00",
    ]
    assert [e["summary"] for e in events] == ["Standup", "Standup", "Standup (moved)", "Standup"]
    assert events[2]["id"] == "standup@example.org#20261204T080000Z"
    assert len({e["id"] for e in events}) == 4
    assert all(e["tzid"] == "Europe/Berlin" and e["recurring"] for e in events)


async def test_a_series_is_never_shown_at_its_start_date_outside_the_window(account) -> None:
    account.put(account.work, "standup.ics", SERIES)
    async with connect(account.build(), revision="2026-07-28", answer=accept) as client:
        listed = structured(
            await client.call_tool(
                "list_events", {"calendar": account.work, "start": "2026-12-05", "end": "2026-12-06"}
            )
        )
    assert [e["start"] for e in listed["events"]] == ["2026-12-05T09:00:00+01:00"]


async def test_listing_pages_with_a_cursor(account) -> None:
    account.put(account.work, "standup.ics", SERIES)
    args = {"calendar": account.work, "start": "2026-12-01", "end": "2026-12-31", "limit": 3}
    async with connect(account.build(), revision="2026-07-28", answer=accept) as client:
        first = structured(await client.call_tool("list_events", args))
        second = structured(await client.call_tool("list_events", {**args, "cursor": first["next_cursor"]}))
        other = await client.call_tool("list_events", {**args, "end": "2026-12-30", "cursor": first["next_cursor"]})
    assert first["truncated"] is True
    assert len(first["events"]) == 3
    assert [e["id"] for e in second["events"]] == ["standup@example.org#20261205T080000Z"]
    assert second["truncated"] is False
    assert other.is_error
    assert "different query" in other.content[0].text


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [
        ("2026-01-01", "2027-01-03", "at most 366 days"),
        ("2026-12-02", "2026-12-01", "must be after start"),
        ("yesterday", "2026-12-01", "not ISO 8601"),
    ],
)
async def test_bad_windows_are_refused_with_the_field_named(account, start, end, message) -> None:
    async with connect(account.build(), revision="2026-07-28", answer=accept) as client:
        result = await client.call_tool("list_events", {"calendar": account.work, "start": start, "end": end})
    assert result.is_error
    assert message in result.content[0].text


async def test_create_get_update_and_the_text_is_compact(account) -> None:
    async with connect(account.build(), revision="2026-07-28", answer=accept) as client:
        created = structured(
            await client.call_tool(
                "create_event",
                {
                    "calendar": account.work,
                    "summary": "Dentist",
                    "start": "2026-12-10T15:00:00",
                    "tzid": "Europe/Berlin",
                    "location": "Main St",
                    "description": "bring card",
                },
            )
        )
        listed = await client.call_tool(
            "list_events", {"calendar": account.work, "start": "2026-12-10", "end": "2026-12-11"}
        )
        updated = structured(
            await client.call_tool(
                "update_event",
                {
                    "calendar": account.work,
                    "id": created["id"],
                    "location": "",
                    "summary": "Dentist (new)",
                },
            )
        )
        got = structured(await client.call_tool("get_event", {"calendar": account.work, "id": created["id"]}))
    line = listed.content[0].text.splitlines()[1]
    fence = re.escape("⟦stored ") + "[0-9a-f]{8}" + re.escape("⟧")
    closing = re.escape("⟦/stored ") + "[0-9a-f]{8}" + re.escape("⟧")
    when = re.escape("2026-12-10 15:00-16:00 +01:00 Europe/Berlin ")
    assert re.fullmatch(f'{when}{fence}"Dentist"{closing} {re.escape(created["id"])}', line)  # the summary fenced
    assert updated["etag"] != created["etag"]
    assert got["summary"] == "Dentist (new)"
    assert got["location"] is None
    assert got["description"] == "bring card"
    assert got["end"] == "2026-12-10T16:00:00+01:00"


async def test_an_occurrence_edit_becomes_an_override_and_does_not_ask(account) -> None:
    account.put(account.work, "standup.ics", SERIES)
    async with connect(account.build(), revision="2026-07-28") as client:  # no dialog possible at all
        result = structured(
            await client.call_tool(
                "update_event",
                {
                    "calendar": account.work,
                    "id": "standup@example.org#20261202T080000Z",
                    "scope": "occurrence",
                    "summary": "Standup with guests",
                },
            )
        )
        listed = structured(
            await client.call_tool(
                "list_events", {"calendar": account.work, "start": "2026-12-01", "end": "2026-12-31"}
            )
        )
    assert result["action"] == "updated"
    assert [e["summary"] for e in listed["events"]] == ["Standup", "Standup with guests", "Standup (moved)", "Standup"]


async def test_a_recurring_event_needs_an_explicit_scope(account) -> None:
    account.put(account.work, "standup.ics", SERIES)
    async with connect(account.build(), revision="2026-07-28", answer=accept) as client:
        result = await client.call_tool(
            "update_event", {"calendar": account.work, "id": "standup@example.org", "summary": "x"}
        )
        delete = await client.call_tool("delete_event", {"calendar": account.work, "id": "standup@example.org"})
    assert result.is_error
    assert "scope" in result.content[0].text
    assert delete.is_error
    assert "scope" in delete.content[0].text


async def test_deleting_an_occurrence_adds_an_exdate(account) -> None:
    account.put(account.work, "standup.ics", SERIES)
    async with connect(account.build(), revision="2026-07-28", answer=accept) as client:
        structured(
            await client.call_tool(
                "delete_event",
                {"calendar": account.work, "id": "standup@example.org#20261204T080000Z", "scope": "occurrence"},
            )
        )
        listed = structured(
            await client.call_tool(
                "list_events", {"calendar": account.work, "start": "2026-12-01", "end": "2026-12-31"}
            )
        )
    assert [e["start"][:10] for e in listed["events"]] == ["2026-12-01", "2026-12-02", "2026-12-05"]
    _, stored = account.get(account.work, "standup.ics")
    assert "RECURRENCE-ID" not in stored


async def test_search_matches_each_field_per_occurrence(account) -> None:
    account.put(
        account.work,
        "a.ics",
        ics(vevent("a@x", ":20261201T090000Z", ":20261201T100000Z", "Lunch", "LOCATION:Canteen\nCATEGORIES:Food\n")),
    )
    account.put(
        account.work,
        "b.ics",
        ics(
            vevent(
                "b@x",
                ":20261202T090000Z",
                ":20261202T100000Z",
                "Review",
                "ATTENDEE;CN=Grace Hopper:mailto:grace@example.org\n",
            )
        ),
    )
    account.put(account.home, "c.ics", ics(vevent("c@x", ":20261203T090000Z", ":20261203T100000Z", "Umzug München")))
    window = {"start": "2026-12-01", "end": "2026-12-31"}
    async with connect(account.build(calendars=(account.work, account.home)), revision="2026-07-28") as client:
        found = {}
        for query in ("canteen", "FOOD", "grace", "lunch", "münchen", "nothing"):
            result = structured(await client.call_tool("search_events", {"query": query, **window}))
            found[query] = [e["uid"] for e in result["events"]]
    assert found == {
        "canteen": ["a@x"],
        "FOOD": ["a@x"],
        "grace": ["b@x"],
        "lunch": ["a@x"],
        "münchen": ["c@x"],
        "nothing": [],
    }


async def test_a_stale_etag_is_reported_and_never_retried(account) -> None:
    from caldav_mcp.client import CalDAVClient, Resource
    from caldav_mcp.errors import PreconditionFailed

    account.put(account.work, "a.ics", ics(vevent("a@x", ":20261201T090000Z", ":20261201T100000Z", "One")))
    client = CalDAVClient(account.settings())
    cal = await client.calendar(account.work)
    read = await client.find(cal, "VEVENT", "a@x")
    account.put(account.work, "a.ics", ics(vevent("a@x", ":20261201T090000Z", ":20261201T100000Z", "Two")))
    with pytest.raises(PreconditionFailed, match="changed on the server since it was read"):
        await client.replace(read, read.data)
    with pytest.raises(PreconditionFailed):
        await client.delete(Resource(read.href, read.etag, read.data))
    _, stored = account.get(account.work, "a.ics")
    assert "SUMMARY:Two" in stored


async def test_creating_twice_with_one_uid_is_a_conflict(account) -> None:
    from caldav_mcp.client import CalDAVClient
    from caldav_mcp.errors import Conflict

    client = CalDAVClient(account.settings())
    cal = await client.calendar(account.work)
    data = ics(vevent("dup@x", ":20261201T090000Z", ":20261201T100000Z"))
    await client.create(cal, "dup@x", data)
    with pytest.raises(Conflict, match="already exists"):
        await client.create(cal, "dup@x", data)


@pytest.mark.parametrize(
    ("start", "tzid", "stored", "listed"),
    [
        ("2026-12-03T10:00:00+01:00", None, "DTSTART:20261203T090000Z", "2026-12-03 09:00-10:00 +00:00 UTC"),
        ("2026-12-03T10:00:00-05:00", None, "DTSTART:20261203T150000Z", "2026-12-03 15:00-16:00 +00:00 UTC"),
        (
            "2026-12-03T10:00:00+01:00",
            "Europe/Berlin",
            "DTSTART;TZID=Europe/Berlin:20261203T100000",
            "2026-12-03 10:00-11:00 +01:00 Europe/Berlin",
        ),
        (
            "2026-12-03T10:00:00Z",
            "America/New_York",
            "DTSTART;TZID=America/New_York:20261203T050000",
            "2026-12-03 05:00-06:00 -05:00 America/New_York",
        ),
    ],
)
async def test_an_offset_keeps_its_instant_and_never_becomes_a_zone(account, start, tzid, stored, listed) -> None:
    arguments = {"calendar": account.work, "summary": "Call", "start": start} | ({"tzid": tzid} if tzid else {})
    async with connect(account.build(), revision="2026-07-28") as client:
        created = structured(await client.call_tool("create_event", arguments))
        shown = await client.call_tool(
            "list_events", {"calendar": account.work, "start": "2026-12-03", "end": "2026-12-04"}
        )
    status, text = account.get(account.work, created["id"].split("#")[0] + ".ics")
    assert status == 200
    assert stored in text.splitlines()
    assert "UTC+" not in text
    assert shown.content[0].text.splitlines()[1].startswith(listed)


# Four events of 2026-12-01 (UTC) in four zones: their wall-clock texts sort in the opposite order of their instants.
ACROSS_ZONES = {
    "tokyo@example.org": (";TZID=Asia/Tokyo:20261201T090000", ";TZID=Asia/Tokyo:20261201T100000"),  # 00:00Z
    "new-york@example.org": (";TZID=America/New_York:20261130T200000", ";TZID=America/New_York:20261130T210000"),
    "utc@example.org": (":20261201T063000Z", ":20261201T073000Z"),  # 06:30Z
    "berlin@example.org": (";TZID=Europe/Berlin:20261201T080000", ";TZID=Europe/Berlin:20261201T090000"),  # 07:00Z
}
IN_TIME_ORDER = list(ACROSS_ZONES)  # New York's 20:00 the evening before is 01:00Z


def _cursor_with_key_start(cursor: str, start: str) -> str:
    """``cursor`` with its key's start replaced by ``start``: the form a cursor of an earlier release took."""
    data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    data["k"][0] = start
    return base64.urlsafe_b64encode(json.dumps(data, separators=(",", ":")).encode()).decode().rstrip("=")


async def test_events_in_different_zones_are_listed_and_paged_in_the_order_they_happen(account) -> None:
    for uid, (start, end) in ACROSS_ZONES.items():
        account.put(account.work, f"{uid.split('@')[0]}.ics", ics(vevent(uid, start, end, "Meeting")))
    window = {"calendar": account.work, "start": "2026-12-01", "end": "2026-12-02"}
    paged: list[str] = []
    async with connect(account.build(), revision="2026-07-28") as client:
        listed = structured(await client.call_tool("list_events", window))
        searched = {"query": "meeting", "calendars": [account.work], "start": "2026-12-01", "end": "2026-12-02"}
        found = structured(await client.call_tool("search_events", searched))
        cursor = None
        while True:
            page = structured(await client.call_tool("list_events", window | {"limit": 1, "cursor": cursor}))
            paged.extend(e["id"] for e in page["events"])
            if page["next_cursor"] is None:
                break
            if len(paged) == 1:  # the key as an earlier release wrote it: the start with its own offset
                earlier = _cursor_with_key_start(page["next_cursor"], page["events"][0]["start"])
                continued = structured(await client.call_tool("list_events", window | {"limit": 1, "cursor": earlier}))
            cursor = page["next_cursor"]
    assert [e["id"] for e in listed["events"]] == IN_TIME_ORDER
    assert listed["events"][0]["start"] == "2026-12-01T09:00:00+09:00"
    assert [e["id"] for e in found["events"]] == IN_TIME_ORDER
    assert paged == IN_TIME_ORDER
    assert [e["id"] for e in continued["events"]] == IN_TIME_ORDER[1:2]


async def test_a_line_writes_an_end_at_another_offset_whole(account) -> None:
    """The night Berlin leaves summer time, 02:30 (+02:00) to 03:30 (+01:00) lasts two hours; Tokyo to Berlin too."""
    zoned = ";TZID=Europe/Berlin:"
    account.put(account.work, "dst.ics", ics(vevent("dst@x", f"{zoned}20261025T023000", f"{zoned}20261025T033000")))
    account.put(
        account.work, "two.ics", ics(vevent("two@x", ";TZID=Asia/Tokyo:20261025T090000", f"{zoned}20261025T030000"))
    )
    account.put(account.work, "same.ics", ics(vevent("same@x", f"{zoned}20261025T100000", f"{zoned}20261025T110000")))
    async with connect(account.build(), revision="2026-07-28") as client:
        result = await client.call_tool(
            "list_events", {"calendar": account.work, "start": "2026-10-24", "end": "2026-10-26"}
        )
    lines = result.content[0].text.splitlines()[1:]
    assert [line.split(" ⟦")[0] for line in lines] == [
        "2026-10-25T09:00:00+09:00 to 2026-10-25T03:00:00+01:00 Asia/Tokyo",
        "2026-10-25T02:30:00+02:00 to 2026-10-25T03:30:00+01:00 Europe/Berlin",
        "2026-10-25 10:00-11:00 +01:00 Europe/Berlin",
    ]


async def test_a_cursor_nested_deeper_than_json_reads_is_refused_by_every_listing(account) -> None:
    """Python's json raises RecursionError, not ValueError, for such a cursor: still not a cursor, never a crash."""
    nested = base64.urlsafe_b64encode(b"[" * 50_000).decode().rstrip("=")
    window = {"calendar": account.work, "start": "2026-12-01", "end": "2026-12-02"}
    async with connect(account.build(), revision="2026-07-28") as client:
        results = [
            await client.call_tool("list_events", window | {"cursor": nested}),
            await client.call_tool("list_tasks", {"calendar": account.tasks_only, "cursor": nested}),
            await client.call_tool("list_journals", {"calendar": account.home, "cursor": nested}),
        ]
    for result in results:
        assert result.is_error
        assert "cursor: not a cursor this server returned" in result.content[0].text
