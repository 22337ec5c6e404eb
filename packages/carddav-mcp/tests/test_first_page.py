"""A first listing asks no version; rows kept under the book's settled last change still follow every change.

On the real Radicale, whose ``getlastmodified`` of a book is the newest time among its files and folder. The
book's files are dated back an hour where a test needs a settled value (a change made in the second the value
names could leave it as it was, so such a value is not used). The requests are recorded by the recording proxy
double (testing/fault_proxy.py), which passes each one on unchanged; a rewriting proxy double stands in for a
server whose last change never moves, which no real server here does.
"""

from __future__ import annotations

import os
import re
import time
from urllib.parse import urlsplit

import pytest
from carddav_conftest import USER, Dav, vcard
from dav_servers import DavServer
from fault_proxy import fault_proxy
from rewriting_proxy import rewriting_proxy

from approval_core.testing import connect
from carddav_mcp.backend import Backend

pytestmark = pytest.mark.anyio


def backdate(server: DavServer, book: str, seconds: float = 3600) -> None:
    """Date the book's folder and files ``seconds`` back, so its last change is a settled, past second."""
    folder = server.data_dir / "collection-root" / book.strip("/")
    then = time.time() - seconds
    for path in [folder, *(p for p in folder.iterdir() if p.is_file())]:
        os.utime(path, (then, then))


def fill(dav: Dav, count: int) -> list[str]:
    return sorted(dav.put(dav.book, f"c{i:02d}.vcf", vcard(f"UID:c{i}", f"FN:Person {i:02d}")) for i in range(count))


async def test_a_first_page_asks_no_version_and_the_next_one_reads_no_listing(
    radicale: Dav, radicale_server: DavServer
) -> None:
    dav = radicale
    hrefs = fill(dav, 6)
    backdate(radicale_server, dav.book)
    parts = urlsplit(dav.settings.url)
    with fault_proxy(f"{parts.scheme}://{parts.netloc}/", lambda method, path: "pass") as proxy:
        server = dav.server(url=proxy.url.rstrip("/") + parts.path)
        async with connect(server, revision="2026-07-28") as client:
            first = (await client.call_tool("list_contacts", {"address_book": dav.book})).structured_content
            sent_first = list(proxy.seen)
            again = (await client.call_tool("list_contacts", {"address_book": dav.book})).structured_content
            sent_again = proxy.seen[len(sent_first) :]
            third = (await client.call_tool("list_contacts", {"address_book": dav.book})).structured_content
            sent_third = proxy.seen[len(sent_first) + len(sent_again) :]
    assert [c["id"] for c in first["contacts"]] == hrefs
    assert again == first
    bodies = b" ".join(s.body for s in sent_first)
    assert b"getctag" not in bodies, [s.body[:200] for s in sent_first]
    assert b"sync-token" not in bodies, [s.body[:200] for s in sent_first]
    assert [(s.method, s.headers.get("depth")) for s in sent_first if s.path == dav.book] == [
        ("PROPFIND", "0"),  # the book: its properties and its last change
        ("PROPFIND", "1"),  # its cards' ETags
        ("REPORT", "1"),  # the page's cards
    ]
    # Listed again: the book's properties, its last change unchanged, so no listing and no card read; before
    # rows are first served by the last change, the sync-token tells once that the server is one known to keep it.
    assert [(s.method, s.headers.get("depth")) for s in sent_again] == [("PROPFIND", "0"), ("PROPFIND", "0")]
    assert [b"sync-token" in s.body for s in sent_again] == [False, True]
    assert third == first
    assert [(s.method, s.headers.get("depth")) for s in sent_third] == [("PROPFIND", "0")]


