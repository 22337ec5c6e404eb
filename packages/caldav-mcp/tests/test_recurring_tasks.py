"""Recurring tasks (VTODO with RRULE) done one occurrence at a time, against a real Radicale."""

from __future__ import annotations

import icalendar
import pytest

from approval_core import ApprovalSettings
from approval_core.asking.results import approval_outcome
from approval_core.testing import DialogLog, accept, connect, decline
from caldav_helpers import HOSTILE, ics, structured

pytestmark = pytest.mark.anyio

CHORE = ics(
    "BEGIN:VTODO\nUID:chore@example.org\nDTSTAMP:20261101T000000Z\n"
    "DTSTART;TZID=Europe/Berlin:20261207T090000\nDUE;TZID=Europe/Berlin:20261207T180000\n"
    f"SUMMARY:{HOSTILE.replace(',', chr(92) + ',')}\nSTATUS:NEEDS-ACTION\nRRULE:FREQ=WEEKLY;COUNT=8\n"
    "BEGIN:VALARM\nACTION:DISPLAY\nDESCRIPTION:Reminder\nTRIGGER:-PT15M\nEND:VALARM\nEND:VTODO\n"
)
DAILY_DATES = ics(
    "BEGIN:VTODO\nUID:water@example.org\nDTSTAMP:20261101T000000Z\nDTSTART;VALUE=DATE:20261201\n"
    "DUE;VALUE=DATE:20261202\nSUMMARY:Water the plants\nRRULE:FREQ=DAILY\nEND:VTODO\n"
)


def _stored(account, name: str) -> icalendar.Calendar:
    status, text = account.get(account.tasks_only, name)
    assert status == 200
    return icalendar.Calendar.from_ical(text)


async def test_completing_a_recurring_task_completes_only_its_current_occurrence(account) -> None:
    account.put(account.tasks_only, "chore.ics", CHORE)
    log = DialogLog(accept)
    args = {"calendar": account.tasks_only, "uid": "chore@example.org"}
    async with connect(account.build(), revision="2025-11-25", answer=log) as client:
        before = structured(await client.call_tool("get_task", args))
        first = structured(await client.call_tool("complete_task", args))
        second = structured(await client.call_tool("complete_task", args))
        after = structured(await client.call_tool("get_task", args))
        listed = structured(await client.call_tool("list_tasks", {"calendar": account.tasks_only}))
    assert log.messages == []
    assert before["recurring"] is True
    assert before["rrule"] == "FREQ=WEEKLY;COUNT=8"
    assert before["current_occurrence"] == "20261207T080000Z"
    assert before["next_due"] == "2026-12-07T18:00:00+01:00"
    assert (first["action"], first["occurrence"]) == ("completed", "20261207T080000Z")
    assert (first["next_occurrence"], first["next_due"]) == ("20261214T080000Z", "2026-12-14T18:00:00+01:00")
    assert second["occurrence"] == "20261214T080000Z"
    assert second["next_due"] == "2026-12-21T18:00:00+01:00"
    assert after["status"] == "NEEDS-ACTION"
    assert after["completed_occurrences"] == 2
    assert after["next_due"] == "2026-12-21T18:00:00+01:00"
    [task] = listed["tasks"]
    assert task["next_due"] == "2026-12-21T18:00:00+01:00"
    stored = _stored(account, "chore.ics")
    series = [c for c in stored.walk("VTODO") if "RECURRENCE-ID" not in c]
    done = [c for c in stored.walk("VTODO") if "RECURRENCE-ID" in c]
    assert len(series) == 1
    assert str(series[0]["STATUS"]) == "NEEDS-ACTION"
    assert "COMPLETED" not in series[0]
    assert [str(c["STATUS"]) for c in done] == ["COMPLETED", "COMPLETED"]
    assert [c["RECURRENCE-ID"].params.get("TZID") for c in done] == ["Europe/Berlin", "Europe/Berlin"]
    assert [c["RECURRENCE-ID"].dt.hour for c in done] == [9, 9]
    assert [c["DUE"].dt.day for c in done] == [7, 14]
    assert all(int(c["PERCENT-COMPLETE"]) == 100 and "COMPLETED" in c and "RRULE" not in c for c in done)


async def test_reopening_reopens_the_last_completed_occurrence(account) -> None:
    account.put(account.tasks_only, "chore.ics", CHORE)
    args = {"calendar": account.tasks_only, "uid": "chore@example.org"}
    async with connect(account.build(), revision="2026-07-28", answer=accept) as client:
        await client.call_tool("complete_task", args)
        await client.call_tool("complete_task", args)
        reopened = structured(await client.call_tool("complete_task", {**args, "completed": False}))
        after = structured(await client.call_tool("get_task", args))
    assert (reopened["action"], reopened["occurrence"]) == ("reopened", "20261214T080000Z")
    assert after["current_occurrence"] == "20261214T080000Z"
    assert after["completed_occurrences"] == 1


