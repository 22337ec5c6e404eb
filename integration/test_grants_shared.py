"""A standing grant shared by two caldav-mcp replicas through one real Redis (issue 32 §3).

Two server objects (two replicas) share one key file, one Redis
(``redis-server`` from Debian, testing/redis_server.py) and one passkey file,
in front of a real Radicale. The approval page is served by the first; the
second links to the same page (same origin, same records). The person, in
Debian's Chromium with a DevTools virtual passkey, approves a deletion asked
by one replica and widens it into a grant for two deletions in one calendar.
Calls then alternate between the replicas: two act without asking, the third
asks, another calendar asks, and a revoked grant allows nothing on either.
A second test races the last use of a grant through two Redis connections:
exactly one gets it. Runs in ``nox -s integration`` (marker ``redis``).
"""

from __future__ import annotations

import base64
import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import caldav
import httpx2 as httpx
import pytest
from browser import Browser, browser, page_of, paired
from dav_servers import DavServer, radicale
from redis_server import RedisServer

from approval_core import ApprovalSettings, RedisStore
from approval_core.asking.grant_book import GrantBook
from approval_core.asking.grants import GrantCall, GrantTerms
from approval_core.page.grants import GRANT_META_KEY
from approval_core.page.loopback import running_page
from approval_core.testing import approval_of, connect
from caldav_mcp.server import build_server
from caldav_mcp.settings import CalDAVSettings

pytestmark = [pytest.mark.anyio, pytest.mark.redis]

DECIDED = ("Approved", "not approved", "Refused", "expired")
GRANTED = ("Granted", "nothing was granted", "No passkey", "Refused", "tools:", "uses", "minutes", "cannot")
EVENT = (
    "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//test//EN\nBEGIN:VEVENT\nUID:{uid}\nDTSTAMP:20261101T000000Z\n"
    "DTSTART:20261203T090000Z\nDTEND:20261203T100000Z\nSUMMARY:Shared grant\nEND:VEVENT\nEND:VCALENDAR\n"
)


@pytest.fixture(scope="module")
def dav(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DavServer]:
    with radicale(tmp_path_factory.mktemp("radicale")) as server:
        yield server


@pytest.fixture(scope="module")
def redis() -> Iterator[RedisServer]:
    with RedisServer() as server:
        yield server


def calendars(dav: DavServer) -> tuple[str, str]:
    """Two fresh calendars of willi: their paths."""
    principal = caldav.DAVClient(url=dav.url, username="willi", password="secret").principal()
    n = uuid.uuid4().hex[:8]
    for kind in ("work", "home"):
        principal.make_calendar(name=f"{kind} {n}", cal_id=f"{kind}{n}")
    return f"/willi/work{n}/", f"/willi/home{n}/"


def put(dav: DavServer, calendar: str, uid: str) -> None:
    reply = httpx.put(
        dav.url.rstrip("/") + f"{calendar}{uid}.ics",
        content=EVENT.format(uid=uid),
        headers={"Content-Type": "text/calendar", "If-None-Match": "*"},
        auth=("willi", "secret"),
    )
    assert reply.status_code == 201, reply.status_code


def status(dav: DavServer, calendar: str, uid: str) -> int:
    return httpx.get(dav.url.rstrip("/") + f"{calendar}{uid}.ics", auth=("willi", "secret")).status_code


def shared_settings(tmp_path: Path, redis: RedisServer) -> ApprovalSettings:
    keys = tmp_path / "approval.keys"
    keys.write_text(base64.b64encode(os.urandom(32)).decode() + "\n")
    keys.chmod(0o600)
    return ApprovalSettings.from_env(
        {
            "APPROVAL_STORE_URL": redis.url,
            "APPROVAL_KEY_FILE": str(keys),
            "APPROVAL_PAGE": "true",
            "APPROVAL_PASSKEYS_FILE": str(tmp_path / "passkeys.json"),
            "APPROVAL_GRANTS": "true",
        }
    )


async def approve_and_grant(person: Browser, uses: int) -> str:
    said = await person.click_and_wait("approve", DECIDED)
    assert said.startswith("Approved"), said
    link = await person.page.get_attribute("#grant-link", "href")
    assert link is not None
    await person.open(link)
    await person.type_into("uses", str(uses))
    await person.type_into("minutes", "30")
    return await person.click_and_wait("make-grant", GRANTED)


