"""One passkey yes for three pending calls, in a real browser: Debian's Chromium with a virtual passkey.

The example server runs in process with its approval page on a loopback
port. A client that declares no elicitation makes three guarded calls
(``grant``: it binds no version, so only single use stops a repeat from
acting again); the person opens the first call's page, follows its link to
the session's set, reads the three calls and approves them with one press and
one passkey assertion. Each call then acts once when repeated, a second
repeat asks again, and a fourth call asks on its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from browser import Browser, browser, paired

from approval_core import ApprovalSettings, running_page
from approval_core.page.settings import PageSettings
from approval_core.testing import approval_of, connect
from example_server import Example

pytestmark = pytest.mark.anyio

SETTLED = ("Approved", "Denied", "Refused", "not approved", "No passkey", "Nothing was")
USERS = ("ada", "grace", "linus", "mallory")


def _grant(user: str) -> dict[str, str]:
    return {"username": user, "topic": "deploy", "password": "pw"}


def posts_of(person: Browser) -> list[str]:
    """From now on, the path of every POST the browser sends; the list grows as it browses."""
    seen: list[str] = []
    person.page.on("request", lambda request: seen.append(request.url) if request.method == "POST" else None)
    return seen


async def test_three_pending_calls_approved_with_one_assertion_each_act_once_and_a_fourth_asks(
    tmp_path: Path,
) -> None:
    example = Example(ApprovalSettings(page=PageSettings(passkeys_file=tmp_path / "passkeys.json")))
    page = example.gate.page
    assert page is not None
    async with running_page(page), browser(1) as (person,):
        await paired(page, person)
        async with connect(example.server, revision="2026-07-28") as client:
            pending = [approval_of(await client.call_tool("grant", _grant(user))) for user in USERS[:3]]
            assert [p["outcome"] for p in pending] == ["approval_pending"] * 3
            codes = [p["code"] for p in pending]

            single = await person.open(pending[0]["approval_url"])
            assert "one of 3 calls of the same session" in single
            await person.page.click("#set-link")
            await person.page.wait_for_selector('main[data-kind="changeset"]')
            listed = await person.text()
            assert all(code in listed for code in codes), listed
            assert [await person.page.inner_text(f"#item-{n} .item-code") for n in (1, 2, 3)] == codes
            items: Any = await person.page.get_attribute("main", "data-items")
            assert str(items).split() == [p["approval_url"].rsplit("/", 1)[1] for p in pending]

            posts = posts_of(person)
            said = await person.click_and_wait("approve-all", SETTLED)
            assert said.startswith("Approved 3 call(s)"), said
            assert [url.rsplit("/", 1)[1] for url in posts] == ["options", "decide"], "one challenge, one assertion"
            assert example.grants == [], "approving on the page acted by itself"

            for user in USERS[:3]:
                acted = await client.call_tool("grant", _grant(user))
                assert not acted.is_error, acted
            assert example.grants == [(user, "deploy") for user in USERS[:3]]

            again = approval_of(await client.call_tool("grant", _grant(USERS[1])))
            fourth = approval_of(await client.call_tool("grant", _grant(USERS[3])))
            reloaded = await person.open(pending[0]["approval_url"].replace("/a/", "/s/"))
    assert again["outcome"] == "approval_pending", "a repeat of an approved call acted twice"
    assert again["code"] not in codes
    assert fourth["outcome"] == "approval_pending", "a call outside the set acted"
    assert example.grants == [(user, "deploy") for user in USERS[:3]]
    assert again["code"] in reloaded, "the session's new calls form a new set"
    assert fourth["code"] in reloaded, "the session's new calls form a new set"
    assert not any(code in reloaded for code in codes), "the approved calls are no longer listed"


async def test_deny_one_in_the_browser_then_approve_the_rest(tmp_path: Path) -> None:
    example = Example(ApprovalSettings(page=PageSettings(passkeys_file=tmp_path / "passkeys.json")))
    page = example.gate.page
    assert page is not None
    async with running_page(page), browser(1) as (person,):
        await paired(page, person)
        async with connect(example.server, revision="2026-07-28") as client:
            pending = [approval_of(await client.call_tool("grant", _grant(user))) for user in USERS[:3]]
            await person.open(pending[0]["approval_url"].replace("/a/", "/s/"))
            await person.page.click("#item-2 button.deny-item")
            await person.page.wait_for_function(
                "() => document.querySelectorAll('article.item').length === 2", timeout=20_000
            )
            listed = await person.text()
            assert pending[1]["code"] not in listed
            said = await person.click_and_wait("approve-all", SETTLED)
            assert said.startswith("Approved 2 call(s)"), said
            results = [await client.call_tool("grant", _grant(user)) for user in USERS[:3]]
    assert approval_of(results[1])["outcome"] == "declined"
    assert not results[0].is_error
    assert not results[2].is_error
    assert example.grants == [("ada", "deploy"), ("linus", "deploy")]
