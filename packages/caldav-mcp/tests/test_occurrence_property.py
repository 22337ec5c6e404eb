"""Every listed occurrence id reaches that occurrence and no other, over generated series (hypothesis).

Each example is a series stored by plain PUT on the real Radicale: a daily or
weekly RRULE with COUNT (or only RDATEs), extra RDATEs at other times,
EXDATEs, and overrides with and without ``RANGE=THISANDFUTURE`` (RFC 5545
§3.8.4.4), some moved, one possibly outside the rule's set; in UTC or in a
zone, across a daylight-saving change. An override's RECURRENCE-ID is written
in DTSTART's form, or (as a server may hold it) as a DATE naming the first
instance of its day, or as a floating time naming that wall-clock time in the
series' zone: each names the same occurrence (see ``caldav_mcp.rid_forms``).
For each example:

* every id ``list_events`` gives is different, and ``get_event`` with it
  answers the same start and summary;
* the series' occurrence count (what a dialog states) is the number listed;
* ``update_event`` of one occurrence changes that occurrence's summary and
  nothing else in the listing; ``delete_event`` of another removes exactly it.

Examples: 12, derandomized (the same ones on every run), no deadline.
"""

from __future__ import annotations

import datetime as dt
import itertools
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from approval_core.testing import DialogLog, accept, connect
from caldav_helpers import structured

pytestmark = pytest.mark.anyio

WINDOW = {"start": "2027-03-01", "end": "2027-08-01"}
ZONE = "Europe/Berlin"
_uids = itertools.count()


@dataclass
class Series:
    """One generated series, as the lines of its VCALENDAR."""

    zoned: bool
    start: dt.datetime
    rule: str | None
    instances: list[dt.datetime]
    rdates: list[dt.datetime]
    exdates: list[dt.datetime]
    # rid, range, hours, name, form of the RECURRENCE-ID ("same", "date" or "floating")
    overrides: list[tuple[dt.datetime, bool, int, str, str]] = field(default_factory=lambda: [])
    edit: int = 0
    drop: int = 0

    def stamp(self, name: str, value: dt.datetime, extra: str = "") -> str:
        if self.zoned:
            return f"{name};TZID={ZONE}{extra}:{value:%Y%m%dT%H%M%S}"
        return f"{name}{extra}:{value:%Y%m%dT%H%M%S}Z"

    def text(self, uid: str) -> str:
        lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//tests//EN"]
        lines += ["BEGIN:VEVENT", f"UID:{uid}", "DTSTAMP:20270101T000000Z", "SUMMARY:Series"]
        lines += [self.stamp("DTSTART", self.start), self.stamp("DTEND", self.start + dt.timedelta(hours=1))]
        if self.rule:
            lines.append(f"RRULE:{self.rule}")
        lines += [self.stamp("RDATE", value) for value in self.rdates]
        lines += [self.stamp("EXDATE", value) for value in self.exdates]
        lines.append("END:VEVENT")
        for rid, ranged, hours, name, form in self.overrides:
            moved = rid + dt.timedelta(hours=hours)
            lines += ["BEGIN:VEVENT", f"UID:{uid}", "DTSTAMP:20270101T000000Z", f"SUMMARY:{name}"]
            extra = ";RANGE=THISANDFUTURE" if ranged else ""
            if form == "date":
                lines.append(f"RECURRENCE-ID{extra};VALUE=DATE:{rid:%Y%m%d}")
            elif form == "floating":
                lines.append(f"RECURRENCE-ID{extra}:{rid:%Y%m%dT%H%M%S}")
            else:
                lines.append(self.stamp("RECURRENCE-ID", rid, extra))
            lines += [self.stamp("DTSTART", moved), self.stamp("DTEND", moved + dt.timedelta(hours=1))]
            lines.append("END:VEVENT")
        lines.append("END:VCALENDAR")
        return "\r\n".join(lines) + "\r\n"


