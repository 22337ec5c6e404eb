"""The two-call confirm token, where no dialog can be shown, and the strict profile."""

from __future__ import annotations

from typing import Annotated, Any

import mcp_types as mt
import pytest
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

from approval_core import (
    ApprovalGate,
    ApprovalSettings,
    CallerValue,
    Dialog,
    Guard,
    GuardTable,
    NotApproved,
    annotations,
    operation,
    structured,
)
from approval_core.testing import DialogLog, accept, approval_of, connect
from example_server import NAME, Example

pytestmark = pytest.mark.anyio

OFF = ApprovalSettings(elicitation=False)
ARGS = {"book": "/books/work/", "ids": ["a"]}


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def token_of(result) -> str:
    assert result.is_error
    approval = approval_of(result)
    assert approval["changed"] is False
    assert approval["expires_in_seconds"] == 300
    return approval["confirm_token"]


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
@pytest.mark.parametrize("elicitation", ["none", "url"])
async def test_a_client_that_cannot_show_a_form_gets_the_token(revision, elicitation) -> None:
    ex = Example()
    log = DialogLog(accept)
    answer = log if elicitation == "url" else None
    async with connect(ex.server, revision=revision, answer=answer, elicitation=elicitation) as client:
        first = await client.call_tool("delete_items", ARGS)
        assert ex.items == {"a", "b", "c"}
        token = token_of(first)
        text = first.content[0].text
        assert "This client cannot ask the user directly" in text
        assert "proves only that the call was made twice with the same arguments" in text
        assert "does not show that a person approved it" in text
        assert approval_of(first)["reason"] == "client_cannot_ask"
        second = await client.call_tool("delete_items", {**ARGS, "confirm_token": token})
    assert not second.is_error
    assert ex.items == {"b", "c"}
    assert log.messages == []  # a url-only client is never sent a form


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
async def test_switched_off_names_this_server_and_never_shows_a_dialog(revision) -> None:
    ex = Example(OFF)
    log = DialogLog(accept)
    async with connect(ex.server, revision=revision, answer=log) as client:
        first = await client.call_tool("delete_items", ARGS)
        token = token_of(first)
        text = first.content[0].text
        assert (
            f"{NAME} was started with the approval dialog switched off (ELICITATION=false), so nobody was asked" in text
        )
        assert "cannot ask the user directly" not in text
        assert approval_of(first)["reason"] == "switched_off"
        second = await client.call_tool("delete_items", {**ARGS, "confirm_token": token})
    assert not second.is_error
    assert log.messages == []


async def test_the_token_text_carries_the_dialog() -> None:
    ex = Example(OFF)
    async with connect(ex.server, revision="2026-07-28") as client:
        first = await client.call_tool("delete_items", {"book": "/books/x/", "ids": ["a", "b"]})
    text = first.content[0].text
    assert "Delete 2 item(s)" in text
    assert "Items are not kept anywhere else" in text
    assert "  Book: /books/x/" in text


async def test_a_token_for_one_target_is_refused_for_another_and_is_spent() -> None:
    ex = Example(OFF)
    async with connect(ex.server, revision="2026-07-28") as client:
        token = token_of(await client.call_tool("delete_items", {"book": "/b/", "ids": ["a"]}))
        widened = await client.call_tool("delete_items", {"book": "/b/", "ids": ["a", "b"], "confirm_token": token})
        assert widened.is_error
        assert "issued for a different call" in widened.content[0].text
        assert approval_of(widened)["outcome"] == "token_refused"
        original = await client.call_tool("delete_items", {"book": "/b/", "ids": ["a"], "confirm_token": token})
        assert original.is_error
        assert (
            "not issued by this server (or by a replica sharing its approval store), or it was already used"
            in original.content[0].text
        )
    assert ex.items == {"a", "b", "c"}


async def test_a_token_cannot_be_used_twice() -> None:
    ex = Example(OFF)
    async with connect(ex.server, revision="2025-11-25") as client:
        token = token_of(await client.call_tool("delete_items", ARGS))
        assert not (await client.call_tool("delete_items", {**ARGS, "confirm_token": token})).is_error
        ex.items.add("a")
        again = await client.call_tool("delete_items", {**ARGS, "confirm_token": token})
    assert again.is_error
    assert "already used" in again.content[0].text
    assert ex.items == {"a", "b", "c"}


async def test_an_expired_token_is_refused() -> None:
    clock = FakeClock()
    ex = Example(OFF, clock=clock)
    async with connect(ex.server, revision="2026-07-28") as client:
        token = token_of(await client.call_tool("delete_items", ARGS))
        clock.now += 300.5
        late = await client.call_tool("delete_items", {**ARGS, "confirm_token": token})
    assert late.is_error
    assert "expired" in late.content[0].text
    assert ex.items == {"a", "b", "c"}


async def test_a_refused_token_comes_with_a_fresh_one_that_works() -> None:
    ex = Example(OFF)
    async with connect(ex.server, revision="2026-07-28") as client:
        refused = await client.call_tool("delete_items", {**ARGS, "confirm_token": "made-up"})
        fresh = token_of(refused)
        assert fresh != "made-up"
        done = await client.call_tool("delete_items", {**ARGS, "confirm_token": fresh})
    assert not done.is_error
    assert ex.items == {"b", "c"}


