"""A plain series listed without the recurrence library's copies gives exactly the library's occurrences.

``caldav_mcp.plain_series`` computes the occurrences of the commonest stored
series (one RRULE of FREQ, INTERVAL, COUNT, UNTIL, WKST and plain BYDAY, with
EXDATEs) itself, starting a DAILY or WEEKLY rule without COUNT just before the
window. Over generated series (all-day, floating, UTC and zoned starts, some
in a daylight-saving gap or fold, in zones with half-hour changes; DTEND,
DURATION or neither; COUNT, UNTIL or neither; EXDATEs on and off the rule;
starts decades before the window) and windows, every occurrence it lists is
the one recurring-ical-events lists, field for field, and no other.

Examples: 400, derandomized (the same ones on every run), no deadline.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from approval_core.testing import connect
from caldav_helpers import structured
from caldav_mcp.ical import Unreadable, occurrences, parse_calendar
from caldav_mcp.plain_series import plain_series
from caldav_mcp.views import occurrence, occurrences_at, sort_key
from test_listings import WINDOW, fill, through

ZONES = ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu"]
DAYS = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]


@dataclass
class Generated:
    """One series as iCalendar text, and the window it is listed in."""

    text: str
    lo: dt.datetime
    hi: dt.datetime


def stamp(kind: str, value: dt.datetime) -> str:
    """``;VALUE=DATE:20270101``, ``:20270101T090000`` and so on: the parameters and value of a time property."""
    if kind == "date":
        return f";VALUE=DATE:{value:%Y%m%d}"
    if kind == "floating":
        return f":{value:%Y%m%dT%H%M%S}"
    if kind == "utc":
        return f":{value:%Y%m%dT%H%M%S}Z"
    return f";TZID={kind}:{value:%Y%m%dT%H%M%S}"


@st.composite
def generated(draw: st.DrawFn) -> Generated:
    kind = draw(st.sampled_from(["date", "floating", "utc", *ZONES]))
    start = dt.datetime(
        draw(st.integers(1970, 2027)),
        draw(st.integers(1, 12)),
        draw(st.integers(1, 28)),
        draw(st.integers(0, 23)),
        draw(st.sampled_from([0, 15, 30, 45])),
    )
    if kind == "date":
        start = start.replace(hour=0, minute=0)
    freq = draw(st.sampled_from(["DAILY", "WEEKLY", "MONTHLY", "YEARLY"]))
    interval = draw(st.integers(1, 3))
    parts = [f"FREQ={freq}"]
    if interval > 1 or draw(st.booleans()):
        parts.append(f"INTERVAL={interval}")
    if freq in {"DAILY", "WEEKLY"} and draw(st.booleans()):
        parts.append("BYDAY=" + ",".join(draw(st.lists(st.sampled_from(DAYS), min_size=1, max_size=4, unique=True))))
    if draw(st.booleans()):
        parts.append(f"WKST={draw(st.sampled_from(['MO', 'SU', 'WE']))}")
    ending = draw(st.sampled_from(["none", "count", "until"]))
    if ending == "count":
        parts.append(f"COUNT={draw(st.integers(1, 60))}")
    elif ending == "until":
        until = start + dt.timedelta(days=draw(st.integers(0, 3 * 365)), hours=draw(st.integers(0, 23)))
        if kind == "date":
            parts.append(f"UNTIL={until:%Y%m%d}")
        elif kind == "floating":
            parts.append(f"UNTIL={until:%Y%m%dT%H%M%S}")
        else:
            parts.append(f"UNTIL={until:%Y%m%dT%H%M%S}Z")
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//tests//EN", "BEGIN:VEVENT", "UID:plain@example.org"]
    lines += ["DTSTAMP:20260101T000000Z", "SUMMARY:Plain", f"DTSTART{stamp(kind, start)}", f"RRULE:{';'.join(parts)}"]
    length = draw(st.sampled_from(["dtend", "duration", "none"]))
    if length == "dtend":
        days = draw(st.integers(1, 3)) if kind == "date" else 0
        hours = 0 if kind == "date" else draw(st.integers(0, 50))
        lines.append(f"DTEND{stamp(kind, start + dt.timedelta(days=days, hours=hours))}")
    elif length == "duration":
        lengths = ["P1D", "P2D", "PT0S"] if kind == "date" else ["PT1H", "PT90M", "P1D", "PT0S"]
        lines.append(f"DURATION:{draw(st.sampled_from(lengths))}")
    lo = dt.datetime.combine(
        start.date() + dt.timedelta(days=draw(st.integers(-30, 20 * 365))), dt.time(draw(st.integers(0, 23))), dt.UTC
    )
    hi = lo + dt.timedelta(hours=draw(st.integers(1, 366 * 24)))
    # EXDATEs on the rule's periods from a little before the window (most of them instances), the first
    # one (DTSTART itself) and an hour off (no instance)
    months = {"DAILY": 0, "WEEKLY": 0, "MONTHLY": 1, "YEARLY": 12}[freq] * interval
    days = {"DAILY": 1, "WEEKLY": 7, "MONTHLY": 0, "YEARLY": 0}[freq] * interval
    near = max((lo.replace(tzinfo=None) - start).days // (days or 30 * months), 0)
    for offset in draw(st.lists(st.sampled_from([0, near, near + 1, near + 2, near + 5]), max_size=3, unique=True)):
        value = start + dt.timedelta(days=days * offset)
        if months:
            year, month = divmod(start.month - 1 + months * offset, 12)
            value = value.replace(year=start.year + year, month=month + 1)
        skew = dt.timedelta(hours=1 if kind != "date" and draw(st.integers(0, 3)) == 0 else 0)
        lines.append(f"EXDATE{stamp(kind, value + skew)}")
    lines += ["END:VEVENT", "END:VCALENDAR"]
    return Generated("\r\n".join(lines) + "\r\n", lo, hi)


def by_library(text: str, lo: dt.datetime, hi: dt.datetime) -> list[object] | str:
    try:
        found = [occurrence(c, recurring=True) for c in occurrences(parse_calendar(text), "VEVENT", lo, hi)]
    except Unreadable as exc:
        return exc.reason
    return sorted(found, key=sort_key)


def by_plain(text: str, lo: dt.datetime, hi: dt.datetime) -> list[object] | str | None:
    cal = parse_calendar(text)
    try:
        plain = plain_series(cal, "VEVENT", lo, hi)
    except Unreadable as exc:
        return exc.reason
    return None if plain is None else sorted(occurrences_at(plain.component, plain.spans), key=sort_key)


@settings(max_examples=400, derandomize=True, deadline=None, database=None)
@given(made=generated())
def test_a_plain_series_lists_the_library_s_occurrences_exactly(made: Generated) -> None:
    ours = by_plain(made.text, made.lo, made.hi)
    assert ours is not None, made.text  # every generated series is plain
    assert ours == by_library(made.text, made.lo, made.hi), (made.text, made.lo, made.hi)


def series(rule: str, extra: str = "", start: str = "DTSTART;TZID=Europe/Berlin:19000105T090000") -> str:
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//tests//EN", "BEGIN:VEVENT", "UID:s@example.org"]
    lines += ["DTSTAMP:20260101T000000Z", "SUMMARY:S", start, "DTEND;TZID=Europe/Berlin:19000105T100000"]
    lines += [f"RRULE:{rule}", *([extra] if extra else []), "END:VEVENT", "END:VCALENDAR"]
    return "\r\n".join(lines) + "\r\n"


MONTH = (dt.datetime(2026, 10, 1, tzinfo=dt.UTC), dt.datetime(2026, 11, 1, tzinfo=dt.UTC))  # summer time ends


@pytest.mark.parametrize("rule", ["FREQ=DAILY", "FREQ=WEEKLY;INTERVAL=3;BYDAY=MO,FR", "FREQ=DAILY;INTERVAL=7"])
def test_a_series_begun_long_before_the_window_is_listed_as_the_library_lists_it(rule: str) -> None:
    text = series(rule)
    ours = by_plain(text, *MONTH)
    assert isinstance(ours, list)
    assert ours
    assert ours == by_library(text, *MONTH)


@pytest.mark.parametrize(
    ("rule", "extra"),
    [
        ("FREQ=HOURLY", ""),
        ("FREQ=MONTHLY;BYMONTHDAY=1", ""),
        ("FREQ=MONTHLY;BYDAY=1MO", ""),
        ("FREQ=WEEKLY;BYSETPOS=1;BYDAY=MO,TU", ""),
        ("FREQ=DAILY", "RDATE;TZID=Europe/Berlin:20261010T120000"),
        ("FREQ=DAILY", "EXDATE;VALUE=DATE:20261010"),  # a date EXDATE on a date-time series: the library's own
    ],
)
def test_anything_but_a_plain_series_is_left_to_the_library(rule: str, extra: str) -> None:
    assert by_plain(series(rule, extra), *MONTH) is None


def test_a_changed_occurrence_leaves_the_series_to_the_library() -> None:
    text = series("FREQ=DAILY").replace(
        "END:VCALENDAR",
        "BEGIN:VEVENT\r\nUID:s@example.org\r\nDTSTAMP:20260101T000000Z\r\nSUMMARY:Moved\r\n"
        "RECURRENCE-ID;TZID=Europe/Berlin:20261010T090000\r\nDTSTART;TZID=Europe/Berlin:20261010T150000\r\n"
        "DTEND;TZID=Europe/Berlin:20261010T160000\r\nEND:VEVENT\r\nEND:VCALENDAR",
    )
    assert by_plain(text, *MONTH) is None


def bare(*props: str, uid: str = "x@example.org") -> str:
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//tests//EN", "BEGIN:VEVENT", f"UID:{uid}"]
    lines += ["DTSTAMP:20260101T000000Z", "SUMMARY:S", *props, "END:VEVENT", "END:VCALENDAR"]
    return "\r\n".join(lines) + "\r\n"


DECEMBER = (dt.datetime(2026, 12, 1, tzinfo=dt.UTC), dt.datetime(2026, 12, 31, 23, tzinfo=dt.UTC))


@pytest.mark.parametrize(
    ("text", "lo", "hi"),
    [
        (bare("DTSTART;TZID=Europe/Berlin:20200105T090000", "RRULE:FREQ=WEEKLY;INTERVAL=999999999"), *MONTH),
        (bare("DTSTART:20200101T090000Z", "RRULE:FREQ=WEEKLY;INTERVAL=200000000"), *DECEMBER),
        (bare("DTSTART:20200101T090000Z", "DURATION:P999999D", "RRULE:FREQ=WEEKLY"), *DECEMBER),
        (
            bare("DTSTART;TZID=Asia/Kathmandu:99991231T090000", "DURATION:P2D", "RRULE:FREQ=DAILY"),
            dt.datetime(9999, 12, 1, tzinfo=dt.UTC),
            dt.datetime(9999, 12, 31, 23, tzinfo=dt.UTC),
        ),
        (
            bare("DTSTART:00010101T000000Z", "RRULE:FREQ=DAILY"),
            dt.datetime(1, 1, 1, tzinfo=dt.UTC),
            dt.datetime(1, 1, 5, tzinfo=dt.UTC),
        ),
        (
            bare("DTSTART;TZID=Europe/Berlin:20200105T090000", "RRULE:FREQ=DAILY"),
            dt.datetime(1, 1, 1, tzinfo=dt.UTC),
            dt.datetime(1, 1, 5, tzinfo=dt.UTC),
        ),
    ],
    ids=[
        "interval-1e9",
        "interval-2e8",
        "duration-999999-days",
        "start-9999-kathmandu",
        "start-year-1",
        "window-year-1",
    ],
)
def test_times_near_the_ends_of_the_calendar_are_left_to_the_library(
    text: str, lo: dt.datetime, hi: dt.datetime
) -> None:
    ours = by_plain(text, lo, hi)  # no OverflowError: the library judges these (unreadable, or its occurrences)
    assert ours is None or ours == by_library(text, lo, hi)


@pytest.mark.anyio
async def test_one_entry_with_a_period_of_millions_of_years_costs_nothing_else_in_its_window(account) -> None:
    fill(account, 2)
    # Its DTSTART is inside the window, so the server's time-range filter answers it.
    huge = bare("DTSTART:20261205T090000Z", "RRULE:FREQ=WEEKLY;INTERVAL=999999999", uid="huge@example.org")
    account.put(account.work, "huge.ics", huge)
    async with connect(through(account, account.server.url), revision="2026-07-28") as client:
        result = await client.call_tool("list_events", {"calendar": account.work, **WINDOW, "limit": 10})
    assert not result.is_error, result.content[0].text
    assert [e["uid"] for e in structured(result)["events"]] == ["e00", "e01", "huge@example.org"]
