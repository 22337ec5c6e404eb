"""Every tool of every server, driven through a strict client: each result must validate against its outputSchema.

Issue 13 §1: a strict client (the TypeScript SDK client 1.x) validates any
``structuredContent`` against the tool's ``outputSchema``, error or not, and
throws -32602 on a mismatch, so the person and the model never see the
result. The clients of ``approval_core.testing.connect`` apply the same rule
with a JSON Schema Draft 2020-12 validator (``check_result``) to every
``tools/call`` result; this file drives every tool each server lists at
least once through such a client (the scenarios of ``tests/scenarios.py``,
against each server's real backend), on both protocol revisions, and refuses
one guarded tool per server on both revisions (a declined dialog and a
confirm token).
"""

from __future__ import annotations

from typing import Any

import pytest

from approval_core.testing import REVISIONS, DialogLog, accept, approval_of, connect, decline
from scenarios import SCENARIOS, Driver, scenario_of
from servers import SERVERS, missing_rows

pytestmark = pytest.mark.anyio


def test_every_server_has_a_scenario() -> None:
    assert (problem := missing_rows(SCENARIOS, "SCENARIOS in tests/scenarios.py")) is None, problem


# ---------------------------------------------------------------- the tests


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("name", SERVERS)
async def test_every_tool_answers_a_strict_client(name: str, revision: str, request: pytest.FixtureRequest) -> None:
    scenario = scenario_of(name)
    backend: Any = request.getfixturevalue(scenario.backend)
    async with connect(scenario.make(backend), revision=revision, answer=accept) as client:
        driver = Driver(client)
        await scenario.drive(driver, backend)
        listed = await driver.listed()
    assert driver.called == listed, f"not driven: {sorted(listed - driver.called)}"


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("name", SERVERS)
async def test_a_refusal_answers_a_strict_client(name: str, revision: str, request: pytest.FixtureRequest) -> None:
    scenario = scenario_of(name)
    backend: Any = request.getfixturevalue(scenario.backend)
    tool, args = await scenario.refusal(backend)
    log = DialogLog(decline)
    async with connect(scenario.make(backend), revision=revision, answer=log) as client:
        declined = await client.call_tool(tool, args)
    async with connect(scenario.make(backend, elicitation=False), revision=revision) as client:
        first = await client.call_tool(tool, args)
        token = approval_of(first)["confirm_token"]
        done = await client.call_tool(tool, {**args, "confirm_token": token})
    assert len(log.messages) == 1
    assert declined.structured_content is None
    assert approval_of(declined)["outcome"] == "declined"
    assert first.structured_content is None
    assert token in first.content[0].text
    assert not done.is_error


@pytest.mark.real_ntfy
@pytest.mark.parametrize("revision", REVISIONS)
async def test_every_ntfy_tool_answers_a_strict_client_on_the_real_ntfy(revision: str, real_ntfy: Any) -> None:
    """The same scenario on the real ntfy 2.13: the tools that need sequence ids (2.16+) refuse, saying so."""
    from scenarios import NEEDS_NTFY_2_16, ntfy_scenario, ntfy_server

    async with connect(ntfy_server(real_ntfy), revision=revision, answer=accept) as client:
        driver = Driver(client, refuses={tool: "needs ntfy 2.16" for tool in NEEDS_NTFY_2_16})
        await ntfy_scenario(driver, real_ntfy)
        listed = await driver.listed()
    assert driver.called == listed, f"not driven: {sorted(listed - driver.called)}"
    assert driver.refused == set(NEEDS_NTFY_2_16)