async def test_a_set_binding_ignores_order_but_a_positional_one_does_not() -> None:
    ex = Example(OFF)
    async with connect(ex.server, revision="2026-07-28") as client:
        token = token_of(await client.call_tool("delete_items", {"book": "/b/", "ids": ["a", "b"]}))
        reordered = await client.call_tool("delete_items", {"book": "/b/", "ids": ["b", "a"], "confirm_token": token})
        assert not reordered.is_error
        token = token_of(await client.call_tool("grant", {"username": "alice", "topic": "deploy", "password": "p"}))
        swapped = await client.call_tool(
            "grant", {"username": "deploy", "topic": "alice", "password": "p", "confirm_token": token}
        )
        assert swapped.is_error
    assert ex.grants == []


async def test_the_password_is_left_out_of_the_binding_and_the_text() -> None:
    ex = Example(OFF)
    async with connect(ex.server, revision="2026-07-28") as client:
        first = await client.call_tool("grant", {"username": "alice", "topic": "deploy", "password": "hunter2-secret"})
        assert "hunter2-secret" not in first.content[0].text
        token = token_of(first)
        other = await client.call_tool(
            "grant", {"username": "alice", "topic": "deploy", "password": "another", "confirm_token": token}
        )
    assert not other.is_error
    assert ex.grants == [("alice", "deploy")]


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
async def test_the_strict_profile_refuses_where_no_dialog_can_be_shown(revision) -> None:
    ex = Example(strict=True)
    async with connect(ex.server, revision=revision) as client:
        result = await client.call_tool("delete_items", ARGS)
        with_token = await client.call_tool("delete_items", {**ARGS, "confirm_token": "anything"})
    for refused in (result, with_token):
        assert refused.is_error
        assert approval_of(refused) == {
            "outcome": "refused",
            "path": "strict",
            "reason": "client_cannot_ask",
            "changed": False,
        }
        assert "confirm_token" not in refused.content[0].text
    assert ex.items == {"a", "b", "c"}


async def test_the_strict_profile_refuses_when_switched_off() -> None:
    ex = Example(OFF, strict=True)
    async with connect(ex.server, revision="2025-11-25", answer=accept) as client:
        result = await client.call_tool("delete_items", ARGS)
    assert approval_of(result)["reason"] == "switched_off"
    assert ex.items == {"a", "b", "c"}


async def test_the_strict_profile_still_asks_a_capable_client() -> None:
    ex = Example(strict=True)
    async with connect(ex.server, revision="2026-07-28", answer=accept) as client:
        result = await client.call_tool("delete_items", ARGS)
    assert not result.is_error
    assert ex.items == {"b", "c"}


async def test_a_token_for_one_version_is_refused_after_a_change() -> None:
    ex = Example(OFF)
    async with connect(ex.server, revision="2026-07-28") as client:
        token = token_of(await client.call_tool("delete_items", ARGS))
        ex.version += 1  # someone else changed the items between question and answer
        changed = await client.call_tool("delete_items", {**ARGS, "confirm_token": token})
    assert changed.is_error
    assert "issued for a different call" in changed.content[0].text
    assert ex.items == {"a", "b", "c"}


async def test_a_guarded_tool_that_binds_no_version_is_a_programming_error(caplog) -> None:
    ex = Example(OFF)
    ex.gate.guards = type(ex.gate.guards)(dict(ex.gate.guards.items()))  # the same rows, nothing unversioned
    async with connect(ex.server, revision="2026-07-28") as client:
        result = await client.call_tool("grant", {"username": "u", "topic": "t", "password": "p"})
    assert result.is_error
    assert result.content[0].text.startswith("grant stopped on an unexpected internal error (GuardTableError)")
    assert any("grant asks but binds no version" in str(r.exc_info[1]) for r in caplog.records if r.exc_info)
    assert ex.grants == []


class Note(BaseModel):
    name: str


def note_server(written: list[tuple[str, str]]) -> MCPServer[Any]:
    """A tool whose target binds only the note's name, though its dialog shows the new text too."""
    server: MCPServer[Any] = MCPServer("notes-mcp")
    unversioned = {"write_note": "a test tool: nothing is read before asking"}
    gate = ApprovalGate.attach(server, GuardTable({"write_note": Guard.always()}, unversioned=unversioned), OFF)

    @server.tool(annotations=annotations(read_only=False, destructive=True, idempotent=True, open_world=False))
    async def write_note(
        name: str, text: str, ctx: Context, confirm_token: str | None = None
    ) -> Annotated[mt.CallToolResult, Note] | mt.InputRequiredResult:
        """Write a note."""
        dialog = Dialog(
            operation("replace a note"), "The old text is gone.", [CallerValue("Note", name), CallerValue("Text", text)]
        )
        target = {"name": name}  # the text left out, as the contributor guide's write_note once did
        decision = await gate.check(ctx, tool="write_note", target=target, dialog=dialog, confirm_token=confirm_token)
        if isinstance(decision, NotApproved):
            return decision.result
        written.append((name, text))
        return structured(Note(name=name))

    return server


async def test_a_token_binds_what_the_dialog_showed_even_where_the_target_leaves_it_out() -> None:
    written: list[tuple[str, str]] = []
    async with connect(note_server(written), revision="2025-11-25") as client:
        token = token_of(await client.call_tool("write_note", {"name": "todo", "text": "milk"}))
        other = await client.call_tool("write_note", {"name": "todo", "text": "transfer 1000", "confirm_token": token})
        assert approval_of(other)["outcome"] == "token_refused"
        token = token_of(await client.call_tool("write_note", {"name": "todo", "text": "milk"}))
        done = await client.call_tool("write_note", {"name": "todo", "text": "milk", "confirm_token": token})
    assert not done.is_error
    assert written == [("todo", "milk")]
