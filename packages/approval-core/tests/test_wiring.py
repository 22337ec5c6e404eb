"""Audit lines, the state-recovery middleware, routing without a back-channel, the public API."""

from __future__ import annotations

import json
import logging
import pkgutil
from dataclasses import dataclass, field
from typing import Any

import mcp_types as mt
import pytest
from mcp.client import Client
from mcp.server.request_state import RequestStateBoundary
from mcp.shared.exceptions import MCPError

import approval_core
from approval_core import (
    AUDIT_LOGGER,
    ApprovalSettings,
    StateRecovery,
    client_can_show_form,
    install_one_capability_set,
    install_state_recovery,
)
from approval_core.testing import accept, approval_of, call_once, connect, ticked
from example_server import Example

pytestmark = pytest.mark.anyio

SECRET_BOOK = "/books/very-private-name/"


def audit_records(caplog) -> list[dict[str, str]]:
    return [json.loads(r.getMessage().removeprefix("approval ")) for r in caplog.records if r.name == AUDIT_LOGGER]


async def test_each_decision_is_one_audit_line_without_argument_values(caplog) -> None:
    caplog.set_level(logging.INFO, logger=AUDIT_LOGGER)
    ex = Example()
    async with connect(ex.server, revision="2025-11-25", answer=accept) as client:
        await client.call_tool("delete_items", {"book": SECRET_BOOK, "ids": ["a"]})
    off = Example(ApprovalSettings(elicitation=False))
    async with connect(off.server, revision="2026-07-28") as client:
        first = await client.call_tool("delete_items", {"book": SECRET_BOOK, "ids": ["a"]})
        token = approval_of(first)["confirm_token"]
        await client.call_tool("delete_items", {"book": SECRET_BOOK, "ids": ["a"], "confirm_token": "bogus"})
        await client.call_tool("delete_items", {"book": SECRET_BOOK, "ids": ["a"], "confirm_token": token})
    records = audit_records(caplog)
    assert [r["event"] for r in records] == [
        "asked",
        "approved",
        "token_issued",
        "token_refused",
        "token_issued",
        "token_redeemed",
    ]
    assert records[3]["reason"] == "unknown"
    for record in records:
        assert set(record) <= {"event", "server", "tool", "path", "fp", "reason"}
        assert record["tool"] == "delete_items"
        assert len(record["fp"]) == 12
    text = caplog.text
    assert SECRET_BOOK not in text
    assert token not in text
    assert "bogus" not in text


async def test_a_refused_sdk_state_is_audited_and_asked_again(caplog) -> None:
    caplog.set_level(logging.INFO, logger=AUDIT_LOGGER)
    ex = Example()
    async with connect(ex.server, revision="2026-07-28", answer=accept) as client:
        result = await call_once(
            client, "delete_items", {"book": "/b/", "ids": ["a"]}, answer=ticked, request_state="v1.forged"
        )
    assert isinstance(result, mt.InputRequiredResult)
    events = [(r["event"], r.get("reason")) for r in audit_records(caplog)]
    assert events == [("state_refused", "sdk_seal"), ("asked", None)]


async def test_without_recovery_the_sdk_would_answer_with_an_error() -> None:
    # The behaviour the recovery middleware exists to change, shown directly.
    ex = Example()
    ex.server.middleware[:] = [m for m in ex.server.middleware if not isinstance(m, StateRecovery)]
    async with connect(ex.server, revision="2026-07-28", answer=accept) as client:
        with pytest.raises(MCPError, match="requestState"):
            await call_once(
                client,
                "delete_items",
                {"book": "/b/", "ids": ["a"]},
                answer=ticked,
                request_state="v1.forged",
            )


def test_recovery_is_installed_once_just_outside_the_sdk_boundary() -> None:
    ex = Example()
    install_state_recovery(ex.server)
    chain = ex.server.middleware
    kinds = [type(m) for m in chain]
    assert kinds.count(StateRecovery) == 1
    assert kinds.index(StateRecovery) + 1 == kinds.index(RequestStateBoundary)


def test_recovery_leaves_a_chain_without_the_sdk_boundary_alone() -> None:
    ex = Example()
    ex.server.middleware[:] = [
        m for m in ex.server.middleware if not isinstance(m, StateRecovery | RequestStateBoundary)
    ]
    install_state_recovery(ex.server)
    assert not any(isinstance(m, StateRecovery) for m in ex.server.middleware)


@dataclass
class _Ctx:
    method: str
    params: dict[str, Any] | None
    seen: list[dict[str, Any] | None] = field(default_factory=list)


