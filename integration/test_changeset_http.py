"""One passkey yes for a set of pending calls over Streamable HTTP: three caldav-mcp replicas, one Redis.

The deployment of ``testing/remote_stack.py`` with the approval page on
(``APPROVAL_PAGE=true``, one passkey file every replica reads, the page on
``http://localhost:<proxy port>/approval/``). HAProxy's runtime API sends
each step to a chosen replica: the three calls are asked through one, the
person's set page, its challenge and its decision go through a second, and
the repeated calls act through a third. So the set, its challenge and its
approvals live in the shared record store (Redis), as a single approval's
do. Another subject's pending call is never part of the set. What changed is
read from Radicale itself.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio.to_thread
import pytest
from browser import Browser, browser
from remote_stack import CALENDARS, Stack, remote_stack
from replica_client import http_client

from approval_core.testing import approval_of

pytestmark = [pytest.mark.anyio, pytest.mark.redis]

WORK = CALENDARS[0]
SETTLED = ("Approved", "Denied", "Refused", "not approved", "No passkey", "answered 503")
PAIRED = ("Paired", "No passkey", "no passkey", "not valid", "Refused", "cannot")
NO_SERVER = "No server is available"
"""HAProxy's own 503 page: for a moment no replica was up (a slow health check on a busy machine)."""


@pytest.fixture(scope="module")
def passkeys_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("passkeys") / "passkeys.json"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, passkeys_file: Path) -> Iterator[Stack]:
    page = {
        "APPROVAL_PAGE": "true",
        "APPROVAL_PASSKEYS_FILE": str(passkeys_file),
        "MCP_ALLOWED_HOSTS": "localhost:*,127.0.0.1:*",
    }
    with remote_stack(
        tmp_path_factory.mktemp("changeset-http"),
        count=3,
        store="redis",
        auth="jwt",
        extra=page,
        public_host="localhost",
    ) as running:
        yield running


def origin(stack: Stack) -> str:
    return stack.url.removesuffix("/mcp")


def stored(stack: Stack, uid: str) -> int:
    """The status Radicale answers for the event ``uid`` (200 while it is there)."""
    with stack.dav() as dav:
        return dav.get(f"{WORK}{uid}.ics").status_code


