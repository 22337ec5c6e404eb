"""update_event with rrule: a new recurrence rule for the whole series, asked with counts (Radicale)."""

from __future__ import annotations

import icalendar
import pytest

from approval_core.testing import DialogLog, accept, connect, decline
from caldav_helpers import HOSTILE, ics, structured, vevent

pytestmark = pytest.mark.anyio

SERIES = ics(
    vevent(
        "standup@example.org",
        ";TZID=Europe/Berlin:20261201T090000",
        ";TZID=Europe/Berlin:20261201T091500",
        HOSTILE.replace(",", "\\,"),
        "RRULE:FREQ=DAILY;COUNT=10\n",
    )
)
TARGET = {"id": "standup@example.org", "scope": "series"}
WINDOW = {"start": "2026-12-01", "end": "2027-01-01"}


async def test_a_new_rule_asks_with_the_occurrences_kept_lost_and_added(account) -> None:
    account.put(account.work, "standup.ics", SERIES)
    log = DialogLog(decline)
    # Every other day, 8 times: 1, 3, ..., 15 December. Kept: 1, 3, 5, 7, 9; lost: the other 5 of 1..10; added: 3.
    args = {"calendar": account.work, **TARGET, "rrule": "FREQ=DAILY;INTERVAL=2;COUNT=8"}
    async with connect(account.build(), revision="2025-11-25", answer=log) as client:
        declined = await client.call_tool("update_event", args)
        log.answer = accept
        done = structured(await client.call_tool("update_event", args))
        listed = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW}))
        got = structured(await client.call_tool("get_event", {"calendar": account.work, "id": "standup@example.org"}))
    assert declined.is_error
    message = log.messages[0]
    assert (
        "Replace the recurrence rule of an event: 5 of its 10 occurrence(s) stay, 5 go and 3 are added, 8 in all"
        in message
    )
    assert "New rule: FREQ=DAILY;INTERVAL=2;COUNT=8" in message
    assert HOSTILE not in message
    assert done["action"] == "updated"
    assert len(listed["events"]) == 8
    assert got["rrule"] == "FREQ=DAILY;COUNT=8;INTERVAL=2"


async def test_a_single_event_made_to_repeat_asks_too(account) -> None:
    log = DialogLog(accept)
    async with connect(account.build(), revision="2025-11-25", answer=log) as client:
        made = structured(
            await client.call_tool(
                "create_event", {"calendar": account.work, "summary": "Yoga", "start": "2026-12-02T18:00:00Z"}
            )
        )
        structured(
            await client.call_tool(
                "update_event", {"calendar": account.work, "id": made["uid"], "rrule": "FREQ=WEEKLY"}
            )
        )
    [message] = log.messages
    assert "Replace the recurrence rule of an event of 1 occurrence(s) with one that never ends" in message
    _, text = account.get(account.work, f"{made['uid']}.ics")
    assert "RRULE:FREQ=WEEKLY" in text


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ({"rrule": "FREQ=DAILY;COUNT=0"}, "rrule: "),
        ({"rrule": "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=31"}, "rrule: "),
        ({"rrule": "FREQ=DAILY;UNTIL=20261231"}, "rrule: "),
        ({"rrule": "FREQ=WEEKLY", "start": "2026-12-01T10:00:00"}, "rrule: change the rule and the times"),
        ({"rrule": "FREQ=WEEKLY", "scope": "occurrence", "id": "standup@example.org#20261202T080000Z"}, "rrule: a"),
    ],
)
async def test_bad_rules_are_refused_before_asking(account, extra, needle) -> None:
    account.put(account.work, "standup.ics", SERIES)
    log = DialogLog(accept)
    async with connect(account.build(), revision="2025-11-25", answer=log) as client:
        result = await client.call_tool("update_event", {"calendar": account.work, **TARGET, **extra})
    assert result.is_error
    assert result.content[0].text.startswith(needle)
    assert log.messages == []
    _, text = account.get(account.work, "standup.ics")
    assert icalendar.Calendar.from_ical(text).walk("VEVENT")[0]["RRULE"].to_ical() == b"FREQ=DAILY;COUNT=10"
