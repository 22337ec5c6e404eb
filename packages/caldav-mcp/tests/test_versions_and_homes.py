"""Every write binds a version, also behind a server that lists no ETag; calendars stay inside the home set.

Issue 22 §3 and §6: a test double (``rewriting_proxy.no_etag_proxy``) in front of the real
Radicale strips ``getetag`` from every multistatus (a GET still carries
``ETag``, as on some real servers); every writing tool runs through it and
every PUT, DELETE and MOVE must carry ``If-Match``, or ``If-None-Match: *``
for a create. With the ETag header stripped too, a change is refused, saying
so, and nothing is written. A second double (``rewriting_proxy``) adds
calendars outside the account's home to the home's listing: ``/etc/``,
another account's ``/other/cal/``, dot segments; none is offered or asked.
"""

from __future__ import annotations

import re

import pytest
from rewriting_proxy import no_etag_proxy, rewriting_proxy, writes

from approval_core import ApprovalSettings
from approval_core.testing import approval_of, connect
from caldav_helpers import ics, structured, vevent
from caldav_mcp.server import build_server
from caldav_mcp.settings import CalDAVSettings

pytestmark = pytest.mark.anyio

OFF = ApprovalSettings(elicitation=False)
TODO = "BEGIN:VTODO\nUID:todo@x\nDTSTAMP:20261101T000000Z\nSUMMARY:Todo\nEND:VTODO\n"
NOTE = "BEGIN:VJOURNAL\nUID:note@x\nDTSTAMP:20261101T000000Z\nDTSTART;VALUE=DATE:20261201\nSUMMARY:Note\nEND:VJOURNAL\n"
INVITE = vevent(
    "invite@x",
    ":20261203T090000Z",
    ":20261203T100000Z",
    "Invite",
    "ORGANIZER:mailto:boss@example.org\nATTENDEE;PARTSTAT=NEEDS-ACTION:mailto:willi@example.org\n",
)


async def _confirmed(client, tool: str, args: dict):
    """Call a tool with approval switched off: when it asks for a token, repeat the call with it."""
    first = await client.call_tool(tool, args)
    if not first.is_error or "confirm_token=" not in first.content[0].text:
        return first
    return await client.call_tool(tool, {**args, "confirm_token": approval_of(first)["confirm_token"]})


def _seed(account) -> None:
    account.put(account.work, "e1.ics", ics(vevent("e1@x", ":20261201T090000Z", ":20261201T100000Z", "One")))
    account.put(account.work, "e2.ics", ics(vevent("e2@x", ":20261202T090000Z", ":20261202T100000Z", "Two")))
    account.put(account.work, "e3.ics", ics(vevent("e3@x", ":20261204T090000Z", ":20261204T100000Z", "Three")))
    account.put(account.work, "invite.ics", ics(INVITE))
    account.put(account.work, "todo.ics", ics(TODO))
    account.put(account.work, "todo2.ics", ics(TODO.replace("todo@x", "todo2@x")))
    account.put(account.work, "note.ics", ics(NOTE))


def _calls(account) -> list[tuple[str, dict]]:
    work = account.work
    return [
        ("create_event", {"calendar": work, "summary": "New", "start": "2026-12-05T09:00:00Z"}),
        ("create_task", {"calendar": work, "summary": "New task"}),
        ("create_journal", {"calendar": work, "summary": "New note", "date": "2026-12-05"}),
        ("update_event", {"calendar": work, "id": "e1@x", "summary": "Renamed"}),
        ("respond_to_event", {"calendar": work, "id": "invite@x", "partstat": "ACCEPTED",
                              "attendee": "willi@example.org"}),
        ("update_task", {"calendar": work, "uid": "todo@x", "priority": 1}),
        ("complete_task", {"calendar": work, "uid": "todo@x"}),
        ("update_journal", {"calendar": work, "uid": "note@x", "summary": "Renamed note"}),
        ("move_event", {"calendar": work, "id": "e2@x", "destination": account.home}),
        ("delete_event", {"calendar": work, "id": "e3@x"}),
        ("delete_task", {"calendar": work, "uid": "todo2@x"}),
        ("delete_journal", {"calendar": work, "uid": "note@x"}),
    ]  # fmt: skip


