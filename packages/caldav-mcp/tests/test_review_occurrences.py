"""Review of issue 22 (occurrences): an occurrence id names exactly one occurrence, whatever the stored form.

1. A series stored with a ``RECURRENCE-ID;VALUE=DATE`` override on a DATE-TIME
series (RFC 5545 §3.8.4.4 says the types should match; Radicale stores it, and
anyone who can send an invitation can write it). ``list_events`` lists that
override as its own occurrence with the id ``UID#20270105``, next to the
rule's own ``UID#20270105T120000Z``. Deleting the listed ``UID#20270105`` with
``scope: "occurrence"`` — dialog "Delete one occurrence of a recurring event" —
must remove that one occurrence and no other: today the 12:00 occurrence of the 5th goes with it.

2. The issue's RANGE=THISANDFUTURE reproduction with the override's RECURRENCE-ID written as a DATE or as a
floating time (another form than the UTC DTSTART): every occurrence of the range is listed with the same
id ``UID#20270106...``, get_event with it answers the 7th for all of them, and a "Delete one occurrence"
yes for the 8th removes the whole range override: the 6th is gone, the 7th to the 9th move back to 12:00 and
lose their title, and (DATE form) an extra listed occurrence disappears.
"""

from __future__ import annotations

import pytest

from approval_core.testing import DialogLog, accept, connect
from caldav_helpers import ics, structured, vevent

pytestmark = pytest.mark.anyio

UID = "date-rid@example.org"
WINDOW = {"start": "2027-01-01", "end": "2027-02-01"}

SERIES = ics(
    vevent(UID, ":20270104T120000Z", ":20270104T130000Z", "Daily", "RRULE:FREQ=DAILY;COUNT=4\n"),
    vevent(UID, ":20270105T150000Z", ":20270105T160000Z", "DateRid", "RECURRENCE-ID;VALUE=DATE:20270105\n"),
)


async def listed(client, calendar: str) -> list[tuple[str, str, str]]:
    result = structured(await client.call_tool("list_events", {"calendar": calendar, **WINDOW}))
    return [(item["id"], item["start"], item["summary"]) for item in result["events"]]


async def test_deleting_one_listed_occurrence_removes_only_that_occurrence(account) -> None:
    account.put(account.work, "date-rid.ics", SERIES)
    log = DialogLog(accept)
    async with connect(account.build(), revision="2025-11-25", answer=log) as client:
        before = await listed(client, account.work)
        chosen = f"{UID}#20270105"
        assert chosen in [id_ for id_, _, _ in before], before  # the id is one list_events gives
        structured(
            await client.call_tool("delete_event", {"calendar": account.work, "id": chosen, "scope": "occurrence"})
        )
        after = await listed(client, account.work)
    assert log.messages[0].startswith("Delete one occurrence of a recurring event")
    assert after == [item for item in before if item[0] != chosen], (before, after)


RANGE_UID = "date-range@example.org"


def range_series(recurrence_id: str) -> str:
    """The issue's RANGE=THISANDFUTURE reproduction, its RECURRENCE-ID written in another form than DTSTART's."""
    return ics(
        vevent(RANGE_UID, ":20270104T120000Z", ":20270104T130000Z", "Daily", "RRULE:FREQ=DAILY;COUNT=6\n"),
        vevent(
            RANGE_UID,
            ":20270106T140000Z",
            ":20270106T150000Z",
            "Moved",
            f"RECURRENCE-ID;RANGE=THISANDFUTURE{recurrence_id}\n",
        ),
    )


FORMS = {
    "date": ";VALUE=DATE:20270106",  # a DATE on a DATE-TIME series
    "floating": ":20270106T120000",  # a floating time on a UTC series
}


@pytest.mark.parametrize("form", list(FORMS))
async def test_every_occurrence_of_a_range_override_has_its_own_id(account, form: str) -> None:
    account.put(account.work, "date-range.ics", range_series(FORMS[form]))
    async with connect(account.build(), revision="2026-07-28") as client:
        items = await listed(client, account.work)
        ids = [id_ for id_, _, _ in items]
        assert len(ids) == len(set(ids)), items  # today: every occurrence of the range carries the range's own id
        for id_, start, summary in items:
            got = structured(await client.call_tool("get_event", {"calendar": account.work, "id": id_}))
            assert (got["start"], got["summary"]) == (start, summary), (id_, got["start"])


@pytest.mark.parametrize("form", list(FORMS))
async def test_deleting_one_occurrence_of_a_range_override_leaves_the_others(account, form: str) -> None:
    account.put(account.work, "date-range.ics", range_series(FORMS[form]))
    log = DialogLog(accept)
    async with connect(account.build(), revision="2025-11-25", answer=log) as client:
        before = await listed(client, account.work)
        index = next(i for i, item in enumerate(before) if item[1].startswith("2027-01-08"))
        chosen = before[index]
        structured(
            await client.call_tool("delete_event", {"calendar": account.work, "id": chosen[0], "scope": "occurrence"})
        )
        after = await listed(client, account.work)
    assert log.messages[0].startswith("Delete one occurrence of a recurring event")
    # one occurrence gone; every other one still at its time with its title
    assert [(s, t) for _, s, t in after] == [(s, t) for i, (_, s, t) in enumerate(before) if i != index], (
        before,
        after,
    )
