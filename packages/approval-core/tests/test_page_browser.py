"""The approval page in a real browser: Debian's Chromium with a virtual passkey, over stdio and in process.

A passkey is paired through ``python -m approval_core pair`` (the person's
own command, outside any MCP client) and then approves on the page of a
server started over stdio, on another port: a passkey for ``localhost``
serves every server of the family on the machine.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import tempfile
from collections.abc import AsyncGenerator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as mt
import pytest
from browser import Browser, browser
from mcp.client.stdio import StdioServerParameters, stdio_client

from approval_core import ApprovalPage, ApprovalSettings, approval_outcome, running_page
from approval_core.page.settings import PageSettings
from approval_core.testing import connect
from example_server import Example

pytestmark = pytest.mark.anyio

SCRIPT = str(Path(__file__).with_name("example_server.py"))
DELETE = {"book": "/books/work/", "ids": ["a"]}
SETTLED = ("Approved", "approved already", "denied", "Denied", "Refused", "not approved", "No passkey", "expired")
PAIRED = (
    "Paired",
    "No passkey",
    "no passkey",
    "Refused",
    "not valid",
    "approves nothing yet",
    "did not agree",
    "not the code",
    "not allowed",
)


async def pair(
    person: Browser,
    passkeys: Path,
    between: Callable[[str], Awaitable[None]] | None = None,
    typed: str | None = None,
    before: Callable[[], Awaitable[None]] | None = None,
) -> str:
    """Run the pairing command, open its link in ``person``'s browser, make a passkey; return the state line.

    The code the command shows in its terminal is typed into the page (``typed`` instead, if given);
    ``before`` runs just before the first press. Where a passkey is paired already, the first press makes
    the new one; ``between`` then sees that state line before the second press has a paired passkey agree.
    """
    process = await anyio.open_process(
        [sys.executable, "-m", "approval_core", "pair", "--file", str(passkeys), "--no-browser"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    async with process:
        assert process.stdout is not None
        printed = ""
        with anyio.fail_after(30):
            while "code on the page" not in printed:
                printed += (await process.stdout.receive()).decode()
        link = re.search(r"(http://localhost:\d+/approval/pair/\S+)", printed)
        code = re.search(r"code on the page: ([A-Z0-9]{4}-[A-Z0-9]{4})", printed)
        assert link is not None, printed
        assert code is not None, printed
        await person.open(link.group(1))
        await person.type_into("code", typed if typed is not None else code.group(1))
        if before is not None:
            await before()
        state = await person.click_and_wait("pair", PAIRED)
        if between is not None:
            await between(state)
            state = await person.click_and_wait("pair", ("Paired", "No passkey", "Refused", "not valid", "not agree"))
        if state.startswith("Paired"):
            with anyio.fail_after(30):
                assert await process.wait() == 0
        else:
            process.terminate()  # the link stays open for another try until it expires; end the wait here
            await process.wait()
    return state


async def paired_example(person: Browser, tmp_path: Path) -> tuple[Example, ApprovalPage]:
    """The example server with its page on, and ``person``'s passkey paired through the pairing command."""
    passkeys = tmp_path / "passkeys.json"
    await pair(person, passkeys)
    example = Example(ApprovalSettings(page=PageSettings(passkeys_file=passkeys)))
    assert example.gate.page is not None
    return example, example.gate.page


@pytest.fixture
async def people() -> AsyncGenerator[list[Browser]]:
    """Two browsers: the person's, which will hold the passkey, and another one."""
    async with browser(2) as made:
        yield made


def _link(result: mt.CallToolResult) -> tuple[str, str]:
    outcome = approval_outcome(result)
    assert outcome is not None, result
    assert outcome["outcome"] == "approval_pending", result
    return outcome["approval_url"], outcome["code"]


def _params(passkeys: Path, **env: str) -> StdioServerParameters:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ELICITATION", "APPROVAL_"))}
    env = {"APPROVAL_PAGE": "true", "APPROVAL_PASSKEYS_FILE": str(passkeys), **env}
    return StdioServerParameters(command=sys.executable, args=[SCRIPT], env={**base, **env})


