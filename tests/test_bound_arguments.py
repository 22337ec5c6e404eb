"""An approval binds every argument that changes what is written (issue 22, §5).

Each server's scenario (``tests/scenarios.py``) is driven on the token path
(``ELICITATION=false``) with its real backend behind a recorder. Every call
of a guarded tool that asks is, before it is allowed to act, repeated with
each of its arguments changed in turn (``tests/variants.py``, from the
tool's listed input schema: the new content included):

- on the token path, with the token the unchanged call was given: the gate
  must refuse it (``token_refused``), or the server refuse the changed call
  before asking; it must never redeem it (``token_redeemed``);
- on 2026-07-28, with the unchanged call's ``requestState`` and a ticked box:
  the answer must not approve the changed call, which gets a fresh question
  (or is refused before asking);

and the backend must not change meanwhile. Then the unchanged call gets a
fresh token and acts, and the scenario goes on.

An argument deliberately left out of an approval's binding is listed in
:data:`UNBOUND` with the reason; it is not changed, and any other argument
whose change a token still approves fails the test. Nothing here names a
tool: a new server is covered once its scenario drives its guarded tools.
"""

from __future__ import annotations

import importlib
from typing import Any

import mcp_types as mt
import pytest

from approval_core import GuardTable
from approval_core.asking.results import approval_outcome
from approval_core.testing import AuditRecorder, Recorder, accept, call_once, connect, ticked
from scenarios import Driver, scenario_of
from servers import SERVERS
from variants import variants

pytestmark = pytest.mark.anyio

UNBOUND: dict[tuple[str, str, str], str] = {
    ("ntfy-mcp", "create_user", "password"): (
        "a secret: it is never shown in the dialog, so the person does not approve it, and keeping it out of the "
        "fingerprint keeps it out of every record the approval leaves (tokens, sealed states, Redis); the account "
        "approved is the username shown"
    ),
}
"""(server, tool, argument) -> why the argument is deliberately not bound into the tool's approvals."""


def token_of(result: mt.CallToolResult) -> str | None:
    outcome = approval_outcome(result) or {}
    return outcome.get("confirm_token")


class Varying(Driver):
    """A :class:`Driver` that tries every changed copy of a guarded call before the call itself acts."""

    def __init__(
        self,
        server: str,
        clients: tuple[Any, Any],
        recorder: Recorder,
        audit: AuditRecorder,
        guards: GuardTable,
        schemas: dict[str, dict[str, Any]],
    ) -> None:
        tokens, self.asker = clients
        super().__init__(tokens)
        self.server, self.recorder, self.audit, self.guards, self.schemas = server, recorder, audit, guards, schemas
        self.asked: set[str] = set()
        self.refused: dict[str, set[str]] = {}
        self.problems: list[str] = []

    async def call(self, tool: str, args: dict[str, Any]) -> mt.CallToolResult:
        self.called.add(tool)
        first = await self.client.call_tool(tool, args)
        token = token_of(first) if self.guards[tool].may_ask else None
        if token is None:
            return first
        self.asked.add(tool)
        question = await call_once(self.asker, tool, args)
        state = question.request_state if isinstance(question, mt.InputRequiredResult) else None
        if state is None:
            self.problems.append(f"{tool}: asked on the token path, but asked no question on 2026-07-28")
        for argument, changed in variants(args, self.schemas[tool]):
            if (self.server, tool, argument.split(".")[0]) in UNBOUND:
                continue
            token = await self.try_token(tool, argument, changed, token)
            if state is not None:
                await self.try_answer(tool, argument, changed, state)
            again = await self.client.call_tool(tool, args)
            token = token_of(again)
            if token is None:
                self.problems.append(f"{tool}: the unchanged call no longer asks after {argument} was tried")
                return again
        return await self.client.call_tool(tool, {**args, "confirm_token": token})

    async def try_token(self, tool: str, argument: str, changed: dict[str, Any], token: str) -> str:
        mark, since = self.recorder.mark(), len(self.audit.events)
        result = await self.client.call_tool(tool, {**changed, "confirm_token": token})
        events = self.audit.of(tool, since)
        if "token_redeemed" in events or not (events or result.is_error):
            self.problems.append(
                f"{tool}: {argument} was changed after the token was issued, and the token still let the call act "
                f"(bind it, or list it in UNBOUND with the reason); audit: {events}"
            )
            return token
        if "token_refused" in events:
            self.refused.setdefault(tool, set()).add(argument)
        self.unchanged(tool, f"with {argument} changed and the old token", mark)
        return token

    async def try_answer(self, tool: str, argument: str, changed: dict[str, Any], state: str) -> None:
        mark, since = self.recorder.mark(), len(self.audit.events)
        result = await call_once(self.asker, tool, changed, answer=ticked, request_state=state)
        if "approved" in self.audit.of(tool, since) or not (
            isinstance(result, mt.InputRequiredResult) or result.is_error
        ):
            self.problems.append(f"{tool}: a ticked box for the unchanged call approved it with {argument} changed")
        self.unchanged(tool, f"answered with {argument} changed", mark)

    def unchanged(self, tool: str, when: str, mark: Any) -> None:
        changes = self.recorder.changes_since(mark)
        if changes:
            self.problems.append(f"{tool}: changed the backend {when}: {[change.what for change in changes]}")


@pytest.mark.parametrize("name", SERVERS)
async def test_a_token_or_answer_never_approves_a_call_with_an_argument_changed(
    name: str, request: pytest.FixtureRequest
) -> None:
    scenario = scenario_of(name)
    guards: GuardTable = importlib.import_module(f"{name.replace('-', '_')}.guards").GUARDS
    backend = request.getfixturevalue(scenario.backend)
    with scenario.record(backend) as (watched, recorder), AuditRecorder() as audit:
        async with (
            connect(scenario.make(watched, elicitation=False), revision="2025-11-25") as tokens,
            connect(scenario.make(watched), revision="2026-07-28", answer=accept) as asker,
        ):
            schemas = {tool.name: tool.input_schema for tool in (await tokens.list_tools()).tools}
            driver = Varying(name, (tokens, asker), recorder, audit, guards, schemas)
            await scenario.drive(driver, watched)
    problems = list(driver.problems)
    for server, tool, argument in UNBOUND:
        if server == name and argument not in schemas.get(tool, {}).get("properties", {}):
            problems.append(f"UNBOUND lists {tool}.{argument}, which {name} does not have")
    may_ask = {tool for tool in schemas if guards[tool].may_ask} - set(scenario.asks_elsewhere)
    if may_ask - driver.asked:
        problems.append(f"the scenario never made these guarded tools ask: {sorted(may_ask - driver.asked)}")
    if not driver.refused:
        problems.append("no changed argument ever reached a gate: the variants prove nothing on this server")
    assert not problems, "\n".join(problems)
