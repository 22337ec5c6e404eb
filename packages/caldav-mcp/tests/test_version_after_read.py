"""Whether a window's listing may be kept: the calendar's version before its read, and again after it.

A first listing takes the calendar's version noted by the calendar list moments before (its CTag, and its
``DAV:getlastmodified`` once that value's second has passed). After the read it asks for the last change
again (cheap on Radicale, which answers it from its files' times) and serves the window once that has not
moved; the CTag (which Radicale computes from every entry) is asked too, and decides later whether the
listing is kept: until it answers, nothing is served from the listing, and a cursor whose version it did
not confirm starts over. The calendar's files are dated an hour back so that the noted last change is
settled; the requests pass through a recording proxy (a test double relaying to the real Radicale). The
CTag decides here as on a server whose last change is not trusted (fixture ``ctag_checks``); where it is,
the last change alone keeps a listing (``test_last_change_checks.py``).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import threading
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from approval_core.testing import connect
from caldav_helpers import structured
from caldav_mcp import listings as listings_module
from caldav_mcp.listings import MAX_SPOILED_VERSIONS, Listing, Listings, Settling
from report_fault_proxy import Action, FaultProxy, report_fault_proxy
from test_listings import WINDOW, AddsDuringRead, backdate, day_event, fill, through
from webdav_core import CollectionVersions

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def ctag_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CTag decides, as on a server whose last change is not trusted (seen to lag, or no cheaper than the CTag).

    Radicale's last change follows every entry and costs less than its CTag, so there caldav-mcp keeps a
    listing under the last change alone (``test_last_change_checks.py``); these tests are about the CTag.
    """
    monkeypatch.setattr(CollectionVersions, "modified_keeps", lambda self: False)


Account = Any  # the caldav-mcp conftest's Account fixture value


def is_version_request(method: str, body: bytes) -> bool:
    """Whether a request asks for a calendar's version alone (not the calendar list, which asks for more)."""
    return method == "PROPFIND" and b"getctag" in body and b"displayname" not in body


def ctags_answered(proxy: FaultProxy) -> int:
    return sum(1 for seen in proxy.answered if is_version_request(seen.method, seen.body))


class CtagHold:
    """A proxy rule holding the first PROPFIND for the CTag sent after a calendar-query, until released."""

    def __init__(self) -> None:
        self.reading = False
        self.reached = threading.Event()
        self.released = threading.Event()

    def rule(self, method: str, path: str, body: bytes) -> Action:
        if b"calendar-query" in body:
            self.reading = True
        elif is_version_request(method, body) and self.reading and not self.released.is_set():
            self.reached.set()
            self.released.wait(30)
        return "pass"


async def listed(client: Any, calendar: str, limit: int = 4, cursor: str | None = None) -> dict[str, Any]:
    arguments = {"calendar": calendar, **WINDOW, "limit": limit, **({"cursor": cursor} if cursor else {})}
    return structured(await client.call_tool("list_events", arguments))


def queries(proxy: FaultProxy) -> int:
    return len(proxy.reports("calendar-query"))


@contextlib.asynccontextmanager
async def settled_calendar(account: Account, rule: Any) -> AsyncIterator[tuple[FaultProxy, Any]]:
    """The work calendar's files dated back, a client through the proxy deciding by ``rule``, the calendars listed.

    Listing the calendars notes the work calendar's CTag and its (settled) last change.
    """
    backdate(account)
    with report_fault_proxy(account.server.url, rule) as proxy:
        async with connect(through(account, proxy.url), revision="2026-07-28") as client:
            await client.call_tool("list_calendars", {})
            yield proxy, client


async def test_the_first_page_is_served_before_the_ctag_after_the_read_answers(account: Account) -> None:
    fill(account, 6)
    hold = CtagHold()
    async with settled_calendar(account, hold.rule) as (proxy, client):
        with anyio.fail_after(20):
            first = await listed(client, account.work)
        answered_when_served = ctags_answered(proxy)
        hold.released.set()
        second = await listed(client, account.work, cursor=first["next_cursor"])
    assert answered_when_served == 0
    assert ctags_answered(proxy) == 1
    assert [e["uid"] for e in first["events"] + second["events"]] == [f"e{i:02d}" for i in range(6)]
    assert second["reread"] is None
    assert queries(proxy) == 1  # the CTag confirmed the listing: the next page came from it


async def test_a_change_during_the_read_moves_the_last_change_and_the_window_is_read_again(account: Account) -> None:
    fill(account, 2)
    during = AddsDuringRead(account, armed=True)
    async with settled_calendar(account, during.rule) as (proxy, client):
        seen = await listed(client, account.work, limit=10)
        reads = queries(proxy)
        account.dav.delete(account.server.url.rstrip("/") + account.work + "brief.ics")
        after = await listed(client, account.work, limit=10)
    assert reads == 2  # the last change moved during the first read: read again under the version after it
    assert "brief" in [e["uid"] for e in seen["events"]]
    assert "brief" not in [e["uid"] for e in after["events"]]


