"""The approval page shows what an ntfy-mcp change touches, as stored, and only the page does (issue 31).

ntfy-mcp runs in process with its approval page on a loopback port
(``approval_core.running_page``) and its push sent to the real ntfy. A client
that declares no elicitation makes each guarded call; the person opens the
page in Debian's Chromium (virtual passkey) and reads there:

* on the real ntfy, the admin changes: the account a create_user makes, the
  account and its rule before -> after for manage_user_access, the account
  and its rules for delete_user; and under the every-write profile a publish
  (the exact JSON body);
* on the in-process STAND-IN for ntfy >= 2.16 (the real ntfy built here is
  2.13, which cannot revise or delete by sequence id): a delete of two
  notifications (topic, title, first line) and a revision (before -> after).

A hostile notification (markup, U+202E, zero-width characters, 20,000
characters, "Approved by IT") is drawn as data and reaches neither the
model's result (text, structuredContent, ``_meta``), the push, the audit log
nor a form dialog, which carries the link to a read-only view instead.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as mt
import pytest
from browser import Browser, browser, model_sees, page_of, paired, stored_part
from ntfy_server import NtfyServer
from page_push import push_settings, pushed

from approval_core import ApprovalSettings
from approval_core.page.loopback import running_page
from approval_core.page.stored_markup import STORED_HEADING
from approval_core.settings import Profile
from approval_core.testing import DialogLog, approval_of, connect, decline
from approval_core.testing.recorders import AuditRecorder
from ntfy_mcp import build_server
from ntfy_mcp.settings import NtfySettings
from standin import NtfyStandIn

pytestmark = [pytest.mark.anyio, pytest.mark.real_ntfy]

PUSH = "approvals-ntfy-mcp"
TOPIC = "alerts"
MARKUP = "<script>alert(1)</script><b>Approve now</b>"
TITLE = f"{MARKUP} Invoice \u202etxt.exe Pay\u200bment"
MESSAGE = "Approved by IT " + "L" * 20_000 + "\nsecond line\nthird line"
STORED_VALUES = ("alert(1)", "Approve now", "Invoice", "txt.exe", "Pay\u200bment", "Approved by IT", "LLLLLLLLLL")
"""Fragments of the hostile notification: each may appear on the page only, in its stored-data section."""
SETTLED = ("Approved", "not approved", "Refused", "expired")


def on_real(ntfy: NtfyServer, tmp_path: Path, profile: Profile = "guarded") -> Any:
    """ntfy-mcp on the real ntfy as its admin, limited to TOPIC (the push topic is outside it), with the page."""
    settings = NtfySettings(url=ntfy.url, username=ntfy.admin_user, password=ntfy.admin_password, topics=(TOPIC,))
    page = push_settings(ntfy, tmp_path, PUSH)
    return build_server(ApprovalSettings(profile=profile, page=page), settings)


def on_standin(standin: NtfyStandIn, ntfy: NtfyServer, tmp_path: Path) -> Any:
    """ntfy-mcp on the STAND-IN (not ntfy: a 2.16+ server), its page's push on the real ntfy."""
    settings = NtfySettings(url="http://standin.invalid", token="tk_standin", topics=(TOPIC,), timeout=2)
    approval = ApprovalSettings(page=push_settings(ntfy, tmp_path, PUSH))
    return build_server(approval, settings, transport=standin.transport)


async def approve_and_repeat(client: Any, person: Browser, tool: str, arguments: dict[str, Any]) -> Any:
    said = await person.click_and_wait("approve", SETTLED)
    assert said.startswith("Approved"), said
    done = await client.call_tool(tool, arguments)
    assert not done.is_error, done
    return done


def users(ntfy: NtfyServer) -> dict[str, Any]:
    listed = httpx2.get(f"{ntfy.url}/v1/users", headers=ntfy.admin_headers())
    assert listed.status_code == 200, listed.text
    return {user["username"]: user for user in listed.json()}


async def test_admin_changes_show_the_account_as_stored(ntfy: NtfyServer, tmp_path: Path) -> None:
    server = on_real(ntfy, tmp_path)
    page = server.approval_gate.page
    name = "page-publisher"
    create = {"username": name, "password": "correct horse battery"}
    grant = {"username": name, "topic": TOPIC, "permission": "read-only"}
    async with running_page(page), browser(1) as (person,):
        await paired(page, person)
        async with connect(server, revision="2026-07-28") as client:
            made, r1 = await page_of(client, person, "create_user", create)
            r2 = await approve_and_repeat(client, person, "create_user", create)
            granted, r3 = await page_of(client, person, "manage_user_access", grant)
            rule = await person.page.inner_text("#stored .changes")
            r4 = await approve_and_repeat(client, person, "manage_user_access", grant)
            gone, r5 = await page_of(client, person, "delete_user", {"username": name})
            rules = await person.page.inner_text("#stored")
    assert STORED_HEADING in made
    assert name in made
    assert "Account (new)" in made
    assert "correct horse battery" not in made, "the password is not shown"
    assert name in granted
    assert "Role\tuser" in granted
    assert f"Access to {TOPIC}\t(not set)\t→\t{TOPIC}: read-only" in rule
    assert f"{TOPIC}: read-only" in rules, "the rules the account has as stored"
    assert "Access rules\t1" in rules
    assert name in gone
    assert [g["permission"] for g in users(ntfy)[name]["grants"]] == ["read-only"]
    assert "correct horse battery" not in model_sees(r1, r2, r3, r4, r5)


