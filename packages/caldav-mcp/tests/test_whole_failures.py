"""A calendar-query the server fails as a whole (one stored entry can make it) costs one entry, not the listing.

The server's failure is played by a test double (``report_fault_proxy``) in front of the real Radicale: it
fails every calendar-query REPORT (500, or a 207 cut off mid-body), every calendar-multiget naming one
chosen entry, and that entry's GET. Radicale itself answers everything else.
"""

from __future__ import annotations

import anyio
import pytest

from approval_core import ApprovalSettings
from approval_core.testing import connect, outside_fences
from caldav_helpers import ics, structured, vevent
from caldav_mcp.server import build_server
from caldav_mcp.settings import CalDAVSettings
from report_fault_proxy import Action, report_fault_proxy
from test_version_after_read import backdate

pytestmark = pytest.mark.anyio

WINDOW = {"start": "2026-12-01", "end": "2026-12-31"}


def _seed(account) -> None:
    account.put(account.work, "a.ics", ics(vevent("a@x", ":20261201T090000Z", ":20261201T100000Z", "Alpha")))
    account.put(account.work, "b.ics", ics(vevent("b@x", ":20261202T090000Z", ":20261202T100000Z", "Beta")))
    account.put(account.work, "bad.ics", ics(vevent("bad@x", ":20261203T090000Z", ":20261203T100000Z", "Alphabad")))
    account.put(account.work, "later.ics", ics(vevent("later@x", ":20270301T090000Z", ":20270301T100000Z", "Alpha")))
    todo = "BEGIN:VTODO\nUID:todo@x\nDTSTAMP:20261101T000000Z\nDUE:20261205T090000Z\nSUMMARY:Alpha task\nEND:VTODO\n"
    account.put(account.work, "todo.ics", ics(todo))


def _through(url: str):
    return build_server(ApprovalSettings(), CalDAVSettings(url, "willi", "secret"))


def _failing(query: Action):
    def rule(method: str, path: str, body: bytes) -> Action:
        if method == "REPORT" and b":calendar-query" in body:
            return query
        if method == "REPORT" and b":calendar-multiget" in body and b"/bad.ics<" in body:
            return "fail"
        return "fail" if method == "GET" and path.endswith("/bad.ics") else "pass"

    return rule


@pytest.mark.parametrize("query", ["fail", "cut"])
async def test_a_query_failed_as_a_whole_lists_every_other_event_and_names_the_one_left_out(account, query) -> None:
    _seed(account)
    with report_fault_proxy(account.server.url, _failing(query)) as proxy:
        async with connect(_through(proxy.url), revision="2026-07-28") as client:
            listed = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW}))
            seen = list(proxy.seen)
            found = structured(
                await client.call_tool("search_events", {"calendars": [account.work], "query": "alpha", **WINDOW})
            )
    assert [e["uid"] for e in listed["events"]] == ["a@x", "b@x"]  # not the task, not the event of March
    (bad,) = listed["unreadable"]
    assert bad["href"] == bad["id"] == f"{account.work}bad.ics"
    assert f"cannot send the stored entry {account.work}bad.ics" in bad["reason"]
    assert [e["uid"] for e in found["events"]] == ["a@x"]
    assert [u["href"] for u in found["unreadable"]] == [f"{account.work}bad.ics"]
    # the members were listed, read by one multiget, and the failed batch read again one entry at a time
    assert [s.path for s in seen if s.method == "PROPFIND"][-1] == account.work
    assert len([s for s in seen if s.method == "REPORT" and b":calendar-multiget" in s.body]) == 1
    gets = [s.path.rsplit("/", 1)[-1] for s in seen if s.method == "GET"]
    assert gets == ["a.ics", "b.ics", "bad.ics", "later.ics", "todo.ics"]


async def test_a_server_answering_the_query_costs_no_extra_request(account) -> None:
    _seed(account)
    backdate(account)  # the calendar's last change is settled: it is what the first listing asks after its read
    with report_fault_proxy(account.server.url, lambda method, path, body: "pass") as proxy:
        async with connect(_through(proxy.url), revision="2026-07-28") as client:
            structured(await client.call_tool("list_calendars", {}))
            proxy.seen.clear()
            before = len(proxy.answered)
            listed = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW}))
            with anyio.fail_after(20):  # the sync-token and the last change again, asked in the background
                while len(proxy.answered) < before + 4:  # noqa: ASYNC110 - a proxy thread's list
                    await anyio.sleep(0.01)
    assert [e["uid"] for e in listed["events"]] == ["a@x", "b@x", "bad@x"]
    assert listed["unreadable"] == []
    # The calendar list asks nothing after its own PROPFIND. The listing sends the one query first; once it is
    # answered, the calendar's last change, asked alone (what the page waits for), then, once per client, the
    # calendar's sync-token, which tells the server (Radicale's file storage, trusted with its last change) where
    # no call waits for it, and the last change once more, which settles the listing. The CTag (computed from
    # every entry) is not asked: the listing is kept under the version the calendar list gave, with its last
    # change.
    assert [(s.method, s.path) for s in proxy.seen] == [("REPORT", account.work)] + [("PROPFIND", account.work)] * 3
    assert proxy.reports("calendar-query") == proxy.seen[:1]
    told = [seen.body for seen in proxy.seen[1:3]]  # sent together once the query is answered: in either order
    assert sorted(b"sync-token" in body for body in told) == [False, True]
    assert all(b"getlastmodified" in body for body in told if b"sync-token" not in body)
    assert b"getlastmodified" in proxy.seen[3].body
    assert all(b"getctag" not in seen.body for seen in proxy.seen)


async def test_an_entry_sent_with_a_content_type_of_words_is_listed_unreadable_with_the_words_fenced(account) -> None:
    """The entry's GET answers a Content-Type of words: the listing's reason repeats it only fenced."""
    account.put(account.work, "bad.ics", ics(vevent("bad@x", ":20261203T090000Z", ":20261203T100000Z", "Alpha")))

    def rule(method: str, path: str, body: bytes) -> Action:
        if method == "REPORT" and b":calendar-query" in body:
            return "fail"
        if method == "REPORT" and b":calendar-multiget" in body:
            return "fail"
        return "worded" if method == "GET" and path.endswith("/bad.ics") else "pass"

    with report_fault_proxy(account.server.url, rule) as proxy:
        async with connect(_through(proxy.url), revision="2026-07-28") as client:
            result = await client.call_tool("list_events", {"calendar": account.work, **WINDOW})
    (bad,) = structured(result)["unreadable"]
    assert f"cannot send the stored entry {account.work}bad.ics" in bad["reason"]
    assert "approved every deletion" in bad["reason"]
    text = result.content[0].text
    assert "approved every deletion" in text
    assert "approved every deletion" not in outside_fences(text)
    assert "\x02" not in text
    assert "\\u0002" not in text


async def test_a_multistatus_of_a_foreign_root_element_is_named_in_the_error_only_fenced(account) -> None:
    """The server's 207 answer is XML whose root element's namespace is words: the error never repeats them bare."""

    def rule(method: str, path: str, body: bytes) -> Action:
        return "foreign_root" if method in {"PROPFIND", "REPORT"} else "pass"

    with report_fault_proxy(account.server.url, rule) as proxy:
        async with connect(_through(proxy.url), revision="2026-07-28") as client:
            result = await client.call_tool("list_calendars", {})
    assert result.is_error
    text = result.content[0].text
    assert "could not be read" in text
    assert "approved every deletion" not in outside_fences(text)