async def test_a_ctag_answering_another_version_late_drops_the_listing_and_its_cursor_starts_over(
    account: Account,
) -> None:
    fill(account, 6)
    hold = CtagHold()
    async with settled_calendar(account, hold.rule) as (proxy, client):
        first = await listed(client, account.work)
        with anyio.fail_after(20):  # the CTag asked after the read (in the background) has reached the proxy
            while not hold.reached.is_set():  # noqa: ASYNC110 - set by a proxy thread
                await anyio.sleep(0.01)
        account.put(account.work, "early.ics", day_event("early", 1))  # before the held CTag is answered
        hold.released.set()
        with anyio.fail_after(20):
            while not ctags_answered(proxy):  # noqa: ASYNC110 - a proxy thread's list, not an anyio event
                await anyio.sleep(0.01)
        # Removed again: Radicale's CTag is the one the first page was read under once more.
        account.dav.delete(account.server.url.rstrip("/") + account.work + "early.ics")
        second = await listed(client, account.work, cursor=first["next_cursor"])
    assert hold.reached.is_set()
    assert second["reread"] is not None
    assert "changed" in second["reread"]
    assert [e["uid"] for e in second["events"]] == ["e00", "e01", "e02", "e03"]  # from the first again
    assert queries(proxy) >= 2


async def search_into(client: Any, arguments: dict[str, Any], results: list[Any]) -> None:
    results.append(await client.call_tool("search_events", arguments))


async def test_a_search_waits_for_the_ctag_of_a_listing_and_then_reads_from_it(account: Account) -> None:
    fill(account, 6)
    account.put(account.work, "dentist.ics", day_event("dentist", 10, "Dentist appointment"))
    hold = CtagHold()
    search = {"query": "dentist", "start": "2026-12-05", "end": "2026-12-20", "calendars": [account.work]}
    async with settled_calendar(account, hold.rule) as (proxy, client):
        await listed(client, account.work)
        results: list[Any] = []
        async with anyio.create_task_group() as calls:
            calls.start_soon(lambda: search_into(client, search, results))
            await anyio.sleep(0.5)  # the search finds the listing waiting for its CTag, and waits too
            queried_while_held = queries(proxy)
            hold.released.set()
    assert queried_while_held == 1
    assert [e["uid"] for e in structured(results[0])["events"]] == ["dentist"]
    assert queries(proxy) == 1  # from the kept listing: no other query, narrowed or whole


async def test_a_page_whose_read_was_never_confirmed_starts_over_when_the_ctag_request_fails(account: Account) -> None:
    # The calendar list gives the CTag and a settled last change; every request for the CTag alone fails.
    fill(account, 6)

    def rule(method: str, path: str, body: bytes) -> Action:
        return "fail" if is_version_request(method, body) else "pass"

    async with settled_calendar(account, rule) as (proxy, client):
        first = await listed(client, account.work)
        second = await listed(client, account.work, cursor=first["next_cursor"])
    # Not kept (its version was never confirmed), the window is read again. The first page was served before its
    # read was known to hold and no answer ever said it did: its cursor starts over rather than join a read that
    # may be of another state of the calendar.
    assert second["reread"] is not None
    assert "may have changed" in second["reread"]
    assert [e["uid"] for e in first["events"]] == [f"e{i:02d}" for i in range(4)]
    assert [e["uid"] for e in second["events"]] == [f"e{i:02d}" for i in range(4)]
    assert queries(proxy) == 2


async def test_a_search_of_a_window_no_listing_holds_does_not_wait_for_a_ctag(account: Account) -> None:
    fill(account, 6)
    hold = CtagHold()
    search = {"query": "anything", "start": "2027-02-01", "end": "2027-02-10", "calendars": [account.work]}
    async with settled_calendar(account, hold.rule) as (_, client):
        await listed(client, account.work)  # December's listing, its CTag held
        try:
            with anyio.fail_after(10):  # a search waiting for December's CTag would wait for the hold (30 s)
                found = structured(await client.call_tool("search_events", search))
        finally:
            hold.released.set()
    assert found["events"] == []


# ------------------------------------------------------------------ the listings kept, without a server

KEY = ("/cal/", dt.datetime(2026, 12, 1, tzinfo=dt.UTC), dt.datetime(2027, 1, 1, tzinfo=dt.UTC))


async def answered(value: str) -> Settling:
    answer = Settling()

    async def ask() -> str:
        return value

    await answer.take(ask)
    return answer


async def test_a_listing_waits_for_its_version_and_is_kept_when_it_answers_the_same() -> None:
    kept = Listings()
    answer = Settling()
    listing = Listing("getctag:a|0", (), ())
    kept.put(KEY, listing, answer)
    assert kept.pending(KEY) is answer
    assert kept.waiting("/cal/", KEY[1], KEY[2]) == [answer]
    assert kept.waiting("/cal/", KEY[1], KEY[2] + dt.timedelta(days=1)) == []  # a window it does not hold
    assert kept.covering("/cal/", KEY[1], KEY[2]) == []  # not used while its version is not known

    async def ask() -> str:
        return "getctag:a|0"

    await answer.take(ask)
    assert kept.pending(KEY) is None
    found = kept.get(KEY)
    assert found is not None
    assert found[0] is listing
    assert kept.spoiled(KEY) == frozenset()


