"""A standing grant never covers a deletion that makes a scheduling server mail other people.

A grant's terms are a tool, a calendar, a count and a time; the dialog a person would have seen for an
organised event says the server sends a cancellation to N people, and a grant allows a call nobody sees.
Xandikos (RFC 6638 scheduling: ``xandikos_pair`` in conftest, alice organising, bob invited) delivers the
cancellation; the grant is kept in the page's record store as the page keeps one once the passkey signed
its terms (that ceremony is ``test_page_grants.py``).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from soft_passkey import SoftPasskey, b64url

from approval_core import ApprovalSettings
from approval_core.asking.grants import GrantTerms
from approval_core.page.grants import GRANT_META_KEY
from approval_core.page.loopback import running_page
from approval_core.page.settings import PageSettings
from approval_core.testing import DialogLog, accept, connect
from caldav_helpers import structured
from caldav_mcp.server import build_server
from caldav_mcp.settings import CalDAVSettings

pytestmark = pytest.mark.anyio

CALENDAR = "/alice/calendars/calendar/"


def _passkeys(tmp_path: Path) -> Path:
    path = tmp_path / "passkeys.json"
    body = {"version": 1, "user_id": b64url(b"u" * 16), "credentials": [SoftPasskey().entry()], "pairing": None}
    path.write_text(json.dumps(body))
    path.chmod(0o600)
    return path


async def test_a_grant_never_covers_a_deletion_that_mails_cancellations(xandikos_pair, tmp_path: Path) -> None:
    settings = ApprovalSettings(page=PageSettings(passkeys_file=_passkeys(tmp_path)), grants=True)
    server = build_server(
        settings,
        CalDAVSettings(xandikos_pair.url, "alice", "unused-behind-trusted-header"),
        headers=xandikos_pair.headers_for("alice"),
    )
    page = server.approval_gate.page
    assert page is not None
    assert page.grant_desk is not None
    log = DialogLog(accept)
    async with running_page(page), connect(server, revision="2025-11-25", answer=log) as client:
        for uid, attendees in (("organised", [{"address": "bob@example.org"}]), ("alone", None)):
            event = {"calendar": CALENDAR, "summary": "Offsite", "start": "2026-12-12", "uid": uid}
            await client.call_tool("create_event", event if attendees is None else {**event, "attendees": attendees})
        assert page.grant_desk.backend is not None
        backend = page.grant_desk.backend()
        terms = GrantTerms("caldav-mcp", ("delete_event",), CALENDAR, (), None, 5, int(time.time()) + 600, backend)
        await page.grant_desk.book.make(terms)
        asked_before = len(log.messages)
        organised = await client.call_tool("delete_event", {"calendar": CALENDAR, "id": "organised"})
        asked = log.messages[asked_before:]
        alone = await client.call_tool("delete_event", {"calendar": CALENDAR, "id": "alone"})
    assert GRANT_META_KEY not in (organised.meta or {}), "a deletion that mails people is not inside a grant"
    assert any("the server sends a cancellation to 1 person(s)" in text for text in asked), asked
    assert structured(organised)["cancellations"] == 1
    assert (alone.meta or {})[GRANT_META_KEY]["uses_left"] == 4, "a deletion that sends nothing is inside it"
    assert len(log.messages) == asked_before + len(asked)


CHORE = (
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//tests//EN\r\nBEGIN:VTODO\r\nUID:chore\r\n"
    "DTSTAMP:20261201T000000Z\r\nDTSTART;VALUE=DATE:20261207\r\nDUE;VALUE=DATE:20261208\r\n"
    "RRULE:FREQ=WEEKLY;COUNT=4\r\nSUMMARY:Chore\r\nEND:VTODO\r\nEND:VCALENDAR\r\n"
)


async def test_a_grant_covers_one_entry_or_one_occurrence_never_a_whole_series(account, tmp_path: Path) -> None:
    """A grant counts calls, so a call inside it must reach one thing: a whole series of 3 asks, as does a
    recurring task; one occurrence of it, or an event that does not repeat, is inside the grant."""
    settings = ApprovalSettings(page=PageSettings(passkeys_file=_passkeys(tmp_path)), grants=True)
    server = account.build(settings)
    page = server.approval_gate.page
    assert page is not None
    assert page.grant_desk is not None
    series = {"summary": "Standup", "start": "2026-12-07T09:00:00Z", "end": "2026-12-07T09:15:00Z"}
    log = DialogLog(accept)
    async with running_page(page), connect(server, revision="2025-11-25", answer=log) as client:
        made = structured(
            await client.call_tool(
                "create_event", {"calendar": account.work, **series, "rrule": "FREQ=DAILY;COUNT=3", "uid": "standup"}
            )
        )
        await client.call_tool("create_event", {"calendar": account.work, **series, "uid": "once"})
        account.put(account.tasks_only, "chore.ics", CHORE)
        assert page.grant_desk.backend is not None
        backend = page.grant_desk.backend()
        for calendar, tool in ((account.work, "delete_event"), (account.tasks_only, "delete_task")):
            terms = GrantTerms("caldav-mcp", (tool,), calendar, (), None, 5, int(time.time()) + 600, backend)
            await page.grant_desk.book.make(terms)
        occurrence = await client.call_tool(
            "delete_event",
            {"calendar": account.work, "id": f"{made['uid']}#20261208T090000Z", "scope": "occurrence"},
        )
        asked_before = len(log.messages)
        whole = await client.call_tool("delete_event", {"calendar": account.work, "id": "standup", "scope": "series"})
        task = await client.call_tool("delete_task", {"calendar": account.tasks_only, "uid": "chore"})
        asked = len(log.messages) - asked_before
        once = await client.call_tool("delete_event", {"calendar": account.work, "id": "once"})
    assert GRANT_META_KEY in (occurrence.meta or {}), occurrence
    assert GRANT_META_KEY not in (whole.meta or {}), "a whole series is not inside a grant"
    assert GRANT_META_KEY not in (task.meta or {}), "a recurring task is not inside a grant"
    assert asked == 2
    assert (once.meta or {})[GRANT_META_KEY]["uses_left"] == 3
    assert not whole.is_error
    assert not task.is_error
    assert not once.is_error