async def test_every_write_carries_a_precondition_behind_a_server_that_lists_no_etag(account) -> None:
    _seed(account)
    with no_etag_proxy(account.server.url) as proxy:
        settings = CalDAVSettings(proxy.url, "willi", "secret")
        async with connect(build_server(OFF, settings), revision="2026-07-28") as client:
            results = {tool: await _confirmed(client, tool, args) for tool, args in _calls(account)}
    failed = {tool: r.content[0].text for tool, r in results.items() if r.is_error}
    assert failed == {}
    written = writes(proxy)
    assert {m for m, _, _ in written} == {"PUT", "DELETE", "MOVE"}
    for method, path, fields in written:
        create = method == "PUT" and fields.get("if-none-match") == "*"
        assert create or fields.get("if-match"), (method, path, fields)
    creates = [p for m, p, f in written if f.get("if-none-match") == "*"]
    assert len(creates) == 3  # create_event, create_task, create_journal; every other write binds an ETag
    assert "SUMMARY:Renamed" in account.get(account.work, "e1.ics")[1]
    assert account.get(account.work, "e3.ics")[0] == 404


async def test_a_server_that_gives_no_etag_at_all_is_refused_with_a_true_message(account) -> None:
    _seed(account)
    with no_etag_proxy(account.server.url, headers=True) as proxy:
        settings = CalDAVSettings(proxy.url, "willi", "secret")
        async with connect(build_server(OFF, settings), revision="2026-07-28") as client:
            results = {
                tool: await _confirmed(client, tool, args)
                for tool, args in _calls(account)
                if not tool.startswith("create_")
            }
    for tool, result in results.items():
        assert result.is_error, tool
        assert "no ETag" in result.content[0].text, (tool, result.content[0].text)
    assert writes(proxy) == []
    assert "SUMMARY:One" in account.get(account.work, "e1.ics")[1]


OFF_HOME = ["/etc/", "/other/cal/", "/willi/../other/", "/willi/%2e%2e/other/", "http://evil.example/willi/x/"]


def _with_off_home_calendars(body: bytes) -> bytes:
    extra = "".join(
        f'<D:response xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:href>{href}</D:href><D:propstat>'
        "<D:prop><D:resourcetype><D:collection/><C:calendar/></D:resourcetype><D:displayname>Hostile</D:displayname>"
        "</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>"
        for href in OFF_HOME
    ).encode()
    if b"multistatus" not in body or b"calendar-home-set" in body:
        return body
    return re.sub(rb"(</(?:[A-Za-z0-9]+:)?multistatus>\s*)$", extra + rb"\1", body)


async def test_calendars_outside_the_home_set_are_never_offered_or_asked(account) -> None:
    account.put(account.work, "e1.ics", ics(vevent("e1@x", ":20261201T090000Z", ":20261201T100000Z")))
    with rewriting_proxy(account.server.url, _with_off_home_calendars) as proxy:
        settings = CalDAVSettings(proxy.url, "willi", "secret")
        async with connect(build_server(OFF, settings), revision="2026-07-28") as client:
            listed = structured(await client.call_tool("list_calendars", {}))
            asked = [
                await client.call_tool("list_events", {"calendar": c, "start": "2026-12-01", "end": "2026-12-31"})
                for c in ["/etc/", "/other/cal/"]
            ]
            window = {"calendar": account.work, "start": "2026-12-01", "end": "2026-12-31"}
            own = structured(await client.call_tool("list_events", window))
    ids = [c["id"] for c in listed["calendars"]]
    assert account.work in ids
    assert all(i.startswith("/willi/") and ".." not in i and "%2e" not in i.lower() for i in ids), ids
    assert all(r.is_error and "not one of the calendars" in r.content[0].text for r in asked)
    assert len(own["events"]) == 1
    paths = [r.split(" ")[1] for r in proxy.requests]
    assert not [p for p in paths if not p.startswith(("/willi/", "/.well-known/")) and p != "/"], paths
