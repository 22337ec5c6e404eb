"""Benchmark calendars for caldav-mcp, written straight into a Radicale storage folder.

Not a benchmark itself (``nox -s bench`` runs ``bench_*.py``): the data and the
Radicale set-up that ``bench_list_events.py`` (and a profile run) share.

The shape of the calendar does not change with its size: ``count`` entries of
which one in forty is a series (the first fifth of the series daily, the rest weekly,
never ending, starting 2026-01-05), the others single events spread over the
three years from 2025-12-01, in four time zones. 2,000 entries give 542
occurrences in December 2026; 20,000 give ten times as many in any window.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import shutil
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "testing"))
from dav_servers import DavServer, radicale

TZIDS = ["Europe/Berlin", "America/New_York", "Asia/Tokyo", "UTC"]
# The VTIMEZONE each zoned entry carries, in the RRULE form calendar clients write (RFC 5545 §3.6.5). Without
# one, Radicale builds a VTIMEZONE with vobject for every entry it first reads (0.1 s an entry here).
ZONES = {
    "Europe/Berlin": (
        "BEGIN:VTIMEZONE\r\nTZID:Europe/Berlin\r\n"
        "BEGIN:DAYLIGHT\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0200\r\nTZNAME:CEST\r\nDTSTART:19700329T020000\r\n"
        "RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU\r\nEND:DAYLIGHT\r\n"
        "BEGIN:STANDARD\r\nTZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nTZNAME:CET\r\nDTSTART:19701025T030000\r\n"
        "RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n"
    ),
    "America/New_York": (
        "BEGIN:VTIMEZONE\r\nTZID:America/New_York\r\n"
        "BEGIN:DAYLIGHT\r\nTZOFFSETFROM:-0500\r\nTZOFFSETTO:-0400\r\nTZNAME:EDT\r\nDTSTART:19700308T020000\r\n"
        "RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU\r\nEND:DAYLIGHT\r\n"
        "BEGIN:STANDARD\r\nTZOFFSETFROM:-0400\r\nTZOFFSETTO:-0500\r\nTZNAME:EST\r\nDTSTART:19701101T020000\r\n"
        "RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n"
    ),
    "Asia/Tokyo": (
        "BEGIN:VTIMEZONE\r\nTZID:Asia/Tokyo\r\nBEGIN:STANDARD\r\nTZOFFSETFROM:+0900\r\nTZOFFSETTO:+0900\r\n"
        "TZNAME:JST\r\nDTSTART:19700101T000000\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n"
    ),
    "UTC": "",
}
USER = ("bench", "bench")
CALENDAR = "/bench/bench/"


def event(uid: str, start: dt.datetime, minutes: int, summary: str, tzid: str, extra: str = "") -> str:
    """One VEVENT in its own VCALENDAR, DTSTART/DTEND in ``tzid`` (or UTC), with the zone's VTIMEZONE."""
    stamp = "%Y%m%dT%H%M%S"
    end = start + dt.timedelta(minutes=minutes)
    when = (
        f"DTSTART:{start.strftime(stamp)}Z\r\nDTEND:{end.strftime(stamp)}Z"
        if tzid == "UTC"
        else f"DTSTART;TZID={tzid}:{start.strftime(stamp)}\r\nDTEND;TZID={tzid}:{end.strftime(stamp)}"
    )
    return (
        f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bench//EN\r\n{ZONES[tzid]}BEGIN:VEVENT\r\n"
        f"UID:{uid}\r\nDTSTAMP:20261101T000000Z\r\n{when}\r\nSUMMARY:{summary}\r\n{extra}END:VEVENT\r\nEND:VCALENDAR\r\n"
    )


def dataset(count: int = 2000) -> list[tuple[str, str]]:
    """``(uid, iCalendar text)`` for ``count`` entries: 39 in 40 single events, 1 in 40 series (see the module)."""
    series = count // 40
    singles = count - series
    scale = 1950 / singles  # the 2,000-entry calendar spaces its singles 13 hours apart
    items = []
    base = dt.datetime(2025, 12, 1, 8, 0)
    for i in range(singles):
        start = base + dt.timedelta(hours=13 * i * scale + (i % 7))
        uid = str(uuid.UUID(int=i))
        items.append(
            (
                uid,
                event(
                    uid,
                    start.replace(second=0, microsecond=0, minute=0),
                    30 + 15 * (i % 4),
                    f"Meeting {i}",
                    TZIDS[i % 4],
                ),
            )
        )
    for j in range(series):
        uid = str(uuid.UUID(int=10_000_000 + j))
        rule = "RRULE:FREQ=DAILY\r\n" if j < series // 5 else "RRULE:FREQ=WEEKLY\r\n"
        start = dt.datetime(2026, 1, 5, 7 + j % 10, 0)
        items.append((uid, event(uid, start, 30, f"Series {j}", TZIDS[j % 4], rule)))
    return items


