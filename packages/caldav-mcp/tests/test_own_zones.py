"""Each entry's custom TZIDs follow its own VTIMEZONE (RFC 5545 §3.2.19, §3.6.5), whatever was read before.

icalendar keeps, for the whole process, the first VTIMEZONE it parsed under a
TZID that is not an IANA name; two entries that define one name with other
rules (an Outlook display name, a made-up "Custom Zone") must not borrow each
other's, in either order, in any tool that reads times: each test here reads
both entries, in both orders, and finds each at its own offset.
"""

from __future__ import annotations

import datetime as dt
import re
import threading
from pathlib import Path

import pytest

from approval_core.testing import connect
from caldav_helpers import ics, structured, vevent
from caldav_mcp.components import calendar_of, parse_calendar, single_zoned, times_of
from caldav_mcp.dav import Resource
from caldav_mcp.editing import serialise
from caldav_mcp.ical import master, occurrences
from caldav_mcp.own_zones import names_other_zones
from caldav_mcp.splitting import Split, end_before

pytestmark = pytest.mark.anyio

SRC = Path(__file__).resolve().parents[1] / "src" / "caldav_mcp"
PARSE = re.compile(r"\b(?:icalendar|Calendar|Component|Event|Todo|Journal|Timezone|Alarm|FreeBusy)\.from_ical\(")
"""A parse of iCalendar text into components (a value's ``vRecur.from_ical`` resolves no TZID)."""


def vtimezone(tzid: str, offset: str) -> str:
    """A VTIMEZONE of one fixed offset (``+0100``), no daylight saving time."""
    return (
        f"BEGIN:VTIMEZONE\nTZID:{tzid}\nBEGIN:STANDARD\nDTSTART:19700101T000000\n"
        f"TZOFFSETFROM:{offset}\nTZOFFSETTO:{offset}\nTZNAME:{offset}\nEND:STANDARD\nEND:VTIMEZONE\n"
    )


def zoned(uid: str, tzid: str, offset: str | None, more: str = "", day: str = "20261201") -> str:
    """An entry at 09:00-10:00 on ``day`` in ``tzid``, with a VTIMEZONE of ``offset`` (none when None)."""
    param = f'"{tzid}"' if any(mark in tzid for mark in ":;,") else tzid  # RFC 5545 §3.2: quoted
    event = vevent(uid, f";TZID={param}:{day}T090000", f";TZID={param}:{day}T100000", f"Meeting {uid}", more)
    return ics(event, extra=vtimezone(tzid, offset) if offset else "")


ORDERS = pytest.mark.parametrize("first", ["plus1", "plus5"])
"""Which of the two entries is read first."""

EXPECTED = {
    "plus1": ("2026-12-01T09:00:00+01:00", "2026-12-01T10:00:00+01:00"),
    "plus5": ("2026-12-01T09:00:00+05:00", "2026-12-01T10:00:00+05:00"),
}


def _put_pair(account, tzid: str) -> dict[str, str]:
    """The +0100 entry in the work calendar and the +0500 one in the home calendar, under one ``tzid``."""
    account.put(account.work, "plus1.ics", zoned("plus1", tzid, "+0100"))
    account.put(account.home, "plus5.ics", zoned("plus5", tzid, "+0500"))
    return {"plus1": account.work, "plus5": account.home}


def _ordered(first: str) -> list[str]:
    return [first, "plus5" if first == "plus1" else "plus1"]


async def _read_each(account, first: str, tzid: str, tool: str, args: dict) -> dict[str, dict]:
    """Each entry of the pair (under ``tzid``) as ``tool`` gives it, read in the order ``first`` says."""
    calendars = _put_pair(account, tzid)
    seen: dict[str, dict] = {}
    async with connect(account.build(), revision="2026-07-28") as client:
        for uid in _ordered(first):
            answer = structured(await client.call_tool(tool, {**args, **_where(tool, calendars[uid], uid)}))
            seen[uid] = answer if tool == "get_event" else answer["events"][0]
            assert "events" not in answer or len(answer["events"]) == 1
    return seen