async def test_an_all_day_task_that_never_ends_moves_on_a_day_at_a_time(account) -> None:
    account.put(account.tasks_only, "water.ics", DAILY_DATES)
    args = {"calendar": account.tasks_only, "uid": "water@example.org"}
    async with connect(account.build(), revision="2026-07-28", answer=accept) as client:
        done = structured(await client.call_tool("complete_task", args))
    assert (done["occurrence"], done["next_occurrence"], done["next_due"]) == ("20261201", "20261202", "2026-12-03")
    [override] = [c for c in _stored(account, "water.ics").walk("VTODO") if "RECURRENCE-ID" in c]
    assert override["RECURRENCE-ID"].to_ical() == b"20261201"
    assert override["RECURRENCE-ID"].params.get("VALUE") == "DATE"


async def test_completing_the_whole_series_asks_with_counts_and_no_stored_text(account) -> None:
    account.put(account.tasks_only, "chore.ics", CHORE)
    args = {"calendar": account.tasks_only, "uid": "chore@example.org"}
    log = DialogLog(decline)
    async with connect(account.build(), revision="2025-11-25", answer=log) as client:
        await client.call_tool("complete_task", args)
        declined = await client.call_tool("complete_task", {**args, "scope": "series"})
        unchanged = structured(await client.call_tool("get_task", args))
        log.answer = accept
        done = structured(await client.call_tool("complete_task", {**args, "scope": "series"}))
        after = structured(await client.call_tool("get_task", args))
        reopened = structured(await client.call_tool("complete_task", {**args, "scope": "series", "completed": False}))
        again = structured(await client.call_tool("get_task", args))
    assert declined.is_error
    assert unchanged["status"] == "NEEDS-ACTION"
    assert len(log.messages) == 2
    message = log.messages[0]
    assert "Mark a recurring task done as a whole: all 8 of its occurrences, 7 of them still open" in message
    assert HOSTILE not in message
    assert "chore@example.org" in message
    assert done["action"] == "completed"
    assert done["occurrence"] is None
    assert after["status"] == "COMPLETED"
    assert after["current_occurrence"] is None
    assert reopened["action"] == "reopened"
    assert again["current_occurrence"] == "20261214T080000Z"


async def test_without_a_dialog_the_whole_series_takes_the_token(account) -> None:
    account.put(account.tasks_only, "chore.ics", CHORE)
    args = {"calendar": account.tasks_only, "uid": "chore@example.org", "scope": "series"}
    async with connect(account.build(ApprovalSettings(elicitation=False)), revision="2025-11-25") as client:
        first = await client.call_tool("complete_task", args)
        unchanged = structured(await client.call_tool("get_task", {"calendar": args["calendar"], "uid": args["uid"]}))
    assert first.is_error
    assert "confirm_token" in first.content[0].text
    assert unchanged["status"] == "NEEDS-ACTION"


async def test_a_single_task_is_completed_as_before_without_asking(account) -> None:
    log = DialogLog(accept)
    async with connect(account.build(), revision="2025-11-25", answer=log) as client:
        made = structured(
            await client.call_tool(
                "create_task", {"calendar": account.tasks_only, "summary": "Pay", "due": "2026-12-10"}
            )
        )
        args = {"calendar": account.tasks_only, "uid": made["uid"]}
        done = structured(await client.call_tool("complete_task", {**args, "scope": "series"}))
        got = structured(await client.call_tool("get_task", args))
    assert log.messages == []
    assert (done["action"], done["occurrence"]) == ("completed", None)
    assert (got["status"], got["recurring"], got["percent_complete"]) == ("COMPLETED", False, 100)


async def test_a_call_that_does_not_ask_refuses_a_token_and_a_series_not_done_is_not_reopened(account) -> None:
    account.put(account.tasks_only, "chore.ics", CHORE)
    args = {"calendar": account.tasks_only, "uid": "chore@example.org"}
    async with connect(account.build(ApprovalSettings(elicitation=False)), revision="2025-11-25") as client:
        asked = await client.call_tool("complete_task", {**args, "scope": "series"})
        token = (approval_outcome(asked) or {})["confirm_token"]
        other = await client.call_tool("complete_task", {**args, "confirm_token": token})
        reopen = await client.call_tool("complete_task", {**args, "scope": "series", "completed": False})
        unchanged = structured(await client.call_tool("get_task", args))
    assert other.is_error
    assert other.content[0].text.startswith("confirm_token: this call does not ask a person")
    assert reopen.is_error
    assert reopen.content[0].text.startswith("completed: this recurring task is not marked done as a whole")
    assert (unchanged["status"], unchanged["completed_occurrences"]) == ("NEEDS-ACTION", 0)