def seed(storage: Path, items: list[tuple[str, str]]) -> None:
    """Write ``items`` as Radicale's own files: the calendar ``/bench/bench/``, one ``<uid>.ics`` each."""
    folder = storage / "collection-root" / "bench" / "bench"
    folder.mkdir(parents=True)
    props = {"tag": "VCALENDAR", "D:displayname": "Bench", "C:supported-calendar-component-set": "VEVENT,VTODO"}
    (folder / ".Radicale.props").write_text(json.dumps(props))
    for uid, text in items:
        (folder / f"{uid}.ics").write_text(text, newline="")


def scratch(prefix: str) -> Path:
    """A new temporary folder, in memory (``/dev/shm``) where the machine has it.

    Radicale writes (and fsyncs) a cache file for every entry it first reads;
    on a disk shared with other work that alone can take minutes for 20,000
    entries, which is the disk's figure, not Radicale's or caldav-mcp's.
    """
    shm = Path("/dev/shm")  # noqa: S108 (a folder made by mkdtemp inside it, private to this user)
    return Path(tempfile.mkdtemp(prefix=prefix, dir=shm if shm.is_dir() else None))


@contextlib.contextmanager
def seeded_radicale(items: list[tuple[str, str]]) -> Iterator[DavServer]:
    """A fresh Radicale (caches empty) over a new storage folder holding ``items``."""
    work = scratch("caldav-bench-")
    try:
        seed(work / "collections", items)
        with radicale(work, {USER[0]: USER[1]}) as server:
            yield server
    finally:
        shutil.rmtree(work, ignore_errors=True)


def calendar_query(start: dt.datetime, end: dt.datetime) -> str:
    """The calendar-query REPORT body a client needs for VEVENTs in ``[start, end)`` (RFC 4791 §7.8)."""
    stamp = "%Y%m%dT%H%M%SZ"
    return (
        '<?xml version="1.0" encoding="utf-8"?><C:calendar-query xmlns:D="DAV:" '
        'xmlns:C="urn:ietf:params:xml:ns:caldav"><D:prop><D:getetag/><C:calendar-data/></D:prop><C:filter>'
        '<C:comp-filter name="VCALENDAR"><C:comp-filter name="VEVENT">'
        f'<C:time-range start="{start.strftime(stamp)}" end="{end.strftime(stamp)}"/>'
        "</C:comp-filter></C:comp-filter></C:filter></C:calendar-query>"
    )


def year_calendar(events: int = 2000, series: int = 70, endless: int = 50) -> list[tuple[str, str]]:
    """``(uid, iCalendar text)`` of a year as calendar clients store one: ``events`` single one-hour events spread
    evenly over 2027, and ``series`` weekly series from the first week of 2027.

    The first ``endless`` series repeat once a week for ever; the others twice a week (Tuesday and Thursday)
    until the end of 2027. Times are in the four zones of TZIDS, each zoned entry with its VTIMEZONE. The
    2,000 + 70 (50 without end) calendar holds 235 entries and 565 occurrences in June 2027.
    """
    items = []
    base = dt.datetime(2027, 1, 1, 8, 0)
    for i in range(events):
        start = base + dt.timedelta(hours=(365 * 24 * i) // events)
        start = start.replace(hour=8 + start.hour % 10)
        uid = f"event-{i:05d}"
        items.append((uid, event(uid, start, 60, f"Meeting {i}", TZIDS[i % 4], f"LOCATION:Room {i % 40}\r\n")))
    for j in range(series):
        uid = f"series-{j:03d}"
        if j < endless:
            rule, start = "RRULE:FREQ=WEEKLY\r\n", dt.datetime(2027, 1, 4 + j % 5, 7 + j % 10, 30)
        else:
            rule, start = "RRULE:FREQ=WEEKLY;BYDAY=TU,TH;UNTIL=20271231T235959Z\r\n", dt.datetime(2027, 1, 5, 12, 0)
        items.append((uid, event(uid, start, 60, f"Series {j}", TZIDS[j % 4], rule)))
    return items
