"""An occurrence id names exactly one occurrence, also inside a RANGE=THISANDFUTURE override (RFC 5545 §3.8.4.4).

The series of the reproduction: daily from 4 January 2027 at 12:00 UTC,
``COUNT=6`` (the 4th to the 9th), with an override
``RECURRENCE-ID;RANGE=THISANDFUTURE:20270106T120000Z`` that moves the 6th and
every later occurrence to 14:00 and renames them "Moved".
"""

from __future__ import annotations

import pytest

from approval_core.testing import DialogLog, accept, connect
from caldav_helpers import ics, structured, vevent

pytestmark = pytest.mark.anyio

UID = "range@example.org"
WINDOW = {"start": "2027-01-01", "end": "2027-02-01"}


def range_series(uid: str = UID) -> str:
    return ics(
        vevent(uid, ":20270104T120000Z", ":20270104T130000Z", "Daily", "RRULE:FREQ=DAILY;COUNT=6\n"),
        vevent(
            uid,
            ":20270106T140000Z",
            ":20270106T150000Z",
            "Moved",
            "RECURRENCE-ID;RANGE=THISANDFUTURE:20270106T120000Z\nLOCATION:Room 2\n",
        ),
    )


async def listed(client, calendar: str) -> list[tuple[str, str, str]]:
    """(id, start, summary) of every occurrence in January 2027."""
    result = structured(await client.call_tool("list_events", {"calendar": calendar, **WINDOW}))
    return [(item["id"], item["start"], item["summary"]) for item in result["events"]]


EXPECTED = [
    (f"{UID}#20270104T120000Z", "2027-01-04T12:00:00+00:00", "Daily"),
    (f"{UID}#20270105T120000Z", "2027-01-05T12:00:00+00:00", "Daily"),
    (f"{UID}#20270106T120000Z", "2027-01-06T14:00:00+00:00", "Moved"),
    (f"{UID}#20270107T120000Z", "2027-01-07T14:00:00+00:00", "Moved"),
    (f"{UID}#20270108T120000Z", "2027-01-08T14:00:00+00:00", "Moved"),
    (f"{UID}#20270109T120000Z", "2027-01-09T14:00:00+00:00", "Moved"),
]


async def test_every_occurrence_of_a_range_has_its_own_id_and_get_event_reaches_it(account) -> None:
    account.put(account.work, "range.ics", range_series())
    async with connect(account.build(), revision="2026-07-28") as client:
        assert await listed(client, account.work) == EXPECTED
        for id_, start, summary in EXPECTED:
            got = structured(await client.call_tool("get_event", {"calendar": account.work, "id": id_}))
            assert (got["id"], got["start"], got["summary"]) == (id_, start, summary)


async def test_deleting_one_occurrence_inside_a_range_removes_only_it(account) -> None:
    account.put(account.work, "range.ics", range_series())
    log = DialogLog(accept)
    async with connect(account.build(), revision="2025-11-25", answer=log) as client:
        structured(
            await client.call_tool(
                "delete_event", {"calendar": account.work, "id": f"{UID}#20270108T120000Z", "scope": "occurrence"}
            )
        )
        assert await listed(client, account.work) == [item for item in EXPECTED if "0108" not in item[0]]
    assert log.messages[0].startswith("Delete one occurrence of a recurring event")


async def test_deleting_the_first_occurrence_of_a_range_keeps_the_range_on_the_others(account) -> None:
    account.put(account.work, "range.ics", range_series())
    async with connect(account.build(), revision="2025-11-25", answer=DialogLog(accept)) as client:
        structured(
            await client.call_tool(
                "delete_event", {"calendar": account.work, "id": f"{UID}#20270106T120000Z", "scope": "occurrence"}
            )
        )
        assert await listed(client, account.work) == [item for item in EXPECTED if "0106" not in item[0]]


@pytest.mark.parametrize("day", ["20270106", "20270108"])
async def test_updating_one_occurrence_of_a_range_changes_only_it(account, day) -> None:
    account.put(account.work, "range.ics", range_series())
    async with connect(account.build(), revision="2026-07-28") as client:
        id_ = f"{UID}#{day}T120000Z"
        written = structured(
            await client.call_tool(
                "update_event", {"calendar": account.work, "id": id_, "scope": "occurrence", "summary": "Only this"}
            )
        )
        assert written["id"] == id_
        expected = [(i, s, "Only this" if i == id_ else summary) for i, s, summary in EXPECTED]
        assert await listed(client, account.work) == expected
        for other, start, _ in EXPECTED[2:]:
            got = structured(await client.call_tool("get_event", {"calendar": account.work, "id": other}))
            assert (got["start"], got["location"]) == (start, "Room 2")


async def test_moving_one_occurrence_of_a_range_moves_only_it(account) -> None:
    account.put(account.work, "range.ics", range_series())
    async with connect(account.build(), revision="2026-07-28") as client:
        id_ = f"{UID}#20270106T120000Z"
        structured(
            await client.call_tool(
                "update_event",
                {"calendar": account.work, "id": id_, "scope": "occurrence", "start": "2027-01-06T16:00:00Z"},
            )
        )
        expected = [(i, "2027-01-06T16:00:00+00:00" if i == id_ else s, summary) for i, s, summary in EXPECTED]
        assert await listed(client, account.work) == expected
