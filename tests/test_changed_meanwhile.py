"""A guarded call whose entry changed while the person was being asked acts not at all, for every backend.

Every server's scenario (``tests/scenarios.py``) is driven through a client on 2025-11-25 that answers each
dialog with yes. Before the first yes to each guarded call that replaces or removes stored data (and is not
``unversioned``), the scenario's ``change`` alters what the call acts on, as another client would (a line
added to a file, an ``X-`` property added to a calendar entry or a card, a newer message in an ntfy sequence,
one more access rule on an account). The version the dialog was built from no longer holds, so the call must
end with an error and change nothing at the backend after that: a tool that passes a version to the gate but
never compares it before it writes (or sends one the backend ignores) fails here. The scenario's call is then
made again, to go on from the entry as it now is.
"""

from __future__ import annotations

import importlib
from typing import Any

import mcp_types as mt
import pytest

from approval_core import Effect, GuardTable
from approval_core.policy import TAKES_AWAY
from approval_core.testing import DialogLog, Recorder, accept, connect
from scenarios import Driver, Scenario, scenario_of
from servers import SERVERS

pytestmark = pytest.mark.anyio


class Meddling(Driver):
    """Changes the entry of each versioned guarded call while its dialog is open, then says yes."""

    def __init__(
        self, client: Any, log: DialogLog, recorder: Recorder, scenario: Scenario, backend: Any, module: Any
    ) -> None:
        super().__init__(client)
        self.log, self.recorder, self.scenario, self.backend = log, recorder, scenario, backend
        self.guards: GuardTable = module.GUARDS
        self.effects: dict[str, frozenset[Effect]] = dict(module.EFFECTS)
        self.checked: set[str] = set()
        self.problems: list[str] = []

    def watched(self, tool: str) -> bool:
        """Whether ``tool`` asks before it replaces or removes something that has a version."""
        guard = self.guards[tool]
        return guard.may_ask and tool not in self.guards.unversioned and bool(self.effects[tool] & TAKES_AWAY)

    async def call(self, tool: str, args: dict[str, Any]) -> mt.CallToolResult:
        if not self.watched(tool) or tool in self.checked:
            return await super().call(tool, args)
        after_change: list[Any] = []

        async def change_then_accept(context: Any, params: Any) -> Any:
            self.scenario.change(self.backend, tool, args)
            after_change.append(self.recorder.mark())
            return await accept(context, params)

        self.log.answer = change_then_accept
        try:
            result = await self.client.call_tool(tool, args)
        finally:
            self.log.answer = accept
        self.called.add(tool)
        if not after_change:
            return result  # this call did not ask (a conditional guard let it through): it is the scenario's call
        self.checked.add(tool)
        changed = self.recorder.changes_since(after_change[0])  # type: ignore[arg-type]
        if not result.is_error or [change for change in changed if change.done]:
            text = result.content[0].text if result.content else ""
            self.problems.append(
                f"{tool}: its entry changed after the dialog was built, and the call still "
                f"{'acted' if not result.is_error else 'changed the backend'}: {[c.what for c in changed]} "
                f"{text[:200]!r}; compare the version given to gate.check(..., version=...) before the write"
            )
            return result
        return await super().call(tool, args)


@pytest.mark.parametrize("name", SERVERS)
async def test_a_guarded_call_refuses_when_its_entry_changed_while_the_person_was_asked(
    name: str, request: pytest.FixtureRequest
) -> None:
    scenario = scenario_of(name)
    module = importlib.import_module(f"{name.replace('-', '_')}.guards")
    backend = request.getfixturevalue(scenario.backend)
    log = DialogLog(accept)
    with scenario.record(backend) as (watched_backend, recorder):
        async with connect(scenario.make(watched_backend), revision="2025-11-25", answer=log) as client:
            driver = Meddling(client, log, recorder, scenario, watched_backend, module)
            await scenario.drive(driver, watched_backend)
            listed = await driver.listed()
    problems = list(driver.problems)
    unchecked = sorted(tool for tool in listed if driver.watched(tool) and tool not in driver.checked)
    if unchecked:
        problems.append(f"the scenario never made these versioned guarded tools ask: {unchecked}")
    assert not problems, "\n".join(problems)
