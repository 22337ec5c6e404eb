"""What an entry means survives an edit: its zone, its links, its journal properties, its all-day form."""

from __future__ import annotations

import icalendar
import pytest

from approval_core.testing import approval_of, connect
from caldav_helpers import ics, structured, vevent

pytestmark = pytest.mark.anyio


def stored(account, calendar: str, name: str) -> icalendar.Component:
    status, text = account.get(calendar, name)
    assert status == 200
    cal = icalendar.Calendar.from_ical(text)
    return next(c for c in cal.walk() if c.name in {"VEVENT", "VTODO", "VJOURNAL"} and "RECURRENCE-ID" not in c)


def wire(component: icalendar.Component, name: str) -> bytes:
    """A property as written on the server: ``;TZID=Europe/Berlin:20260610T110000``."""
    prop = component[name]
    params = "".join(f";{k}={v}" for k, v in sorted(prop.params.items()))
    return params.encode() + b":" + prop.to_ical()


async def call(client, tool: str, args: dict) -> dict:
    if tool != "update_event":
        return structured(await client.call_tool(tool, args))
    result = await client.call_tool(tool, {**args, "confirm_token": None})
    if result.is_error and not result.structured_content:
        try:
            token = approval_of(result)["confirm_token"]
        except AssertionError:
            return structured(result)
        result = await client.call_tool(tool, {**args, "confirm_token": token})
    return structured(result)


BERLIN = ics(
    "BEGIN:VEVENT\nUID:berlin@x\nDTSTAMP:20260101T000000Z\nDTSTART;TZID=Europe/Berlin:20260610T090000\n"
    "DURATION:PT1H30M\nSUMMARY:Planning\nEND:VEVENT\n"
)


async def test_an_end_given_as_an_instant_is_written_in_the_events_own_zone(account) -> None:
    account.put(account.work, "berlin.ics", BERLIN)
    async with connect(account.build(), revision="2026-07-28") as client:
        await call(
            client, "update_event", {"calendar": account.work, "id": "berlin@x", "end": "2026-06-10T11:00:00+02:00"}
        )
        got = structured(await client.call_tool("get_event", {"calendar": account.work, "id": "berlin@x"}))
    event = stored(account, account.work, "berlin.ics")
    assert wire(event, "DTEND") == b";TZID=Europe/Berlin:20260610T110000"
    assert wire(event, "DTSTART") == b";TZID=Europe/Berlin:20260610T090000"
    assert got["tzid"] == "Europe/Berlin"
    assert got["end"] == "2026-06-10T11:00:00+02:00"


async def test_a_start_given_in_utc_or_without_offset_stays_in_the_zone(account) -> None:
    account.put(account.work, "berlin.ics", BERLIN)
    async with connect(account.build(), revision="2026-07-28") as client:
        await call(
            client, "update_event", {"calendar": account.work, "id": "berlin@x", "start": "2026-06-11T07:00:00Z"}
        )
        first = stored(account, account.work, "berlin.ics")
        await call(client, "update_event", {"calendar": account.work, "id": "berlin@x", "start": "2026-06-12T08:00:00"})
    second = stored(account, account.work, "berlin.ics")
    assert wire(first, "DTSTART") == b";TZID=Europe/Berlin:20260611T090000"
    assert wire(first, "DTEND") == b";TZID=Europe/Berlin:20260611T103000"
    assert wire(second, "DTSTART") == b";TZID=Europe/Berlin:20260612T080000"


async def test_a_series_start_moved_by_an_instant_keeps_its_zone(account) -> None:
    series = ics(
        vevent(
            "weekly@x",
            ";TZID=America/New_York:20260601T090000",
            ";TZID=America/New_York:20260601T100000",
            "Standup",
            "RRULE:FREQ=WEEKLY;COUNT=4\n",
        )
    )
    account.put(account.work, "weekly.ics", series)
    async with connect(account.build(), revision="2026-07-28") as client:
        await call(
            client,
            "update_event",
            {"calendar": account.work, "id": "weekly@x", "scope": "series", "start": "2026-06-01T15:30:00+02:00"},
        )
    event = stored(account, account.work, "weekly.ics")
    assert wire(event, "DTSTART") == b";TZID=America/New_York:20260601T093000"
    assert wire(event, "DTEND") == b";TZID=America/New_York:20260601T103000"


