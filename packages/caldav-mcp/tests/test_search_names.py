"""search_events finds an event by an attendee's or the organizer's display name (CN), RFC 6868 escapes decoded."""

from __future__ import annotations

import re
from contextlib import AbstractContextManager
from typing import Any

import pytest

from approval_core import ApprovalSettings
from approval_core.testing import connect
from caldav_helpers import ics, structured, vevent
from caldav_mcp.narrowing import caret_encoded, forms, matches
from caldav_mcp.server import build_server
from caldav_mcp.settings import CalDAVSettings
from report_fault_proxy import FaultProxy, report_fault_proxy

pytestmark = pytest.mark.anyio

WINDOW = {"start": "2026-12-01", "end": "2026-12-31"}


def _seed(account) -> None:
    def put(name: str, summary: str, more: str, day: int) -> None:
        start, end = f":202612{day:02d}T090000Z", f":202612{day:02d}T100000Z"
        account.put(account.work, f"{name}.ics", ics(vevent(f"{name}@x", start, end, summary, more)))

    put("zoe", "Planning", 'ATTENDEE;CN="Zoë O\'Brien";PARTSTAT=ACCEPTED:mailto:zob@example.org\n', 1)
    put("hammer", "Review", "ATTENDEE;CN=Dana ^'The Hammer^' Scully:mailto:ds@example.org\n", 2)
    put("radio", "Radio", "ORGANIZER;CN=Hedy Lamarr:mailto:hl@example.org\n", 3)
    put("other", "Unrelated", "ATTENDEE;CN=Someone Else:mailto:se@example.org\n", 4)


def _through(url: str):
    return build_server(ApprovalSettings(), CalDAVSettings(url, "willi", "secret"))


async def _search(client, account, query: str) -> list[str]:
    args = {"calendars": [account.work], "query": query, **WINDOW}
    return [e["uid"] for e in structured(await client.call_tool("search_events", args))["events"]]


def _full_reads(proxy) -> int:
    """calendar-query REPORTs with no prop-filter: reads of the whole window."""
    return len([s for s in proxy.reports("calendar-query") if b"prop-filter" not in s.body])


def test_caret_escapes_are_decoded_before_matching() -> None:
    import icalendar

    text = ics(vevent("h@x", ":20261202T090000Z", ":20261202T100000Z", "R", "ATTENDEE;CN=A ^'B^' ^^ C^nD:mailto:x@y\n"))
    (event,) = icalendar.Calendar.from_ical(text).walk("VEVENT")
    assert matches(event, '"b" ^ c\nd')
    assert not matches(event, "^'b^'")
    assert caret_encoded('"b" ^ c\nd') == "^'b^' ^^ c^nd"
    assert forms("plain") == ("plain",)
    assert forms('"b"') == ('"b"', "^'b^'")


async def test_an_event_is_found_by_a_display_name_and_the_server_narrows_it(account) -> None:
    _seed(account)
    with report_fault_proxy(account.server.url, lambda method, path, body: "pass") as proxy:
        async with connect(_through(proxy.url), revision="2026-07-28") as client:
            first = await _search(client, account, "o'brien")  # names checked against a full read
            by_value = await _search(client, account, "planning")  # and values
            checked = _full_reads(proxy)
            found = {q: await _search(client, account, q) for q in ('"the hammer"', "LAMARR", "scully", "nobody")}
            narrowed = _full_reads(proxy)
            accented = await _search(client, account, "zoë")  # not ASCII: the whole window is read
    assert first == by_value == ["zoe@x"]
    assert found == {'"the hammer"': ["hammer@x"], "LAMARR": ["radio@x"], "scully": ["hammer@x"], "nobody": []}
    assert accented == ["zoe@x"]
    assert (checked, narrowed) == (2, 2)  # after a complete answer of each kind, Radicale's filters are trusted
    cn = [s.body for s in proxy.reports("calendar-query") if b'<C:param-filter name="CN">' in s.body]
    assert any(b"^'the hammer^'" in body for body in cn)  # the stored form of a double quote is asked too
    assert any(b'<C:prop-filter name="ORGANIZER"><C:param-filter' in body for body in cn)


_DEAF = re.compile(rb'(<C:param-filter name="CN"><C:text-match[^>]*>)[^<]*(</C:text-match>)')


def _deaf_to_names(account: Any) -> AbstractContextManager[FaultProxy]:
    """A double in front of Radicale playing a server that answers every display-name param-filter with nothing."""
    return report_fault_proxy(
        account.server.url, lambda method, path, body: "pass", lambda body: _DEAF.sub(rb"\1no such text\2", body)
    )


async def test_a_server_that_ignores_the_name_filter_is_read_whole(account) -> None:
    """A double plays a server that answers a param-filter with nothing: no search misses the event."""
    _seed(account)
    with _deaf_to_names(account) as proxy:
        async with connect(_through(proxy.url), revision="2026-07-28") as client:
            first = await _search(client, account, "o'brien")
            asked = len(proxy.reports("calendar-query"))
            later = await _search(client, account, "lamarr")
            after = proxy.reports("calendar-query")[asked:]
    assert first == ["zoe@x"]  # answered from the full read that showed the server left it out
    assert later == ["radio@x"]
    (whole,) = after  # no longer narrowed: one read of the whole window
    assert b"prop-filter" not in whole.body


async def test_a_server_trusted_on_values_is_not_trusted_on_names_it_ignores(account) -> None:
    """The double answers a param-filter with nothing; the first search found its event by SUMMARY only."""
    _seed(account)
    with _deaf_to_names(account) as proxy:
        async with connect(_through(proxy.url), revision="2026-07-28") as client:
            first = await _search(client, account, "planning")  # complete: found by its SUMMARY
            later = await _search(client, account, "lamarr")  # only in a CN
            again = await _search(client, account, "unrelated")
    assert first == ["zoe@x"]
    assert later == ["radio@x"]
    assert again == ["other@x"]