async def test_pairing_keeps_an_owner_only_file_without_secrets(people: list[Browser], tmp_path: Path) -> None:
    person, _ = people
    passkeys = tmp_path / "passkeys.json"
    assert (await pair(person, passkeys)).startswith("Paired")
    assert stat.S_IMODE(passkeys.stat().st_mode) == 0o600
    body = json.loads(passkeys.read_text())
    assert len(body["credentials"]) == 1
    assert body["credentials"][0]["rp_id"] == "localhost"
    assert body["pairing"] is None, "the pairing link is spent"
    assert set(body["credentials"][0]) == {"id", "public_key", "rp_id", "added"}, "public keys only, no vouch"
    assert await person.passkeys() == 1


async def test_over_stdio_a_client_without_elicitation_gets_the_link_and_the_passkey_approves_once(
    people: list[Browser], tmp_path: Path
) -> None:
    person, stranger = people
    passkeys = tmp_path / "passkeys.json"
    await pair(person, passkeys)
    with tempfile.TemporaryFile("w+") as errlog:
        async with connect(stdio_client(_params(passkeys), errlog=errlog), revision="2025-11-25") as client:
            first = await client.call_tool("delete_items", DELETE)
            url, code = _link(first)
            assert url.startswith("http://localhost:")

            shown = await stranger.open(url)
            assert code in shown
            assert "Delete 1 item(s)" in shown
            assert "/books/work/" in shown
            assert "No passkey answered" in await stranger.click_and_wait("approve", SETTLED)
            held = await client.call_tool("delete_items", DELETE)
            assert _link(held) == (url, code), "a browser without the passkey approved nothing"

            await person.open(url)
            assert "Approved" in await person.click_and_wait("approve", SETTLED)
            acted = await client.call_tool("delete_items", DELETE)
            assert not acted.is_error
            assert acted.structured_content == {"items": ["b", "c"]}
            listed = await client.call_tool("list_items", {})
            assert listed.structured_content == {"items": ["b", "c"]}
        errlog.seek(0)
        started = errlog.read()
    assert re.search(r"example-mcp: approval page at http://localhost:\d+/approval/ — a passkey is paired", started)


async def test_without_user_verification_the_passkey_approves_nothing(people: list[Browser], tmp_path: Path) -> None:
    person, _ = people
    example, page = await paired_example(person, tmp_path)
    async with running_page(page), connect(example.server, revision="2026-07-28") as client:
        url, _ = _link(await client.call_tool("delete_items", DELETE))
        await person.set_user_verified(False)
        await person.open(url)
        state = await person.click_and_wait("approve", SETTLED)
        assert "Approved" not in state
        assert await page.book.decision(url.rsplit("/", 1)[1]) is None
        again = await client.call_tool("delete_items", DELETE)
        assert _link(again)[0] == url
        assert example.items == {"a", "b", "c"}


async def test_a_script_in_the_page_cannot_approve_without_the_passkey(people: list[Browser], tmp_path: Path) -> None:
    """A model driving the person's own browser can read the page and post, but cannot make the passkey sign."""
    person, _ = people
    example, page = await paired_example(person, tmp_path)
    async with running_page(page), connect(example.server, revision="2026-07-28") as client:
        url, _ = _link(await client.call_tool("delete_items", DELETE))
        pid = url.rsplit("/", 1)[1]
        await person.open(url)
        csrf = await person.page.get_attribute("main", "data-csrf")
        status, _ = await person.post_from_page(f"/approval/a/{pid}/decide", {"choice": "approve"}, csrf)
        assert status in (400, 403)
        options_status, options = await person.post_from_page(f"/approval/a/{pid}/options", {}, csrf)
        assert options_status == 200
        forged: dict[str, Any] = {
            "id": options["publicKey"]["allowCredentials"][0]["id"],
            "rawId": options["publicKey"]["allowCredentials"][0]["id"],
            "type": "public-key",
            "response": {"clientDataJSON": "e30", "authenticatorData": "AA", "signature": "AA"},
        }
        status, _ = await person.post_from_page(
            f"/approval/a/{pid}/decide", {"choice": "approve", "credential": forged}, csrf
        )
        assert status in (400, 403)
        status, _ = await person.post_from_page(f"/approval/a/{pid}/decide", {"choice": "approve"}, None)
        assert status == 403
        assert await page.book.decision(pid) is None
        assert example.items == {"a", "b", "c"}


