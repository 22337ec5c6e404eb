"""Each server's guard table against its tool annotations.

Servers are discovered from ``packages/*-mcp`` and built without a backend.
The rules, so that a gap between "what a call does" (annotations) and "whether
a person is asked" (the guard) can be seen, and never defined away by
softening an annotation:

1. Every tool has exactly one guard row and every row names a tool.
2. Every tool states all four annotations (readOnlyHint, destructiveHint,
   idempotentHint, openWorldHint) explicitly; none is left to a default.
3. A tool that is destructive but never asks, or asks (always or sometimes)
   but is not destructive, is listed in the server's documented mismatches
   with a reason; every listed mismatch is really one, of the kind it says.
4. A tool that removes or replaces stored data is destructive: every
   ``delete_*``, ``update_*`` and ``move_*``.
5. A read-only tool is not destructive and never asks; every ``list_*``,
   ``get_*``, ``search_*``, ``check_*`` and ``export_*`` tool is read-only.
6. A tool that only adds (``create_*``, ``publish_*``) is not destructive.
7. A tool that asks takes ``confirm_token``, so the fallback can work; a tool
   that never asks does not.
8. openWorldHint (MCP 2025-11-25, ToolAnnotations: whether a tool's domain is
   open to external entities) is true exactly for the tools in the server's
   ``guards.OPEN_WORLD``, each listed with its reason. The family's rule for
   that list: a call is open-world when it may reach people other than the
   account holder, because the backend may send them something (iTIP messages
   from a scheduling CalDAV server, a notification to a topic's subscribers)
   or because it works in a space others share (an ntfy instance's topics,
   accounts and access rules). A call confined to the account's own
   collections (calendars, address books), with nothing sent, is closed.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import anyio
import pytest

from approval_core import ApprovalSettings, GuardTable

ROOT = Path(__file__).resolve().parents[1]
SERVERS = sorted(p.name for p in (ROOT / "packages").glob("*-mcp") if (p / "pyproject.toml").is_file())
REMOVES = ("delete_", "update_", "move_")
READS = ("list_", "get_", "search_", "check_", "export_")
ADDS = ("create_", "publish_")


def load(name: str) -> tuple[list[Any], GuardTable]:
    module = name.replace("-", "_")
    server = importlib.import_module(f"{module}.server").build_server(ApprovalSettings())
    guards = importlib.import_module(f"{module}.guards").GUARDS
    return anyio.run(server.list_tools), guards


@pytest.fixture(scope="module", params=SERVERS)
def server(request) -> tuple[str, list[Any], GuardTable]:
    tools, guards = load(request.param)
    return request.param, tools, guards


@pytest.mark.parametrize("name", SERVERS)
def test_open_world_tools_are_exactly_the_listed_ones_with_reasons(name) -> None:
    tools, _ = load(name)
    listed = importlib.import_module(f"{name.replace('-', '_')}.guards").OPEN_WORLD
    assert {tool.name for tool in tools if tool.annotations.open_world_hint} == set(listed)
    assert all(len(reason) > 20 for reason in listed.values())


def test_rows_and_tools_match_one_to_one(server) -> None:
    _, tools, guards = server
    names = [tool.name for tool in tools]
    assert len(names) == len(set(names))
    assert sorted(names) == sorted(guards)


def test_every_tool_states_all_four_annotations(server) -> None:
    _, tools, _ = server
    for tool in tools:
        hints = tool.annotations
        assert hints is not None, tool.name
        for hint in ("read_only_hint", "destructive_hint", "idempotent_hint", "open_world_hint"):
            assert isinstance(getattr(hints, hint), bool), (tool.name, hint)


def test_every_gap_between_guard_and_destructive_is_documented(server) -> None:
    _, tools, guards = server
    found = {}
    for tool in tools:
        asks, destructive = guards[tool.name].may_ask, tool.annotations.destructive_hint
        if asks and not destructive:
            found[tool.name] = "guarded-not-destructive"
        elif destructive and not asks:
            found[tool.name] = "destructive-not-guarded"
    documented = {m.tool: m.kind for m in guards.mismatches}
    assert documented == found
    assert all(len(m.reason) > 20 for m in guards.mismatches)


def test_tools_that_remove_or_replace_are_destructive(server) -> None:
    _, tools, _ = server
    for tool in tools:
        if tool.name.startswith(REMOVES):
            assert tool.annotations.destructive_hint is True, tool.name
            assert tool.annotations.read_only_hint is False, tool.name


def test_read_only_tools_change_nothing_and_never_ask(server) -> None:
    _, tools, guards = server
    for tool in tools:
        if tool.name.startswith(READS):
            assert tool.annotations.read_only_hint is True, tool.name
        if tool.annotations.read_only_hint:
            assert tool.annotations.destructive_hint is False, tool.name
            assert guards[tool.name].kind == "never", tool.name


def test_tools_that_only_add_are_not_destructive(server) -> None:
    _, tools, _ = server
    for tool in tools:
        if tool.name.startswith(ADDS):
            assert tool.annotations.destructive_hint is False, tool.name
            assert tool.annotations.read_only_hint is False, tool.name


def test_a_tool_takes_confirm_token_exactly_when_it_may_ask(server) -> None:
    _, tools, guards = server
    for tool in tools:
        takes = "confirm_token" in tool.input_schema.get("properties", {})
        assert takes == guards[tool.name].may_ask, tool.name


@pytest.mark.parametrize("name", SERVERS)
def test_every_guarded_tool_binds_a_version_or_gives_a_true_reason(name) -> None:
    """A family rule: an approval binds the version of what the dialog was built from.

    A guarded tool is either absent from the guard table's ``unversioned`` (so the gate refuses to ask unless it
    passes ``version=``) or listed there with a real reason; no placeholder may remain.
    """
    module = importlib.import_module(f"{name.replace('-', '_')}.guards")
    guards: GuardTable = module.GUARDS
    for tool, reason in guards.unversioned.items():
        assert guards[tool].may_ask, tool
        assert "PENDING" not in reason.upper(), f"{tool}: {reason}"
        assert len(reason) > 20, f"{tool}: the reason says too little: {reason!r}"
    assert "PENDING" not in Path(module.__file__).read_text(), f"{name}'s guards.py still has a placeholder"