def _where(tool: str, calendar: str, uid: str) -> dict[str, object]:
    """The arguments that point ``tool`` at the entry ``uid`` in ``calendar``."""
    if tool == "search_events":
        return {"calendars": [calendar]}
    if tool == "get_event":
        return {"calendar": calendar, "id": uid}
    return {"calendar": calendar}


WINDOW = {"start": "2026-11-30", "end": "2026-12-03"}
OUTLOOK = "(UTC+01:00) Amsterdam, Berlin, Bern, Rome, Stockholm, Vienna"


@ORDERS
@pytest.mark.parametrize(
    ("tool", "tzid", "args"),
    [
        ("list_events", OUTLOOK, WINDOW),
        ("get_event", "Custom Zone get", {}),
        ("search_events", "Custom Zone search", {**WINDOW, "query": "meeting"}),
    ],
)
async def test_a_read_gives_each_entry_its_own_zone(account, first, tool, tzid, args) -> None:
    seen = await _read_each(account, first, tzid, tool, args)
    for uid, (start, end) in EXPECTED.items():
        assert (seen[uid]["start"], seen[uid]["end"], seen[uid]["tzid"]) == (start, end, tzid), uid


@ORDERS
async def test_free_busy_places_each_entry_by_its_own_zone(account, first) -> None:
    calendars = _put_pair(account, "Custom Zone busy")
    busy: dict[str, list] = {}
    async with connect(account.build(), revision="2026-07-28") as client:
        for uid in _ordered(first):
            args = {
                "calendars": [calendars[uid]],
                "start": "2026-12-01T00:00:00Z",
                "end": "2026-12-01T12:00:00Z",
                "method": "events",
            }
            busy[uid] = structured(await client.call_tool("get_free_busy", args))["busy"]
    instants = {
        uid: [tuple(dt.datetime.fromisoformat(span[key]) for key in ("start", "end")) for span in spans]
        for uid, spans in busy.items()
    }
    assert instants["plus1"] == [
        (dt.datetime(2026, 12, 1, 8, tzinfo=dt.UTC), dt.datetime(2026, 12, 1, 9, tzinfo=dt.UTC))
    ]
    assert instants["plus5"] == [
        (dt.datetime(2026, 12, 1, 4, tzinfo=dt.UTC), dt.datetime(2026, 12, 1, 5, tzinfo=dt.UTC))
    ]


@ORDERS
async def test_a_new_instant_is_written_in_each_entry_own_zone(account, first) -> None:
    """update_event with an instant keeps the entry's TZID and writes the wall time of its own VTIMEZONE."""
    calendars = _put_pair(account, "Custom Zone edit")
    moved: dict[str, dict] = {}
    async with connect(account.build(), revision="2026-07-28") as client:
        for uid in _ordered(first):
            await client.call_tool("get_event", {"calendar": calendars[uid], "id": uid})
        for uid in _ordered(first):
            change = {"calendar": calendars[uid], "id": uid, "start": "2026-12-02T08:00:00Z"}
            structured(await client.call_tool("update_event", change))
            moved[uid] = structured(await client.call_tool("get_event", {"calendar": calendars[uid], "id": uid}))
    spans = {uid: (event["start"], event["end"]) for uid, event in moved.items()}
    assert spans["plus1"] == ("2026-12-02T09:00:00+01:00", "2026-12-02T10:00:00+01:00")
    assert spans["plus5"] == ("2026-12-02T13:00:00+05:00", "2026-12-02T14:00:00+05:00")
    assert "20261202T130000" in account.get(account.home, "plus5.ics")[1]
    assert "20261202T090000" in account.get(account.work, "plus1.ics")[1]


