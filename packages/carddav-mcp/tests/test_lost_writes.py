"""A single write whose reply is lost is read back: the caller learns whether it changed, never only "could not reach".

The faults come from a proxy double (tests/fault_proxy.py) in front of the real Radicale: it carries
the first PUT / DELETE / MOVE out and drops the reply, or drops the request before it arrives, or (to
make even the read-back fail) drops every request after the write. Everything else reaches Radicale
unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from carddav_conftest import USER, Dav, vcard
from fault_proxy import Action, fault_proxy

from approval_core.testing import accept, connect

pytestmark = pytest.mark.anyio


@pytest.fixture
def upstream(radicale: Dav) -> str:
    return radicale.settings.url.removesuffix(f"{USER}/")


def first(method: str, action: Action, then: Action = "pass") -> Callable[[str, str], Action]:
    """``action`` for the first request of ``method``, ``then`` for every request after it."""
    state = {"hit": False}

    def rule(seen: str, path: str) -> Action:
        if state["hit"]:
            return then
        if seen == method:
            state["hit"] = True
            return action
        return "pass"

    return rule


def cards(dav: Dav) -> dict[str, str]:
    return {
        "ada": dav.put(dav.book, "ada.vcf", vcard("UID:ada", "FN:Ada", "N:A;;;;")),
        "grace": dav.put(dav.book, "grace.vcf", vcard("UID:grace", "FN:Grace", "N:G;;;;")),
        "team": dav.put(
            dav.book,
            "team.vcf",
            vcard(
                "UID:team",
                "FN:Team",
                "N:Team;;;;",
                "X-ADDRESSBOOKSERVER-KIND:group",
                "X-ADDRESSBOOKSERVER-MEMBER:urn:uuid:ada",
            ),
        ),
    }


CASES: dict[str, tuple[str, Callable[[dict[str, str], Dav], dict[str, Any]], str]] = {
    "update_contact": ("PUT", lambda c, d: {"contact_id": c["ada"], "changes": {"title": "Dr"}}, "ada"),
    "move_contact": ("MOVE", lambda c, d: {"contact_id": c["ada"], "destination": d.other}, "ada"),
    "update_group": ("PUT", lambda c, d: {"group_id": c["team"], "add": [c["grace"]]}, "team"),
    "delete_group": ("DELETE", lambda c, d: {"group_id": c["team"]}, "team"),
}


def named(tool: str, made: dict[str, str], dav: Dav) -> str:
    """How the error names the card the write touched (a move names where it goes, too)."""
    href = made[CASES[tool][2]]
    return f"{href} (moved to {dav.other}ada.vcf)" if tool == "move_contact" else href


async def _call(dav: Dav, upstream: str, tool: str, rule: Callable[[str, str], Action]) -> tuple[str, dict[str, str]]:
    method, args, _ = CASES[tool]
    made = cards(dav)
    with fault_proxy(upstream, rule) as proxy:
        async with connect(dav.server(url=f"{proxy.url}{USER}/"), revision="2025-11-25", answer=accept) as client:
            result = await client.call_tool(tool, args(made, dav))
    assert result.is_error
    assert len(proxy.requests(method)) == 1  # never retried blindly
    return result.content[0].text, made


@pytest.mark.parametrize("tool", sorted(CASES))
async def test_a_write_that_landed_is_reported_as_changed(radicale: Dav, upstream: str, tool: str) -> None:
    method = CASES[tool][0]
    text, made = await _call(radicale, upstream, tool, first(method, "drop_reply"))
    assert "could not reach the CardDAV server" in text
    assert f"Read back afterwards: Changed (1 of 1): {named(tool, made, radicale)}." in text
    if tool == "move_contact":
        assert not radicale.exists(made["ada"])
        assert radicale.exists(f"{radicale.other}ada.vcf")


@pytest.mark.parametrize("tool", sorted(CASES))
async def test_a_write_that_never_arrived_is_reported_as_not_changed(radicale: Dav, upstream: str, tool: str) -> None:
    method, _, touched = CASES[tool]
    text, made = await _call(radicale, upstream, tool, first(method, "drop_request"))
    assert f"Read back afterwards: Changed (0 of 1): none. Not changed: {named(tool, made, radicale)}." in text
    assert radicale.exists(made[touched])


@pytest.mark.parametrize("tool", sorted(CASES))
async def test_when_even_the_read_back_fails_the_outcome_is_not_known(radicale: Dav, upstream: str, tool: str) -> None:
    method = CASES[tool][0]
    text, made = await _call(radicale, upstream, tool, first(method, "drop_reply", then="drop_request"))
    assert f"Not known (the server could not be reached to check): {named(tool, made, radicale)}." in text


async def test_a_move_called_again_after_a_lost_reply_says_where_the_card_is(radicale: Dav, upstream: str) -> None:
    made = cards(radicale)
    args = {"contact_id": made["ada"], "destination": radicale.other}
    with fault_proxy(upstream, first("MOVE", "drop_reply")) as proxy:
        async with connect(radicale.server(url=f"{proxy.url}{USER}/"), revision="2025-11-25", answer=accept) as c:
            await c.call_tool("move_contact", args)
            again = await c.call_tool("move_contact", args)
    assert again.is_error
    text = again.content[0].text
    assert f"now at {radicale.other}ada.vcf" in text
    assert "the move has already been done" in text
    assert len(proxy.requests("MOVE")) == 1
