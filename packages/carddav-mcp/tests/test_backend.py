"""The shared backend against the real servers: listings, the card cache and the address-book scope."""

from __future__ import annotations

import pytest
from carddav_conftest import Dav, vcard

from carddav_mcp.backend import Backend
from carddav_mcp.errors import InvalidInput, NotAllowed
from carddav_mcp.settings import CardDavSettings

pytestmark = pytest.mark.anyio


async def test_listings_follow_changes_and_the_cache_drops_what_is_gone(dav: Dav) -> None:
    backend = Backend(dav.settings)
    try:
        a = dav.put(dav.book, "a.vcf", vcard("UID:a", "FN:A", "N:A;;;;"))
        assert [href for href, _ in await backend.rows(dav.book)] == [a]
        assert [e.card.text_of("FN") for e in await backend.entries(dav.book)] == ["A"]
        b = dav.put(dav.book, "b.vcf", vcard("UID:b", "FN:B", "N:B;;;;"))
        dav.http.delete(a)
        assert [href for href, _ in await backend.rows(dav.book)] == [b]
        c = dav.put(dav.book, "c.vcf", vcard("UID:c", "FN:C", "N:C;;;;"))
        dav.put(dav.book, "b.vcf", vcard("UID:b", "FN:B2", "N:B;;;;"))
        assert [href for href, _ in await backend.rows(dav.book)] == [b, c]
        entries = await backend.entries(dav.book)
        assert [e.card.text_of("FN") for e in entries] == ["B2", "C"]
        assert set(backend._cache[dav.book]) == {b, c}
    finally:
        await backend.aclose()


async def test_ids_are_decoded_and_scoped(dav: Dav) -> None:
    backend = Backend(dav.settings)
    try:
        assert await backend.card_id("contact_id", f"{dav.book}x.vcf") == (f"{dav.book}x.vcf", dav.book)
        assert await backend.book_id("address_book", dav.book.rstrip("/")) == dav.book
        dotted = [f"{dav.book}../x.vcf", f"{dav.book}%2e%2e/x.vcf", f"{dav.book}%2E./x.vcf"]
        for bad in ["x.vcf", *dotted, f"{dav.book}", "/x.vcf"]:
            with pytest.raises(InvalidInput, match="contact_id"):
                await backend.card_id("contact_id", bad)
        for bad_book in [f"{dav.book}%2e%2e/other/", f"{dav.book}./"]:
            with pytest.raises(InvalidInput, match="address_book"):
                await backend.book_id("address_book", bad_book)
        with pytest.raises(NotAllowed, match="CARDDAV_ADDRESSBOOKS"):
            await backend.card_id("contact_id", "/willi/elsewhere/x.vcf")
        # The whole path is compared: a book elsewhere whose last segment is an allowed name is still outside.
        name = dav.book.rstrip("/").rsplit("/", 1)[-1]
        with pytest.raises(NotAllowed, match="CARDDAV_ADDRESSBOOKS"):
            await backend.card_id("contact_id", f"/someone-else/{name}/x.vcf")
        with pytest.raises(NotAllowed, match="CARDDAV_ADDRESSBOOKS"):
            await backend.book_id("address_book", f"/{name}/")
    finally:
        await backend.aclose()


async def test_without_a_limit_ids_stay_in_the_accounts_home(dav: Dav) -> None:
    backend = Backend(CardDavSettings(**{**dav.settings.__dict__, "addressbooks": frozenset()}))
    try:
        assert await backend.book_id("address_book", dav.other) == dav.other
        for outside in ["/someone-else/book/", "/"]:
            with pytest.raises(NotAllowed, match="outside this account's address books"):
                await backend.book_id("address_book", outside)
    finally:
        await backend.aclose()


async def test_the_client_makes_an_address_book_with_extended_mkcol(dav: Dav) -> None:
    backend = Backend(dav.settings)
    home = dav.book.rstrip("/").rsplit("/", 1)[0] + "/"
    try:
        await backend.client().make_address_book(f"{home}made-here/", "Made here")
        books = {b.path: b for b in await backend.client().address_books()}
        in_scope = {b.path for b in await backend.books()}
    finally:
        await backend.aclose()
    assert books[f"{home}made-here/"].display_name == "Made here"
    assert f"{home}made-here/" not in in_scope  # outside CARDDAV_ADDRESSBOOKS


async def test_books_are_found_from_the_server_root_through_the_principal(dav: Dav) -> None:
    assert dav.settings.url is not None
    root = dav.settings.url.split("/willi/")[0] + "/"
    backend = Backend(CardDavSettings(**{**dav.settings.__dict__, "url": root}))
    try:
        books = [b.path for b in await backend.books()]
    finally:
        await backend.aclose()
    assert books == sorted([dav.book, dav.other])
