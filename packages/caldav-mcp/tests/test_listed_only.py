"""What a listing parses of an entry (components.listed_only): less text, the same occurrences."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from caldav_mcp.components import calendar_of, listed_only
from caldav_mcp.dav import Resource
from caldav_mcp.errors import BackendError
from caldav_mcp.tools.events_read import _expanded, expand, warm_up

LO, HI = dt.datetime(2026, 1, 1, tzinfo=dt.UTC), dt.datetime(2026, 3, 1, tzinfo=dt.UTC)

CUSTOM_ZONE = (
    "BEGIN:VTIMEZONE\r\nTZID:W. Europe Standard Time\r\nBEGIN:STANDARD\r\nDTSTART:16010101T030000\r\n"
    "TZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nRRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=10\r\nEND:STANDARD\r\n"
    "BEGIN:DAYLIGHT\r\nDTSTART:16010101T020000\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0200\r\n"
    "RRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=3\r\nEND:DAYLIGHT\r\nEND:VTIMEZONE\r\n"
)
BERLIN = (
    "BEGIN:VTIMEZONE\r\nTZID:Europe/Berlin\r\nBEGIN:STANDARD\r\nDTSTART:19701025T030000\r\nTZOFFSETFROM:+0200\r\n"
    "TZOFFSETTO:+0100\r\nRRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n"
)
RICH = (
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Example Corp.//Client 1.0//EN\r\nCALSCALE:GREGORIAN\r\n"
    + CUSTOM_ZONE
    + BERLIN
    + "BEGIN:VEVENT\r\nUID:rich@example.org\r\nDTSTAMP:20260101T000000Z\r\nCREATED:20251201T000000Z\r\n"
    "LAST-MODIFIED:20251202T000000Z\r\nSEQUENCE:2\r\nDTSTART;TZID=W. Europe Standard Time:20260105T090000\r\n"
    "DTEND;TZID=W. Europe Standard Time:20260105T100000\r\nRRULE:FREQ=WEEKLY;BYDAY=MO,WE;UNTIL=20260228T000000Z\r\n"
    "EXDATE;TZID=W. Europe Standard Time:20260107T090000\r\n"
    "SUMMARY:Stand-up with a long summary that is folded over two lines because it is longer than seventy-f\r\n"
    " ive octets\r\nDESCRIPTION:line one\\nline two, and a long one that is folded as well because it goes on\r\n"
    "  and on\r\nLOCATION:Room 1\r\nORGANIZER;CN=Boss:mailto:boss@example.org\r\n"
    'ATTENDEE;CN="Doe, Jane";PARTSTAT=ACCEPTED:mailto:jane@example.org\r\nSTATUS:CONFIRMED\r\n'
    "X-APPLE-TRAVEL-ADVISORY-BEHAVIOR:AUTOMATIC\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT15M\r\n"
    "DESCRIPTION:Reminder\r\nEND:VALARM\r\nEND:VEVENT\r\n"
    "BEGIN:VEVENT\r\nUID:rich@example.org\r\nDTSTAMP:20260101T000000Z\r\n"
    "RECURRENCE-ID;TZID=W. Europe Standard Time:20260112T090000\r\n"
    "DTSTART;TZID=Europe/Berlin:20260112T140000\r\nDURATION:PT30M\r\nSUMMARY:Moved stand-up\r\n"
    "STATUS:CANCELLED\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
)
ALL_DAY = (
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VEVENT\r\nUID:day@example.org\r\nDTSTAMP:20260101T000000Z\r\n"
    "DTSTART;VALUE=DATE:20260110\r\nDTEND;VALUE=DATE:20260112\r\nsummary:lower-case names\r\nEND:VEVENT\r\n"
    "END:VCALENDAR\r\n"
)


def test_it_keeps_what_a_listing_reads_and_drops_the_rest() -> None:
    kept = listed_only(RICH)
    gone = ("DTSTAMP", "CREATED", "LAST-MODIFIED", "DESCRIPTION:line", "LOCATION", "ORGANIZER", "ATTENDEE", "X-APPLE")
    for name in (*gone, "Europe/Berlin\r\nBEGIN"):
        assert name not in kept, name
    # a VALARM is kept whole: icalendar refuses the whole entry for a bad value in one (only a VEVENT's are
    # read as broken)
    assert "BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT15M\r\nDESCRIPTION:Reminder\r\nEND:VALARM\r\n" in kept
    assert "\r\nCALSCALE:" in kept  # the calendar's own: kept (a bad value there refuses the entry)
    assert kept.startswith("BEGIN:VCALENDAR\r\nCALSCALE:")  # but not VERSION and PRODID, text that cannot be bad
    for name in ("PRODID", "VERSION"):
        assert f"{name}:" not in kept, name
    assert CUSTOM_ZONE in kept  # a zone icalendar does not know is kept whole
    assert "seventy-five octets\r\n" in kept  # a kept property keeps its folded lines (unfolded)
    assert "and on" not in kept  # a dropped one loses them
    for name in ("UID", "SEQUENCE", "DTSTART", "DTEND", "DURATION", "RRULE", "EXDATE", "RECURRENCE-ID", "STATUS"):
        assert f"\r\n{name}" in kept, name


HEAD = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\n"
# X-WR-TIMEZONE (a calendar-wide zone some clients write) moves a UTC time into that zone in the recurrence
# library: a listing that drops it gives other start times and another TZID than the whole entry.
WR_ZONE = (
    HEAD + "X-WR-TIMEZONE:Europe/Berlin\r\nBEGIN:VEVENT\r\nUID:wr@example.org\r\nDTSTART:20260105T090000Z\r\n"
    "DURATION:PT1H\r\nRRULE:FREQ=WEEKLY;COUNT=3\r\nRDATE:20260201T090000Z\r\nSUMMARY:s\r\nEND:VEVENT\r\n"
    "BEGIN:VEVENT\r\nUID:wr-single@example.org\r\nDTSTART:20260106T090000Z\r\nSUMMARY:t\r\nEND:VEVENT\r\n"
    "END:VCALENDAR\r\n"
)
# A VALARM that holds a component of its own (written by another client): the whole entry reads that VEVENT
# (an override moving the first occurrence); dropping the VALARM with what it holds would lose it.
HOLDING_ALARM = (
    HEAD + "BEGIN:VEVENT\r\nUID:a@example.org\r\nDTSTART:20260105T090000Z\r\nDURATION:PT1H\r\nSUMMARY:one\r\n"
    "BEGIN:VALARM\r\nTRIGGER:-PT5M\r\nBEGIN:VEVENT\r\nUID:a@example.org\r\nRECURRENCE-ID:20260105T090000Z\r\n"
    "DTSTART:20260107T090000Z\r\nEND:VEVENT\r\nEND:VALARM\r\nRRULE:FREQ=DAILY;COUNT=2\r\nEND:VEVENT\r\n"
    "END:VCALENDAR\r\n"
)
# A VALARM never closed: the whole entry is not valid iCalendar (listed as unreadable), and so is what a listing
# parses of it; the VALARM's removal must not run on to a later END:VALARM and swallow another VEVENT.
UNCLOSED_ALARM = (
    HEAD + "BEGIN:VEVENT\r\nUID:a@example.org\r\nDTSTART:20260105T090000Z\r\nSUMMARY:one\r\nBEGIN:VALARM\r\n"
    "TRIGGER:-PT5M\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:b@example.org\r\nDTSTART:20260106T090000Z\r\n"
    "SUMMARY:two\r\nBEGIN:VALARM\r\nEND:VALARM\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
)

# Folds as icalendar undoes them (line breaks before a space or tab, blank lines between too): one inside a kept
# property's name, and blank lines before a continuation of a dropped one, which would otherwise join the kept
# line before it (LF line ends too).
FOLDS = (
    HEAD + "BEGIN:VEVENT\r\nUID:f@example.org\r\nDTSTART:20260105T090000Z\r\nSUMM\r\n ARY:folded name\r\n"
    "STATUS:TENTATIVE\r\nDESCRIPTION:foo\r\n\r\n more\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:g@example.org\r\n"
    "DTSTART:20260106T090000Z\nSUMMARY:x\nX-A:foo\n\n\tRRULE:FREQ=DAILY;COUNT=3\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
)


# VERSION and PRODID as icalendar reads them without complaint (an empty or odd text value, lower-case names) are
# left out of what a listing parses; with parameters, or after other lines, they are kept.
ODD_IDENTITY = (
    'BEGIN:VCALENDAR\r\nversion:\r\nPRODID:a\\q;b,c:"d\\\r\nPRODID;X-A=1:kept\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\n'
    "UID:o@example.org\r\nDTSTART:20260105T090000Z\r\nSUMMARY:odd\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
)


def test_the_calendars_version_and_prodid_are_left_out_only_right_after_its_begin() -> None:
    kept = listed_only(ODD_IDENTITY)
    assert kept.startswith("BEGIN:VCALENDAR\r\nPRODID;X-A=1:kept\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\n")
    before = "VERSION:2.0\r\n" + ALL_DAY
    assert listed_only(before).startswith(before[:40])  # a line before the VCALENDAR stays (and is refused)


@pytest.mark.parametrize(
    "text",
    [RICH, ALL_DAY, WR_ZONE, HOLDING_ALARM, FOLDS, ODD_IDENTITY],
    ids=["series", "all-day", "x-wr-timezone", "alarm-holding-an-override", "folds", "odd-version-and-prodid"],
)
def test_a_listing_finds_the_same_occurrences_in_less_text(text: str) -> None:
    entry = Resource(href="/cal/a.ics", etag='"1"', data=text)
    whole = _expanded(calendar_of(entry, times_only=True), LO, HI, None)
    listed = expand([entry], LO, HI, unreadable=[], ordered=False)
    assert listed == whole
    assert whole  # the entries have occurrences in the window


def test_the_warm_up_expands_its_made_up_entries() -> None:
    # a weekly series on January's four Mondays less one EXDATE (3), a timed event and an all-day one; twice
    assert warm_up() == warm_up() == 5


# icalendar refuses a whole entry for a bad value in a VALARM, a VJOURNAL or among the VCALENDAR's own properties,
# or a line outside it (only inside a VEVENT is a bad value read as broken): the listing reports such an entry
# unreadable as before.
REFUSED = [
    UNCLOSED_ALARM,
    HEAD + "BEGIN:VEVENT\r\nUID:a@example.org\r\nDTSTART:20260105T090000Z\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\n"
    "TRIGGER:soon\r\nEND:VALARM\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
    HEAD + "BEGIN:VJOURNAL\r\nUID:j@example.org\r\nDTSTAMP:not a time\r\nEND:VJOURNAL\r\nBEGIN:VEVENT\r\n"
    "UID:a@example.org\r\nDTSTART:20260105T090000Z\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
    HEAD + "DTSTAMP:not a time\r\nBEGIN:VEVENT\r\nUID:a@example.org\r\nDTSTART:20260105T090000Z\r\nEND:VEVENT\r\n"
    "END:VCALENDAR\r\n",
    "VERSION:2.0\r\n" + HEAD + "BEGIN:VEVENT\r\nUID:a@example.org\r\nDTSTART:20260105T090000Z\r\nEND:VEVENT\r\n"
    "END:VCALENDAR\r\n",
    "X-BEFORE:1\r\n" + HEAD + "BEGIN:VEVENT\r\nUID:a@example.org\r\nDTSTART:20260105T090000Z\r\nEND:VEVENT\r\n"
    "END:VCALENDAR\r\n",
    HEAD + "BEGIN:VEVENT\r\nUID:a@example.org\r\nDTSTART:20260105T090000Z\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    "X-AFTER:1\r\n",
]


@pytest.mark.parametrize(
    "text",
    REFUSED,
    ids=[
        "unclosed-alarm",
        "bad-alarm-trigger",
        "bad-journal-value",
        "bad-calendar-property",
        "version-before",
        "line-before",
        "line-after",
    ],
)
def test_an_entry_the_whole_parse_refuses_is_listed_unreadable(text: str) -> None:
    entry = Resource(href="/cal/a.ics", etag='"1"', data=text)
    with pytest.raises(BackendError):
        _expanded(calendar_of(entry, times_only=True), LO, HI, None)
    unreadable: list[Any] = []
    assert expand([entry], LO, HI, unreadable=unreadable, ordered=False) == []
    assert len(unreadable) == 1


@pytest.mark.parametrize("name", ["VEVENT", "VTIMEZONE"])
def test_many_unclosed_components_are_kept_as_they_are(name: str) -> None:
    # Each unclosed BEGIN is looked at up to the next BEGIN or END only: 5,000 of them in half a megabyte were
    # searched to the end of the text each (quadratic, about ten seconds) by a lazy match to the next END.
    lines = "".join(f"BEGIN:{name}\r\nX-PAD:{'a' * 80}\r\n" for _ in range(5000))
    text = HEAD + lines + "END:VCALENDAR\r\n"
    assert listed_only(text) == "BEGIN:VCALENDAR\r\n" + lines + "END:VCALENDAR\r\n"  # VERSION, PRODID left out
