"""Each server's guard table and declared effects against its tool annotations.

Servers are discovered from ``packages/*-mcp`` and built without a backend.
Each declares, next to its guard table, what every tool does to stored data:
``guards.EFFECTS``, tool -> a set of :class:`approval_core.Effect` (reads,
creates, replaces, removes, sends). The rules below are derived from those
declarations, never from a tool's name, so that a gap between "what a call
does" (effects, annotations) and "whether a person is asked" (the guard) can
be seen, and never defined away by softening an annotation or picking a new
verb. ``tests/test_effects.py`` then checks each declaration against what
the tool is seen to send to its real backend.

1. Every tool has exactly one guard row and one effects entry, and every row
   and entry names a tool.
2. Every tool states all four annotations (readOnlyHint, destructiveHint,
   idempotentHint, openWorldHint) explicitly; none is left to a default.
3. A tool that is destructive but never asks, or asks (always or sometimes)
   but is not destructive, is listed in the server's documented mismatches
   with a reason; every listed mismatch is really one, of the kind it says.
   A mismatch is a decision for the whole family, not for one server: each
   is in :data:`REVIEWED_MISMATCHES` with the effects its tool declared when
   it was reviewed, so a new or changed excuse shows in a change to this
   file. A tool that removes stored data is never excused from asking.
4. A tool that replaces or removes stored data is destructive and not
   read-only, unless listed as a ``changes-not-destructive`` mismatch with a
   reason (what it replaces can be set back as it was); such a listing is
   only allowed where the tool really declares replaces or removes.
5. A tool whose only effect is reads is read-only, is not destructive and
   never asks; a tool with any other effect is not read-only.
6. A tool that neither replaces nor removes is not destructive.
7. A tool that sends to others is open-world.
8. A guarded tool listed as ``unversioned`` (nothing to bind a version of)
   only adds: it declares neither replaces nor removes. What is replaced or
   removed existed before the call, so it has a version, whatever the
   backend (an ETag, a content hash, the newest message id as read).
9. A tool that asks takes ``confirm_token``, so the fallback can work; a tool
   that never asks does not. (That it also calls the gate is checked by
   behaviour in ``tests/test_effects.py``: with ``ELICITATION=false`` its
   first answer is a refusal carrying a token, and nothing is changed.)
10. openWorldHint (MCP 2025-11-25, ToolAnnotations: whether a tool's domain
   is open to external entities) is true exactly for the tools in the server's
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

from approval_core import ApprovalSettings, Effect, GuardTable
from approval_core.policy import CHANGES, TAKES_AWAY
from servers import SERVERS

ROOT = Path(__file__).resolve().parents[1]


def load(name: str) -> tuple[list[Any], GuardTable]:
    module = name.replace("-", "_")
    server = importlib.import_module(f"{module}.server").build_server(ApprovalSettings())
    guards = importlib.import_module(f"{module}.guards").GUARDS
    return anyio.run(server.list_tools), guards


def declared(name: str) -> dict[str, frozenset[Effect]]:
    return dict(importlib.import_module(f"{name.replace('-', '_')}.guards").EFFECTS)


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
    documented = {m.tool: m.kind for m in guards.mismatches if m.kind != "changes-not-destructive"}
    assert documented == found
    assert all(len(m.reason) > 20 for m in guards.mismatches)


REVIEWED_MISMATCHES: dict[tuple[str, str, str], frozenset[Effect]] = {
    ("caldav-mcp", "create_event", "guarded-not-destructive"): frozenset({Effect.CREATES, Effect.SENDS}),
    ("caldav-mcp", "respond_to_event", "changes-not-destructive"): frozenset({Effect.REPLACES, Effect.SENDS}),
    ("caldav-mcp", "respond_to_event", "guarded-not-destructive"): frozenset({Effect.REPLACES, Effect.SENDS}),
    ("caldav-mcp", "complete_task", "changes-not-destructive"): frozenset({Effect.REPLACES, Effect.SENDS}),
    ("caldav-mcp", "complete_task", "guarded-not-destructive"): frozenset({Effect.REPLACES, Effect.SENDS}),
    ("caldav-mcp", "update_task", "destructive-not-guarded"): frozenset({Effect.REPLACES, Effect.SENDS}),
    ("caldav-mcp", "update_journal", "destructive-not-guarded"): frozenset({Effect.REPLACES, Effect.SENDS}),
    ("ntfy-mcp", "create_user", "guarded-not-destructive"): frozenset({Effect.CREATES}),
}
"""Every documented mismatch of the family, as reviewed: (server, tool, kind) -> the tool's declared effects then.

