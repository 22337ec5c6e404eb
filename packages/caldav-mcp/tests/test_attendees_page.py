"""The approval page shows the people an invitation reaches; the model, the push and the audit never do.

caldav-mcp runs against Xandikos (RFC 6638 scheduling) as alice, with its
approval page on a loopback port and a push to the real ntfy; a client that
declares no elicitation makes the calls, and the person reads the page in
Chromium: a new event with its attendees, then an update's attendee list as
stored -> written.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import browser, model_sees, page_of, paired, stored_part
from dav_servers import DavServer
from ntfy_server import NtfyServer
from page_push import push_settings, pushed, real_ntfy

from approval_core import ApprovalSettings
from approval_core.page.loopback import running_page
from approval_core.testing import connect
from approval_core.testing.recorders import AuditRecorder
from caldav_mcp.server import build_server
from caldav_mcp.settings import CalDAVSettings

pytestmark = [pytest.mark.anyio, pytest.mark.real_ntfy]

TOPIC = "approvals-invitations"
SETTLED = ("Approved", "not approved", "Refused", "expired")


@pytest.fixture(scope="module")
def ntfy(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> Iterator[NtfyServer]:
    """The real ntfy (testing/ntfy_server.py; fails, never skips)."""
    with real_ntfy(tmp_path_factory.mktemp("ntfy"), pytestconfig) as server:
        yield server


async def test_the_page_lists_the_attendees_and_nothing_else_carries_them(
    xandikos_pair: DavServer,
    ntfy: NtfyServer,
    tmp_path: Path,
) -> None:
    settings = CalDAVSettings(xandikos_pair.url, "alice", "unused-behind-trusted-header")
    approval = ApprovalSettings(page=push_settings(ntfy, tmp_path, TOPIC))
    server = build_server(approval, settings, headers=xandikos_pair.headers_for("alice"))
    page = server.approval_gate.page
    calendar, uid = "/alice/calendars/calendar/", "page-invite"
    create = {
        "calendar": calendar,
        "summary": "Board meeting",
        "start": "2026-12-18T10:00:00Z",
        "uid": uid,
        "attendees": [{"address": "bob@example.org", "name": "Bob Builder"}, {"address": "zoe@far.example"}],
    }
    update = {"calendar": calendar, "id": uid, "attendees": [{"address": "yves@example.org"}]}
    before = len(pushed(ntfy, TOPIC))
    with AuditRecorder() as audit:
        async with running_page(page), browser(1) as (person,):
            await paired(page, person)
            async with connect(server, revision="2025-11-25") as client:
                shown, asked = await page_of(client, person, "create_event", create)
                made_inside, made_outside = await stored_part(person)
                said = await person.click_and_wait("approve", SETTLED)
                assert said.startswith("Approved"), said
                made = await client.call_tool("create_event", create)
                assert not made.is_error, made
                _, asked_again = await page_of(client, person, "update_event", update)
                rows = await person.page.inner_text("#stored .changes")
    assert "Invite 2 person(s), 1 of them outside the organiser's domain, to an event" in shown
    for address in ("mailto:bob@example.org", "mailto:zoe@far.example", "mailto:alice@example.org"):
        assert address in made_inside
    assert "New event (not stored yet)" in made_inside
    assert "bob@example.org" not in made_outside
    assert "Attendees" in rows
    assert "mailto:bob@example.org, mailto:zoe@far.example" in rows
    assert "mailto:yves@example.org" in rows
    channels = {
        "model": model_sees(asked, made, asked_again),
        "push": json.dumps(pushed(ntfy, TOPIC)[before:], ensure_ascii=False),
        "audit": json.dumps(audit.events, ensure_ascii=False),
    }
    for name, text in channels.items():
        for private in ("bob@", "Bob Builder", "zoe@", "yves@", "Board meeting"):
            assert private not in text, f"{private!r} reached the {name}"
