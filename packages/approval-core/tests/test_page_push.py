"""The approval page's push (``APPROVAL_PUSH_URL``) received by the real ntfy 2.13, read back with its poll API.

ntfy has no end-to-end encryption, so the push carries the server's name, the
tool, the code and a ``view`` action opening the page, and nothing a caller
sent. The ntfy server runs with ``--auth-default-access deny-all`` and the
ACL ``docs/ntfy-mcp.md`` gives: the server's push account may only write the
topic, the person's phone account may only read it. The passkey is paired in
Debian's Chromium (``testing/browser.py``); the example server's gate is the
real one, its page served on a loopback port.
"""

from __future__ import annotations

import base64
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from browser import Browser, browser, pair_on
from ntfy_server import NtfyServer
from page_push import real_ntfy
from soft_passkey import SoftPasskey

from approval_core import ApprovalSettings
from approval_core.page.loopback import running_page
from approval_core.page.settings import PageSettings
from approval_core.testing import approval_of, connect
from example_server import Example

pytestmark = [pytest.mark.anyio, pytest.mark.real_ntfy]

TOPIC = "approvals-willi"
PUSHER, PHONE, TOOLS = "approval-push", "willi-phone", "ntfy-mcp"
PASSWORD = "a-password-for-tests"
HOSTILE = {
    "username": "<script>alert(1)</script> Approve now",
    "topic": "Code: ABC-1",
    "password": "hunter2-never-in-a-push",
}
HOSTILE_BOOK = "/books/<img src=x onerror=alert(1)>/ Code: ZZZ-9 approved by IT/"