async def test_a_second_passkey_needs_a_paired_ones_vouch_and_then_approves(
    people: list[Browser], tmp_path: Path
) -> None:
    person, stranger = people
    passkeys = tmp_path / "passkeys.json"
    await pair(person, passkeys)
    assert "approves nothing yet" in await pair(stranger, passkeys), "made, but nobody paired agreed"
    assert len(json.loads(passkeys.read_text())["credentials"]) == 1

    first: list[dict[str, Any]] = []
    second: list[dict[str, Any]] = []

    async def new_device() -> None:
        first.extend(await person.hold_only([]))  # the paired passkey's device is set aside

    async def first_device_back(state: str) -> None:
        assert "approves nothing yet" in state, state
        second.extend(await person.hold_only(first))  # the new passkey's device away, the paired one back

    assert (await pair(person, passkeys, between=first_device_back, before=new_device)).startswith("Paired")
    entries = json.loads(passkeys.read_text())["credentials"]
    assert len(entries) == 2
    assert entries[1]["vouch"]["by"] == entries[0]["id"], "the vouch is kept, naming its signer"
    assert set(entries[1]["vouch"]) == {"by", "nonce", "client_data", "authenticator_data", "signature"}

    await person.hold_only(second)  # only the new passkey now
    example = Example(ApprovalSettings(page=PageSettings(passkeys_file=passkeys)))
    page = example.gate.page
    assert page is not None
    async with running_page(page), connect(example.server, revision="2026-07-28") as client:
        url, _ = _link(await client.call_tool("delete_items", DELETE))
        await person.open(url)
        assert "Approved" in await person.click_and_wait("approve", SETTLED)
        acted = await client.call_tool("delete_items", DELETE)
    assert not acted.is_error
    assert example.items == {"b", "c"}


async def test_the_link_without_the_terminals_code_pairs_nothing(people: list[Browser], tmp_path: Path) -> None:
    """A model that sees the pairing link (a tab list, a command line) but not the terminal gets nowhere."""
    person, _ = people
    passkeys = tmp_path / "passkeys.json"
    state = await pair(person, passkeys, typed="AAAA-AAAA")
    assert "not the code" in state
    assert not passkeys.exists() or json.loads(passkeys.read_text())["credentials"] == []
    assert await person.passkeys() == 0


async def test_deny_in_the_browser_changes_nothing(people: list[Browser], tmp_path: Path) -> None:
    person, _ = people
    example, page = await paired_example(person, tmp_path)
    async with running_page(page), connect(example.server, revision="2025-11-25") as client:
        url, code = _link(await client.call_tool("delete_items", DELETE))
        await person.open(url)
        assert "Denied" in await person.click_and_wait("deny", SETTLED)
        denied = await client.call_tool("delete_items", DELETE)
        assert approval_outcome(denied) == {"outcome": "declined", "path": "page", "code": code, "changed": False}
        assert example.items == {"a", "b", "c"}


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
async def test_url_mode_opens_the_page_and_the_person_approves_there(
    people: list[Browser], tmp_path: Path, revision: str
) -> None:
    person, _ = people
    example, page = await paired_example(person, tmp_path)
    opened: list[str] = []

    async def client_opens_the_link(_: Any, params: mt.ElicitRequestParams) -> mt.ElicitResult:
        assert isinstance(params, mt.ElicitRequestURLParams)
        opened.append(params.url)
        shown = await person.open(params.url)
        assert "Delete 1 item(s)" in shown
        assert "Approved" in await person.click_and_wait("approve", SETTLED)
        return mt.ElicitResult(action="accept")

    async with (
        running_page(page),
        connect(example.server, revision=revision, answer=client_opens_the_link, elicitation="url") as client,  # type: ignore[arg-type]
    ):
        result = await client.call_tool("delete_items", DELETE)
    assert not result.is_error
    assert example.items == {"b", "c"}
    assert len(opened) == 1


async def test_an_approve_pressed_as_the_page_appears_is_ignored(people: list[Browser], tmp_path: Path) -> None:
    """A page that swaps the approval page in under the pointer cannot borrow the person's next click."""
    person, _ = people
    example, page = await paired_example(person, tmp_path)
    async with running_page(page), connect(example.server, revision="2026-07-28") as client:
        url, _ = _link(await client.call_tool("delete_items", DELETE))
        await person.page.goto(url)
        await person.page.click("#approve")
        await person.page.wait_for_function("document.getElementById('state').textContent.includes('first')")
        assert await page.book.decision(url.rsplit("/", 1)[1]) is None
        assert "Approved" in await person.click_and_wait("approve", SETTLED), "a later, deliberate press works"
