"""APPROVAL_PROFILE=every-write in every server: each change is asked for, and sends what the dialog listed.

Every server's scenario (``tests/scenarios.py``) is driven under the profile, with its real backend behind a
recorder. Each call of a tool that declares a change is made three times: from a client that cannot show a
form (refused, nothing sent, no confirm token), declined in the dialog (nothing sent), then approved. The
approved call's dialog must list exactly the changing requests the recorder then saw, method and path, in
order; a read-only tool must neither ask nor change anything. A new server is covered by its scenario.
"""

from __future__ import annotations

import importlib
from typing import Any
from urllib.parse import urlsplit

import mcp_types as mt
import pytest

from approval_core import Effect
from approval_core.asking.results import approval_outcome
from approval_core.policy import CHANGES
from approval_core.testing import DialogLog, Recorder, accept, connect, decline
from scenarios import SCENARIOS, Driver
from servers import SERVERS

pytestmark = pytest.mark.anyio

LIST_HEAD = "request to the server:"
"""The end of the line before the request lines (``This call sends 2 requests to the server:``)."""


def listed_requests(dialog: str) -> list[str]:
    """``METHOD path`` of every request line a dialog lists."""
    lines = dialog.split(LIST_HEAD.replace("request", "request"), 1)
    if len(lines) == 1:
        lines = dialog.split("requests to the server:", 1)
    assert len(lines) == 2, f"no request list in the dialog:\n{dialog}"
    out = []
    for line in lines[1].splitlines()[1:]:
        if not line.startswith("  "):
            break
        method, quoted = line.split()[:2]
        url = quoted.strip('"')  # the dialog shows the URL in double quotes
        out.append(f"{method} {urlsplit(url).path}")
    return out


class Profiled(Driver):
    """Makes each changing call refused without a form, declined, then approved; notes what went wrong."""

    def __init__(
        self, client: Any, formless: Any, log: DialogLog, recorder: Recorder, effects: dict[str, frozenset[Effect]]
    ) -> None:
        super().__init__(client)
        self.formless, self.log, self.recorder, self.effects = formless, log, recorder, effects
        self.problems: list[str] = []
        self.asked: set[str] = set()

    async def call(self, tool: str, args: dict[str, Any]) -> mt.CallToolResult:
        self.called.add(tool)
        if not self.effects[tool] & CHANGES:
            shown, mark = len(self.log.messages), self.recorder.mark()
            result = await self.client.call_tool(tool, args)
            if len(self.log.messages) != shown or self.recorder.changes_since(mark):  # type: ignore[arg-type]
                self.problems.append(f"{tool}: a read-only tool asked or changed something")
            return result
        mark = self.recorder.mark()
        refused = await self.formless.call_tool(tool, args)
        if self.recorder.changes_since(mark):  # type: ignore[arg-type]
            self.problems.append(f"{tool}: a client without form elicitation got a change through")
            return refused
        outcome = approval_outcome(refused) or {}
        if not refused.is_error:
            return refused  # this call changes nothing: nothing to ask
        if outcome.get("outcome") != "refused" or "confirm_token" in outcome:
            self.problems.append(f"{tool}: without a form, not refused outright: {outcome}")
        self.log.answer = decline
        shown, mark = len(self.log.messages), self.recorder.mark()
        declined = await self.client.call_tool(tool, args)
        if len(self.log.messages) == shown or not declined.is_error or self.recorder.changes_since(mark):  # type: ignore[arg-type]
            self.problems.append(f"{tool}: declining did not end the call with nothing sent")
        self.log.answer = accept
        shown, mark = len(self.log.messages), self.recorder.mark()
        result = await self.client.call_tool(tool, args)
        sent = [c.what.split(" -> ")[0] for c in self.recorder.changes_since(mark)]  # type: ignore[arg-type]
        asked = self.log.messages[shown:]
        if len(asked) != 1:
            self.problems.append(f"{tool}: approved with {len(asked)} dialogs, not one")
        elif (listed := listed_requests(asked[0])) != sent:
            self.problems.append(f"{tool}: the dialog listed {listed}, the call sent {sent}")
        self.asked.add(tool)
        return result


@pytest.mark.parametrize("name", SERVERS)
async def test_every_write_asks_for_each_change_and_sends_exactly_what_it_listed(
    name: str, request: pytest.FixtureRequest
) -> None:
    scenario = SCENARIOS[name]
    effects: dict[str, frozenset[Effect]] = dict(importlib.import_module(f"{name.replace('-', '_')}.guards").EFFECTS)
    backend = request.getfixturevalue(scenario.backend)
    log = DialogLog(accept)
    with scenario.record(backend) as (watched, recorder):
        async with (
            connect(scenario.make(watched, profile="every-write"), revision="2025-11-25", answer=log) as client,
            connect(scenario.make(watched, profile="every-write"), revision="2025-11-25") as formless,
        ):
            driver = Profiled(client, formless, log, recorder, effects)
            await scenario.drive(driver, watched)
            listed = await driver.listed()
    writing = {tool for tool in listed if effects[tool] & CHANGES}
    problems = list(driver.problems)
    if writing - driver.asked:
        problems.append(f"never asked under the profile: {sorted(writing - driver.asked)}")
    assert not problems, "\n".join(problems)
