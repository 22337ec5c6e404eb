"""The count a dialog states is the number of occurrences a client shows, so the number the call reaches.

A series' occurrences are its rule's, plus its RDATEs, plus overrides whose
RECURRENCE-ID is outside the rule's set (RFC 5545 §3.8.4.4, §3.8.5.2), less
its EXDATEs (§3.8.5.1). The dialog's number must equal what ``list_events``
shows for the whole series.
"""

from __future__ import annotations

import re

import pytest

from approval_core import ApprovalSettings
from approval_core.testing import DialogLog, connect, decline
from caldav_helpers import ics, structured, vevent

pytestmark = pytest.mark.anyio
NO_UNDO = ApprovalSettings(undo_days=0)
"""The dialogs without the undo journal's "recoverable" clause: these tests read the counts in the headline."""

UID = "count@example.org"
WHOLE = {"start": "2026-11-01", "end": "2027-10-01"}

SERIES = {
    "count and an override outside the rule": ics(
        vevent(UID, ":20261201T090000Z", ":20261201T100000Z", "Series", "RRULE:FREQ=DAILY;COUNT=3\n"),
        vevent(UID, ":20261210T090000Z", ":20261210T100000Z", "Extra", "RECURRENCE-ID:20261210T090000Z\n"),
    ),
    "count, rdate, exdate and an override outside the rule": ics(
        vevent(
            UID,
            ":20261201T090000Z",
            ":20261201T100000Z",
            "Series",
            "RRULE:FREQ=WEEKLY;COUNT=4\nRDATE:20261203T090000Z,20261204T090000Z\nEXDATE:20261208T090000Z\n",
        ),
        vevent(UID, ":20261220T090000Z", ":20261220T100000Z", "Extra", "RECURRENCE-ID:20261221T090000Z\n"),
        vevent(UID, ":20261215T110000Z", ":20261215T120000Z", "Moved", "RECURRENCE-ID:20261215T090000Z\n"),
    ),
    "an rdate-only series with an override outside it": ics(
        vevent(UID, ":20261201T090000Z", ":20261201T100000Z", "Series", "RDATE:20261205T090000Z\n"),
        vevent(UID, ":20261207T090000Z", ":20261207T100000Z", "Extra", "RECURRENCE-ID:20261207T090000Z\n"),
    ),
}


def stated(message: str) -> int:
    """The occurrence count a dialog's first line states."""
    found = re.search(r"(?:all|with|of its) (\d+) (?:of its )?occurrences", message.split("\n")[0])
    assert found is not None, message
    return int(found.group(1))


@pytest.mark.parametrize("name", sorted(SERIES))
async def test_every_count_in_a_dialog_is_what_a_client_shows(account, name) -> None:
    account.put(account.work, "series.ics", SERIES[name])
    log = DialogLog(decline)
    async with connect(account.build(), revision="2026-07-28", answer=log) as client:
        shown = structured(await client.call_tool("list_events", {"calendar": account.work, **WHOLE}))["events"]
        detail = structured(await client.call_tool("get_event", {"calendar": account.work, "id": UID}))
        await client.call_tool("delete_event", {"calendar": account.work, "id": UID, "scope": "series"})
        await client.call_tool(
            "update_event", {"calendar": account.work, "id": UID, "scope": "series", "summary": "All"}
        )
        await client.call_tool("move_event", {"calendar": account.work, "id": UID, "destination": account.home})
    assert [stated(message) for message in log.messages] == [len(shown)] * 3
    assert detail["occurrences"] == len(shown)


async def test_the_delete_removes_exactly_the_occurrences_the_dialog_counted(account) -> None:
    """The reproduction: COUNT=3 plus an override outside the rule's set; the dialog said 3, the delete took 4."""
    account.put(account.work, "series.ics", SERIES["count and an override outside the rule"])
    log = DialogLog()
    async with connect(account.build(), revision="2025-11-25", answer=log) as client:
        before = structured(await client.call_tool("list_events", {"calendar": account.work, **WHOLE}))["events"]
        structured(await client.call_tool("delete_event", {"calendar": account.work, "id": UID, "scope": "series"}))
        after = structured(await client.call_tool("list_events", {"calendar": account.work, **WHOLE}))["events"]
    assert len(before) - len(after) == stated(log.messages[0]) == 4


async def test_a_series_that_never_ends_is_said_to_never_end_also_with_overrides(account) -> None:
    account.put(
        account.work,
        "open.ics",
        ics(
            vevent(UID, ":20261201T090000Z", ":20261201T100000Z", "Open", "RRULE:FREQ=WEEKLY\n"),
            vevent(UID, ":20261203T090000Z", ":20261203T100000Z", "Extra", "RECURRENCE-ID:20261203T090000Z\n"),
        ),
    )
    log = DialogLog(decline)
    async with connect(account.build(NO_UNDO), revision="2026-07-28", answer=log) as client:
        await client.call_tool("delete_event", {"calendar": account.work, "id": UID, "scope": "series"})
        await client.call_tool(
            "update_event", {"calendar": account.work, "id": UID, "scope": "series", "summary": "All"}
        )
        await client.call_tool("move_event", {"calendar": account.work, "id": UID, "destination": account.home})
    assert [message.split("\n")[0] for message in log.messages] == [
        "Delete a recurring event that never ends, with every occurrence it would have",
        "Change 1 field(s) of a recurring event that never ends, in every occurrence except those with changes of "
        "their own, which keep them",
        "Move a recurring event that never ends to another calendar",
    ]


@pytest.mark.parametrize(
    ("override", "reached"),
    [
        ("RECURRENCE-ID:20261202T090000Z\n", 3),
        ("RECURRENCE-ID;RANGE=THISANDFUTURE:20261202T090000Z\n", 1),
    ],
)
async def test_a_change_to_the_series_says_how_many_occurrences_it_reaches(account, override, reached) -> None:
    """An override keeps its own text: a series edit reaches the other occurrences only, and the dialog says so."""
    account.put(
        account.work,
        "series.ics",
        ics(
            vevent(UID, ":20261201T090000Z", ":20261201T100000Z", "Series", "RRULE:FREQ=DAILY;COUNT=4\n"),
            vevent(UID, ":20261202T110000Z", ":20261202T120000Z", "Own", override),
        ),
    )
    log = DialogLog()
    async with connect(account.build(NO_UNDO), revision="2025-11-25", answer=log) as client:
        structured(
            await client.call_tool(
                "update_event", {"calendar": account.work, "id": UID, "scope": "series", "summary": "All"}
            )
        )
        shown = structured(await client.call_tool("list_events", {"calendar": account.work, **WHOLE}))["events"]
    assert sum(item["summary"] == "All" for item in shown) == reached
    assert log.messages[0].split("\n")[0] == (
        f"Change 1 field(s) of a recurring event, in {reached} of its 4 occurrences; "
        f"{4 - reached} with changes of their own keep them"
    )
