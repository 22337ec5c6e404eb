"""A book's kept rows (hrefs and ETags) against a server whose version never changes, and moves between books.

The constant version comes from a test double (a rewriting proxy in front of the real Radicale) standing in for
a buggy or hostile server: every getctag and sync-token it answers is the same.
"""

from __future__ import annotations

import re

import pytest
from carddav_conftest import Dav, vcard
from fault_proxy import Action, fault_proxy
from rewriting_proxy import rewriting_proxy

from carddav_mcp.backend import Backend
from carddav_mcp.settings import CardDavSettings

pytestmark = pytest.mark.anyio

_VERSION = re.compile(rb"(<(?:[A-Za-z0-9]+:)?(?:getctag|sync-token)\b[^>]*>)[^<]*(</)")


def constant_versions(body: bytes) -> bytes:
    return _VERSION.sub(rb"\1constant\2", body)


def through(dav: Dav, url: str) -> CardDavSettings:
    return CardDavSettings(
        **{**dav.settings.__dict__, "url": dav.settings.url.replace(dav.http.base_url.__str__().rstrip("/") + "/", url)}
    )


async def test_rows_under_a_version_that_never_changes_are_read_again_once_old(radicale: Dav) -> None:
    dav = radicale
    with rewriting_proxy(str(dav.http.base_url), constant_versions) as proxy:
        backend = Backend(through(dav, proxy.url))
        try:
            assert await backend.rows(dav.book) == []
            href = dav.put(dav.book, "a.vcf", vcard("UID:a", "FN:A", "N:A;;;;"))  # another client
            assert await backend.rows(dav.book) == []  # the server's word: unchanged
            backend._rows.max_age = 0.0  # as when the rows are KEPT_SECONDS old
            assert [h for h, _ in await backend.rows(dav.book)] == [href]
        finally:
            await backend.aclose()


async def test_a_card_moved_here_between_books_is_in_both_books_rows_at_once(radicale: Dav) -> None:
    dav = radicale
    with rewriting_proxy(str(dav.http.base_url), constant_versions) as proxy:
        backend = Backend(through(dav, proxy.url))
        try:
            href = dav.put(dav.book, "m.vcf", vcard("UID:m", "FN:M", "N:M;;;;"))
            assert [h for h, _ in await backend.rows(dav.book)] == [href]
            assert await backend.rows(dav.other) == []
            client = backend.client()
            etag = next(e for h, e in await backend.rows(dav.book) if h == href)
            await client.move(href, f"{dav.other}m.vcf", etag)
            assert await backend.rows(dav.book) == []
            assert [h for h, _ in await backend.rows(dav.other)] == [f"{dav.other}m.vcf"]
        finally:
            await backend.aclose()


async def test_a_card_added_during_a_listing_and_removed_later_is_not_in_the_rows_after_its_removal(
    radicale: Dav,
) -> None:
    # The double relays to Radicale; when armed, another client adds a card between the book's version
    # requests and its listing (the third PROPFIND of the book).
    dav = radicale
    during = {"armed": False, "propfinds": 0}

    def rule(method: str, path: str) -> Action:
        if during["armed"] and method == "PROPFIND" and path == dav.book:
            during["propfinds"] += 1
            if during["propfinds"] == 3:
                during["armed"] = False
                dav.put(dav.book, "brief.vcf", vcard("UID:brief", "FN:Brief", "N:Brief;;;;"))
        return "pass"

    with fault_proxy(str(dav.http.base_url), rule) as proxy:
        backend = Backend(through(dav, proxy.url))
        try:
            dav.put(dav.book, "a.vcf", vcard("UID:a", "FN:A", "N:A;;;;"))
            during["armed"] = True
            rows = [h.rsplit("/", 1)[-1] for h, _ in await backend.rows(dav.book)]
            dav.http.delete(f"{dav.book}brief.vcf")
            again = [h.rsplit("/", 1)[-1] for h, _ in await backend.rows(dav.book)]
        finally:
            await backend.aclose()
    assert "brief.vcf" in rows, [(x.method, x.path, x.headers.get("depth")) for x in proxy.seen]
    assert again == ["a.vcf"]