async def test_another_clients_changes_are_seen_at_once_after_a_listing_kept_under_the_last_change(
    radicale: Dav, radicale_server: DavServer
) -> None:
    dav = radicale
    hrefs = fill(dav, 3)
    backdate(radicale_server, dav.book)
    async with connect(dav.server(), revision="2026-07-28") as client:

        async def listed() -> list[str]:
            page = (await client.call_tool("list_contacts", {"address_book": dav.book})).structured_content
            return sorted(c["fn"] for c in page["contacts"])

        assert await listed() == ["Person 00", "Person 01", "Person 02"]
        assert await listed() == ["Person 00", "Person 01", "Person 02"]  # kept
        dav.put(dav.book, "c00.vcf", vcard("UID:c0", "FN:Renamed Elsewhere"))
        assert await listed() == ["Person 01", "Person 02", "Renamed Elsewhere"]
        backdate(radicale_server, dav.book)
        assert await listed() == ["Person 01", "Person 02", "Renamed Elsewhere"]
        dav.put(dav.book, "new.vcf", vcard("UID:new", "FN:Newly Added"))
        assert await listed() == ["Newly Added", "Person 01", "Person 02", "Renamed Elsewhere"]
        backdate(radicale_server, dav.book)
        assert await listed() == ["Newly Added", "Person 01", "Person 02", "Renamed Elsewhere"]
        assert dav.http.delete(hrefs[2]).status_code in {200, 204}
        assert await listed() == ["Newly Added", "Person 01", "Renamed Elsewhere"]


_MODIFIED = re.compile(rb"(<(?:[A-Za-z0-9]+:)?getlastmodified\b[^>]*>)[^<]*(</)")


def frozen_last_change(body: bytes) -> bytes:
    return _MODIFIED.sub(rb"\1Mon, 01 Jan 2024 00:00:00 GMT\2", body)


async def test_rows_under_a_last_change_that_never_moves_are_read_again_once_old(
    radicale: Dav, radicale_server: DavServer
) -> None:
    dav = radicale
    fill(dav, 1)
    with rewriting_proxy(str(dav.http.base_url), frozen_last_change) as proxy:
        backend = Backend(dav.settings.__class__(**{**dav.settings.__dict__, "url": f"{proxy.url}{USER}/"}))
        try:

            async def rows() -> list[str]:
                book = (await backend.book("address_book", dav.book)).path
                return [h.rsplit("/", 1)[-1] for h, _ in await backend.rows(book)]

            assert await rows() == ["c00.vcf"]
            dav.put(dav.book, "b.vcf", vcard("UID:b", "FN:B"))  # another client
            assert await rows() == ["c00.vcf"]  # the server's word: unchanged since a past second
            backend._rows.max_age = 0.0  # as when the rows are KEPT_SECONDS old
            assert await rows() == ["b.vcf", "c00.vcf"]
        finally:
            await backend.aclose()


def unknown_server(body: bytes) -> bytes:
    """A server not known to keep its last change (another sync-token) whose last change never moves."""
    return frozen_last_change(body).replace(b"http://radicale.org/ns/sync/", b"urn:example:sync:")


async def test_on_a_server_not_known_to_keep_its_last_change_the_book_version_decides(radicale: Dav) -> None:
    dav = radicale
    fill(dav, 1)
    with rewriting_proxy(str(dav.http.base_url), unknown_server) as proxy:
        backend = Backend(dav.settings.__class__(**{**dav.settings.__dict__, "url": f"{proxy.url}{USER}/"}))
        try:

            async def rows() -> list[str]:
                book = (await backend.book("address_book", dav.book)).path
                return [h.rsplit("/", 1)[-1] for h, _ in await backend.rows(book)]

            assert await rows() == ["c00.vcf"]
            assert await rows() == ["c00.vcf"]
            dav.put(dav.book, "b.vcf", vcard("UID:b", "FN:B"))  # another client; the last change stays frozen
            assert await rows() == ["b.vcf", "c00.vcf"]  # the CTag moved, and it decides here
        finally:
            await backend.aclose()


def future_last_change(body: bytes) -> bytes:
    return _MODIFIED.sub(rb"\1Fri, 01 Jan 2100 00:00:00 GMT\2", body)


async def test_a_last_change_not_yet_settled_leaves_the_book_to_its_version(radicale: Dav) -> None:
    # A last change in a second the server's clock has not left (here: one in the future) could stay as it is
    # through a change made in that second, so it is not used: the CTag, asked before and after the read, decides.
    dav = radicale
    fill(dav, 2)
    with rewriting_proxy(str(dav.http.base_url), future_last_change) as proxy:
        backend = Backend(dav.settings.__class__(**{**dav.settings.__dict__, "url": f"{proxy.url}{USER}/"}))
        try:
            book = (await backend.book("address_book", dav.book)).path
            assert len(await backend.rows(book)) == 2
        finally:
            await backend.aclose()
    assert sum(b"getctag" in body for body in proxy.bodies) == 2
