"""The listing's expansion cache: later pages and repeated windows reuse expansions, never stale answers."""

from __future__ import annotations

import datetime as dt

import pytest

from approval_core.testing import accept, connect
from caldav_helpers import ics, structured, vevent
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