def put_event(stack: Stack, uid: str) -> None:
    body = (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//set proof//EN\r\nBEGIN:VEVENT\r\n"
        f"UID:{uid}\r\nDTSTAMP:20261201T090000Z\r\nDTSTART:20261207T120000Z\r\nDTEND:20261207T130000Z\r\n"
        "SUMMARY:Set proof\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )
    with stack.dav() as dav:
        made = dav.put(f"{WORK}{uid}.ics", content=body.encode(), headers={"Content-Type": "text/calendar"})
    assert made.status_code in (201, 204), made.text


def events(stack: Stack, count: int) -> list[dict[str, Any]]:
    uids = [f"set-{uuid.uuid4().hex}" for _ in range(count)]
    for uid in uids:
        put_event(stack, uid)
    return [{"calendar": WORK, "id": uid} for uid in uids]


def wait_up(stack: Stack, seconds: float = 30.0) -> None:
    proxy = stack.proxy
    assert proxy is not None
    deadline = time.monotonic() + seconds
    while not any(proxy.status(name).startswith("UP") for name in stack.replicas.names):
        assert time.monotonic() < deadline, f"no replica came up in HAProxy within {seconds:g} s"
        time.sleep(0.1)


async def open_page(person: Browser, stack: Stack, url: str) -> str:
    """Load ``url``, again once the replica is up if HAProxy answered for none (nothing was decided then)."""
    shown = ""
    for _ in range(3):
        shown = await person.open(url)
        if NO_SERVER not in shown:
            break
        await anyio.to_thread.run_sync(wait_up, stack)
    return shown


def pairing_link(stack: Stack, passkeys_file: Path) -> tuple[str, str]:
    """A new passkey file (nothing paired); the link and code ``python -m approval_core pair --page-url`` prints."""
    passkeys_file.unlink(missing_ok=True)
    command = [sys.executable, "-m", "approval_core", "pair", "--file", str(passkeys_file)]
    made = subprocess.run(  # noqa: S603 - the workspace's own module
        [*command, "--page-url", f"{origin(stack)}/approval"], capture_output=True, text=True, check=False, timeout=60
    )
    assert made.returncode == 0, made.stderr
    code = re.search(r"code on the page: ([A-Z0-9]{4}-[A-Z0-9]{4})", made.stdout)
    assert code is not None, made.stdout
    return made.stdout.splitlines()[0].strip().rsplit(" ", 1)[-1], code.group(1)


async def pair(stack: Stack, passkeys_file: Path, person: Browser) -> None:
    """Pair ``person``'s passkey through the proxy."""
    link, code = await anyio.to_thread.run_sync(pairing_link, stack, passkeys_file)
    await open_page(person, stack, link)
    await person.type_into("code", code)
    said = await person.click_and_wait("pair", PAIRED)
    assert said.startswith("Paired"), said


async def test_a_set_asked_on_one_replica_approved_on_a_second_acts_on_a_third_once(
    stack: Stack, passkeys_file: Path
) -> None:
    proxy = stack.proxy
    issuer = stack.issuer
    assert proxy is not None
    assert issuer is not None
    names = stack.replicas.names
    asker, decider, actor = names
    calls = events(stack, 4)
    other_token = issuer.token(stack.url, subject="mallory", expires_in=3600)
    async with browser(1) as (person,):
        await pair(stack, passkeys_file, person)
        async with (
            http_client(stack.url, stack.token, revision="2026-07-28") as (willi, seen),
            http_client(stack.url, other_token, revision="2026-07-28") as (mallory, _),
        ):
            for client in (willi, mallory):
                await client.listed_tool("delete_event")
            try:
                proxy.only(asker, names)
                pending = [approval_of(await willi.call_tool("delete_event", call)) for call in calls[:3]]
                foreign = approval_of(await mallory.call_tool("delete_event", calls[3]))
                assert [p["outcome"] for p in pending] == ["approval_pending"] * 3, pending
                assert foreign["outcome"] == "approval_pending", foreign

                proxy.only(decider, names)
                set_url = pending[0]["approval_url"].replace("/approval/a/", "/approval/s/")
                listed = await open_page(person, stack, set_url)
                said = ""
                for _ in range(3):
                    said = await person.click_and_wait("approve-all", SETTLED)
                    if "answered 503" not in said:
                        break
                    await anyio.to_thread.run_sync(wait_up, stack)
                assert said.startswith("Approved 3 call(s)"), said
                assert [stored(stack, call["id"]) for call in calls] == [200] * 4, "approving acted by itself"

                proxy.only(actor, names)
                done = [await willi.call_tool("delete_event", call) for call in calls[:3]]
                acted_by = seen.last()
                gone = [stored(stack, call["id"]) for call in calls[:3]]
                still = approval_of(await mallory.call_tool("delete_event", calls[3]))

                put_event(stack, calls[0]["id"])  # the same bytes again, so the same ETag: only the spend stops it
                again = approval_of(await willi.call_tool("delete_event", calls[0]))
            finally:
                proxy.all(names)
    assert all(p["code"] in listed for p in pending), listed
    assert foreign["code"] not in listed, "another subject's call was listed in willi's set"
    assert [result.is_error for result in done] == [False] * 3, done
    assert acted_by == actor, seen.exchanges
    assert gone == [404] * 3
    assert still["outcome"] == "approval_pending", "another subject's call acted on willi's set"
    assert still["code"] == foreign["code"]
    assert stored(stack, calls[3]["id"]) == 200
    assert again["outcome"] == "approval_pending", "a spent approval acted again"
    assert again["code"] not in {p["code"] for p in pending}
    assert stored(stack, calls[0]["id"]) == 200
