"""What each tool does at its backend, against what its server declares (``guards.EFFECTS``).

Every server's scenario (``tests/scenarios.py``) is driven once more with its
real backend behind a recorder (``approval_core.testing.HttpRecorder``, or a
``FolderRecorder`` for a local backend). For each call the recorder gives
what the call asked the backend to change; then:

* each tool's changes agree with its declared effects (a tool declared
  read-only changes nothing; every change is one its declaration explains;
  a tool declared to change something is seen changing it);
* every guarded call is made three times. First on a server with
  ``ELICITATION=false``: the first answer of a tool whose guard always asks
  must be a refusal carrying a ``confirm_token``, with nothing changed (so
  the tool calls the gate and heeds its decision). Then with a dialog the
  person declines: a refusal, nothing changed. Then approved, as the scenario
  wants;
* no dialog shows text an earlier call stored (a summary, a name, a message
  body) unless this call was given it too (part of an id it was given counts
  as given): it can only have been read back from the backend, and nothing
  the backend returns may appear in a dialog (the family's rule,
  docs/security.md).

Every tool that may ask must have been asked at least once by the scenario.
"""

from __future__ import annotations

import importlib
from collections import defaultdict
from typing import Any

import mcp_types as mt
import pytest

from approval_core import Effect, GuardTable
from approval_core.asking.results import approval_outcome
from approval_core.policy import CHANGES
from approval_core.testing import Change, DialogLog, Recorder, accept, connect, decline, effects_problems
from scenarios import Driver, scenario_of
from servers import SERVERS

pytestmark = pytest.mark.anyio

MIN_TEXT = 5
"""Stored texts shorter than this are not looked for in dialogs (too likely to be part of the fixed wording)."""


def strings(value: Any) -> set[str]:
    """Every string in a JSON-like value."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set().union(*(strings(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(strings(v) for v in value)) if value else set()
    return set()


class Watching(Driver):
    """A :class:`Driver` that watches the backend around each call and declines every guarded call first."""

    def __init__(
        self,
        client: Any,
        tokens: Any,
        log: DialogLog,
        recorder: Recorder,
        guards: GuardTable,
        effects: dict[str, frozenset[Effect]],
    ) -> None:
        super().__init__(client)
        self.tokens, self.log, self.recorder = tokens, log, recorder
        self.guards, self.effects = guards, effects
        self.changes: dict[str, list[Change]] = defaultdict(list)
        self.asked: set[str] = set()
        self.problems: list[str] = []
        self.stored: set[str] = set()

    async def call(self, tool: str, args: dict[str, Any]) -> mt.CallToolResult:
        self.called.add(tool)
        result = await self.refuse_first(tool, args) if self.guards[tool].may_ask else None
        if result is None:
            self.log.answer = accept
            result = await self.watched(self.client, tool, args)
        if self.effects[tool] & CHANGES:
            # Whole values and each of their lines: a dialog that shows only an excerpt (a note's first line)
            # of stored text is caught as well.
            pieces = {line.strip() for text in strings(args) for line in [text, *text.splitlines()]}
            self.stored |= {piece for piece in pieces if len(piece) >= MIN_TEXT}
        return result

    async def watched(self, client: Any, tool: str, args: dict[str, Any]) -> mt.CallToolResult:
        mark = self.recorder.mark()
        result = await client.call_tool(tool, args)
        self.changes[tool] += self.recorder.changes_since(mark)  # type: ignore[arg-type]
        return result

    async def refuse_first(self, tool: str, args: dict[str, Any]) -> mt.CallToolResult | None:
        """The token path, then a declined dialog; returns the result when the call did not ask (it took effect)."""
        mark = self.recorder.mark()
        first = await self.tokens.call_tool(tool, args)
        changed = self.recorder.changes_since(mark)  # type: ignore[arg-type]
        outcome = approval_outcome(first)
        if outcome is None or "confirm_token" not in outcome:
            if self.guards[tool].kind == "always":
                self.problems.append(
                    f"{tool}: with ELICITATION=false its first answer is not a refusal with a confirm_token "
                    f"(does it call the gate and return decision.result?); it changed {[c.what for c in changed]}"
                )
            self.changes[tool] += changed
            return first
        self.no_change(tool, "before its confirm_token came back", changed)
        self.no_backend_text(tool, args, [block.text for block in first.content if isinstance(block, mt.TextContent)])

        self.log.answer = decline
        shown = len(self.log.messages)
        mark = self.recorder.mark()
        declined = await self.client.call_tool(tool, args)
        changed = self.recorder.changes_since(mark)  # type: ignore[arg-type]
        if len(self.log.messages) == shown:
            self.problems.append(f"{tool}: asked on the token path, but showed no dialog to a client that can")
            self.changes[tool] += changed
            return declined
        self.asked.add(tool)
        if not declined.is_error:
            self.problems.append(f"{tool}: the person declined, but the call answered as if done")
        self.no_change(tool, "after the person declined", changed)
        self.no_backend_text(tool, args, self.log.messages[shown:])
        return None

    def no_change(self, tool: str, when: str, changed: list[Change]) -> None:
        if changed:
            self.problems.append(f"{tool}: changed the backend {when}: {[change.what for change in changed]}")

    def no_backend_text(self, tool: str, args: dict[str, Any], texts: list[str]) -> None:
        given = strings(args)
        for stored in sorted(text for text in self.stored if not any(text in value for value in given)):
            for text in texts:
                if stored in text:
                    self.problems.append(
                        f"{tool}: its dialog shows {stored!r}, which an earlier call stored and this call was not "
                        "given: it was read from the backend, and backend text must never reach a dialog"
                    )


@pytest.mark.parametrize("name", SERVERS)
async def test_each_tool_does_what_it_declares_and_a_declined_dialog_changes_nothing(
    name: str, request: pytest.FixtureRequest
) -> None:
    scenario = scenario_of(name)
    module = importlib.import_module(f"{name.replace('-', '_')}.guards")
    guards: GuardTable = module.GUARDS
    effects: dict[str, frozenset[Effect]] = dict(module.EFFECTS)
    backend = request.getfixturevalue(scenario.backend)
    log = DialogLog(accept)
    with scenario.record(backend) as (watched_backend, recorder):
        async with (
            connect(scenario.make(watched_backend), revision="2025-11-25", answer=log) as client,
            connect(scenario.make(watched_backend, elicitation=False), revision="2025-11-25") as tokens,
        ):
            driver = Watching(client, tokens, log, recorder, guards, effects)
            await scenario.drive(driver, watched_backend)
            listed = await driver.listed()
    assert driver.called == listed, f"not driven: {sorted(listed - driver.called)}"
    problems = list(driver.problems)
    for tool in sorted(listed):
        problems += [f"{tool}: {problem}" for problem in effects_problems(effects[tool], driver.changes[tool])]
    never_asked = sorted(
        tool
        for tool in listed
        if guards[tool].may_ask and tool not in driver.asked and tool not in scenario.asks_elsewhere
    )
    if never_asked:
        problems.append(f"the scenario never made these guarded tools ask: {never_asked}")
    assert not problems, "\n".join(problems)