@ORDERS
def test_parse_calendar_and_calendar_of_read_each_entry_own_zone(first) -> None:
    texts = {uid: zoned(uid, "Custom Zone parse", offset) for uid, offset in (("plus1", "+0100"), ("plus5", "+0500"))}
    for uid in _ordered(first):
        for cal in (
            parse_calendar(texts[uid]),
            calendar_of(Resource(f"/c/{uid}.ics", None, texts[uid])),
            calendar_of(Resource(f"/c/{uid}.ics", None, texts[uid]), times_only=True),
            calendar_of(Resource(f"/c/{uid}.ics", None, texts[uid]), times_only=True, listed=True),
        ):
            times = times_of(master(cal, "VEVENT"))
            assert (times.start, times.end, times.tzid) == (*EXPECTED[uid], "Custom Zone parse")
            zoned_span = single_zoned(cal, "VEVENT")
            assert zoned_span is not None
            assert zoned_span[0].utcoffset() == dt.timedelta(hours=1 if uid == "plus1" else 5)


def test_a_custom_tzid_without_its_vtimezone_is_floating_not_another_entry_zone() -> None:
    """RFC 5545 §3.2.19 asks for the VTIMEZONE in the same object: without it the time is read as written."""
    parse_calendar(zoned("defines", "Custom Zone missing", "+0500"))
    times = times_of(master(parse_calendar(zoned("borrows", "Custom Zone missing", None)), "VEVENT"))
    assert (times.start, times.end, times.floating) == ("2026-12-01T09:00:00", "2026-12-01T10:00:00", True)
    assert times.tzid == "Custom Zone missing"


def test_a_vtimezone_after_its_event_is_read_from_that_entry() -> None:
    """A forward reference (the VTIMEZONE after the VEVENT, which RFC 5545 allows) finds this entry's definition."""
    parse_calendar(zoned("first", "Custom Zone later", "+0100"))
    event = vevent("later", ";TZID=Custom Zone later:20261201T090000", ";TZID=Custom Zone later:20261201T100000")
    text = "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//tests//EN\n" + event + vtimezone("Custom Zone later", "+0500")
    text = (text + "END:VCALENDAR\n").replace("\n", "\r\n")
    times = times_of(master(parse_calendar(text), "VEVENT"))
    assert (times.start, times.floating) == ("2026-12-01T09:00:00+05:00", False)


def test_windows_and_iana_names_keep_their_zones() -> None:
    """A Windows name without a VTIMEZONE maps to its IANA zone; an IANA name ignores a stored VTIMEZONE."""
    parse_calendar(zoned("odd", "W. Europe Standard Time", "+0300"))  # a definition of its own, read as its own
    own = times_of(master(parse_calendar(zoned("odd2", "W. Europe Standard Time", "+0300")), "VEVENT"))
    mapped = times_of(master(parse_calendar(zoned("mapped", "W. Europe Standard Time", None)), "VEVENT"))
    iana = times_of(master(parse_calendar(zoned("iana", "Europe/Berlin", "+0500")), "VEVENT"))
    assert own.start == "2026-12-01T09:00:00+03:00"
    assert mapped.start == "2026-12-01T09:00:00+01:00"
    assert iana.start == "2026-12-01T09:00:00+01:00"


def test_ending_a_series_counts_the_occurrences_in_its_own_zone() -> None:
    """The split of update_event/delete_event scope "following" re-reads the series: with its own VTIMEZONE."""
    parse_calendar(zoned("other", "Custom Zone split", "+0500"))
    series = parse_calendar(zoned("daily", "Custom Zone split", "+0100", "RRULE:FREQ=DAILY;COUNT=3\n"))
    lo, hi = dt.datetime(2026, 12, 1, tzinfo=dt.UTC), dt.datetime(2026, 12, 5, tzinfo=dt.UTC)
    second = occurrences(series, "VEVENT", lo, hi)[1]
    split = Split(series, second)
    assert split.original == dt.datetime(2026, 12, 2, 8, tzinfo=dt.UTC)  # 09:00 at +0100
    assert (split.kept, split.dropped) == (1, 2)
    end_before(series, split.original)
    assert master(series, "VEVENT")["RRULE"]["UNTIL"] == [dt.datetime(2026, 12, 2, 7, 59, 59, tzinfo=dt.UTC)]