def grant_of(result: Any) -> dict[str, Any]:
    assert not result.is_error, result
    return dict((result.meta or {})[GRANT_META_KEY])


async def test_two_replicas_share_a_grant_and_each_use_counts_once(
    dav: DavServer, redis: RedisServer, tmp_path: Path
) -> None:
    work, home = calendars(dav)
    for uid in ("e0", "e1", "e2", "e3", "e4"):
        put(dav, work, uid)
    put(dav, home, "h0")
    settings = shared_settings(tmp_path, redis)
    backend = CalDAVSettings(dav.url, "willi", "secret")
    first, second = build_server(settings, backend), build_server(settings, backend)
    page = first.approval_gate.page
    at = lambda uid: {"calendar": work, "id": uid}  # noqa: E731
    try:
        async with running_page(page) as base, browser(1) as (person,):
            second.approval_gate.page.bind(base.removesuffix("/approval"))  # the same page, served by the first
            await paired(page, person)
            async with connect(first, revision="2026-07-28") as a, connect(second, revision="2025-11-25") as b:
                await page_of(b, person, "delete_event", at("e0"))
                made = await approve_and_grant(person, uses=2)
                approved = await a.call_tool("delete_event", at("e0"))
                one = await b.call_tool("delete_event", at("e1"))
                two = await a.call_tool("delete_event", at("e2"))
                third = await b.call_tool("delete_event", at("e3"))
                elsewhere = await a.call_tool("delete_event", {"calendar": home, "id": "h0"})
                await person.open(approval_of(third)["approval_url"])
                again = await approve_and_grant(person, uses=5)
                approved_third = await a.call_tool("delete_event", at("e3"))
                await person.open(f"{base}/grants")
                revoke_ids = await person.page.eval_on_selector_all("button.revoke", "(b) => b.map((x) => x.id)")
                revoked = await person.click_and_wait(revoke_ids[0], ("Revoked", "no such", "Refused"))
                after_a = await a.call_tool("delete_event", at("e4"))
                after_b = await b.call_tool("delete_event", at("e4"))
    finally:
        await first.approval_gate.store.aclose()
        await second.approval_gate.store.aclose()
    assert made.startswith("Granted"), made
    assert again.startswith("Granted"), again
    assert not approved.is_error
    assert GRANT_META_KEY not in (approved.meta or {})
    assert (grant_of(one)["uses_left"], grant_of(two)["uses_left"]) == (1, 0)
    assert grant_of(one)["grant"] == grant_of(two)["grant"]
    assert approval_of(third)["outcome"] == "approval_pending"
    assert approval_of(elsewhere)["outcome"] == "approval_pending"
    assert not approved_third.is_error
    assert len(revoke_ids) == 1
    assert revoked.startswith("Revoked"), revoked
    assert approval_of(after_a)["outcome"] == "approval_pending"
    assert approval_of(after_b)["outcome"] == "approval_pending"
    assert [status(dav, work, uid) for uid in ("e0", "e1", "e2", "e3", "e4")] == [404, 404, 404, 404, 200]
    assert status(dav, home, "h0") == 200


async def use(book: GrantBook, call: GrantCall, got: list[bool]) -> None:
    got.append(await book.use(call) is not None)


async def test_of_two_replicas_racing_for_the_last_use_exactly_one_gets_it(redis: RedisServer) -> None:
    namespace = f"grants-{uuid.uuid4().hex[:8]}"
    stores = [RedisStore(redis.url, namespace), RedisStore(redis.url, namespace)]
    books = [GrantBook(store, "caldav-mcp") for store in stores]
    call = GrantCall("caldav-mcp", "delete_event", "/willi/work/")
    try:
        for round_ in range(5):
            terms = GrantTerms.widen(call, ["delete_event"], 1, 10, time.time())
            grant_id = await books[0].make(terms)
            got: list[bool] = []
            async with anyio.create_task_group() as group:
                group.start_soon(use, books[0], call, got)
                group.start_soon(use, books[1], call, got)
            assert sorted(got) == [False, True], round_
            await books[1].revoke(grant_id)
    finally:
        for store in stores:
            await store.aclose()
