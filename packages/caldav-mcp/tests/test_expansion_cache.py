"""What keeps a listing cheap: the expansion cache (never stale), and VTIMEZONEs left out only where unused."""

from __future__ import annotations

import datetime as dt

import pytest

from approval_core.testing import accept, connect
from caldav_helpers import ics, structured, vevent
from caldav_mcp import ical
from caldav_mcp.expansion_cache import ExpansionCache
from caldav_mcp.models import Occurrence
from caldav_mcp.tools.events_read import expand

pytestmark = pytest.mark.anyio

LO = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
HI = dt.datetime(2027, 1, 1, tzinfo=dt.UTC)


def weekly(summary: str) -> str:
    return ics(vevent("weekly@example.org", ":20261201T090000Z", ":20261201T100000Z", summary, "RRULE:FREQ=WEEKLY\n"))


class Stored:
    """A stand-in for :class:`caldav_mcp.client.Resource`: the three attributes ``expand`` reads."""

    def __init__(self, href: str, data: str) -> None:
        self.href, self.data, self.problem = href, data, None


def occurrences(count: int) -> tuple[Occurrence, ...]:
    return tuple(
        Occurrence(id=f"u#{i}", uid="u", start="2026-12-01", end="2026-12-02", all_day=True) for i in range(count)
    )


def test_a_second_expansion_of_the_same_text_and_window_is_answered_from_the_cache() -> None:
    cache = ExpansionCache()
    first = expand([Stored("/a.ics", weekly("Review"))], LO, HI, unreadable=[], cache=cache)
    assert len(cache) == 1
    again = expand([Stored("/b.ics", weekly("Review"))], LO, HI, unreadable=[], cache=cache)
    assert [o.id for o in again] == [o.id for o in first]
    assert all(a is b for a, b in zip(again, first, strict=True))
    assert len(first) == 5


def test_changed_text_or_another_window_is_expanded_anew() -> None:
    cache = ExpansionCache()
    expand([Stored("/a.ics", weekly("Review"))], LO, HI, unreadable=[], cache=cache)
    changed = expand([Stored("/a.ics", weekly("Retro"))], LO, HI, unreadable=[], cache=cache)
    assert {o.summary for o in changed} == {"Retro"}
    shorter = expand([Stored("/a.ics", weekly("Retro"))], LO, LO + dt.timedelta(days=8), unreadable=[], cache=cache)
    assert len(shorter) == 2
    assert len(cache) == 3


def test_an_unreadable_entry_is_never_kept() -> None:
    cache = ExpansionCache()
    bad = ics(
        vevent("bad@example.org", ":20261201T090000Z", ":20261201T100000Z", "Bad", "RRULE:FREQ=DAILY;INTERVAL=0\n")
    )
    unreadable: list = []
    assert expand([Stored("/bad.ics", bad)], LO, HI, unreadable=unreadable, cache=cache) == []
    assert [u.id for u in unreadable] == ["bad@example.org"]
    assert len(cache) == 0


def test_the_cache_holds_at_most_its_limit_dropping_the_least_recently_used() -> None:
    cache = ExpansionCache(limit=10)
    keys = [ExpansionCache.key(f"entry {i}", LO, HI) for i in range(4)]
    cache.put(keys[0], occurrences(4))
    cache.put(keys[1], occurrences(4))
    assert cache.get(keys[0]) is not None  # now the most recently used
    cache.put(keys[2], occurrences(4))
    assert cache.get(keys[1]) is None
    assert cache.get(keys[0]) is not None
    assert cache.get(keys[2]) is not None
    cache.put(keys[3], occurrences(11))  # more than the whole cache holds: not kept, nothing dropped
    assert cache.get(keys[3]) is None
    assert len(cache) == 2


