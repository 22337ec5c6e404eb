"""delete_event with scope following: the series ends before one occurrence (UNTIL, RFC 5545 §3.3.10).

Run in four host time zones, for a zoned series across the end of daylight-saving time, an all-day series
and a floating one, against a real Radicale.
"""

from __future__ import annotations

import time

import icalendar
import pytest

from approval_core.testing import DialogLog, accept, connect
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
