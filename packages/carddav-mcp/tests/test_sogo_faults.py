"""Two faults met on SOGo (issue 23 §1), through carddav-mcp: its webdav-core layer has both rules.

* :func:`dav_servers.sogo_front` (a double in front of a real Radicale) answers ``/`` with SOGo's HTML page:
  discovery goes on to ``/.well-known/carddav``.
* :func:`closing_server.closing_server` (a double shaped like sogod) closes each connection when a second
  request comes on it: the unanswered PROPFIND is sent once more on a new connection.
"""

from __future__ import annotations

from typing import Any

import dav_servers
import pytest
from carddav_conftest import Dav
from closing_server import closing_server

from approval_core import ApprovalSettings
from approval_core.testing import connect
from carddav_mcp.server import build_server
from carddav_mcp.settings import CardDavSettings

pytestmark = pytest.mark.anyio


async def _call(settings: CardDavSettings) -> tuple[Any, Any]:
    async with connect(build_server(ApprovalSettings(), settings), revision="2026-07-28") as client:
        return await client.call_tool("list_address_books", {}), await client.call_tool("get_server_info", {})


async def test_a_root_answering_an_html_page_is_found_through_the_well_known_redirect(
    radicale_server: dav_servers.DavServer, radicale: Dav
) -> None:
    with dav_servers.sogo_front(radicale_server, {"/.well-known/carddav": "/willi/"}) as front:
        settings = CardDavSettings(**{**radicale.settings.__dict__, "url": front.url, "addressbooks": frozenset()})
        listed, info = await _call(settings)
    assert not listed.is_error, listed.content[0].text
    assert radicale.book in [b["id"] for b in listed.structured_content["address_books"]]
    assert info.structured_content["discovery"]["method"] == "well-known"
    assert front.seen[:2] == ["PROPFIND /", "PROPFIND /.well-known/carddav"]


async def test_address_books_are_listed_from_a_server_that_closes_each_connection_after_one_answer() -> None:
    with closing_server() as server:
        listed, _ = await _call(CardDavSettings(url=server.url, username="willi", password="secret"))
    assert not listed.is_error, listed.content[0].text
    assert server.unanswered, server.seen  # the double did close a connection on a request
