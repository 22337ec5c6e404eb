"""The approval page over Streamable HTTP: three caldav-mcp replicas behind HAProxy, one Redis, one passkey file.

The deployment of ``testing/remote_stack.py`` with ``APPROVAL_PAGE=true`` and
one ``APPROVAL_PASSKEYS_FILE`` every replica reads. ``MCP_PUBLIC_URL`` names
``localhost`` (a WebAuthn relying-party id must be a domain, never an IP
address), so the page is ``http://localhost:<proxy port>/approval/...``, on the
MCP endpoint's own origin and outside bearer authentication. The person is
Debian's Chromium driven by Playwright, whose passkey is a DevTools virtual
authenticator (``testing/browser.py``); pairing starts, as the docs say, with
``python -m approval_core pair --file F --page-url <deployment>/approval``.

HAProxy's runtime API puts all replicas but one into maintenance, so each step
goes to a chosen replica, through the proxy: the question is recorded by one,
the person's decision lands through a second, the retried call acts on a
third. What changed is read from Radicale itself.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio.to_thread
import defusedxml.ElementTree as SafeET
import httpx2
import mcp_types as mt
import pytest
from browser import Browser, browser
from ntfy_server import NtfyServer
from page_push import pushed, real_ntfy
from remote_stack import CALENDARS, Stack, remote_stack
from replica_client import http_client

from approval_core.page.path import URL_INPUT_KEY
from approval_core.testing import approval_of

pytestmark = [pytest.mark.anyio, pytest.mark.redis]

DECIDED = ("Approved", "Denied", "denied", "No passkey", "not approved", "Refused", "expired", "cannot")
PAIRED = ("Paired", "No passkey", "no passkey", "not valid", "Refused", "cannot")
WORK = CALENDARS[0]
PUSH_TOPIC = "approvals"
DAV = "{DAV:}"


# ---------------------------------------------------------------------------- Radicale, read directly
# (as in test_remote.py: what a call changed is read from the backend, never from the server under test)


def snapshot(stack: Stack) -> dict[str, str]:
    """Every entry of the work calendar: href → ETag (PROPFIND, Depth 1)."""
    body = '<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop><d:getetag/></d:prop></d:propfind>'
    with stack.dav() as dav:
        answer = dav.request("PROPFIND", WORK, content=body, headers={"Depth": "1"})
    assert answer.status_code == 207, answer.text
    entries: dict[str, str] = {}
    for response in SafeET.fromstring(answer.content).iter(f"{DAV}response"):
        href, etag = response.findtext(f"{DAV}href") or "", response.findtext(f".//{DAV}getetag")
        if href.endswith(".ics") and etag:
            entries[href] = etag
    return entries


def put_event(stack: Stack, uid: str, summary: str = "Page proof", *, new: bool = True) -> tuple[str, str]:
    """Store an event straight into Radicale (``new``: only where none is); its href and ETag."""
    href = f"{WORK}{uid}.ics"
    body = (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//page proof//EN\r\nBEGIN:VEVENT\r\n"
        f"UID:{uid}\r\nDTSTAMP:20261201T090000Z\r\nDTSTART:20261207T120000Z\r\nDTEND:20261207T130000Z\r\n"
        f"SUMMARY:{summary}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )
    headers = {"Content-Type": "text/calendar", **({"If-None-Match": "*"} if new else {})}
    with stack.dav() as dav:
        made = dav.put(href, content=body.encode(), headers=headers)
    assert made.status_code == (201 if new else 204), made.text
    return href, snapshot(stack)[href]


def event(stack: Stack) -> tuple[dict[str, Any], str, str]:
    """A fresh event: the delete_event arguments, its href and its ETag."""
    uid = f"page-{uuid.uuid4().hex}"
    href, etag = put_event(stack, uid)
    return {"calendar": WORK, "id": uid}, href, etag


def put_back(stack: Stack, arguments: dict[str, Any], etag: str) -> None:
    """Store the deleted event again, byte for byte: Radicale gives it the ETag it had."""
    _, again = put_event(stack, arguments["id"])
    assert again == etag, "the same content got another ETag: a retry would not meet the same version"


def audit(stack: Stack, name: str | None, event: str) -> dict[str, str]:
    """The last audit record of ``event`` on replica ``name``'s stderr (``approval {...}``)."""
    assert name is not None, "no replica named itself (X-Backend)"
    records = []
    for line in stack.replicas[name].log.read_text(errors="replace").splitlines():
        _, found, record = line.partition("approval {")
        if found:
            records.append(json.loads("{" + record))
    matching = [r for r in records if r["event"] == event]
    assert matching, f"{name} logged no {event}: {records}"
    return matching[-1]


