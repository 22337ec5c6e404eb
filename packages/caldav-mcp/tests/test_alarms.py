"""Alarms (VALARM, RFC 5545 §3.6.6): written from reminders, read back, kept as stored when other fields change."""

from __future__ import annotations

import re

import pytest

from approval_core.testing import DialogLog, accept, connect, unnumbered
from caldav_helpers import ics, structured, vevent

pytestmark = pytest.mark.anyio

# A stored alarm another client wrote, with parameters and properties this server never writes.
FOREIGN_ALARM = (
    "BEGIN:VALARM\nACTION:AUDIO\nTRIGGER;RELATED=END;X-APPLE-FLAG=1:-PT5M\n"
    "ATTACH;FMTTYPE=audio/basic:https://example.org/ping.au\nX-WR-ALARMUID:7F1C-22\nREPEAT:2\nDURATION:PT1M\n"
    "END:VALARM\nBEGIN:VALARM\nACTION:DISPLAY\nDESCRIPTION:Leave now\nTRIGGER;VALUE=DATE-TIME:20261201T073000Z\n"
    "END:VALARM\n"
)


def _alarm_blocks(text: str) -> list[str]:
    unfolded = text.replace("\r\n ", "").replace("\r\n", "\n")
    return re.findall(r"BEGIN:VALARM\n.*?END:VALARM\n", unfolded, flags=re.S)


async def test_create_event_writes_display_alarms_and_reads_list_them(account) -> None:
    alarms = [{"minutes_before": 15}, {"before": "P1D"}, {"at": "2026-12-01T07:00:00+01:00"}]
    args = {
        "calendar": account.work,
        "summary": "Dentist",
        "start": "2026-12-01T09:00:00",
        "tzid": "Europe/Berlin",
        "alarms": alarms,
    }
    async with connect(account.build(), revision="2026-07-28", answer=accept) as client:
        made = structured(await client.call_tool("create_event", args))
        got = structured(await client.call_tool("get_event", {"calendar": account.work, "id": made["uid"]}))
    assert got["alarms"] == [
        {"action": "DISPLAY", "trigger": "-PT15M", "related": "START", "at": None, "minutes_before": 15},
        {"action": "DISPLAY", "trigger": "-P1D", "related": "START", "at": None, "minutes_before": 1440},
        {
            "action": "DISPLAY",
            "trigger": "20261201T060000Z",
            "related": None,
            "at": "2026-12-01T06:00:00+00:00",
            "minutes_before": None,
        },
    ]
    _, text = account.get(account.work, f"{made['uid']}.ics")
    blocks = _alarm_blocks(text)
    assert len(blocks) == 3
    assert all("ACTION:DISPLAY\n" in block and "DESCRIPTION:Reminder\n" in block for block in blocks)


async def test_a_task_is_reminded_before_its_due_time(account) -> None:
    args = {"calendar": account.tasks_only, "summary": "Taxes", "due": "2026-12-10T12:00:00Z"}
    async with connect(account.build(), revision="2026-07-28", answer=accept) as client:
        made = structured(await client.call_tool("create_task", {**args, "alarms": [{"before": "PT2H"}]}))
        got = structured(await client.call_tool("get_task", {"calendar": account.tasks_only, "uid": made["uid"]}))
        undated = await client.call_tool(
            "create_task", {"calendar": account.tasks_only, "summary": "Someday", "alarms": [{"minutes_before": 5}]}
        )
    assert got["alarms"] == [
        {"action": "DISPLAY", "trigger": "-PT2H", "related": "END", "at": None, "minutes_before": 120}
    ]
    assert undated.is_error
    assert undated.content[0].text.startswith("alarms[0]: this task has no due time or start")