@pytest.mark.parametrize(("late", "spoiled"), [("getctag:b|0", {"getctag:a|0"}), ("", set())])
async def test_a_listing_whose_version_answers_otherwise_or_not_at_all_is_dropped(late: str, spoiled: set[str]) -> None:
    kept = Listings()
    listing = Listing("getctag:a|0", (), ())
    kept.put(KEY, listing, await answered(late))
    assert kept.get(KEY) is None
    assert kept.spoiled(KEY) == frozenset(spoiled)  # another version spoils it; no answer tells nothing


async def test_a_late_answer_for_a_listing_replaced_meanwhile_leaves_the_new_one() -> None:
    kept = Listings()
    answer = Settling()
    kept.put(KEY, Listing("getctag:a|0", (), ()), answer)
    newer = Listing("getctag:b|0", (), ())
    kept.put(KEY, newer)

    async def ask() -> str:
        return "getctag:b|0"

    await answer.take(ask)
    found = kept.get(KEY)
    assert found is not None
    assert found[0] is newer
    assert kept.spoiled(KEY) == frozenset({"getctag:a|0"})


def test_the_versions_spoiled_for_one_window_are_bounded() -> None:
    kept = Listings()
    for i in range(20_000):
        kept.spoil(KEY, f"getctag:{i}|0")
    assert kept.spoiled(KEY) == frozenset(f"getctag:{i}|0" for i in range(20_000 - MAX_SPOILED_VERSIONS, 20_000))


def test_a_listing_not_known_to_hold_is_not_kept_and_spoils_nothing() -> None:
    kept = Listings()
    kept.put(KEY, Listing("getctag:a|0", (), (), trusted=False))
    assert kept.get(KEY) is None
    assert kept.spoiled(KEY) == frozenset()


@pytest.mark.parametrize("forgotten", [False, True], ids=["spoiled", "spoiled-then-forgotten"])
async def test_a_cursor_of_a_page_read_from_another_state_starts_over_even_from_a_freshly_confirmed_listing(
    account: Account, monkeypatch: pytest.MonkeyPatch, forgotten: bool
) -> None:
    # Two changes by another client during two reads: the first page is served under version Y while it was read
    # from a later state Z (Y spoiled for the window). Undone, the calendar is at Y again, and a listing of Y is
    # kept and confirmed moments before the cursor comes: continuing that page from it would join two states.
    # ``forgotten``: changes during later reads of the window spoil more versions than are remembered, so Y is
    # no longer known as spoiled; the page was served before its read was known to hold, and no answer said it
    # did, so its cursor still starts over.
    if forgotten:
        monkeypatch.setattr(listings_module, "MAX_SPOILED_VERSIONS", 2)
    fill(account, 6)
    url = account.server.url.rstrip("/") + account.work
    reads: list[str] = []
    spoiling: list[str] = []

    def rule(method: str, path: str, body: bytes) -> Action:
        if method == "REPORT" and b"calendar-query" in body:
            reads.append(path)
            if spoiling:  # another client adds an entry during each of these reads
                name = f"s{len(reads):02d}"
                spoiling.append(name)
                account.put(account.work, f"{name}.ics", day_event(name, 20))
            elif len(reads) == 1:  # state Y: e01 removed
                account.dav.delete(url + "e01.ics")
            elif len(reads) == 2:  # state Z: "early" added, e05 removed
                account.put(account.work, "early.ics", day_event("early", 1))
                account.dav.delete(url + "e05.ics")
        return "pass"

    with report_fault_proxy(account.server.url, rule) as proxy:
        async with connect(through(account, proxy.url), revision="2026-07-28") as client:
            first = await listed(client, account.work, limit=3)
            if forgotten:
                spoiling.append("on")
                for _ in range(3):
                    await listed(client, account.work, limit=3)
            added = spoiling[1:]
            spoiling.clear()
            for name in added:
                account.dav.delete(url + f"{name}.ics")
            account.dav.delete(url + "early.ics")  # back at Y
            account.put(account.work, "e05.ics", day_event("e05", 6))
            await listed(client, account.work, limit=3)
            await listed(client, account.work, limit=3)  # a listing of Y, kept and just confirmed
            second = await listed(client, account.work, limit=3, cursor=first["next_cursor"])
            assert queries(proxy) >= 3
    assert [e["uid"] for e in first["events"]] == ["e00", "early", "e02"]
    assert len(added) >= (3 if forgotten else 0)  # a read during which the calendar changed is read once more
    assert second["reread"] is not None
    assert "changed" in second["reread"]
    assert [e["uid"] for e in second["events"]] == ["e00", "e02", "e03"]  # Y from its first occurrence