@pytest.fixture(scope="module")
def passkeys_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("passkeys") / "passkeys.json"


@pytest.fixture(scope="module")
def ntfy(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> Iterator[NtfyServer]:
    """The real ntfy 2.13 (testing/ntfy_server.py; fails, never skips), where the replicas push."""
    with real_ntfy(tmp_path_factory.mktemp("ntfy"), pytestconfig) as server:
        yield server


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, passkeys_file: Path, ntfy: NtfyServer) -> Iterator[Stack]:
    made = httpx2.post(f"{ntfy.url}/v1/account/token", json={"label": "push"}, headers=ntfy.admin_headers())
    assert made.status_code == 200, made.text
    token_file = passkeys_file.parent / "push.token"
    token_file.write_text(made.json()["token"])
    token_file.chmod(0o600)
    page = {
        "APPROVAL_PAGE": "true",
        "APPROVAL_PASSKEYS_FILE": str(passkeys_file),
        "APPROVAL_PUSH_URL": f"{ntfy.url}/{PUSH_TOPIC}",
        "APPROVAL_PUSH_TOKEN_FILE": str(token_file),
        "MCP_ALLOWED_HOSTS": "localhost:*,127.0.0.1:*",
        "APPROVAL_GRANTS": "true",  # test_a_grant_made_through_one_replica_...; nothing else changes with it
    }
    with remote_stack(
        tmp_path_factory.mktemp("page-http"), count=3, store="redis", auth="jwt", extra=page, public_host="localhost"
    ) as running:
        yield running


def origin(stack: Stack) -> str:
    """The deployment's public origin (``http://localhost:<proxy port>``)."""
    return stack.url.removesuffix("/mcp")