def test_parses_at_once_in_threads_each_keep_their_own_zone() -> None:
    """Expansions run in worker threads: two entries parsed at the same time still each read their own rules."""
    texts = {hours: zoned(f"t{hours}", "Custom Zone threads", f"+0{hours}00") for hours in (1, 5)}
    wrong: list[str] = []
    start = threading.Barrier(2)

    def read(hours: int) -> None:
        start.wait()
        for _ in range(60):
            value = master(parse_calendar(texts[hours]), "VEVENT")["DTSTART"].dt
            if value.utcoffset() != dt.timedelta(hours=hours):
                wrong.append(f"+{hours}: {value.isoformat()}")

    threads = [threading.Thread(target=read, args=(hours,)) for hours in texts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []


def test_icalendar_parses_stored_text_in_one_place() -> None:
    """Every parse of an iCalendar object goes through the one helper that scopes custom zones to the entry."""
    callers = sorted(
        path.relative_to(SRC).as_posix() for path in SRC.rglob("*.py") if PARSE.search(path.read_text(encoding="utf-8"))
    )
    assert callers == ["own_zones.py"]


@pytest.mark.parametrize(
    "line",
    [
        "DTSTART;TZID=Europe/Berlin:20261201T090000",
        'DTSTART;TZID="Europe/Berlin":20261201T090000',
        "DTSTART;VALUE=DATE-TIME;TZID=America/New_York;X-A=b:20261201T090000",
        "TZID:Europe/Berlin",
        "DTSTART;TZID=Europe/Berl\n in:20261201T090000",  # folded inside the name
        "SUMMARY:no zone here",
    ],
)
def test_only_iana_names_take_the_parse_without_the_lock(line: str) -> None:
    assert not names_other_zones(ics(f"BEGIN:VEVENT\n{line}\nEND:VEVENT\n"))


@pytest.mark.parametrize(
    "line",
    [
        "DTSTART;TZID=Custom:20261201T090000",
        "DTSTART;tzid=Custom:20261201T090000",
        "DTSTART;TZ\u0131D=Custom:20261201T090000",  # str.upper() reads the dotless i as I
        "DTSTART;TZID=Europe/Berlin\n X:20261201T090000",  # folded: the value goes on (Europe/BerlinX)
        "DTSTART;TZ\n ID=Custom:20261201T090000",
        'DTSTART;TZID="Europe/Berlin","Custom":20261201T090000',
        "DTSTART;TZID=Europe/Berlin,Custom:20261201T090000",
        "TZID:Europe/Berlin ",
        "TZID;X-A=b:Europe/Berlin",
        "TZID:europe/berlin",
        "DESCRIPTION:Stra\u00dfe TZID=Custom",  # upper() makes ß two letters: every place is still read
    ],
)
def test_any_other_or_unclear_tzid_takes_the_parse_with_the_lock(line: str) -> None:
    assert names_other_zones(ics(f"BEGIN:VEVENT\n{line}\nEND:VEVENT\n"))


def test_a_written_entry_never_gains_another_entry_vtimezone() -> None:
    """Before a write, VTIMEZONEs are added for the TZIDs that name a zone; a custom one is not copied in."""
    parse_calendar(zoned("defines", "Custom Zone write", "+0500"))
    written = serialise(parse_calendar(zoned("lacks", "Custom Zone write", None)))
    assert "BEGIN:VTIMEZONE" not in written
    windows = serialise(parse_calendar(zoned("windows", "W. Europe Standard Time", None)))
    assert "TZID:W. Europe Standard Time" in windows  # its IANA zone's rules, under the name it uses