@st.composite
def series(draw: st.DrawFn) -> Series:
    # 20-30 March 2027 crosses the change to summer time in Europe/Berlin (28 March).
    start = dt.datetime(2027, 3, draw(st.integers(20, 30)), draw(st.integers(7, 18)))
    freq = draw(st.sampled_from(["DAILY", "WEEKLY", None]))
    count = draw(st.integers(2, 7)) if freq else 1
    step = dt.timedelta(days=1 if freq == "DAILY" else 7)
    rule_starts = [start + step * k for k in range(count)]
    extra = draw(st.lists(st.integers(1, 30), max_size=2, unique=True))
    rdates = [start + dt.timedelta(days=days, hours=3) for days in extra]
    instances = sorted(rule_starts + rdates)
    excluded = draw(st.lists(st.sampled_from(instances), max_size=min(2, len(instances) - 1), unique=True))
    kept = [value for value in instances if value not in excluded]
    chosen = draw(st.lists(st.sampled_from(kept), max_size=3, unique=True))
    made = Series(
        zoned=draw(st.sampled_from([True, False])),
        start=start,
        rule=f"FREQ={freq};COUNT={count}" if freq else None,
        instances=instances,
        rdates=rdates,
        exdates=excluded,
    )
    for index, rid in enumerate(chosen):
        ranged = draw(st.booleans())
        hours = draw(st.sampled_from([-2, 0, 1, 2, 5]))
        first_of_day = min(value for value in kept if value.date() == rid.date()) == rid
        form = draw(st.sampled_from(["same", "date", "floating"] if first_of_day else ["same", "floating"]))
        made.overrides.append((rid, ranged, hours, f"{'Range' if ranged else 'One'} {index}", form))
    if draw(st.booleans()):
        made.overrides.append((start + dt.timedelta(days=60), False, 0, "Outside", "same"))
    made.edit = draw(st.integers(0, 1000))
    made.drop = draw(st.integers(0, 1000))
    return made


async def listing(client, calendar: str, uid: str) -> list[tuple[str, str, str]]:
    result = structured(await client.call_tool("list_events", {"calendar": calendar, **WINDOW}))
    return [(item["id"], item["start"], item["summary"]) for item in result["events"] if item["uid"] == uid]


@settings(
    max_examples=12,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(made=series())
async def test_every_listed_id_reaches_its_own_occurrence_and_no_other(account, made: Series) -> None:
    uid = f"generated-{next(_uids)}@example.org"
    account.put(account.work, f"{uid}.ics", made.text(uid))
    async with connect(account.build(), revision="2025-11-25", answer=DialogLog(accept)) as client:
        listed = await listing(client, account.work, uid)
        assert listed, made.text(uid)
        assert len({id_ for id_, _, _ in listed}) == len(listed), listed
        for id_, start, summary in listed:
            got = structured(await client.call_tool("get_event", {"calendar": account.work, "id": id_}))
            assert (got["id"], got["start"], got["summary"]) == (id_, start, summary), made.text(uid)
        whole = structured(await client.call_tool("get_event", {"calendar": account.work, "id": uid}))
        assert whole["occurrences"] == len(listed), made.text(uid)

        edited = listed[made.edit % len(listed)][0]
        structured(
            await client.call_tool(
                "update_event", {"calendar": account.work, "id": edited, "scope": "occurrence", "summary": "Edited"}
            )
        )
        after_edit = await listing(client, account.work, uid)
        assert after_edit == [(i, s, "Edited" if i == edited else name) for i, s, name in listed], made.text(uid)

        if len(listed) > 1:
            dropped = after_edit[made.drop % len(after_edit)][0]
            structured(
                await client.call_tool("delete_event", {"calendar": account.work, "id": dropped, "scope": "occurrence"})
            )
            after_drop = await listing(client, account.work, uid)
            assert after_drop == [item for item in after_edit if item[0] != dropped], made.text(uid)
