"""APPROVAL_PROFILE=every-write against the real ntfy: what the person sees, and what runs after each answer."""

from __future__ import annotations

import httpx2
import pytest
from ntfy_server import NtfyServer

from approval_core import ApprovalSettings
from approval_core.testing import DialogLog, accept, approval_of, connect, decline, never_answers
from ntfy_mcp import build_server
from ntfy_mcp.settings import NtfySettings

pytestmark = pytest.mark.anyio


def profiled(ntfy: NtfyServer, **approval: object) -> object:
    settings = NtfySettings(url=ntfy.url, username=ntfy.admin_user, password=ntfy.admin_password)
    return build_server(ApprovalSettings(profile="every-write", **approval), settings)  # type: ignore[arg-type]


def poll(ntfy: NtfyServer, topic: str) -> list[str]:
    response = httpx2.get(f"{ntfy.url}/{topic}/json", params={"poll": "1", "since": "all"},
                          headers=ntfy.admin_headers())  # fmt: skip
    response.raise_for_status()
    return [httpx2.Response(200, content=line).json()["message"] for line in response.text.splitlines() if line]


async def test_a_publish_shows_the_exact_request_and_runs_only_after_the_yes(ntfy: NtfyServer, topic: str) -> None:
    log = DialogLog(decline)
    async with connect(profiled(ntfy), revision="2025-11-25", answer=log) as client:
        declined = await client.call_tool("publish_message", {"topics": [topic], "message": "disk full"})
        assert declined.is_error
        assert poll(ntfy, topic) == []
        log.answer = accept
        done = await client.call_tool("publish_message", {"topics": [topic], "message": "disk full"})
    assert not done.is_error
    assert poll(ntfy, topic) == ["disk full"]
    dialog = log.messages[-1]
    host = ntfy.url.removeprefix("http://")
    assert dialog.startswith(f"Confirm a change to http://{host}\n")
    assert f'This call sends 1 request to the server:\n  POST "http://{host}/"\n' in dialog
    assert f"Runs as the account '{ntfy.admin_user}' on http://{host}, with its own permissions." in dialog
    assert "  message: disk full" in dialog
    assert dialog.endswith("Nothing changes unless you tick the box and confirm.")


async def test_several_topics_are_one_question_listing_every_request(ntfy: NtfyServer, topic: str) -> None:
    log = DialogLog(accept)
    other = f"{topic}-b"
    async with connect(profiled(ntfy), revision="2025-11-25", answer=log) as client:
        done = await client.call_tool("publish_message", {"topics": [topic, other], "message": "both"})
    assert not done.is_error, done.content
    assert len(log.messages) == 1
    assert "This call sends 2 requests to the server:" in log.messages[0]
    assert poll(ntfy, topic) == ["both"]
    assert poll(ntfy, other) == ["both"]


async def test_a_client_without_a_form_is_refused_and_given_no_token(ntfy: NtfyServer, topic: str) -> None:
    async with connect(profiled(ntfy), revision="2025-11-25") as client:
        result = await client.call_tool("publish_message", {"topics": [topic], "message": "unasked"})
    assert result.is_error
    outcome = approval_of(result)
    assert outcome["outcome"] == "refused"
    assert "confirm_token" not in outcome
    assert poll(ntfy, topic) == []


async def test_no_answer_within_the_timeout_abandons_the_change(ntfy: NtfyServer, topic: str) -> None:
    assert ApprovalSettings.from_env({"APPROVAL_PROFILE": "every-write"}).dialog_timeout == 90
    async with connect(profiled(ntfy, dialog_timeout=0.2), revision="2025-11-25", answer=never_answers) as client:
        result = await client.call_tool("publish_message", {"topics": [topic], "message": "too late"})
    assert approval_of(result)["outcome"] == "timed_out"
    assert poll(ntfy, topic) == []


async def test_the_2026_path_asks_with_input_required_and_sends_the_same_request(ntfy: NtfyServer, topic: str) -> None:
    log = DialogLog(decline)
    async with connect(profiled(ntfy), revision="2026-07-28", answer=log) as client:
        declined = await client.call_tool("publish_message", {"topics": [topic], "message": "later"})
        assert declined.is_error
        assert poll(ntfy, topic) == []
        log.answer = accept
        done = await client.call_tool("publish_message", {"topics": [topic], "message": "later"})
    assert not done.is_error
    assert poll(ntfy, topic) == ["later"]
    assert 'POST "http://' in log.messages[-1]


async def test_a_password_is_never_shown_and_a_long_value_is_cut_at_4000(ntfy: NtfyServer, topic: str) -> None:
    log = DialogLog(decline)
    async with connect(profiled(ntfy), revision="2025-11-25", answer=log) as client:
        await client.call_tool("create_user", {"username": "carol", "password": "a-secret-password-9"})
        await client.call_tool("publish_message", {"topics": [topic], "message": "x" * 3900})
    user, long = log.messages
    assert "a-secret-password-9" not in user
    assert "password: (not shown)" in user
    assert "more characters not shown" in long
    assert len(long) < 4200
