"""Attacks on APPROVAL_PROFILE=every-write against the real ntfy: each test states the promise it checks."""

from __future__ import annotations

import uuid
from typing import Any

import httpx2
import mcp_types as types
import pytest
from ntfy_server import NtfyServer

from approval_core import ApprovalSettings
from approval_core.testing import (
    DialogLog,
    accept,
    bad_content,
    call_once,
    cancel,
    changes_then_approves,
    client_error,
    connect,
    decline,
    ticked,
    unticked,
)
from ntfy_mcp import build_server
from ntfy_mcp.settings import NtfySettings

pytestmark = pytest.mark.anyio


def profiled(ntfy: NtfyServer, profile: str = "every-write") -> Any:
    settings = NtfySettings(url=ntfy.url, username=ntfy.admin_user, password=ntfy.admin_password)
    return build_server(ApprovalSettings(profile=profile), settings)  # type: ignore[arg-type]


def users(ntfy: NtfyServer) -> dict[str, dict[str, Any]]:
    response = httpx2.get(f"{ntfy.url}/v1/users", headers=ntfy.admin_headers())
    response.raise_for_status()
    return {u["username"]: u for u in response.json()}


def grant(ntfy: NtfyServer, username: str, topic: str, permission: str) -> None:
    body = {"username": username, "topic": topic, "permission": permission}
    response = httpx2.put(f"{ntfy.url}/v1/users/access", json=body, headers=ntfy.admin_headers())
    response.raise_for_status()


def changed_meanwhile_held(profile: str, log: DialogLog, result: types.CallToolResult) -> None:
    """A yes given to the account as it was never acts on the account as it is now.

    Under ``guarded`` the call is refused (ChangedMeanwhile); under ``every-write`` the call runs again
    after the yes, builds a different request from the changed account, and asks again (declined here).
    """
    assert result.is_error, f"{profile}: the account changed during the dialog, yet the call acted: {result.content}"
    if profile == "guarded":
        assert len(log.messages) == 1
        assert "changed while the person was being asked" in result.content[0].text
    else:
        assert len(log.messages) == 2, "the changed account was not asked about again"
        assert log.messages[0] != log.messages[1]


@pytest.mark.parametrize("profile", ["guarded", "every-write"])
async def test_delete_user_is_not_run_on_an_account_that_changed_while_the_person_was_asked(
    ntfy: NtfyServer, profile: str
) -> None:
    """The yes binds the version the dialog was built from (the account's role and rules as read)."""
    name = f"victim{uuid.uuid4().hex[:8]}"
    ntfy.add_user(name, "pw-12345678")
    log = DialogLog(changes_then_approves(lambda: grant(ntfy, name, "payroll", "read-write")))
    async with connect(profiled(ntfy, profile), revision="2025-11-25", answer=log) as client:
        result = await client.call_tool("delete_user", {"username": name})
    changed_meanwhile_held(profile, log, result)
    assert name in users(ntfy)


@pytest.mark.parametrize("profile", ["guarded", "every-write"])
async def test_manage_user_access_is_not_run_on_an_account_that_changed_while_the_person_was_asked(
    ntfy: NtfyServer, profile: str
) -> None:
    """As above for manage_user_access: a rule written during the dialog is never overwritten unasked."""
    name = f"victim{uuid.uuid4().hex[:8]}"
    ntfy.add_user(name, "pw-12345678")
    grant(ntfy, name, "alerts", "read-only")
    log = DialogLog(changes_then_approves(lambda: grant(ntfy, name, "alerts", "deny-all")))
    async with connect(profiled(ntfy, profile), revision="2025-11-25", answer=log) as client:
        result = await client.call_tool(
            "manage_user_access", {"username": name, "topic": "alerts", "permission": "read-write"}
        )
    changed_meanwhile_held(profile, log, result)
    grants = {g["topic"]: g["permission"] for g in users(ntfy)[name].get("grants") or []}
    assert grants["alerts"] == "deny-all"


async def test_the_dialog_does_not_claim_a_stored_entry_is_sent_back_when_the_body_is_only_caller_values(
    ntfy: NtfyServer,
) -> None:
    """The dialog says what the body carries. manage_user_access (declared REPLACES) sends a body built only
    from the caller's three values, yet the every-write dialog says "the stored entry ... the rest of the entry
    is sent back as it is stored": a false statement about the request the person approves."""
    name = f"victim{uuid.uuid4().hex[:8]}"
    ntfy.add_user(name, "pw-12345678")
    log = DialogLog(accept)
    async with connect(profiled(ntfy), revision="2025-11-25", answer=log) as client:
        result = await client.call_tool(
            "manage_user_access", {"username": name, "topic": "t1", "permission": "read-only"}
        )
    assert not result.is_error, result.content
    (dialog,) = log.messages
    assert "sent back as it is stored" not in dialog, dialog


