"""Review of issue 22 (occurrences): an occurrence id names exactly one occurrence, whatever the stored form.

A series stored with a ``RECURRENCE-ID;VALUE=DATE`` override on a DATE-TIME
series (RFC 5545 §3.8.4.4 says the types should match; Radicale stores it, and
anyone who can send an invitation can write it). ``list_events`` lists that
override as its own occurrence with the id ``UID#20270105``, next to the
rule's own ``UID#20270105T120000Z``. Deleting the listed ``UID#20270105`` with
``scope: "occurrence"`` — dialog "Delete one occurrence of a recurring event" —
must remove that one occurrence and no other.
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
