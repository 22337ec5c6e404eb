"""delete_event with scope following: the series ends before one occurrence (UNTIL, RFC 5545 §3.3.10).

Run in four host time zones, for a zoned series across the end of daylight-saving time, an all-day series
and a floating one, against a real Radicale.
"""

from __future__ import annotations

import time

import icalendar
import pytest

from approval_core.testing import DialogLog, accept, connect, ticked
from caldav_helpers import HOSTILE, ics, structured, vevent

pytestmark = pytest.mark.anyio

HOST_ZONES = ["UTC", "Pacific/Kiritimati", "America/Adak", "Asia/Kathmandu"]


@pytest.fixture(params=HOST_ZONES)
def host_zone(request, monkeypatch):
    monkeypatch.setenv("TZ", request.param)
    time.tzset()
    yield request.param
    monkeypatch.undo()
    time.tzset()


# Weekly on Thursdays 09:00 Berlin, 6 times: 15, 22 Oct (summer time, UTC+2), 29 Oct, 5, 12, 19 Nov (UTC+1).
ZONED = ics(
    vevent(
        "weekly@example.org",
        ";TZID=Europe/Berlin:20261015T090000",
        ";TZID=Europe/Berlin:20261015T100000",
        HOSTILE.replace(",", "\\,"),
        "RRULE:FREQ=WEEKLY;COUNT=6\nEXDATE;TZID=Europe/Berlin:20261105T090000\n",
    ),
    vevent(
        "weekly@example.org",
        ";TZID=Europe/Berlin:20261112T140000",
        ";TZID=Europe/Berlin:20261112T150000",
        "Moved",
        "RECURRENCE-ID;TZID=Europe/Berlin:20261112T090000\n",
    ),
)
ALL_DAY = ics(vevent("days@example.org", ";VALUE=DATE:20261026", ";VALUE=DATE:20261027", "Gym", "RRULE:FREQ=DAILY\n"))
FLOATING = ics(
    vevent(
        "float@example.org",
        ":20261024T230000",
        ":20261025T000000",
        "Night shift",
        "RRULE:FREQ=DAILY;UNTIL=20261031T230000\nRDATE:20261102T230000\n",
    )
)
WINDOW = {"start": "2026-10-01", "end": "2026-12-01"}


async def _delete(account, ics_text: str, name: str, occurrence: str) -> tuple[list[str], list[str], str]:
    account.put(account.work, name, ics_text)
    log = DialogLog(accept)
    async with connect(account.build(), revision="2025-11-25", answer=log) as client:
        done = structured(
            await client.call_tool("delete_event", {"calendar": account.work, "id": occurrence, "scope": "following"})
        )
        listed = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW}))
    assert done["scope"] == "following"
    _, stored = account.get(account.work, name)
    return [e["start"] for e in listed["events"]], log.messages, stored


async def test_a_zoned_series_ends_before_the_occurrence_across_the_dst_change(account, host_zone) -> None:
    starts, messages, stored = await _delete(account, ZONED, "weekly.ics", "weekly@example.org#20261029T080000Z")
    assert starts == ["2026-10-15T09:00:00+02:00", "2026-10-22T09:00:00+02:00"]
    [message] = messages
    assert "delete one occurrence of a recurring event and the ones after it: 3 occurrences go, the 2 before" in (
        message.lower()
    )
    assert HOSTILE not in message
    cal = icalendar.Calendar.from_ical(stored)
    [series] = list(cal.walk("VEVENT"))  # the override after the split went with it
    rule = series["RRULE"]
    assert "COUNT" not in rule
    assert series["RRULE"].to_ical().decode().endswith("UNTIL=20261029T075959Z")


async def test_an_all_day_series_that_never_ends_ends_the_day_before(account, host_zone) -> None:
    starts, messages, stored = await _delete(account, ALL_DAY, "days.ics", "days@example.org#20261029")
    assert starts == ["2026-10-26", "2026-10-27", "2026-10-28"]
    assert "that never ends and every later one; the 3 before it stay" in messages[0]
    assert "UNTIL=20261028" in icalendar.Calendar.from_ical(stored).walk("VEVENT")[0]["RRULE"].to_ical().decode()


async def test_a_floating_series_ends_in_floating_time_and_loses_its_later_rdates(account, host_zone) -> None:
    starts, messages, stored = await _delete(account, FLOATING, "float.ics", "float@example.org#20261027T230000")
    assert starts == ["2026-10-24T23:00:00", "2026-10-25T23:00:00", "2026-10-26T23:00:00"]
    assert "6 occurrences go, the 3 before it stay" in messages[0]
    [series] = list(icalendar.Calendar.from_ical(stored).walk("VEVENT"))
    assert series["RRULE"].to_ical().decode().endswith("UNTIL=20261027T225959")
    assert "RDATE" not in series


