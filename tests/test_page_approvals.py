"""Each server's guarded calls through the approval page, in a real browser with a paired passkey.

For every server, two guarded calls prepared by its scenario (``Scenario.refusal``, ``tests/scenarios.py``)
are made from a client that declares no elicitation, on a server whose approval page is on: each is refused
with the page's link, nothing changed. The person's browser (Debian's Chromium with a virtual passkey
authenticator, ``testing/browser.py``; the passkey paired on that page) approves the first there: the same
call repeated then acts, and repeated once more acts no more. The second is denied there: repeated, it is
declined and acts not at all. What acted is what the backend's recorder saw (``Scenario.record``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types as mt
import pytest
from browser import Browser, browser, pair_on

from approval_core import PageSettings, approval_outcome, running_page
from approval_core.gate import GATE_ATTRIBUTE
from approval_core.testing import Recorder, connect
from scenarios import scenario_of
from servers import SERVERS

pytestmark = pytest.mark.anyio

SETTLED = ("Approved", "approved already", "denied", "Denied", "Refused", "not approved", "No passkey", "expired")
"""Words one of which the page's state line holds once Approve or Deny has been answered."""


def link(result: mt.CallToolResult) -> str:
    """The approval page's link in a refusal that left the call pending there."""
    outcome = approval_outcome(result)
    assert outcome is not None, result
    assert outcome.get("outcome") == "approval_pending", result
    return str(outcome["approval_url"])


async def call_counting(client: Any, recorder: Recorder, tool: str, args: dict[str, Any]) -> tuple[Any, int]:
    """Call ``tool``; return its result and how many changes the backend accepted during the call."""
    mark = recorder.mark()
    result = await client.call_tool(tool, args)
    return result, len([change for change in recorder.changes_since(mark) if change.done])  # type: ignore[arg-type]


@pytest.fixture
async def person() -> Any:
    """The person's browser, with a virtual passkey authenticator."""
    async with browser(1) as (made,):
        yield made


@pytest.mark.parametrize("name", SERVERS)
async def test_a_call_approved_on_the_page_acts_once_and_a_denied_one_never(
    name: str, person: Browser, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    scenario = scenario_of(name)
    backend = request.getfixturevalue(scenario.backend)
    approved_call, denied_call = await scenario.refusal(backend), await scenario.refusal(backend)
    page_settings = PageSettings(passkeys_file=tmp_path / "passkeys.json")
    with scenario.record(backend) as (watched, recorder):
        server = scenario.make(watched, page=page_settings)
        page = getattr(server, GATE_ATTRIBUTE).page
        assert page is not None, f"{name}: built with page settings, but its gate has no approval page"
        async with running_page(page), connect(server, revision="2025-11-25", elicitation="none") as client:
            assert (await pair_on(page, person)).startswith("Paired")

            tool, args = approved_call
            pending, acted = await call_counting(client, recorder, tool, args)
            assert acted == 0, f"{tool}: changed the backend before anyone approved"
            await person.open(link(pending))
            assert "Approved" in await person.click_and_wait("approve", SETTLED)
            done, acted = await call_counting(client, recorder, tool, args)
            assert not done.is_error, done.content[0].text if done.content else done
            assert acted > 0, f"{tool}: approved on the page, repeated, and changed nothing"
            again, acted = await call_counting(client, recorder, tool, args)
            assert acted == 0, f"{tool}: one yes on the page acted twice ({again})"

            tool, args = denied_call
            pending, acted = await call_counting(client, recorder, tool, args)
            assert acted == 0
            await person.open(link(pending))
            assert "Denied" in await person.click_and_wait("deny", SETTLED)
            denied, acted = await call_counting(client, recorder, tool, args)
            assert acted == 0, f"{tool}: denied on the page, and still changed the backend"
            assert (approval_outcome(denied) or {}).get("outcome") == "declined", denied
