"""An occurrence id names exactly one occurrence, whatever form the stored RECURRENCE-ID has (RFC 5545 §3.8.4.4).

RFC 5545 §3.8.4.4 gives RECURRENCE-ID DTSTART's value type; a server may still
hold another form (Radicale stores it, and anyone who can send an invitation
can write it). caldav-mcp reads such a value as naming the rule's occurrence
it means (``caldav_mcp.rid_forms``): a DATE on a DATE-TIME series, the
instance on that date in the series' zone; a floating time on a UTC or zoned
series, that wall-clock time in the series' zone. Every EXDATE and new
RECURRENCE-ID it writes is in DTSTART's exact form, so it names one instance.

1. A ``RECURRENCE-ID;VALUE=DATE`` override on a DATE-TIME series replaces the
rule's occurrence of that day: it is listed once, under the id ``UID#20270105``
(its stored RECURRENCE-ID), and deleting it with ``scope: "occurrence"``
(dialog "Delete one occurrence of a recurring event") removes that one
occurrence and no other; the EXDATE written is a UTC DATE-TIME, not a date
that would exclude every instance of the day.

2. A RANGE=THISANDFUTURE override whose RECURRENCE-ID is a DATE or a floating
time on a UTC series: every occurrence of the range has its own id,
``get_event`` with it answers that occurrence, and deleting one of them leaves
every other occurrence at its time with its title.

3. A floating RECURRENCE-ID on a zoned series names that wall-clock time in the
series' zone; the id in DTSTART's form finds the same occurrence, and an
update of it writes no second override.
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
        assert [start[:10] for _, start, _ in before].count("2027-01-05") == 1, before  # it replaces the 12:00
        structured(
            await client.call_tool("delete_event", {"calendar": account.work, "id": chosen, "scope": "occurrence"})
        )
        after = await listed(client, account.work)
    assert log.messages[0].startswith("Delete one occurrence of a recurring event")
    assert after == [item for item in before if item[0] != chosen], (before, after)
    _, stored = account.get(account.work, "date-rid.ics")
    assert "EXDATE:20270105T120000Z" in stored.replace("\r\n ", ""), stored  # DTSTART's form: one instance
    assert "VALUE=DATE" not in stored, stored


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
        assert len(ids) == len(set(ids)), items
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


ZONED_UID = "floating-rid@example.org"
ZONED = ics(
    vevent(
        ZONED_UID,
        ";TZID=Europe/Berlin:20270104T120000",
        ";TZID=Europe/Berlin:20270104T130000",
        "Daily",
        "RRULE:FREQ=DAILY;COUNT=4\n",
    ),
    vevent(
        ZONED_UID,
        ";TZID=Europe/Berlin:20270105T150000",
        ";TZID=Europe/Berlin:20270105T160000",
        "Floating",
        "RECURRENCE-ID:20270105T120000\n",
    ),
)


async def test_a_floating_recurrence_id_on_a_zoned_series_names_that_wall_clock_time(account) -> None:
    account.put(account.work, "floating-rid.ics", ZONED)
    async with connect(account.build(), revision="2025-11-25", answer=DialogLog(accept)) as client:
        items = await listed(client, account.work)
        assert [start[:10] for _, start, _ in items] == ["2027-01-04", "2027-01-05", "2027-01-06", "2027-01-07"]
        assert items[1][1:] == ("2027-01-05T15:00:00+01:00", "Floating"), items
        got = structured(
            await client.call_tool("get_event", {"calendar": account.work, "id": f"{ZONED_UID}#20270105T110000Z"})
        )
        assert (got["start"], got["summary"]) == items[1][1:], got
        structured(
            await client.call_tool(
                "update_event",
                {"calendar": account.work, "id": items[1][0], "scope": "occurrence", "summary": "Renamed"},
            )
        )
        after = await listed(client, account.work)
    assert [(s, t) for _, s, t in after] == [(s, "Renamed" if i == 1 else t) for i, (_, s, t) in enumerate(items)]
    _, stored = account.get(account.work, "floating-rid.ics")
    assert stored.count("RECURRENCE-ID") == 1, stored


async def test_a_new_override_is_written_in_the_series_form(account) -> None:
    account.put(account.work, "floating-rid.ics", ZONED)
    async with connect(account.build(), revision="2025-11-25", answer=DialogLog(accept)) as client:
        items = await listed(client, account.work)
        structured(
            await client.call_tool(
                "update_event",
                {"calendar": account.work, "id": items[2][0], "scope": "occurrence", "summary": "Sixth"},
            )
        )
        structured(
            await client.call_tool("delete_event", {"calendar": account.work, "id": items[3][0], "scope": "occurrence"})
        )
    _, stored = account.get(account.work, "floating-rid.ics")
    unfolded = stored.replace("\r\n ", "")
    assert "RECURRENCE-ID;TZID=Europe/Berlin:20270106T120000" in unfolded, stored
    assert "EXDATE;TZID=Europe/Berlin:20270107T120000" in unfolded, stored