async def test_the_first_occurrence_is_refused_before_asking(account) -> None:
    account.put(account.work, "weekly.ics", ZONED)
    log = DialogLog(accept)
    async with connect(account.build(), revision="2025-11-25", answer=log) as client:
        result = await client.call_tool(
            "delete_event",
            {"calendar": account.work, "id": "weekly@example.org#20261015T070000Z", "scope": "following"},
        )
        single = await client.call_tool(
            "create_event", {"calendar": account.work, "summary": "Once", "start": "2026-10-20"}
        )
        once = await client.call_tool(
            "delete_event", {"calendar": account.work, "id": single.structured_content["uid"], "scope": "following"}
        )
    assert result.is_error
    assert "first occurrence" in result.content[0].text
    assert once.is_error
    assert once.content[0].text.startswith("scope: 'following' needs a recurring event")
    assert log.messages == []


def _entries(account) -> dict[str, icalendar.Calendar]:
    found: dict[str, icalendar.Calendar] = {}
    cal = account.dav.calendar(url=account.server.url.rstrip("/") + account.work)
    for item in cal.objects(load_objects=True):
        if not item.data:
            continue  # listed by the library but not there to load
        parsed = icalendar.Calendar.from_ical(item.data)
        found[str(next(iter(parsed.walk("VEVENT")))["UID"])] = parsed
    return found


async def test_update_following_splits_off_a_new_series_across_the_dst_change(account, host_zone) -> None:
    account.put(account.work, "weekly.ics", ZONED)
    log = DialogLog(accept)
    args = {"calendar": account.work, "id": "weekly@example.org#20261029T080000Z", "scope": "following"}
    async with connect(account.build(), revision="2025-11-25", answer=log) as client:
        done = structured(
            await client.call_tool("update_event", {**args, "summary": "Review", "alarms": [{"minutes_before": 5}]})
        )
        listed = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW}))
    [message] = log.messages
    assert "2 field(s) of one occurrence of a recurring event and the ones after it: 3 occurrence(s) become a new" in (
        message
    )
    assert "the 2 before it stay as they are" in message
    assert HOSTILE not in message
    assert done["split_from"] == "weekly@example.org"
    new_uid = done["uid"]
    assert [(e["start"], e["uid"] == new_uid, e["summary"] == "Review") for e in listed["events"]] == [
        ("2026-10-15T09:00:00+02:00", False, False),
        ("2026-10-22T09:00:00+02:00", False, False),
        ("2026-10-29T09:00:00+01:00", True, True),
        ("2026-11-12T14:00:00+01:00", True, False),  # the override moved with it, its own summary kept
        ("2026-11-19T09:00:00+01:00", True, True),
    ]
    entries = _entries(account)
    assert set(entries) == {"weekly@example.org", new_uid}
    head = next(c for c in entries[new_uid].walk("VEVENT") if "RECURRENCE-ID" not in c)
    assert str(head["RELATED-TO"]) == "weekly@example.org"
    assert head["RRULE"].to_ical() == b"FREQ=WEEKLY;COUNT=4"
    assert [v.dt.day for v in head["EXDATE"].dts] == [5]  # the EXDATE after the split is kept
    assert head["DTSTART"].params["TZID"] == "Europe/Berlin"
    assert len(head.subcomponents) == 1


async def test_update_following_of_an_all_day_series_that_never_ends(account) -> None:
    account.put(account.work, "days.ics", ALL_DAY)
    async with connect(account.build(), revision="2026-07-28", answer=accept) as client:
        done = structured(
            await client.call_tool(
                "update_event",
                {"calendar": account.work, "id": "days@example.org#20261028", "scope": "following", "summary": "Run"},
            )
        )
        listed = structured(
            await client.call_tool(
                "list_events", {"calendar": account.work, "start": "2026-10-26", "end": "2026-10-31"}
            )
        )
    assert [(e["start"], e["summary"]) for e in listed["events"]] == [
        ("2026-10-26", "Gym"),
        ("2026-10-27", "Gym"),
        ("2026-10-28", "Run"),
        ("2026-10-29", "Run"),
        ("2026-10-30", "Run"),
    ]
    assert listed["events"][2]["uid"] == done["uid"]


async def test_when_the_old_series_changed_meanwhile_the_new_one_is_removed_again(account) -> None:
    account.put(account.work, "weekly.ics", ZONED)

    async def change_then_accept(context, params):
        account.put(account.work, "weekly.ics", ZONED.replace("COUNT=6", "COUNT=7"))  # someone else's edit
        return ticked

    args = {"calendar": account.work, "id": "weekly@example.org#20261029T080000Z", "scope": "following"}
    async with connect(account.build(), revision="2025-11-25", answer=change_then_accept) as client:
        result = await client.call_tool("update_event", {**args, "summary": "Review"})
    assert result.is_error
    assert "removed again" in result.content[0].text
    assert set(_entries(account)) == {"weekly@example.org"}
    _, text = account.get(account.work, "weekly.ics")
    assert "COUNT=7" in text
