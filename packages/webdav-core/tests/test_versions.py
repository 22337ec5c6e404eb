"""A collection's version (CTag, else sync-token) against the real Radicale and Xandikos, and the writes counted.

Another client's change, made straight to the server, changes the version; a write sent through the layer is
counted for the collection it lands in (a MOVE for both); a server that offers neither property (a stand-in
transport double, since both real servers here offer one) gives no version and is remembered as such.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import httpx2 as httpx
import pytest
from dav_servers import DavServer, radicale, xandikos

from webdav_core import KeptByVersion, WebDavClient
from webdav_core.testing import BARE_PROFILE as PROFILE

pytestmark = pytest.mark.anyio
LIMITS = {"timeout": 30.0, "max_bytes": 1_000_000}

CARD = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:{uid}\r\nFN:{name}\r\nEND:VCARD\r\n"
MKCOL = (
    '<?xml version="1.0" encoding="utf-8"?><d:mkcol xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">'
    "<d:set><d:prop><d:resourcetype><d:collection/><c:addressbook/></d:resourcetype></d:prop></d:set></d:mkcol>"
)


@pytest.fixture(params=["radicale", "xandikos"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DavServer]:
    start = radicale if request.param == "radicale" else xandikos
    with start(tmp_path_factory.mktemp(request.param)) as running:
        yield running


def book_of(server: DavServer, http: httpx.Client, name: str) -> str:
    home = "/willi/" if server.kind == "radicale" else "/willi/contacts/"
    response = http.request(
        "MKCOL", f"{home}{name}/", content=MKCOL.encode(), headers={"Content-Type": "application/xml"}
    )
    assert response.status_code == 201, response.text
    return f"{home}{name}/"


def direct(server: DavServer) -> httpx.Client:
    if server.kind == "radicale":
        return httpx.Client(base_url=server.url, auth=("willi", server.users["willi"]))
    return httpx.Client(base_url=server.url, headers=server.headers_for("willi"))


def layer(server: DavServer) -> WebDavClient:
    if server.kind == "radicale":
        return WebDavClient(server.url, PROFILE, username="willi", password=server.users["willi"], **LIMITS)
    return WebDavClient(server.url, PROFILE, credentials=server.headers_for("willi"), **LIMITS)


async def test_another_clients_change_changes_the_version_and_nothing_else_does(server: DavServer) -> None:
    with direct(server) as http:
        book = book_of(server, http, "versions")
        http.put(
            f"{book}a.vcf", content=CARD.format(uid="a", name="A").encode(), headers={"Content-Type": "text/vcard"}
        )
        client = layer(server)
        try:
            first = await client.versions.of(book)
            again = await client.versions.of(book)
            http.put(
                f"{book}b.vcf", content=CARD.format(uid="b", name="B").encode(), headers={"Content-Type": "text/vcard"}
            )
            added = await client.versions.of(book)
            assert http.delete(f"{book}b.vcf").status_code in {200, 204}
            removed = await client.versions.of(book)
        finally:
            await client.aclose()
    assert first is not None
    assert again == first
    assert added not in {None, first}
    # Both servers derive the version from what the collection holds: with b gone it is the first one again,
    # which is right for a cache (the same content), and never the version that had b.
    assert removed not in {None, added}


async def test_writes_through_the_layer_are_counted_for_their_collections(server: DavServer) -> None:
    with direct(server) as http:
        book, other = book_of(server, http, "source"), book_of(server, http, "target")
        client = layer(server)
        try:
            before = await client.versions.current(book)
            etag = await client.store(f"{book}c.vcf", CARD.format(uid="c", name="C").encode(), "text/vcard", etag=None)
            assert client.versions.writes_to(book) == 1
            await client.move(f"{book}c.vcf", f"{other}c.vcf", etag)
            after = await client.versions.current(book)
        finally:
            await client.aclose()
    assert (client.versions.writes_to(book), client.versions.writes_to(other)) == (2, 1)
    assert before is not None
    assert after is not None
    assert before.rpartition("|")[2] == "0"
    assert after.rpartition("|")[2] == "2"


async def test_a_collection_without_a_version_is_read_every_time() -> None:
    asked: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        asked.append(request.content.decode())
        body = (
            '<d:multistatus xmlns:d="DAV:"><d:response><d:href>/c/</d:href><d:propstat><d:prop><d:displayname>c'
            "</d:displayname></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>"
        )
        return httpx.Response(207, content=body.encode(), headers={"Content-Type": "application/xml"})

    client = WebDavClient("https://dav.example.org/c/", PROFILE, transport=httpx.MockTransport(answer), **LIMITS)
    kept: KeptByVersion[int] = KeptByVersion()
    reads: list[int] = []

    async def read() -> int:
        reads.append(1)
        return len(reads)

    try:
        assert await client.versions.of("/c/") is None
        assert await kept.get("/c/", client.versions, read) == 1
        assert await kept.get("/c/", client.versions, read) == 2
    finally:
        await client.aclose()
    assert len(asked) == 2  # getctag, then sync-token, once; then nothing more is asked
    assert "getctag" in asked[0]
    assert "sync-token" in asked[1]


async def test_the_last_change_of_a_collection_moves_with_each_change_where_the_server_gives_one(
    server: DavServer,
) -> None:
    # Radicale names the second of the collection's last change (Xandikos gives none). The book's files are
    # dated back an hour, so each change below lands in a later second than the one noted.
    with direct(server) as http:
        book = book_of(server, http, "modified")
        http.put(
            f"{book}a.vcf", content=CARD.format(uid="a", name="A").encode(), headers={"Content-Type": "text/vcard"}
        )
        if server.kind == "radicale":
            folder = server.data_dir / "collection-root" / book.strip("/")
            then = time.time() - 3600
            for path in [folder, *(p for p in folder.iterdir() if p.is_file())]:
                os.utime(path, (then, then))
        client = layer(server)
        try:
            before = await client.versions.modified(book)
            unchanged = await client.versions.modified(book)
            http.put(
                f"{book}b.vcf", content=CARD.format(uid="b", name="B").encode(), headers={"Content-Type": "text/vcard"}
            )
            added = await client.versions.modified(book)
        finally:
            await client.aclose()
    if server.kind == "xandikos":
        assert (before, unchanged, added) == (None, None, None)
        return
    assert before is not None
    assert unchanged == before
    assert added not in {None, before}