async def test_a_look_alike_host_in_a_url_value_is_shown_escaped(ntfy: NtfyServer, topic: str) -> None:
    """Look-alike characters in a value that names where something leads stay visible (dialog.py: an identifier
    shows every non-ASCII character escaped).

    The every-write dialog marks a caller value as an identifier only by its name's ending
    (``_IDENTIFIER_ENDINGS``: ...url, path, href...). publish_message's ``click``, ``icon`` and ``attach`` are
    URLs (ntfy opens ``click`` when the notification is tapped) but their names do not end in ``url``, so a
    Cyrillic ``а`` in ``https://pаypal.com`` reaches the dialog as is and reads as paypal.com.
    """
    log = DialogLog(decline)
    spoof = "https://p\u0430ypal.com/login"
    async with connect(profiled(ntfy), revision="2025-11-25", answer=log) as client:
        await client.call_tool("publish_message", {"topics": [topic], "message": "verify your account", "click": spoof})
    (dialog,) = log.messages
    assert "click: " in dialog
    assert "\u0430" not in dialog, dialog


@pytest.mark.parametrize(
    ("elicitation", "declared", "revision"),
    [(False, "form", "2025-11-25"), (False, "form", "2026-07-28"), (True, "url", "2025-11-25"),
     (True, "url", "2026-07-28"), (True, "none", "2026-07-28")],
)  # fmt: skip
async def test_no_form_means_refused_with_no_token_and_nothing_sent(
    ntfy: NtfyServer, topic: str, elicitation: bool, declared: str, revision: str
) -> None:
    """ELICITATION=false, a url-only client and a formless client are refused outright, no token issued."""
    settings = NtfySettings(url=ntfy.url, username=ntfy.admin_user, password=ntfy.admin_password)
    server = build_server(ApprovalSettings(profile="every-write", elicitation=elicitation), settings)  # type: ignore[arg-type]
    log = DialogLog(accept)
    async with connect(server, revision=revision, answer=log, elicitation=declared) as client:  # type: ignore[arg-type]
        result = await client.call_tool("publish_message", {"topics": [topic], "message": "unasked"})
        name = f"u{uuid.uuid4().hex[:8]}"
        made = await client.call_tool("create_user", {"username": name, "password": "pw-12345678"})
    assert result.is_error
    assert made.is_error
    for refused in (result, made):
        assert "confirm_token" not in str(refused.meta), refused
        assert "confirm_token" not in refused.content[0].text
    assert log.messages == []
    assert name not in users(ntfy)
    response = httpx2.get(
        f"{ntfy.url}/{topic}/json", params={"poll": "1", "since": "all"}, headers=ntfy.admin_headers()
    )
    assert response.text.strip() == ""


def published(ntfy: NtfyServer, topic: str) -> list[str]:
    response = httpx2.get(
        f"{ntfy.url}/{topic}/json", params={"poll": "1", "since": "all"}, headers=ntfy.admin_headers()
    )
    return [line for line in response.text.splitlines() if line.strip()]


@pytest.mark.parametrize(
    "answer",
    [
        bad_content(),
        bad_content({"approve": True, "extra": "x"}),
        bad_content({"approve": 1}),
        unticked,
        cancel,
        client_error,
    ],
)
async def test_an_answer_that_is_not_one_ticked_box_sends_nothing(ntfy: NtfyServer, topic: str, answer: Any) -> None:
    """Content that does not validate, extra keys, 1 for true, unticked, cancel, an error: nothing sent."""
    async with connect(profiled(ntfy), revision="2025-11-25", answer=answer) as client:
        result = await client.call_tool("publish_message", {"topics": [topic], "message": "no"})
    assert result.is_error
    assert published(ntfy, topic) == []


async def test_a_spent_2026_state_and_answer_replayed_publish_nothing_more(ntfy: NtfyServer, topic: str) -> None:
    """The approved state replayed with its ticked answer is asked afresh (nonce spent), never run twice."""
    args = {"topics": [topic], "message": "once"}
    async with connect(profiled(ntfy), revision="2026-07-28", answer=DialogLog()) as client:
        asked = await call_once(client, "publish_message", args)
        assert isinstance(asked, types.InputRequiredResult)
        done = await call_once(client, "publish_message", args, answer=ticked, request_state=asked.request_state)
        assert isinstance(done, types.CallToolResult)
        assert not done.is_error
        replay = await call_once(client, "publish_message", args, answer=ticked, request_state=asked.request_state)
        other = await call_once(
            client, "publish_message", {**args, "message": "twice"}, answer=ticked, request_state=asked.request_state
        )
    assert isinstance(replay, types.InputRequiredResult), replay
    assert isinstance(other, types.InputRequiredResult), other
    assert len(published(ntfy, topic)) == 1


async def test_the_dialog_names_the_topic_a_publish_goes_to_when_the_caller_left_it_out(
    ntfy: NtfyServer, topic: str
) -> None:
    """The dialog lets the person see where a change acts. ntfy's JSON publish is always ``POST /`` with the
    topic in the body; when the caller leaves ``topics`` out, the server picks the first of NTFY_TOPICS, and
    the topic then appears nowhere in the dialog (not in the request line, not among the caller's values),
    while the dialog says the body is "built from the values below"."""
    settings = NtfySettings(
        url=ntfy.url, username=ntfy.admin_user, password=ntfy.admin_password, topics=(topic, f"{topic}-other")
    )
    log = DialogLog(accept)
    async with connect(build_server(ApprovalSettings(profile="every-write"), settings), revision="2025-11-25",  # type: ignore[arg-type]
                       answer=log) as client:  # fmt: skip
        result = await client.call_tool("publish_message", {"message": "where does this go?"})
    assert not result.is_error, result.content
    assert len(published(ntfy, topic)) == 1
    (dialog,) = log.messages
    assert topic in dialog, dialog