async def test_a_tasks_due_and_start_keep_their_zone(account) -> None:
    task = ics(
        "BEGIN:VTODO\nUID:task@x\nDTSTAMP:20260101T000000Z\nDTSTART;TZID=Asia/Tokyo:20260610T090000\n"
        "DUE;TZID=Asia/Tokyo:20260611T090000\nSUMMARY:Report\nEND:VTODO\n"
    )
    account.put(account.tasks_only, "task.ics", task)
    async with connect(account.build(), revision="2026-07-28") as client:
        await call(
            client,
            "update_task",
            {
                "calendar": account.tasks_only,
                "uid": "task@x",
                "due": "2026-06-12T00:00:00Z",
                "start": "2026-06-10T01:00:00Z",
            },
        )
    todo = stored(account, account.tasks_only, "task.ics")
    assert wire(todo, "DUE") == b";TZID=Asia/Tokyo:20260612T090000"
    assert wire(todo, "DTSTART") == b";TZID=Asia/Tokyo:20260610T100000"


async def test_a_utc_event_stays_in_utc(account) -> None:
    account.put(account.work, "utc.ics", ics(vevent("utc@x", ":20260610T090000Z", ":20260610T100000Z")))
    async with connect(account.build(), revision="2026-07-28") as client:
        await call(
            client, "update_event", {"calendar": account.work, "id": "utc@x", "end": "2026-06-10T13:00:00+02:00"}
        )
    event = stored(account, account.work, "utc.ics")
    assert wire(event, "DTEND") == b":20260610T110000Z"


async def test_a_floating_event_stays_floating_and_refuses_an_offset(account) -> None:
    account.put(account.work, "float.ics", ics(vevent("float@x", ":20260610T090000", ":20260610T100000")))
    async with connect(account.build(), revision="2026-07-28") as client:
        refused = await client.call_tool(
            "update_event", {"calendar": account.work, "id": "float@x", "end": "2026-06-10T11:00:00+02:00"}
        )
        await call(client, "update_event", {"calendar": account.work, "id": "float@x", "end": "2026-06-10T11:00:00"})
    assert refused.is_error
    assert "end: this entry's times are floating" in refused.content[0].text
    event = stored(account, account.work, "float.ics")
    assert wire(event, "DTEND") == b":20260610T110000"
    assert wire(event, "DTSTART") == b":20260610T090000"


async def test_an_explicit_tzid_moves_the_event_to_that_zone(account) -> None:
    account.put(account.work, "berlin.ics", BERLIN)
    async with connect(account.build(), revision="2026-07-28") as client:
        await call(
            client,
            "update_event",
            {"calendar": account.work, "id": "berlin@x", "start": "2026-06-10T09:00:00", "tzid": "Europe/London"},
        )
    event = stored(account, account.work, "berlin.ics")
    assert wire(event, "DTSTART") == b";TZID=Europe/London:20260610T090000"


# ---------------------------------------------------------------- small gaps


def vtodo(uid: str, more: str = "") -> str:
    return f"BEGIN:VTODO\nUID:{uid}\nDTSTAMP:20260101T000000Z\nSUMMARY:{uid}\n{more}END:VTODO\n"


async def test_get_task_names_the_children_list_tasks_links(account) -> None:
    account.put(account.tasks_only, "parent.ics", ics(vtodo("parent@x", "RELATED-TO;RELTYPE=CHILD:own-child@x\n")))
    account.put(account.tasks_only, "a.ics", ics(vtodo("a@x", "RELATED-TO;RELTYPE=PARENT:parent@x\n")))
    account.put(account.tasks_only, "b.ics", ics(vtodo("b@x", "RELATED-TO:parent@x\n")))
    account.put(account.tasks_only, "c.ics", ics(vtodo("c@x", "RELATED-TO;RELTYPE=SIBLING:parent@x\n")))
    account.put(account.tasks_only, "d.ics", ics(vtodo("d@x", "RELATED-TO:parent@x.other\n")))
    async with connect(account.build(), revision="2026-07-28") as client:
        got = structured(await client.call_tool("get_task", {"calendar": account.tasks_only, "uid": "parent@x"}))
        listed = structured(await client.call_tool("list_tasks", {"calendar": account.tasks_only}))
    linked = {t["uid"]: t["children"] for t in listed["tasks"]}
    assert got["children"] == ["a@x", "b@x", "own-child@x"]
    assert linked["parent@x"] == got["children"]