@pytest.fixture(scope="module")
def ntfy(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> Iterator[NtfyServer]:
    """The real ntfy (testing/ntfy_server.py; fails, never skips), with the push ACL of docs/ntfy-mcp.md."""
    with real_ntfy(tmp_path_factory.mktemp("ntfy"), pytestconfig) as server:
        for user in (PUSHER, PHONE, TOOLS):
            server.add_user(user, PASSWORD)
        auth = str(server.workdir / "auth.db")
        rules = [
            (PUSHER, TOPIC, "write-only"),
            (PHONE, TOPIC, "read-only"),
            (TOOLS, "*", "read-write"),  # the worst case: someone granted ntfy-mcp's account every topic
            (TOOLS, TOPIC, "deny"),
        ]
        for user, topic, permission in rules:
            subprocess.run(  # noqa: S603 - the ntfy binary under test, with fixed arguments
                [str(server.binary), "access", "--auth-file", auth, user, topic, permission],
                check=True,
                capture_output=True,
                timeout=60,
            )
        yield server


def basic(user: str) -> tuple[str, str]:
    return (user, PASSWORD)


@pytest.fixture
def token_file(ntfy: NtfyServer, tmp_path: Path) -> Path:
    """An ntfy access token of the push account (``POST /v1/account/token``), in an owner-only file."""
    made = httpx2.post(f"{ntfy.url}/v1/account/token", json={"label": "approval push"}, auth=basic(PUSHER))
    assert made.status_code == 200, made.text
    path = tmp_path / "push.token"
    path.write_text(made.json()["token"] + "\n")
    path.chmod(0o600)
    return path


def received(ntfy: NtfyServer) -> list[dict[str, Any]]:
    """Every message on :data:`TOPIC`, read as the person's phone reads it (``GET /<topic>/json?poll=1``)."""
    polled = httpx2.get(f"{ntfy.url}/{TOPIC}/json", params={"poll": "1", "since": "all"}, auth=basic(PHONE))
    assert polled.status_code == 200, polled.text
    return [json.loads(line) for line in polled.text.splitlines() if line.strip()]


async def pair(example: Example, person: Browser) -> None:
    page = example.gate.page
    assert page is not None
    said = await pair_on(page, person)
    assert said.startswith("Paired"), said


async def test_each_pending_approval_is_pushed_once_with_the_server_tool_code_and_page_and_no_caller_value(
    ntfy: NtfyServer, token_file: Path, tmp_path: Path
) -> None:
    settings = PageSettings(
        passkeys_file=tmp_path / "passkeys.json", push_url=f"{ntfy.url}/{TOPIC}", push_token_file=token_file
    )
    example = Example(ApprovalSettings(page=settings))
    page = example.gate.page
    assert page is not None
    async with running_page(page), browser(1) as (person,):
        await pair(example, person)
        async with connect(example.server, revision="2026-07-28") as client:  # no elicitation: the link
            granted = approval_of(await client.call_tool("grant", HOSTILE))
            again = approval_of(await client.call_tool("grant", HOSTILE))  # the same pending approval
            deleted = approval_of(await client.call_tool("delete_items", {"book": HOSTILE_BOOK, "ids": ["a"]}))
    assert [r["outcome"] for r in (granted, again, deleted)] == ["approval_pending"] * 3
    assert again["approval_url"] == granted["approval_url"]
    messages = received(ntfy)
    assert [m["event"] for m in messages] == ["message"] * 3, messages
    paired, *pushes = messages
    assert paired["title"] == "A passkey was added to your approval page", paired
    assert "example-mcp" in paired["message"]
    assert "actions" not in paired
    assert [(m["title"], m["message"]) for m in pushes] == [
        ("example-mcp asks for your approval", f"Grant a user access to a topic (code {granted['code']})"),
        ("example-mcp asks for your approval", f"Delete 1 item(s) (code {deleted['code']})"),
    ]
    actions = [[{k: v for k, v in action.items() if k != "id"} for action in m["actions"]] for m in pushes]
    view = {"action": "view", "label": "Open the approval page", "clear": True}
    assert actions == [[{**view, "url": outcome["approval_url"]}] for outcome in (granted, deleted)]
    assert all(m["topic"] == TOPIC and m["priority"] == 4 for m in pushes)
    everything = json.dumps(messages)
    for value in [*HOSTILE.values(), HOSTILE_BOOK, "<script", "<img", "ABC-1", "ZZZ-9", "hunter2", "Approve now"]:
        assert value not in everything, f"{value!r} reached the push"
    assert example.grants == []
    assert example.items == {"a", "b", "c"}


async def test_a_push_ntfy_refuses_is_logged_and_the_refusal_still_carries_the_link(
    ntfy: NtfyServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A token that may not write the topic: ntfy answers 403; the call still gets its link and code."""
    wrong = tmp_path / "reader.token"
    made = httpx2.post(f"{ntfy.url}/v1/account/token", json={"label": "phone"}, auth=basic(PHONE))
    wrong.write_text(made.json()["token"])
    wrong.chmod(0o600)
    settings = PageSettings(
        passkeys_file=tmp_path / "passkeys.json", push_url=f"{ntfy.url}/{TOPIC}", push_token_file=wrong
    )
    example = Example(ApprovalSettings(page=settings))
    page = example.gate.page
    assert page is not None
    before = len(received(ntfy))
    async with running_page(page), browser(1) as (person,):
        await pair(example, person)
        async with connect(example.server, revision="2026-07-28") as client:
            pending = approval_of(await client.call_tool("delete_items", {"book": "b", "ids": ["a"]}))
    assert pending["outcome"] == "approval_pending"
    assert pending["approval_url"].startswith("http://localhost:")
    assert len(received(ntfy)) == before, "a reader's token published"
    refused = [r.getMessage() for r in caplog.records if r.name == "approval_core.push"]
    assert any("refused with HTTP 403" in text for text in refused), refused


def test_the_documented_acl_keeps_the_tool_account_off_the_push_topic(ntfy: NtfyServer) -> None:
    """ntfy-mcp's account, even granted ``*``, can neither read nor publish the push topic; its own topics work."""
    assert (
        httpx2.post(f"{ntfy.url}/{TOPIC}", content=b"Approve: http://evil.example", auth=basic(TOOLS)).status_code
        == 403
    )
    polled = httpx2.get(f"{ntfy.url}/{TOPIC}/json", params={"poll": "1", "since": "all"}, auth=basic(TOOLS))
    assert polled.status_code == 403, polled.text
    assert httpx2.post(f"{ntfy.url}/alerts", content=b"backup done", auth=basic(TOOLS)).status_code == 200
    assert httpx2.get(f"{ntfy.url}/{TOPIC}/json", params={"poll": "1"}, auth=basic(PUSHER)).status_code == 403
    assert httpx2.post(f"{ntfy.url}/{TOPIC}", content=b"x", auth=basic(PHONE)).status_code == 403


async def test_a_passkey_appended_to_the_file_approves_nothing_and_the_phone_is_warned(
    ntfy: NtfyServer, token_file: Path, tmp_path: Path
) -> None:
    """A process that writes the passkey file adds its own key (one a virtual authenticator holds): it is not paired."""
    passkeys = tmp_path / "passkeys.json"
    settings = PageSettings(passkeys_file=passkeys, push_url=f"{ntfy.url}/{TOPIC}", push_token_file=token_file)
    example = Example(ApprovalSettings(page=settings))
    page = example.gate.page
    assert page is not None
    intruder = SoftPasskey()
    before = len(received(ntfy))
    async with running_page(page), browser(2) as (person, stranger):
        await pair(example, person)
        body = json.loads(passkeys.read_text())
        body["credentials"].append(intruder.entry())
        passkeys.write_text(json.dumps(body))
        await stranger.hold_only([intruder.devtools_credential()])
        async with connect(example.server, revision="2026-07-28") as client:
            pending = approval_of(await client.call_tool("delete_items", {"book": "b", "ids": ["a"]}))
            url = str(pending["approval_url"])
            pid = url.rsplit("/", 1)[1]
            await stranger.open(url)
            state = await stranger.click_and_wait("approve", ("Approved", "not approved", "No passkey"))
            assert "Approved" not in state
            csrf = await stranger.page.get_attribute("main", "data-csrf")
            status, options = await stranger.post_from_page(f"/approval/a/{pid}/options", {}, csrf)
            assert status == 200
            challenge = base64.urlsafe_b64decode(options["publicKey"]["challenge"] + "==")
            signed = intruder.assertion(challenge, url.split("/approval/")[0])
            status, answer = await stranger.post_from_page(
                f"/approval/a/{pid}/decide", {"choice": "approve", "credential": signed}, csrf
            )
            assert status == 403, answer
            assert "not one paired" in answer["message"]
            again = approval_of(await client.call_tool("delete_items", {"book": "b", "ids": ["a"]}))
            assert again["outcome"] == "approval_pending"
    assert example.items == {"a", "b", "c"}
    titles = [m["title"] for m in received(ntfy)[before:]]
    assert titles == [
        "A passkey was added to your approval page",
        "example-mcp asks for your approval",
        "A passkey in your approval page's file approves nothing",
    ], titles


async def test_a_new_first_passkey_is_announced_once(ntfy: NtfyServer, token_file: Path, tmp_path: Path) -> None:
    """The file replaced by one whose first passkey is another: the page's next request pushes it, once."""
    passkeys = tmp_path / "passkeys.json"
    settings = PageSettings(passkeys_file=passkeys, push_url=f"{ntfy.url}/{TOPIC}", push_token_file=token_file)
    example = Example(ApprovalSettings(page=settings))
    page = example.gate.page
    assert page is not None
    before = len(received(ntfy))
    async with running_page(page) as base, browser(1) as (person,):
        await pair(example, person)
        await page.announce_passkeys()  # as at a start: the first passkey is the one paired, nothing to say
        replaced = {"version": 1, "user_id": "AAAA", "credentials": [SoftPasskey().entry()], "pairing": None}
        passkeys.write_text(json.dumps(replaced))
        for _ in range(2):
            await person.open(f"{base}/approval.css")
    messages = received(ntfy)[before:]
    assert [m["title"] for m in messages] == [
        "A passkey was added to your approval page",
        "Your approval page has a new first passkey",
    ]
    assert str(passkeys) in str(messages[1]["message"])
