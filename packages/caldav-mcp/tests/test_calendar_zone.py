"""A calendar's X-WR-TIMEZONE: every way a listing expands an entry gives the recurrence library's times.

Some clients (and calendar exports) name a calendar-wide zone in ``X-WR-TIMEZONE``.
recurring-ical-events reads floating times in that zone and gives UTC times in
it; the listing's own fast paths (``components.single_zoned`` for one plain
zoned event, ``plain_series`` for a plain series) leave such an entry to the
library, so that a floating series is placed in time like a floating single
event of the same calendar, and every occurrence is the library's.
"""

from __future__ import annotations

import datetime as dt

import icalendar
import pytest
import recurring_ical_events

from caldav_mcp.dav import Resource
from caldav_mcp.tools.events_read import expand

LO, HI = dt.datetime(2026, 1, 1, tzinfo=dt.UTC), dt.datetime(2026, 3, 1, tzinfo=dt.UTC)
HEAD = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nX-WR-TIMEZONE:America/New_York\r\n"
EVENTS = {
    "floating-single": "DTSTART:20260105T090000\r\nDTEND:20260105T100000\r\n",
    "utc-single": "DTSTART:20260105T090000Z\r\nDTEND:20260105T100000Z\r\n",
    "zoned-single": "DTSTART;TZID=Europe/Berlin:20260105T090000\r\nDTEND;TZID=Europe/Berlin:20260105T100000\r\n",
    "floating-series": "DTSTART:20260105T090000\r\nDTEND:20260105T100000\r\nRRULE:FREQ=WEEKLY;COUNT=3\r\n",
    "utc-series": "DTSTART:20260105T090000Z\r\nDTEND:20260105T100000Z\r\nRRULE:FREQ=WEEKLY;COUNT=3\r\n",
    "zoned-series": "DTSTART;TZID=Europe/Berlin:20260105T090000\r\nDTEND;TZID=Europe/Berlin:20260105T100000\r\n"
    "RRULE:FREQ=WEEKLY;UNTIL=20260120T000000Z\r\n",
}


@pytest.mark.parametrize("name", list(EVENTS))
def test_a_listing_gives_the_librarys_times_under_the_calendars_zone(name: str) -> None:
    text = f"{HEAD}BEGIN:VEVENT\r\nUID:{name}\r\n{EVENTS[name]}SUMMARY:s\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    listed = expand([Resource(href="/cal/a.ics", etag='"1"', data=text)], LO, HI, unreadable=[], ordered=True)
    library = recurring_ical_events.of(icalendar.Calendar.from_ical(text)).between(LO, HI)
    expected = sorted((c["DTSTART"].dt.isoformat(), c["DTEND"].dt.isoformat()) for c in library)
    assert [(o.start, o.end) for o in listed] == expected
    assert expected  # every entry has occurrences in the window
    if name.startswith("floating"):  # placed in the calendar's zone, a single event and a series alike
        assert all(o.start.endswith("-05:00") and not o.floating for o in listed)
