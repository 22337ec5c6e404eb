"""RFC 6764 discovery from CARDDAV_URL: a server root, a sub-path, and a root that answers 405.

Radicale and Xandikos are the real servers; :func:`dav_servers.apache_front` is
a test double (405 on ``/``, a ``/.well-known/carddav`` redirect) in front of a
real Radicale, shaped like DAViCal behind Apache.
"""

from __future__ import annotations

from typing import Any

import dav_servers
import pytest
from carddav_conftest import Dav

from approval_core import ApprovalSettings
from approval_core.testing import connect, listening
from carddav_mcp.server import build_server
from carddav_mcp.settings import CardDavSettings

pytestmark = pytest.mark.anyio


async def _info_and_books(settings: CardDavSettings) -> tuple[dict[str, Any], list[str]]:
    async with connect(build_server(ApprovalSettings(), settings), revision="2026-07-28") as client:
        listed = await client.call_tool("list_address_books", {})
        info = await client.call_tool("get_server_info", {})
    assert not listed.is_error, listed.content[0].text
    assert not info.is_error, info.content[0].text
    assert info.structured_content is not None
    return info.structured_content, [b["id"] for b in listed.structured_content["address_books"]]


def _from(dav: Dav, url: str) -> CardDavSettings:
    return CardDavSettings(**{**dav.settings.__dict__, "url": url, "addressbooks": frozenset()})


@pytest.mark.parametrize("start", ["root", "principal", "book"])
async def test_both_servers_from_the_root_and_sub_paths(dav: Dav, start: str) -> None:
    assert dav.settings.url is not None
    root = dav.settings.url.split("/willi/")[0] + "/"
    url = {"root": root, "principal": root + "willi/", "book": root + dav.book.lstrip("/")}[start]
    info, books = await _info_and_books(_from(dav, url))
    home = "/willi/" if dav.kind == "radicale" else "/willi/contacts/"
    assert info["discovery"]["method"] == "principal"
    assert info["discovery"]["principal"] == "/willi/"
    assert info["discovery"]["home"] == home
    assert info["discovery"]["url"] == url.removeprefix(root.rstrip("/"))
    if start == "book":
        assert books == [dav.book]  # CARDDAV_URL is that book: the book itself is used
    else:
        assert {dav.book, dav.other} <= set(books)


async def test_a_root_answering_405_is_found_through_the_well_known_redirect(
    radicale_server: dav_servers.DavServer, radicale: Dav
) -> None:
    with dav_servers.apache_front(radicale_server, {"/.well-known/carddav": "/willi/"}) as front:
        info, books = await _info_and_books(_from(radicale, front.url))
    assert {radicale.book, radicale.other} <= set(books)
    assert info["discovery"] == {
        "method": "well-known",
        "url": "/",
        "well_known": "/willi/",
        "principal": "/willi/",
        "home": "/willi/",
    }
    assert front.seen[:2] == ["PROPFIND /", "PROPFIND /.well-known/carddav"]


async def test_without_well_known_the_error_says_what_was_tried(
    radicale_server: dav_servers.DavServer, radicale: Dav
) -> None:
    with dav_servers.apache_front(radicale_server, {"/.well-known/carddav": "/nowhere/"}) as front:
        settings = _from(radicale, front.url)
        async with connect(build_server(ApprovalSettings(), settings), revision="2026-07-28") as client:
            listed = await client.call_tool("list_address_books", {})
    text = listed.content[0].text
    assert listed.is_error
    assert "PROPFIND / answered HTTP 405; PROPFIND /.well-known/carddav answered HTTP 403 at /nowhere/" in text, text
    assert "Set CARDDAV_URL to your principal or address-book home URL" in text
    assert "unexpected internal error" not in text


async def test_a_well_known_redirect_to_another_origin_is_not_followed(
    radicale_server: dav_servers.DavServer, radicale: Dav
) -> None:
    with listening() as listener:
        away = f"http://127.0.0.1:{listener.port}/willi/"
        with dav_servers.apache_front(radicale_server, {"/.well-known/carddav": away}) as front:
            settings = _from(radicale, front.url)
            async with connect(build_server(ApprovalSettings(), settings), revision="2026-07-28") as client:
                listed = await client.call_tool("list_address_books", {})
    assert listed.is_error
    assert f"redirected PROPFIND to another origin (http://127.0.0.1:{listener.port})" in listed.content[0].text
    assert listener.received == []