async def test_a_listing_shows_an_entry_changed_on_the_server_between_two_calls(account) -> None:
    account.put(account.work, "weekly.ics", weekly("Review"))
    args = {"calendar": account.work, "start": "2026-12-01", "end": "2027-01-01"}
    async with connect(account.build(), revision="2026-07-28", answer=accept) as client:
        before = structured(await client.call_tool("list_events", args))
        account.put(account.work, "weekly.ics", weekly("Retro"))
        after = structured(await client.call_tool("list_events", args))
    assert {e["summary"] for e in before["events"]} == {"Review"}
    assert {e["summary"] for e in after["events"]} == {"Retro"}
    assert [e["id"] for e in after["events"]] == [e["id"] for e in before["events"]]


BERLIN = (
    "BEGIN:VTIMEZONE\r\nTZID:Europe/Berlin\r\nBEGIN:STANDARD\r\nDTSTART:19701025T030000\r\n"
    "RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r\nTZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nEND:STANDARD\r\n"
    "BEGIN:DAYLIGHT\r\nDTSTART:19700329T020000\r\nRRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU\r\n"
    "TZOFFSETFROM:+0100\r\nTZOFFSETTO:+0200\r\nEND:DAYLIGHT\r\nEND:VTIMEZONE\r\n"
)
# A zone under a name the zone database does not have: its VTIMEZONE is all that defines its times.
CUSTOM = (
    "BEGIN:VTIMEZONE\r\nTZID:Custom Standard Time\r\nBEGIN:STANDARD\r\nDTSTART:19700101T000000\r\n"
    "TZOFFSETFROM:+0530\r\nTZOFFSETTO:+0530\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n"
)


def zoned(tzid: str, zone: str) -> str:
    return (
        f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\n{zone}BEGIN:VEVENT\r\nUID:z@x\r\n"
        f"DTSTAMP:20261101T000000Z\r\nDTSTART;TZID={tzid}:20261201T090000\r\nDTEND;TZID={tzid}:20261201T100000\r\n"
        "RRULE:FREQ=WEEKLY\r\nSUMMARY:Zoned\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )


def test_only_vtimezones_of_iana_zones_are_left_out_when_listing() -> None:
    text = zoned("Europe/Berlin", BERLIN + CUSTOM)
    lean = ical.drop_known_timezones(text)
    assert "TZID:Europe/Berlin" not in lean
    assert "TZID:Custom Standard Time" in lean
    assert lean.count("BEGIN:") == text.count("BEGIN:") - 3
    folded = text.replace("TZID:Europe/Berlin\r\n", "TZID:Europe/\r\n Berlin\r\n")
    assert ical.drop_known_timezones(folded) == folded  # a folded TZID line: kept, never guessed


def test_a_vtimezone_named_an_iana_zone_with_spaces_around_it_is_kept_with_its_times() -> None:
    # icalendar looks up only the exact name: "America/Denver " is defined by its VTIMEZONE alone (+05:30 here),
    # and without it the occurrence would read as a floating time.
    spaced = CUSTOM.replace("TZID:Custom Standard Time", "TZID:America/Denver ")
    text = zoned('"America/Denver "', spaced)
    assert ical.drop_known_timezones(text) == text
    listed = expand([Stored("/z.ics", text)], LO, HI, unreadable=[])
    assert listed[0].start == "2026-12-01T09:00:00+05:30"


@pytest.mark.parametrize(("tzid", "zone"), [("Europe/Berlin", BERLIN), ("Custom Standard Time", CUSTOM)])
def test_a_listing_reads_the_same_times_with_or_without_the_vtimezones_it_leaves_out(tzid, zone) -> None:
    full = [(o.start, o.end, o.tzid) for o in expand([Stored("/z.ics", zoned(tzid, zone))], LO, HI, unreadable=[])]
    parsed = ical.parse_calendar(zoned(tzid, zone))
    whole = [(ical.times_of(c).start, ical.times_of(c).end) for c in ical.occurrences(parsed, "VEVENT", LO, HI)]
    assert [(s, e) for s, e, _ in full] == whole
    assert len(full) == 5
    assert {z for _, _, z in full} == {tzid}
    assert full[0][0] == ("2026-12-01T09:00:00+01:00" if tzid == "Europe/Berlin" else "2026-12-01T09:00:00+05:30")
