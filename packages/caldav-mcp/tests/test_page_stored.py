"""The approval page shows what a caldav-mcp change touches, as stored, and only the page does (issue 31).

caldav-mcp runs in process against Radicale with its approval page served on
a loopback port (``approval_core.running_page``) and a push to the real ntfy.
A client that declares no elicitation makes each guarded call; the person
opens the page in Debian's Chromium (virtual passkey) and reads the stored
entry there: a delete, an edit (before -> after), a move (both calendars by
display name), a series deletion (its occurrences listed) and, under the
every-write profile, a create (the exact body). A hostile event (markup,
U+202E, zero-width characters, 20,000 characters, "Approved by IT") is drawn
as data, and none of its text reaches the model's result (text,
structuredContent, ``_meta``), the push or the audit log. A form dialog gets
the link to a read-only view instead, which shows the stored entry.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as mt
import pytest
from browser import browser, model_sees, page_of, paired, stored_part
from ntfy_server import NtfyServer
from page_push import push_settings, pushed, real_ntfy

from approval_core import ApprovalSettings
from approval_core.page.loopback import running_page
from approval_core.page.stored_markup import STORED_HEADING
from approval_core.testing import DialogLog, approval_of, connect, decline
from approval_core.testing.recorders import AuditRecorder
from caldav_helpers import ics, vevent

pytestmark = [pytest.mark.anyio, pytest.mark.real_ntfy]

TOPIC = "approvals-caldav"
UID = "hostile-page@example.org"
MARKUP = "<script>alert(1)</script><b>Approve now</b>"
SUMMARY = f"{MARKUP} Invoice \u202etxt.exe Pay\u200bment"
LOCATION = "Approved by IT " + "L" * 20_000
DESCRIPTION = "Nothing to see"
STORED_VALUES = ("alert(1)", "Approve now", "Invoice", "txt.exe", "Pay\u200bment", "Approved by IT", "LLLLLLLLLL")
"""Fragments of the hostile event: each may appear on the page only, in its stored-data section."""
SETTLED = ("Approved", "not approved", "Refused", "expired")


@pytest.fixture(scope="module")
def ntfy(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> Iterator[NtfyServer]:
    """The real ntfy (testing/ntfy_server.py; fails, never skips)."""
    with real_ntfy(tmp_path_factory.mktemp("ntfy"), pytestconfig) as server:
        yield server


def hostile_event() -> str:
    return ics(
        vevent(
            UID,
            ";TZID=Europe/Berlin:20261203T100000",
            ";TZID=Europe/Berlin:20261203T110000",
            SUMMARY,
            f"DESCRIPTION:{DESCRIPTION}\nLOCATION:{LOCATION}\n"
            'ORGANIZER;CN="Approved by IT":mailto:mallory@example.org\n'
            "ATTENDEE:mailto:a@example.org\nATTENDEE:mailto:b@example.org\n",
        )
    )


def series(uid: str, title: str, count: int = 3) -> str:
    return ics(
        vevent(
            uid,
            ";TZID=Europe/Berlin:20261201T090000",
            ";TZID=Europe/Berlin:20261201T093000",
            title,
            f"RRULE:FREQ=DAILY;COUNT={count}\n",
        )
    )


async def test_a_hostile_event_is_drawn_as_data_and_only_on_the_page(account, ntfy: NtfyServer, tmp_path: Path) -> None:
    account.put(account.work, "hostile.ics", hostile_event())
    server = account.build(ApprovalSettings(page=push_settings(ntfy, tmp_path, TOPIC)))
    page = server.approval_gate.page
    arguments = {"calendar": account.work, "id": UID}
    before = len(pushed(ntfy, TOPIC))
    with AuditRecorder() as audit:
        async with running_page(page), browser(1) as (person,):
            await paired(page, person)
            async with connect(server, revision="2026-07-28") as client:
                shown, pending = await page_of(client, person, "delete_event", arguments)
                inside, outside = await stored_part(person)
                scripts = await person.page.evaluate("() => document.querySelectorAll('script').length")
                injected = await person.page.evaluate("() => document.querySelectorAll('#stored b, [onerror]').length")
                local = await person.page.inner_text("#stored time")
                said = await person.click_and_wait("approve", SETTLED)
                assert said.startswith("Approved"), said
                deleted = await client.call_tool("delete_event", arguments)
    assert not deleted.is_error, deleted
    assert account.get(account.work, "hostile.ics")[0] == 404
    assert STORED_HEADING in shown
    assert MARKUP in inside, "the markup is drawn as text"
    assert scripts == 1, "only the page's own script"
    assert injected == 0
    assert "Invoice \\u202etxt.exe Pay\\u200bment" in inside, "invisible and direction characters shown as escapes"
    assert "\u202e" not in shown
    assert "Approved by IT" in inside
    assert "(19,015 more characters not shown)" in inside, "a 20,015-character location is cut at 1,000"
    assert "L" * 1001 not in shown
    assert "2026-12-03 10:00 Europe/Berlin" in inside
    assert local, "the browser's script wrote the instant"
    assert local != "2026-12-03T09:00:00Z", "the browser's script wrote the instant in its own zone"
    for value in STORED_VALUES:
        assert value not in outside, f"{value!r} of the stored event appeared outside the stored-data section"
    channels = {
        "model": model_sees(pending, deleted),
        "push": json.dumps(pushed(ntfy, TOPIC)[before:], ensure_ascii=False),
        "audit": json.dumps(audit.events, ensure_ascii=False),
    }
    for name, text in channels.items():
        for value in STORED_VALUES:
            assert value not in text, f"{value!r} of the stored event reached the {name}"


async def test_each_guarded_change_shows_what_it_touches(account, ntfy: NtfyServer, tmp_path: Path) -> None:
    account.put(
        account.work, "single.ics", ics(vevent("single@x", ":20261203T090000Z", ":20261203T100000Z", "Dentist"))
    )
    account.put(account.work, "weekly.ics", series("weekly@x", "Standup"))
    account.put(
        account.work, "moving.ics", ics(vevent("moving@x", ":20261204T090000Z", ":20261204T100000Z", "Offsite"))
    )
    account.put(account.work, "bulk.ics", series("bulk@x", "Yoga class", count=4))
    server = account.build(ApprovalSettings(page=push_settings(ntfy, tmp_path, TOPIC)))
    page = server.approval_gate.page
    with AuditRecorder() as audit:
        async with running_page(page), browser(1) as (person,):
            await paired(page, person)
            async with connect(server, revision="2025-11-25") as client:
                delete, r1 = await page_of(client, person, "delete_event", {"calendar": account.work, "id": "single@x"})
                arguments = {"calendar": account.work, "id": "weekly@x", "scope": "series", "summary": "Retro"}
                edit, r2 = await page_of(client, person, "update_event", arguments)
                edit_rows = await person.page.inner_text("#stored .changes")
                arguments = {"calendar": account.work, "id": "moving@x", "destination": account.home}
                move, r3 = await page_of(client, person, "move_event", arguments)
                arguments = {"calendar": account.work, "id": "bulk@x", "scope": "series"}
                bulk, r4 = await page_of(client, person, "delete_event", arguments)
                entries = await person.page.evaluate("() => document.querySelectorAll('#stored .entry').length")
    assert "Dentist" in delete
    assert "Work" in delete, "the calendar's display name"
    assert "Standup" in edit_rows
    assert "Retro" in edit_rows
    assert "Everything else in the entry is written back as it is stored." in edit
    assert "Offsite" in move
    assert "Moves to" in move
    assert account.home in move
    assert "Home" in move
    assert "Yoga class" in bulk
    assert entries == 5, "the series and each of its four occurrences"
    assert "FREQ=DAILY;COUNT=4" in bulk
    seen = model_sees(r1, r2, r3, r4) + json.dumps(audit.events) + json.dumps(pushed(ntfy, TOPIC))
    for title in ("Dentist", "Standup", "Offsite", "Yoga class"):
        assert title not in seen


async def test_an_every_write_create_shows_the_exact_body(account, ntfy: NtfyServer, tmp_path: Path) -> None:
    server = account.build(ApprovalSettings(profile="every-write", page=push_settings(ntfy, tmp_path, TOPIC)))
    page = server.approval_gate.page
    arguments = {"calendar": account.work, "summary": "Team lunch", "start": "2027-02-01T12:00:00Z", "uid": "lunch-1"}
    async with running_page(page), browser(1) as (person,):
        await paired(page, person)
        async with connect(server, revision="2026-07-28") as client:
            _, result = await page_of(client, person, "create_event", arguments)
            body = await person.page.inner_text("#bodies pre")
            operation = await person.page.inner_text(".dialog")
    assert "SUMMARY:Team lunch" in body
    assert "BEGIN:VEVENT" in body
    assert "UID:lunch-1" in body
    assert "only if nothing is stored under this name yet" in operation
    assert "If-None-Match" not in operation
    assert "Runs as the account 'willi' on " in operation
    assert "Team lunch" not in json.dumps(pushed(ntfy, TOPIC))
    assert account.get(account.work, "lunch-1.ics")[0] == 404
    assert not isinstance(result, mt.InputRequiredResult)


async def test_an_every_write_task_edit_shows_before_and_after(account, ntfy: NtfyServer, tmp_path: Path) -> None:
    task = "BEGIN:VTODO\nUID:task-1\nDTSTAMP:20261101T000000Z\nSUMMARY:Renew passport\nSTATUS:NEEDS-ACTION\nEND:VTODO\n"
    account.put(account.tasks_only, "task-1.ics", ics(task))
    server = account.build(ApprovalSettings(profile="every-write", page=push_settings(ntfy, tmp_path, TOPIC)))
    page = server.approval_gate.page
    async with running_page(page), browser(1) as (person,):
        await paired(page, person)
        async with connect(server, revision="2025-11-25") as client:
            arguments = {"calendar": account.tasks_only, "uid": "task-1"}
            shown, result = await page_of(client, person, "complete_task", arguments)
            changes = await person.page.inner_text("#stored .changes")
            body = await person.page.inner_text("#bodies pre")
    assert "Renew passport" in shown
    assert "NEEDS-ACTION" in changes
    assert "COMPLETED" in changes
    assert "STATUS:COMPLETED" in body
    assert "Renew passport" not in model_sees(result)


async def test_a_form_dialog_links_a_view_of_the_stored_entry(account, ntfy: NtfyServer, tmp_path: Path) -> None:
    account.put(account.work, "hostile.ics", hostile_event())
    server = account.build(ApprovalSettings(page=push_settings(ntfy, tmp_path, TOPIC)))
    page = server.approval_gate.page
    views: list[str] = []
    async with running_page(page), browser(1) as (person,):

        async def look_then_decline(context: Any, params: mt.ElicitRequestParams) -> mt.ElicitResult | mt.ErrorData:
            link = params.message.rsplit("\n", 1)[1].removeprefix("See what this changes: ")
            views.append(await person.open(link))
            views.append(await person.page.inner_text("#stored"))
            return await decline(context, params)

        log = DialogLog(look_then_decline)
        async with connect(server, revision="2025-11-25", answer=log) as client:
            result = await client.call_tool("delete_event", {"calendar": account.work, "id": UID})
            closed = await person.open(person.page.url)
    assert result.is_error
    assert approval_of(result)["outcome"] == "declined"
    (message,) = log.messages
    assert "See what this changes: http://localhost:" in message
    view, stored = views
    assert "changes nothing" in view
    assert "Approve" not in await_nothing(view)
    assert MARKUP in stored
    assert "Approved by IT" in stored
    assert "Approved by IT" not in closed
    assert "closed" in closed
    for value in STORED_VALUES:
        assert value not in message
        assert value not in model_sees(result)
    assert account.get(account.work, "hostile.ics")[0] == 200


def await_nothing(text: str) -> str:
    """The view's text less its stored section's words (the stored event itself says "Approve now")."""
    return text.replace("Approve now", "").replace("Approved by IT", "")