def pairing_link(stack: Stack, passkeys_file: Path) -> tuple[str, str]:
    """A new passkey file (no passkey yet); the pairing link and code that ``python -m approval_core pair`` prints."""
    passkeys_file.unlink(missing_ok=True)  # every replica reads the file on each use: now nothing is paired
    made = subprocess.run(  # noqa: S603 - the workspace's own module
        [
            sys.executable,
            "-m",
            "approval_core",
            "pair",
            "--file",
            str(passkeys_file),
            "--page-url",
            f"{origin(stack)}/approval",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert made.returncode == 0, made.stderr
    link = made.stdout.splitlines()[0].strip().rsplit(" ", 1)[-1]
    assert re.fullmatch(re.escape(origin(stack)) + r"/approval/pair/[A-Za-z0-9_-]+", link), made.stdout
    code = re.search(r"code on the page: ([A-Z0-9]{4}-[A-Z0-9]{4})", made.stdout)
    assert code is not None, made.stdout
    return link, code.group(1)


async def pair(stack: Stack, passkeys_file: Path, person: Browser) -> None:
    """Pair ``person``'s passkey through the proxy (its page, options and finish may land on three replicas)."""
    link, code = pairing_link(stack, passkeys_file)
    await person.open(link)
    await person.type_into("code", code)
    said = await person.click_and_wait("pair", PAIRED)
    assert said.startswith("Paired"), said
    assert await person.passkeys() == 1


NO_SERVER = "No server is available"
"""HAProxy's own 503 page: for a moment no replica was up (a health check that took too long on a busy machine)."""


async def decide(person: Browser, stack: Stack, url: str, button: str) -> tuple[str, str]:
    """Open the approval page at ``url`` and press ``button``; the page's text and the state line it ends with.

    Through HAProxy with all replicas but one in maintenance, a health check
    slower than its 500 ms on a busy machine can leave no replica up for a
    moment: HAProxy then answers 503 itself, before any replica saw the request
    (nothing was decided). Such a load or press is repeated once the replica
    is up again, at most three times; any other answer counts.
    """
    shown = said = ""
    for _ in range(3):
        shown = await person.open(url)
        if NO_SERVER not in shown:
            break
        await anyio.to_thread.run_sync(wait_up, stack)
    for _ in range(3):
        said = await person.click_and_wait(button, (*DECIDED, "answered 503"))
        if "answered 503" not in said:
            break
        await anyio.to_thread.run_sync(wait_up, stack)
    return shown, said


def wait_up(stack: Stack, seconds: float = 30.0) -> None:
    """Wait until HAProxy holds some replica up again."""
    proxy = stack.proxy
    assert proxy is not None
    deadline = time.monotonic() + seconds
    while not any(proxy.status(name).startswith("UP") for name in stack.replicas.names):
        assert time.monotonic() < deadline, f"no replica came up in HAProxy within {seconds:g} s"
        time.sleep(0.1)


def pushed_codes(ntfy: NtfyServer) -> list[str]:
    """The code of every pending approval pushed so far, oldest first (ntfy's poll API, as the phone reads it)."""
    ours = [
        str(m["message"]) for m in pushed(ntfy, PUSH_TOPIC) if m.get("title") == "caldav-mcp asks for your approval"
    ]
    return [found.group(1) for text in ours if (found := re.search(r"\(code ([A-Z0-9]{3}-[0-9])\)$", text))]


def backends_of(person: Browser) -> list[tuple[str, str, str | None]]:
    """From now on, every response the browser gets: ``(method, path, X-Backend)``; the list grows as it browses."""
    seen: list[tuple[str, str, str | None]] = []

    def record(response: Any) -> None:
        path = httpx2.URL(response.url).path
        seen.append((response.request.method, path, response.headers.get("x-backend")))

    person.page.on("response", record)
    return seen


async def test_the_page_is_on_the_endpoints_origin_outside_bearer_auth_and_only_under_its_host(stack: Stack) -> None:
    arguments, _, _ = event(stack)
    async with http_client(stack.url, stack.token, revision="2026-07-28") as (client, _):
        pending = approval_of(await client.call_tool("delete_event", arguments))
    assert pending["outcome"] == "not_paired" or pending["outcome"] == "approval_pending", pending
    with httpx2.Client(timeout=30) as http:
        # The MCP endpoint wants a bearer token; the page and its script do not (a browser has none).
        assert http.post(stack.url, json={}).status_code == 401
        script = http.get(f"{origin(stack)}/approval/approval.js")
        assert script.status_code == 200, script.text
        assert script.headers["content-type"].startswith("text/javascript")
        assert "frame-ancestors 'none'" in script.headers["content-security-policy"]
        # Under the proxy's IP address, a Host the MCP endpoint allows (127.0.0.1:*), the page still refuses:
        # its passkeys belong to the name localhost, and a rebinding name must not reach it.
        by_ip = http.get(f"http://127.0.0.1:{stack.url.rsplit(':', 1)[1].split('/')[0]}/approval/approval.js")
        assert by_ip.status_code == 421, by_ip.text
        forged = http.get(f"{origin(stack)}/approval/approval.js", headers={"Host": "attacker.example:80"})
        assert forged.status_code == 421, forged.text


async def test_decided_through_one_replica_the_retry_through_another_acts_once(
    stack: Stack, passkeys_file: Path, ntfy: NtfyServer
) -> None:
    proxy = stack.proxy
    assert proxy is not None
    names = stack.replicas.names
    asker, decider, actor = names
    arguments, href, etag = event(stack)
    async with browser(1) as (person,):
        await pair(stack, passkeys_file, person)
        async with http_client(stack.url, stack.token, revision="2026-07-28") as (client, seen):  # no elicitation
            await client.listed_tool("delete_event")
            try:
                proxy.only(asker, names)
                refused = await client.call_tool("delete_event", arguments)
                asked_by = seen.last()
                pending = approval_of(refused)
                url = pending["approval_url"]
                assert pending["outcome"] == "approval_pending", pending
                assert re.fullmatch(re.escape(origin(stack)) + r"/approval/a/[A-Za-z0-9_-]{22}", url), url
                assert pending["code"] in refused.content[0].text  # pyright: ignore[reportAttributeAccessIssue]
                assert href in snapshot(stack), "a pending approval changed something"

                proxy.only(decider, names)
                undecided = approval_of(await client.call_tool("delete_event", arguments))
                assert (undecided["approval_url"], undecided["code"]) == (url, pending["code"]), undecided
                answers = backends_of(person)
                shown, said = await decide(person, stack, url, "approve")
                assert pending["code"] in shown
                assert said.startswith("Approved"), said
                decided_by = {b for method, path, b in answers if method == "POST" and path.endswith("/decide")}
                assert decided_by == {decider}, answers
                assert href in snapshot(stack), "approving on the page acted by itself"

                proxy.only(actor, names)
                acted = await client.call_tool("delete_event", arguments)
                acted_by = seen.last()
                assert not acted.is_error, acted
                assert href not in snapshot(stack), "the approved call did not act"

                put_back(stack, arguments, etag)  # the same entry, the same ETag: only the spend stops it
                proxy.all(names)
                again = approval_of(await client.call_tool("delete_event", arguments))
            finally:
                proxy.all(names)
    assert (asked_by, acted_by) == (asker, actor), seen.exchanges
    assert again["outcome"] == "approval_pending", again
    assert again["approval_url"] != url, "a spent approval was offered again"
    # One push per pending approval, whichever replica the calls reached: not one per call.
    codes = pushed_codes(ntfy)
    assert codes.count(pending["code"]) == 1, codes
    assert codes.count(again["code"]) == 1, codes
    assert href in snapshot(stack), "a second retry acted on the spent approval"
    opened, approved = audit(stack, asker, "page_opened"), audit(stack, actor, "approved")
    assert (approved["path"], approved["fp"], approved["reason"]) == ("page", opened["fp"], pending["code"])


async def test_an_approval_given_for_one_subject_is_not_found_by_another(stack: Stack, passkeys_file: Path) -> None:
    issuer = stack.issuer
    assert issuer is not None
    other_token = issuer.token(stack.url, subject="mallory", expires_in=3600)
    arguments, href, _ = event(stack)
    async with browser(1) as (person,):
        await pair(stack, passkeys_file, person)
        async with (
            http_client(stack.url, stack.token, revision="2026-07-28") as (willi, _),
            http_client(stack.url, other_token, revision="2026-07-28") as (mallory, _),
        ):
            for client in (willi, mallory):
                await client.listed_tool("delete_event")
            asked = approval_of(await willi.call_tool("delete_event", arguments))
            _, said = await decide(person, stack, asked["approval_url"], "approve")
            assert said.startswith("Approved"), said

            other = approval_of(await mallory.call_tool("delete_event", arguments))
            still_there = href in snapshot(stack)
            acted = await willi.call_tool("delete_event", arguments)
    assert other["outcome"] == "approval_pending", other
    assert other["approval_url"] != asked["approval_url"], "another subject found willi's approval"
    assert still_there, "another subject's identical call acted on willi's approval"
    assert not acted.is_error, "willi's approval was used up by another subject's call"
    assert href not in snapshot(stack)


# ---------------------------------------------------------------------------- URL-mode elicitation over HTTP


async def test_url_mode_on_2026_07_28_asked_on_one_replica_decided_on_a_second_acts_on_a_third_once(
    stack: Stack, passkeys_file: Path
) -> None:
    proxy = stack.proxy
    assert proxy is not None
    names = stack.replicas.names
    asker, decider, actor = names
    arguments, href, etag = event(stack)
    async with browser(1) as (person,):
        await pair(stack, passkeys_file, person)
        async with http_client(stack.url, stack.token, revision="2026-07-28", elicitation="url") as (client, seen):
            await client.listed_tool("delete_event")
            session = client.session
            try:
                proxy.only(asker, names)
                asked = await session.call_tool("delete_event", arguments, allow_input_required=True)
                assert isinstance(asked, mt.InputRequiredResult), asked
                request = (asked.input_requests or {})[URL_INPUT_KEY]
                assert isinstance(request, mt.ElicitRequest), request
                params = request.params
                assert isinstance(params, mt.ElicitRequestURLParams), params
                assert params.url.startswith(f"{origin(stack)}/approval/a/"), params.url

                proxy.only(decider, names)
                answers = backends_of(person)
                shown, said = await decide(person, stack, params.url, "approve")
                assert re.search(r"[A-Z0-9]{3}-[0-9]", shown)
                assert said.startswith("Approved"), said

                proxy.only(actor, names)
                went = {URL_INPUT_KEY: mt.ElicitResult(action="accept")}
                done = await session.call_tool(
                    "delete_event",
                    arguments,
                    input_responses=went,
                    request_state=asked.request_state,
                    allow_input_required=True,
                )
                acted_by = seen.last()
                assert isinstance(done, mt.CallToolResult), done
                assert not done.is_error, done
                assert href not in snapshot(stack)

                put_back(stack, arguments, etag)
                replayed = await session.call_tool(
                    "delete_event",
                    arguments,
                    input_responses=went,
                    request_state=asked.request_state,
                    allow_input_required=True,
                )
            finally:
                proxy.all(names)
    assert {b for method, path, b in answers if method == "POST" and path.endswith("/decide")} == {decider}
    assert acted_by == actor, seen.exchanges
    assert isinstance(replayed, mt.InputRequiredResult), f"a spent approval acted again: {replayed}"
    again = (replayed.input_requests or {})[URL_INPUT_KEY]
    assert isinstance(again, mt.ElicitRequest)
    assert isinstance(again.params, mt.ElicitRequestURLParams)
    assert again.params.url != params.url, "the spent approval's page was offered again"
    assert href in snapshot(stack), "the replay acted"


async def test_url_mode_on_2025_11_25_the_session_waits_while_the_person_decides_through_another_replica(
    stack: Stack, passkeys_file: Path
) -> None:
    proxy = stack.proxy
    assert proxy is not None
    names = stack.replicas.names
    arguments, href, etag = event(stack)
    asked: list[str] = []
    decided_through: list[str | None] = []

    async with browser(1) as (person,):
        await pair(stack, passkeys_file, person)
        answers = backends_of(person)

        async def open_the_page(_: Any, params: mt.ElicitRequestParams) -> mt.ElicitResult:
            """The person: approves on the page the first time (through another replica than the session's)."""
            assert isinstance(params, mt.ElicitRequestURLParams), params
            asked.append(params.url)
            if len(asked) > 1:
                return mt.ElicitResult(action="decline")
            decider = next(name for name in names if name != session_replica)
            proxy.only(decider, names)
            try:
                _, said = await decide(person, stack, params.url, "approve")
                assert said.startswith("Approved"), said
            finally:
                proxy.all(names)
            decided_through.extend(b for method, path, b in answers if method == "POST" and path.endswith("/decide"))
            return mt.ElicitResult(action="accept")

        async with http_client(
            stack.url, stack.token, revision="2025-11-25", answer=open_the_page, elicitation="url"
        ) as (client, seen):
            session_replica = seen.exchanges[0].backend
            done = await client.call_tool("delete_event", arguments)
            acted_by = seen.last()
            gone = href not in snapshot(stack)
            put_back(stack, arguments, etag)
            refused = await client.call_tool("delete_event", arguments)
    assert not done.is_error, done
    assert gone, "the approved call did not act"
    assert acted_by == session_replica
    assert decided_through, answers
    assert session_replica not in decided_through, (session_replica, decided_through)
    assert approval_of(refused)["outcome"] == "declined", refused
    assert len(asked) == 2, asked
    assert asked[0] != asked[1], "the spent approval's page was offered again"
    assert href in snapshot(stack), "the second call acted without a second approval"


# ---------------------------------------------------------------------------- denied, or changed in between


async def test_denied_through_one_replica_the_retry_through_another_changes_nothing_and_the_next_asks_anew(
    stack: Stack, passkeys_file: Path
) -> None:
    proxy = stack.proxy
    assert proxy is not None
    names = stack.replicas.names
    arguments, href, _ = event(stack)
    async with browser(1) as (person,):
        await pair(stack, passkeys_file, person)
        async with http_client(stack.url, stack.token, revision="2026-07-28") as (client, _):
            await client.listed_tool("delete_event")
            try:
                proxy.only(names[0], names)
                asked = approval_of(await client.call_tool("delete_event", arguments))
                proxy.only(names[1], names)
                _, said = await decide(person, stack, asked["approval_url"], "deny")
                proxy.only(names[2], names)
                refused = approval_of(await client.call_tool("delete_event", arguments))
                still_there = href in snapshot(stack)
                again = approval_of(await client.call_tool("delete_event", arguments))
            finally:
                proxy.all(names)
    assert said.startswith("Denied"), said
    assert (refused["outcome"], refused["code"], refused["changed"]) == ("declined", asked["code"], False), refused
    assert still_there, "a denied call acted"
    assert again["outcome"] == "approval_pending", again
    assert again["approval_url"] != asked["approval_url"], "a denial was used twice"
    assert href in snapshot(stack)


async def test_an_entry_changed_after_the_approval_is_not_deleted_and_gets_a_fresh_approval(
    stack: Stack, passkeys_file: Path
) -> None:
    """The approval is bound to the ETag the dialog was built from; another version is another call."""
    arguments, href, etag = event(stack)
    async with browser(1) as (person,):
        await pair(stack, passkeys_file, person)
        async with http_client(stack.url, stack.token, revision="2026-07-28") as (client, _):
            await client.listed_tool("delete_event")
            asked = approval_of(await client.call_tool("delete_event", arguments))
            _, said = await decide(person, stack, asked["approval_url"], "approve")
            assert said.startswith("Approved"), said
            _, changed = put_event(stack, arguments["id"], "Moved to Friday", new=False)  # edited in between
            assert changed != etag, "the edit left the ETag as it was"
            retried = approval_of(await client.call_tool("delete_event", arguments))
            kept = snapshot(stack).get(href)
            _, said = await decide(person, stack, retried["approval_url"], "approve")
            assert said.startswith("Approved"), said
            acted = await client.call_tool("delete_event", arguments)
    assert retried["outcome"] == "approval_pending", retried
    assert retried["approval_url"] != asked["approval_url"], "an approval of the old version was used"
    assert kept == changed, "the changed event was deleted on the old approval"
    assert not acted.is_error, acted
    assert href not in snapshot(stack)


# ---------------------------------------------------------------------------- standing grants over HTTP


async def test_a_grant_made_through_one_replica_is_used_once_per_call_by_all_and_only_for_its_subject(
    stack: Stack, passkeys_file: Path
) -> None:
    from approval_core.page.grants import GRANT_META_KEY

    proxy = stack.proxy
    issuer = stack.issuer
    assert proxy is not None
    assert issuer is not None
    names = stack.replicas.names
    other_token = issuer.token(stack.url, subject="mallory", expires_in=3600)
    calls = [event(stack) for _ in range(4)]
    async with browser(1) as (person,):
        await pair(stack, passkeys_file, person)
        async with (
            http_client(stack.url, stack.token, revision="2026-07-28") as (willi, _),
            http_client(stack.url, other_token, revision="2026-07-28") as (mallory, _),
        ):
            for client in (willi, mallory):
                await client.listed_tool("delete_event")
            try:
                proxy.only(names[0], names)
                asked = approval_of(await willi.call_tool("delete_event", calls[0][0]))
                _, said = await decide(person, stack, asked["approval_url"], "approve")
                assert said.startswith("Approved"), said
                link = await person.page.get_attribute("#grant-link", "href")
                assert link is not None
                proxy.only(names[1], names)
                await person.open(link)
                made = await person.click_and_wait("make-grant", ("Granted", "nothing was granted", "Refused"))
                acted = await willi.call_tool("delete_event", calls[0][0])
                proxy.only(names[2], names)
                one = await willi.call_tool("delete_event", calls[1][0])
                not_hers = approval_of(await mallory.call_tool("delete_event", calls[2][0]))
                proxy.only(names[0], names)
                two = await willi.call_tool("delete_event", calls[2][0])
                proxy.all(names)
                over = approval_of(await willi.call_tool("delete_event", calls[3][0]))
            finally:
                proxy.all(names)
    assert made.startswith("Granted"), made
    assert not acted.is_error, acted
    uses = [dict((r.meta or {})[GRANT_META_KEY]) for r in (one, two)]
    assert [u["uses_left"] for u in uses] == [1, 0]
    assert uses[0]["grant"] == uses[1]["grant"]
    assert not_hers["outcome"] == "approval_pending", "another subject's call is outside the grant"
    assert over["outcome"] == "approval_pending", "the third call over two uses asks"
    remaining = snapshot(stack)
    assert [href in remaining for _, href, _ in calls] == [False, False, False, True]
