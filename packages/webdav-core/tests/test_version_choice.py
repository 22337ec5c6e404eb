"""Which validator checks a kept value: the last change where the server keeps it and it is cheaper, else the CTag.

A double (httpx ``MockTransport``) plays a server answering PROPFIND with a CTag, a ``DAV:getlastmodified`` and a
sync-token of its choice (by default Radicale's form, the one server trusted with its last change); the timings
are the layer's own notes (:meth:`CollectionVersions._took`), set here directly.
"""

from __future__ import annotations

from email.utils import formatdate

import httpx2 as httpx
import pytest

from webdav_core import CollectionVersions, WebDavClient
from webdav_core.testing import BARE_PROFILE

pytestmark = pytest.mark.anyio

NOW = 1_796_188_651
EARLIER = formatdate(NOW - 3600, usegmt=True)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Server:
    """The double's state: the collection's CTag and last change, and the bodies of the PROPFINDs it was sent."""

    def __init__(self) -> None:
        self.ctag = "a"
        self.modified = EARLIER
        self.sync_token = "http://radicale.org/ns/sync/" + "0" * 64
        self.asked: list[str] = []

    def answer(self, request: httpx.Request) -> httpx.Response:
        body = request.content.decode()
        self.asked.append(body)
        props = f"<C:getctag>{self.ctag}</C:getctag>" if "getctag" in body else ""
        props += f"<D:getlastmodified>{self.modified}</D:getlastmodified>" if "getlastmodified" in body else ""
        props += f"<D:sync-token>{self.sync_token}</D:sync-token>" if "sync-token" in body else ""
        xml = (
            '<?xml version="1.0"?><D:multistatus xmlns:D="DAV:" xmlns:C="http://calendarserver.org/ns/">'
            f"<D:response><D:href>/c/</D:href><D:propstat><D:prop>{props}</D:prop>"
            "<D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response></D:multistatus>"
        )
        return httpx.Response(
            207, text=xml, headers={"Content-Type": "application/xml", "Date": formatdate(NOW, usegmt=True)}
        )


def client_of(server: Server) -> WebDavClient:
    transport = httpx.MockTransport(server.answer)
    return WebDavClient("https://dav.example.org/", BARE_PROFILE, timeout=5.0, max_bytes=100_000, transport=transport)


def test_a_version_from_the_last_change_names_its_collection() -> None:
    versions = CollectionVersions.__new__(CollectionVersions)
    versions._writes = {}
    one, other = versions.by_modified("/a/", EARLIER), versions.by_modified("/b/", EARLIER)
    assert one != other  # two calendars changed in the same second: a cursor of one never continues the other
    assert CollectionVersions.modified_in(one) == CollectionVersions.modified_in(other) == EARLIER
    assert CollectionVersions.modified_in('getctag:"x"|0') is None


async def test_a_kept_value_under_the_last_change_is_checked_by_it_alone() -> None:
    server = Server()
    client = client_of(server)
    try:
        assert await client.versions.trusts_modified("/c/")
        version = client.versions.by_modified("/c/", EARLIER)
        assert await client.versions.check("/c/", version) == version
        server.modified = formatdate(NOW - 10, usegmt=True)  # another client's change
        assert await client.versions.check("/c/", version) != version
    finally:
        await client.aclose()
    assert all("getctag" not in body for body in server.asked)


async def test_a_server_whose_last_change_stays_while_its_ctag_moves_is_checked_by_ctag_from_then_on() -> None:
    server = Server()
    client = client_of(server)
    try:
        version = client.versions.by_modified("/c/", EARLIER)
        await client.versions.current("/c/")  # the CTag with the last change: the first pair
        server.ctag = "b"  # a change the last change does not show
        await client.versions.current("/c/")
        assert not client.versions.modified_keeps()
        now = await client.versions.check("/c/", version)
    finally:
        await client.aclose()
    assert now is not None
    assert now.startswith("getctag:")  # another kind: the kept value is read again


async def test_a_ctag_no_costlier_than_the_last_change_is_the_validator() -> None:
    server = Server()
    client = client_of(server)
    try:
        versions = client.versions
        versions._took("getlastmodified", 0.030)
        versions._took("getctag", 0.200)
        assert await versions.trusts_modified("/c/")  # Radicale's figures for 2,000 entries: the last change is cheaper
        fresh = client_of(server).versions
        fresh._took("getlastmodified", 0.010)
        fresh._took("getctag", 0.012)
        assert not await fresh.trusts_modified("/c/")  # a stored CTag: it decides, with no second of resolution
    finally:
        await client.aclose()


@pytest.mark.parametrize(
    "sync_token",
    ["data:,1796319894-5", "ae4423fea231573dd53ab2567fdc26cd3f98a7ca", "1796319916", ""],  # Cyrus, Xandikos, SOGo
)
async def test_a_server_not_known_to_keep_its_last_change_is_checked_by_its_ctag(sync_token: str) -> None:
    server = Server()
    server.sync_token = sync_token
    client = client_of(server)
    try:
        versions = client.versions
        versions._took("getlastmodified", 0.030)
        versions._took("getctag", 0.200)  # however much dearer the CTag is
        assert not await versions.trusts_modified("/c/")
        await versions.current("/c/")  # a pair of CTag and settled last change, as the calendar list gives
        assert (await versions.cheapest("/c/") or "").startswith("getctag:")
    finally:
        await client.aclose()


async def test_the_server_is_told_once_by_its_sync_token() -> None:
    server = Server()
    client = client_of(server)
    try:
        assert await client.versions.trusts_modified("/c/")
        assert await client.versions.trusts_modified("/other/")
    finally:
        await client.aclose()
    assert sum("sync-token" in body for body in server.asked) == 1


async def test_a_failed_sync_token_answer_checks_by_ctag_this_time_and_asks_again_next_time() -> None:
    server = Server()
    failing = {"left": 1}

    def answer(request: httpx.Request) -> httpx.Response:
        if b"sync-token" in request.content and failing["left"]:
            failing["left"] -= 1
            server.asked.append(request.content.decode())
            return httpx.Response(500, text="busy")
        return server.answer(request)

    client = WebDavClient(
        "https://dav.example.org/",
        BARE_PROFILE,
        timeout=5.0,
        max_bytes=100_000,
        transport=httpx.MockTransport(answer),
    )
    try:
        assert not await client.versions.trusts_modified("/c/")
        assert await client.versions.trusts_modified("/c/")
    finally:
        await client.aclose()
    assert sum("sync-token" in body for body in server.asked) == 2