async def test_recovery_passes_other_errors_through() -> None:
    recovery = StateRecovery("demo-mcp")
    other = MCPError(code=-32602, message="bad", data={"reason": "something_else"})

    async def failing(ctx: Any) -> Any:
        raise other

    for ctx in (
        _Ctx("tools/call", {"name": "t"}),
        _Ctx("resources/read", {"uri": "x"}),
        _Ctx("tools/call", None),
    ):
        with pytest.raises(MCPError) as caught:
            await recovery(ctx, failing)  # pyright: ignore[reportArgumentType]
        assert caught.value is other
    state_error = MCPError(code=-32602, message="Invalid", data={"reason": "invalid_request_state"})

    async def state_failing(ctx: Any) -> Any:
        raise state_error

    with pytest.raises(MCPError):
        await recovery(_Ctx("prompts/get", {"name": "p"}), state_failing)  # pyright: ignore[reportArgumentType]


# ---------------------------------------------------------------- routing


def test_form_capability_reading() -> None:
    e = mt.ElicitationCapability
    caps = mt.ClientCapabilities
    assert not client_can_show_form(None)
    assert not client_can_show_form(caps())
    assert client_can_show_form(caps(elicitation=e()))  # a bare {} means form
    assert client_can_show_form(caps(elicitation=e(form=mt.FormElicitationCapability())))
    assert not client_can_show_form(caps(elicitation=e(url=mt.UrlElicitationCapability())))


@dataclass
class _StubSession:
    """Test double: a 2025-11-25 session on a transport with no channel back to the client."""

    can_send_request: bool = False


@dataclass
class _StubContext:
    """Test double for the tool context on a stateless 2025-11-25 transport."""

    protocol_version: str = "2025-11-25"
    client_capabilities: mt.ClientCapabilities = field(
        default_factory=lambda: mt.ClientCapabilities(elicitation=mt.ElicitationCapability())
    )
    session: Any = field(default_factory=_StubSession)
    request_state: str | None = None
    input_responses: dict[str, Any] | None = None
    request_id: str = "1"


async def test_no_back_channel_on_2025_11_25_falls_back_to_the_token() -> None:
    ex = Example()
    dialog = approval_core.Dialog(approval_core.operation("delete"), "Gone for good.")
    decision = await ex.gate.check(
        _StubContext(),
        tool="delete_items",
        target={"ids": {"a"}},
        dialog=dialog,  # pyright: ignore[reportArgumentType]
        version="1",
    )
    assert not decision.approved
    assert decision.path == "token"
    assert isinstance(decision.result, mt.CallToolResult)
    assert "This connection cannot carry a question to the user" in decision.result.content[0].text


@dataclass
class _GarbleSession:
    """Test double: a session whose elicitation answer does not parse as an ElicitResult."""

    can_send_request: bool = True

    async def elicit_form(self, *args: Any, **kwargs: Any) -> mt.ElicitResult:
        return mt.ElicitResult.model_validate({"action": "accept", "content": {"approve": {"nested": 1}}})


async def test_an_answer_that_does_not_parse_changes_nothing() -> None:
    ex = Example()
    dialog = approval_core.Dialog(approval_core.operation("delete"), "Gone for good.")
    ctx = _StubContext(session=_GarbleSession())  # pyright: ignore[reportArgumentType]
    decision = await ex.gate.check(ctx, tool="delete_items", target={"ids": {"a"}}, dialog=dialog, version="1")  # pyright: ignore[reportArgumentType]
    assert not decision.approved
    assert decision.outcome == "invalid_answer"


def test_the_public_api_is_sorted_and_complete() -> None:
    names = approval_core.__all__

    def isort_key(name: str) -> tuple[int, str]:
        # Constants, then classes, then functions: the order ruff keeps __all__ in.
        return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)

    assert names == sorted(names, key=isort_key)
    assert len(set(names)) == len(names)
    for name in names:
        assert hasattr(approval_core, name), name
    public = {n for n in vars(approval_core) if not n.startswith("_")}
    # The package's own modules and subpackages are attributes once imported; they are not public names.
    modules = {m.name for m in pkgutil.iter_modules(approval_core.__path__)}
    assert public - modules == set(names)


async def test_both_revisions_are_told_the_same_capabilities() -> None:
    ex = Example()
    install_one_capability_set(ex.server)  # a second install changes nothing
    async with Client(ex.server, mode="legacy") as legacy, Client(ex.server, mode="auto") as modern:
        assert (legacy.protocol_version, modern.protocol_version) == ("2025-11-25", "2026-07-28")
        assert modern.server_capabilities == legacy.server_capabilities
        assert modern.server_capabilities.tools is not None
        assert modern.server_capabilities.tools.list_changed is False