@pytest.mark.parametrize(
    ("alarm", "needle"),
    [
        ({}, "alarms[0]: give exactly one of minutes_before, before, at"),
        ({"minutes_before": 5, "before": "PT5M"}, "alarms[0]: give exactly one"),
        ({"before": "15 minutes"}, 'alarms[0].before: ⟦stored⟧"15 minutes"⟦/stored⟧ is not an ISO 8601 duration'),
        ({"before": "-PT5M"}, "is not an ISO 8601 duration"),
        ({"before": "P400D"}, "at most 366 days"),
        ({"at": "2026-12-01T07:00:00"}, "alarms[0].at: give an offset"),
        ({"at": "tomorrow"}, "alarms[0].at: 'tomorrow' is not an ISO 8601 date-time"),
    ],
)
async def test_bad_alarms_are_refused_naming_the_field(account, alarm, needle) -> None:
    args = {"calendar": account.work, "summary": "X", "start": "2026-12-01", "alarms": [alarm]}
    async with connect(account.build(), revision="2026-07-28", answer=accept) as client:
        result = await client.call_tool("create_event", args)
        listed = structured(
            await client.call_tool(
                "list_events", {"calendar": account.work, "start": "2026-12-01", "end": "2026-12-02"}
            )
        )
    assert result.is_error
    assert needle in unnumbered(result.content[0].text)
    assert listed["events"] == []


async def test_stored_alarms_are_kept_byte_for_byte_when_other_fields_change(account) -> None:
    account.put(
        account.work,
        "trip.ics",
        ics(vevent("trip@example.org", ":20261201T090000Z", ":20261201T100000Z", "Trip", FOREIGN_ALARM)),
    )
    _, before = account.get(account.work, "trip.ics")
    log = DialogLog(accept)
    async with connect(account.build(), revision="2025-11-25", answer=log) as client:
        for change in ({"summary": "Trip (moved)"}, {"start": "2026-12-01T11:00:00Z", "description": "Bring maps"}):
            structured(
                await client.call_tool("update_event", {"calendar": account.work, "id": "trip@example.org", **change})
            )
        got = structured(await client.call_tool("get_event", {"calendar": account.work, "id": "trip@example.org"}))
    _, after = account.get(account.work, "trip.ics")
    assert _alarm_blocks(after) == _alarm_blocks(before)
    assert len(_alarm_blocks(before)) == 2
    assert [a["action"] for a in got["alarms"]] == ["AUDIO", "DISPLAY"]
    assert got["alarms"][0]["related"] == "END"
    assert (got["summary"], got["start"]) == ("Trip (moved)", "2026-12-01T11:00:00+00:00")
    assert log.messages == []


async def test_giving_alarms_replaces_them_and_an_empty_list_removes_them(account) -> None:
    account.put(
        account.work,
        "trip.ics",
        ics(vevent("trip@example.org", ":20261201T090000Z", ":20261201T100000Z", "Trip", FOREIGN_ALARM)),
    )
    target = {"calendar": account.work, "id": "trip@example.org"}
    async with connect(account.build(), revision="2026-07-28", answer=accept) as client:
        structured(await client.call_tool("update_event", {**target, "alarms": [{"minutes_before": 30}]}))
        one = structured(await client.call_tool("get_event", target))
        structured(await client.call_tool("update_event", {**target, "alarms": []}))
        none = structured(await client.call_tool("get_event", target))
    assert [a["trigger"] for a in one["alarms"]] == ["-PT30M"]
    assert none["alarms"] == []
    _, text = account.get(account.work, "trip.ics")
    assert "VALARM" not in text


async def test_changing_a_series_alarms_asks_and_names_the_field(account) -> None:
    series = ics(
        vevent("standup@example.org", ":20261201T090000Z", ":20261201T091500Z", "Standup", "RRULE:FREQ=DAILY;COUNT=5\n")
    )
    account.put(account.work, "standup.ics", series)
    log = DialogLog(accept)
    args = {"calendar": account.work, "id": "standup@example.org", "scope": "series", "alarms": [{"before": "PT10M"}]}
    async with connect(account.build(), revision="2025-11-25", answer=log) as client:
        structured(await client.call_tool("update_event", args))
        listed = structured(
            await client.call_tool(
                "get_event", {"calendar": account.work, "id": "standup@example.org#20261203T090000Z"}
            )
        )
    [message] = log.messages
    assert "Change 1 field(s) of a recurring event, in all 5 of its occurrences" in message
    assert "Fields: alarms" in message
    assert [a["minutes_before"] for a in listed["alarms"]] == [10]
