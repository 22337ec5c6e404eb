"""An approval binds what the person was shown: the sequence's newest revision, the account's role and rules.

The 2.16+ sequence routes are the stand-in's (named as a double: the real 2.13 has none); the account tools
run against the real ntfy.
"""

from __future__ import annotations

import itertools
import os

import httpx2
import mcp_types as mt
import pytest
from ntfy_conftest import real_server, standin_server
from ntfy_server import NtfyServer

from approval_core.testing import DialogLog, answer_with, approval_of, connect, ticked
from standin import NtfyStandIn

pytestmark = pytest.mark.anyio
TOPIC = "alerts"
_n = itertools.count()


def while_asking(change) -> DialogLog:
    """A person who ticks the box, while someone else changes the object during the first dialog."""
    approve = answer_with(ticked)
    changes = [change]

    async def answer(context, params):
        while changes:
            changes.pop()()
        return await approve(context, params)

    return DialogLog(answer)


def delete_events(standin: NtfyStandIn) -> list[dict]:
    return [e for e in standin.messages(TOPIC) if e["event"] == "message_delete"]


async def test_a_delete_token_is_refused_when_the_sequence_was_revised_between_the_calls() -> None:
    standin = NtfyStandIn()
    sid = standin.publish(TOPIC, "disk at 91%")["sequence_id"]
    async with connect(standin_server(standin, elicitation=False), revision="2025-11-25") as client:
        first = await client.call_tool("delete_messages", {"topic": TOPIC, "sequence_ids": [sid]})
        token = approval_of(first)["confirm_token"]
        standin.publish(TOPIC, "disk at 99%", sequence_id=sid)  # someone revises it meanwhile
        second = await client.call_tool(
            "delete_messages", {"topic": TOPIC, "sequence_ids": [sid], "confirm_token": token}
        )
    assert second.is_error
    assert approval_of(second)["outcome"] == "token_refused"
    assert delete_events(standin) == []


async def test_an_update_token_is_refused_when_the_sequence_was_revised_between_the_calls() -> None:
    standin = NtfyStandIn()
    sid = standin.publish(TOPIC, "typo")["sequence_id"]
    args = {"topic": TOPIC, "sequence_id": sid, "message": "fixed"}
    async with connect(standin_server(standin, elicitation=False), revision="2025-11-25") as client:
        first = await client.call_tool("update_message", args)
        token = approval_of(first)["confirm_token"]
        standin.publish(TOPIC, "someone else's text", sequence_id=sid)
        second = await client.call_tool("update_message", {**args, "confirm_token": token})
    assert approval_of(second)["outcome"] == "token_refused"
    assert [e["message"] for e in standin.messages(TOPIC)] == ["typo", "someone else's text"]


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
async def test_a_revision_during_the_dialog_stops_the_delete(revision: str) -> None:
    standin = NtfyStandIn()
    sid = standin.publish(TOPIC, "m")["sequence_id"]
    log = while_asking(lambda: standin.publish(TOPIC, "revised meanwhile", sequence_id=sid))
    async with connect(standin_server(standin), revision=revision, answer=log) as client:
        result = await client.call_tool("delete_messages", {"topic": TOPIC, "sequence_ids": [sid]})
    if revision == "2025-11-25":  # answered inside the call: the re-read before the write stops it
        assert result.is_error
        assert "changed while the person was being asked; nothing was done" in result.content[0].text
        assert delete_events(standin) == []
    else:  # the answer's round reads another version: a fresh question, then the delete of what is there now
        assert len(log.messages) == 2
        assert not result.is_error, result.content
        assert len(delete_events(standin)) == 1


def fresh(prefix: str) -> str:
    return f"{prefix}{next(_n)}b{os.getpid() % 1000}"


def grant(ntfy: NtfyServer, name: str, topic: str, permission: str) -> None:
    body = {"username": name, "topic": topic, "permission": permission}
    httpx2.put(f"{ntfy.url}/v1/users/access", json=body, headers=ntfy.admin_headers()).raise_for_status()


def user_exists(ntfy: NtfyServer, name: str) -> bool:
    listed = httpx2.get(f"{ntfy.url}/v1/users", headers=ntfy.admin_headers()).json()
    return any(u["username"] == name for u in listed)


async def test_a_delete_user_token_is_refused_when_the_accounts_rules_changed(ntfy: NtfyServer) -> None:
    """The dialog said 'and its 0 access rule(s)'; after a grant it would delete 1: the token no longer fits."""
    name = fresh("bound")
    ntfy.add_user(name, "bound-password")
    async with connect(real_server(ntfy, elicitation=False), revision="2025-11-25") as client:
        first = await client.call_tool("delete_user", {"username": name})
        assert "its 0 access rule(s)" in first.content[0].text
        token = approval_of(first)["confirm_token"]
        grant(ntfy, name, "ops", "read-only")
        second = await client.call_tool("delete_user", {"username": name, "confirm_token": token})
    assert approval_of(second)["outcome"] == "token_refused"
    assert user_exists(ntfy, name)


async def test_a_rule_change_during_the_dialog_stops_manage_user_access(ntfy: NtfyServer, topic: str) -> None:
    name = fresh("raced")
    ntfy.add_user(name, "raced-password")
    log = while_asking(lambda: grant(ntfy, name, topic, "deny-all"))
    args = {"username": name, "topic": topic, "permission": "read-write"}
    async with connect(real_server(ntfy), revision="2025-11-25", answer=log) as client:
        result = await client.call_tool("manage_user_access", args)
    assert result.is_error
    assert "changed while the person was being asked" in result.content[0].text
    assert "nothing was done" in result.content[0].text
    listed = httpx2.get(f"{ntfy.url}/v1/users", headers=ntfy.admin_headers()).json()
    (user,) = [u for u in listed if u["username"] == name]
    assert user["grants"] == [{"topic": topic, "permission": "deny-all"}]


async def test_an_unchanged_account_is_changed_after_the_dialog(ntfy: NtfyServer, topic: str) -> None:
    name = fresh("calm")
    ntfy.add_user(name, "calm-password")
    async with connect(real_server(ntfy), revision="2026-07-28", answer=DialogLog()) as client:
        result = await client.call_tool(
            "manage_user_access", {"username": name, "topic": topic, "permission": "read-only"}
        )
    assert not result.is_error, result.content
    assert isinstance(result, mt.CallToolResult)