A server's own reason is only text; what makes a mismatch acceptable is that others read it. A new one (a
server's ``Mismatch(...)``) fails until it is added here, in a change the family reviews, and an entry whose
tool's declared effects have changed since fails until it is reviewed again.
"""


def named(those: frozenset[Effect]) -> str:
    """``reads/replaces``: effects by name, sorted."""
    return "/".join(sorted(effect.value for effect in those))


@pytest.mark.parametrize("name", SERVERS)
def test_every_mismatch_was_reviewed_with_the_effects_its_tool_declares(name: str) -> None:
    _, guards = load(name)
    effects = declared(name)
    problems = []
    for mismatch in guards.mismatches:
        key = (name, mismatch.tool, mismatch.kind)
        if key not in REVIEWED_MISMATCHES:
            problems.append(
                f"{mismatch.tool}: a {mismatch.kind} mismatch no one has reviewed; if it is deliberate, add "
                f"{key} with the tool's effects to REVIEWED_MISMATCHES in tests/test_guards.py, for review"
            )
        elif REVIEWED_MISMATCHES[key] != effects.get(mismatch.tool):
            problems.append(
                f"{mismatch.tool}: reviewed as a {mismatch.kind} mismatch of a tool that "
                f"{named(REVIEWED_MISMATCHES[key])}, but it now {named(effects.get(mismatch.tool, frozenset()))}"
            )
    stale = [key for key in REVIEWED_MISMATCHES if key[0] == name and guards.mismatch(key[1], key[2]) is None]  # type: ignore[arg-type]
    problems += [f"REVIEWED_MISMATCHES lists {key}, which {name} no longer documents" for key in stale]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", SERVERS)
def test_no_tool_that_removes_stored_data_is_excused_from_asking(name: str) -> None:
    _, guards = load(name)
    effects = declared(name)
    excused = [
        m.tool
        for m in guards.mismatches
        if m.kind == "destructive-not-guarded" and Effect.REMOVES in effects.get(m.tool, frozenset())
    ]
    assert not excused, f"{name}: these remove stored data without asking, whatever the reason given: {excused}"


def test_every_tool_declares_its_effects(server) -> None:
    name, tools, _ = server
    effects = declared(name)
    assert sorted(effects) == sorted(tool.name for tool in tools)
    for tool, those in effects.items():
        assert those, f"{tool}: declares no effect (a read-only tool declares Effect.READS)"
        assert all(isinstance(effect, Effect) for effect in those), tool


def test_tools_that_replace_or_remove_are_destructive(server) -> None:
    name, tools, guards = server
    effects = declared(name)
    excused = {m.tool for m in guards.mismatches if m.kind == "changes-not-destructive"}
    for tool in tools:
        takes_away = bool(effects[tool.name] & TAKES_AWAY)
        assert tool.name not in excused or takes_away, f"{tool.name}: listed as changes-not-destructive, but "
        "declares neither replaces nor removes"
        if takes_away:
            assert tool.annotations.read_only_hint is False, tool.name
            if tool.name in excused:
                assert tool.annotations.destructive_hint is False, f"{tool.name}: listed, but destructive"
            else:
                assert tool.annotations.destructive_hint is True, (
                    f"{tool.name} declares {sorted(effects[tool.name] & TAKES_AWAY)} but is not destructive"
                )


def test_tools_that_only_read_are_read_only_and_never_ask(server) -> None:
    name, tools, guards = server
    effects = declared(name)
    for tool in tools:
        reads_only = not effects[tool.name] & CHANGES
        assert tool.annotations.read_only_hint is reads_only, (tool.name, sorted(effects[tool.name]))
        if reads_only:
            assert tool.annotations.destructive_hint is False, tool.name
            assert guards[tool.name].kind == "never", tool.name


def test_tools_that_take_nothing_away_are_not_destructive(server) -> None:
    name, tools, _ = server
    effects = declared(name)
    for tool in tools:
        if not effects[tool.name] & TAKES_AWAY:
            assert tool.annotations.destructive_hint is False, tool.name


def test_tools_that_send_to_others_are_open_world(server) -> None:
    name, tools, _ = server
    effects = declared(name)
    for tool in tools:
        if Effect.SENDS in effects[tool.name]:
            assert tool.annotations.open_world_hint is True, tool.name


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
    effects = declared(name)
    for tool, reason in guards.unversioned.items():
        assert guards[tool].may_ask, tool
        taken = sorted(effects.get(tool, frozenset()) & TAKES_AWAY)
        assert not taken, (
            f"{tool}: listed as unversioned, but it {'/'.join(taken)} what was stored before the call, which has "
            "a version to bind (an ETag, a hash of what was read, the newest message id): pass it as gate.check("
            "..., version=...) and compare it before the write"
        )
        assert "PENDING" not in reason.upper(), f"{tool}: {reason}"
        assert len(reason) > 20, f"{tool}: the reason says too little: {reason!r}"
    assert "PENDING" not in Path(module.__file__).read_text(), f"{name}'s guards.py still has a placeholder"


@pytest.mark.parametrize("name", SERVERS)
def test_a_tool_that_asks_only_elsewhere_names_a_test_that_makes_it_ask(name: str) -> None:
    """A guarded tool the family scenario cannot make ask (``Scenario.asks_elsewhere``) has a test that does."""
    from scenarios import scenario_of

    _, guards = load(name)
    problems = []
    for tool, where in scenario_of(name).asks_elsewhere.items():
        path, _, test = where.partition("::")
        source = (ROOT / path).read_text() if (ROOT / path).is_file() else ""
        if not guards[tool].may_ask:
            problems.append(f"{tool}: listed in asks_elsewhere, but it never asks")
        if not test or f"def {test}(" not in source:
            problems.append(f"{tool}: asks_elsewhere names {where}, which is no test")
    assert not problems, "\n".join(problems)
