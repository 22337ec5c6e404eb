"""A bare SDK server that lists a window with the libraries alone: the baseline beside caldav-mcp's first listing.

Not a benchmark itself: ``bench_first_listing.py`` starts it as its own process over stdio
(``python listing_baseline.py``), with the calendar's URL and credentials in BASELINE_URL, BASELINE_USER and
BASELINE_PASSWORD, and times its one tool the way it times caldav-mcp's ``list_events``.

``list_events(start, end, limit)`` sends the calendar-query REPORT the raw reference sends
(``calendar_data.calendar_query``), reads the multistatus with ElementTree, parses each entry whole with
icalendar, expands it with recurring-ical-events, orders the occurrences by their start (as an instant, then
by id, as caldav-mcp does) and returns the first ``limit`` as a pydantic model: id, UID, SUMMARY, start, end
and whether all-day, the fields the bench compares. Its output schema is listed folded, as the family's are
(``approval_core.serving.portable``). That is what a server would do with the SDK and these libraries and
nothing else: no approval core, no version checks, no kept listings, no bounds on the expansion, no fences,
no cursor. icalendar and recurring-ical-events are imported, and one made-up entry expanded, before the server
answers ``initialize``, so the timed call pays no first use of them.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
from pathlib import Path
from xml.etree import ElementTree

import httpx
import icalendar
import recurring_ical_events
from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel

from approval_core.serving.portable import install_portable_schemas

sys.path.insert(0, str(Path(__file__).resolve().parent))
from calendar_data import calendar_query

CALENDAR_DATA = "{urn:ietf:params:xml:ns:caldav}calendar-data"
WARM = (
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bench//baseline//EN\r\nBEGIN:VEVENT\r\nUID:warm\r\n"
    "DTSTAMP:20270101T000000Z\r\nDTSTART;TZID=Europe/Berlin:20270104T090000\r\n"
    "DTEND;TZID=Europe/Berlin:20270104T100000\r\nRRULE:FREQ=WEEKLY\r\nSUMMARY:warm\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
)


class BaselineOccurrence(BaseModel):
    """One occurrence as the baseline lists it (times ISO 8601, as stored: zoned, UTC or a date)."""

    id: str
    uid: str
    summary: str | None
    start: str
    end: str
    all_day: bool


class BaselinePage(BaseModel):
    """The first ``limit`` occurrences of the window in start order, and whether more follow."""

    events: list[BaselineOccurrence]
    truncated: bool


def instant(value: dt.date | dt.datetime) -> dt.datetime:
    """A start as an instant for ordering: a date or a floating time read as UTC."""
    if not isinstance(value, dt.datetime):
        return dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC)
    return value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)


def occurrences(text: str, lo: dt.datetime, hi: dt.datetime) -> list[tuple[dt.datetime, BaselineOccurrence]]:
    """The occurrences of one entry's VEVENTs in ``[lo, hi)``, each with its start instant."""
    found = []
    calendar = icalendar.Calendar.from_ical(text)
    series = any("RRULE" in c or "RDATE" in c or "RECURRENCE-ID" in c for c in calendar.walk("VEVENT"))
    for component in recurring_ical_events.of(calendar).between(lo, hi):
        start = component["DTSTART"].dt
        end = component["DTEND"].dt if "DTEND" in component else start + component["DURATION"].dt
        uid = str(component["UID"])
        rid = component.get("RECURRENCE-ID")  # the library sets one on every occurrence, a single event's too
        ident = uid if rid is None or not series else f"{uid}#{instant(rid.dt).astimezone(dt.UTC):%Y%m%dT%H%M%SZ}"
        summary = str(component["SUMMARY"]) if "SUMMARY" in component else None
        item = BaselineOccurrence(
            id=ident,
            uid=uid,
            summary=summary,
            start=start.isoformat(),
            end=end.isoformat(),
            all_day=not isinstance(start, dt.datetime),
        )
        found.append((instant(start), item))
    return found


def baseline_server(url: str, auth: tuple[str, str]) -> MCPServer:
    """The bare server over the calendar at ``url`` (an httpx client kept open for its life)."""
    server = MCPServer("listing-baseline")
    http = httpx.AsyncClient(auth=auth, timeout=600)

    @server.tool()
    async def ready() -> str:
        """An untimed first call, as caldav-mcp's list_calendars."""
        return "ready"

    @server.tool()
    async def list_events(start: str, end: str, limit: int = 200) -> BaselinePage:
        """The window's first ``limit`` occurrences (``start``/``end``: ISO 8601 dates, read as UTC)."""
        lo = dt.datetime.combine(dt.date.fromisoformat(start), dt.time(), dt.UTC)
        hi = dt.datetime.combine(dt.date.fromisoformat(end), dt.time(), dt.UTC)
        answer = await http.request("REPORT", url, content=calendar_query(lo, hi), headers={"Depth": "1"})
        answer.raise_for_status()
        found = [
            pair
            for data in ElementTree.fromstring(answer.content).iter(CALENDAR_DATA)  # noqa: S314 (the bench's Radicale)
            for pair in occurrences(data.text or "", lo, hi)
        ]
        found.sort(key=lambda pair: (pair[0], pair[1].id))
        return BaselinePage(events=[item for _, item in found[:limit]], truncated=len(found) > limit)

    install_portable_schemas(server)
    return server


if __name__ == "__main__":
    occurrences(WARM, dt.datetime(2027, 1, 1, tzinfo=dt.UTC), dt.datetime(2027, 2, 1, tzinfo=dt.UTC))
    baseline_server(os.environ["BASELINE_URL"], (os.environ["BASELINE_USER"], os.environ["BASELINE_PASSWORD"])).run()