JOURNAL = ics(
    "BEGIN:VJOURNAL\nUID:journal@x\nDTSTAMP:20260101T000000Z\nDTSTART;VALUE=DATE:20260610\n"
    "SUMMARY:Minutes\nDESCRIPTION:First part\nSTATUS:FINAL\nCLASS:CONFIDENTIAL\n"
    "URL:https://example.org/minutes\nATTACH;FMTTYPE=application/pdf:https://example.org/m.pdf\n"
    "ATTACH;FMTTYPE=text/plain;ENCODING=BASE64;VALUE=BINARY:SGVsbG8=\nCATEGORIES:Board,Q2\n"
    "COMMENT:Approved\nCONTACT:Jane Doe\\, +1-555-0100\nRELATED-TO:meeting@x\nORGANIZER:mailto:jane@example.org\n"
    "ATTENDEE:mailto:willi@example.org\nSEQUENCE:3\nCREATED:20260601T080000Z\n"
    "LAST-MODIFIED:20260602T080000Z\nEND:VJOURNAL\n"
)


async def test_journals_return_status_class_url_attachments_and_the_rest(account) -> None:
    journals = account.work
    account.put(journals, "journal.ics", JOURNAL)
    async with connect(account.build(), revision="2026-07-28") as client:
        got = structured(await client.call_tool("get_journal", {"calendar": journals, "uid": "journal@x"}))
        listed = structured(await client.call_tool("list_journals", {"calendar": journals}))
    (entry,) = listed["journals"]
    assert entry == {k: v for k, v in got.items() if k != "untrusted"}  # the marker belongs to the whole result
    assert got["status"] == "FINAL"
    assert got["classification"] == "CONFIDENTIAL"
    assert got["url"] == "https://example.org/minutes"
    assert got["descriptions"] == ["First part"]  # Radicale refuses a second DESCRIPTION (400), RFC 5545 allows it
    assert got["attachments"] == [
        {"uri": "https://example.org/m.pdf", "fmttype": "application/pdf", "inline_bytes": None},
        {"uri": None, "fmttype": "text/plain", "inline_bytes": 5},
    ]
    assert got["categories"] == ["Board", "Q2"]
    assert got["comments"] == ["Approved"]
    assert got["contacts"] == ["Jane Doe, +1-555-0100"]
    assert got["related_to"] == ["meeting@x"]
    assert got["organizer"] == "mailto:jane@example.org"
    assert got["attendees"] == ["mailto:willi@example.org"]
    assert got["sequence"] == 3
    assert got["created"] == "2026-06-01T08:00:00+00:00"
    assert got["last_modified"] == "2026-06-02T08:00:00+00:00"


@pytest.mark.parametrize(
    ("start", "end", "stored_start", "stored_end"),
    [
        ("2026-12-01T00:00:00", "2026-12-03T00:00:00", "20261201", "20261203"),
        ("2026-12-01T00:00:00+01:00", None, "20261201", "20261202"),
        ("2026-12-01", "2026-12-02", "20261201", "20261202"),
    ],
)
async def test_all_day_intent_with_midnight_date_times_stores_dates(
    account, start, end, stored_start, stored_end
) -> None:
    args = {"calendar": account.work, "summary": "Away", "start": start, "all_day": True, "uid": "away@x"}
    if end is not None:
        args["end"] = end
    async with connect(account.build(), revision="2026-07-28") as client:
        structured(await client.call_tool("create_event", args))
        got = structured(await client.call_tool("get_event", {"calendar": account.work, "id": "away@x"}))
    event = stored(account, account.work, "away@x.ics")
    assert wire(event, "DTSTART") == f";VALUE=DATE:{stored_start}".encode()
    assert wire(event, "DTEND") == f";VALUE=DATE:{stored_end}".encode()
    assert got["all_day"] is True


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {"start": "2026-12-01T09:00:00", "all_day": True},
            "start: all_day is true, so give a date (YYYY-MM-DD) or a date-time at exactly midnight",
        ),
        (
            {"start": "2026-12-01", "end": "2026-12-01T23:59:59", "all_day": True},
            "end: all_day is true, so give a date (YYYY-MM-DD) (the day after the last day",
        ),
        ({"start": "2026-12-01", "all_day": False}, "start: all_day is false but '2026-12-01' is a date"),
    ],
)
async def test_all_day_intent_refuses_what_it_cannot_read_and_says_what_it_expects(account, args, message) -> None:
    async with connect(account.build(), revision="2026-07-28") as client:
        result = await client.call_tool("create_event", {"calendar": account.work, "summary": "Away", **args})
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert result.is_error
    assert message in result.content[0].text
    described = tools["create_event"].input_schema["properties"]["all_day"]["description"]
    assert "date-times at exactly midnight" in described
    assert "end is exclusive" in described