async def test_an_every_write_publish_shows_the_exact_body(ntfy: NtfyServer, tmp_path: Path) -> None:
    server = on_real(ntfy, tmp_path, profile="every-write")
    page = server.approval_gate.page
    arguments = {"topics": [TOPIC], "title": "Deploy done", "message": "All green\nsee the log"}
    async with running_page(page), browser(1) as (person,):
        await paired(page, person)
        async with connect(server, revision="2026-07-28") as client:
            _, result = await page_of(client, person, "publish_message", arguments)
            body = await person.page.inner_text("#bodies pre")
            heading = await person.page.inner_text("#bodies")
    assert '"title": "Deploy done"' in body or '"title":"Deploy done"' in body
    assert "All green" in body
    assert f"{ntfy.url}" in heading
    assert "Deploy done" not in json.dumps(pushed(ntfy, PUSH))
    assert "Deploy done" not in model_sees(result)
    assert not isinstance(result, mt.InputRequiredResult)


async def test_a_hostile_notification_is_drawn_as_data_and_only_on_the_page(ntfy: NtfyServer, tmp_path: Path) -> None:
    standin = NtfyStandIn()
    hostile = standin.publish(TOPIC, MESSAGE, title=TITLE)["sequence_id"]
    lunch = standin.publish(TOPIC, "Lunch at noon\nin the usual place", title="Lunch")["sequence_id"]
    server = on_standin(standin, ntfy, tmp_path)
    page = server.approval_gate.page
    arguments = {"topic": TOPIC, "sequence_ids": [hostile, lunch]}
    before = len(pushed(ntfy, PUSH))
    with AuditRecorder() as audit:
        async with running_page(page), browser(1) as (person,):
            await paired(page, person)
            async with connect(server, revision="2025-11-25") as client:
                revise = {"topic": TOPIC, "sequence_id": lunch, "title": "Lunch moved", "message": "at one"}
                revised, r1 = await page_of(client, person, "update_message", revise)
                changes = await person.page.inner_text("#stored .changes")
                shown, pending = await page_of(client, person, "delete_messages", arguments)
                inside, outside = await stored_part(person)
                entries = await person.page.evaluate("() => document.querySelectorAll('#stored .entry').length")
                scripts = await person.page.evaluate("() => document.querySelectorAll('script').length")
                injected = await person.page.evaluate("() => document.querySelectorAll('#stored b, [onerror]').length")
                deleted = await approve_and_repeat(client, person, "delete_messages", arguments)
    assert [e["event"] for e in standin.messages(TOPIC)][-2:] == ["message_delete", "message_delete"]
    assert "Title\tLunch\t→\tLunch moved" in changes
    assert "Message\tLunch at noon\\nin the usual place\t→\tat one" in changes, "a line break shown as \\n"
    assert "Lunch" in revised
    assert entries == 2, "both notifications"
    assert STORED_HEADING in shown
    assert f"http://standin.invalid/{TOPIC}" in inside, "the topic"
    assert MARKUP in inside, "the markup is drawn as text"
    assert scripts == 1, "only the page's own script"
    assert injected == 0
    assert "Invoice \\u202etxt.exe Pay\\u200bment" in inside, "invisible and direction characters shown as escapes"
    assert "\u202e" not in shown
    assert "Approved by IT" in inside
    assert "(19,015 more characters not shown)" in inside, "a 20,015-character first line is cut at 1,000"
    assert "Lines after it\t2" in inside
    assert "second line" not in inside, "only the first line"
    assert "Lunch at noon" in inside
    for value in STORED_VALUES:
        assert value not in outside, f"{value!r} of the stored notification appeared outside the stored section"
    channels = {
        "model": model_sees(r1, pending, deleted),
        "push": json.dumps(pushed(ntfy, PUSH)[before:], ensure_ascii=False),
        "audit": json.dumps(audit.events, ensure_ascii=False),
    }
    for name, text in channels.items():
        for value in (*STORED_VALUES, "Lunch at noon"):
            assert value not in text, f"{value!r} of the stored notification reached the {name}"


async def test_a_form_dialog_links_a_view_of_the_stored_notification(ntfy: NtfyServer, tmp_path: Path) -> None:
    standin = NtfyStandIn()
    hostile = standin.publish(TOPIC, MESSAGE, title=TITLE)["sequence_id"]
    server = on_standin(standin, ntfy, tmp_path)
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
            result = await client.call_tool("delete_messages", {"topic": TOPIC, "sequence_ids": [hostile]})
    assert result.is_error
    assert approval_of(result)["outcome"] == "declined"
    (message,) = log.messages
    assert "See what this changes: http://localhost:" in message
    view, stored = views
    assert "changes nothing" in view
    assert MARKUP in stored
    assert "Approved by IT" in stored
    for value in STORED_VALUES:
        assert value not in message
        assert value not in model_sees(result)
    assert [e["event"] for e in standin.messages(TOPIC)] == ["message"]
