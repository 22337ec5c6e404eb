"""Ids stay home: no id of any tool leads a request, or the account's credentials, off the configured server.

Every id-taking tool gets every string of ``approval_core.testing.escape_corpus`` in each of its id
fields while a recording listener waits on another 127.0.0.1 port; the listener must see nothing, and
each call must end in a clear refusal (or a not-found from the configured server), never a defect.
The redirect test uses a double: an HTTP server on 127.0.0.1 that answers every request with a
redirect to the listener, which no real CardDAV server here can be made to do.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from carddav_conftest import Dav, vcard

from approval_core import ApprovalSettings
from approval_core.testing import connect, escape_corpus, listening
from carddav_mcp.settings import CardDavSettings

pytestmark = pytest.mark.anyio
OFF = ApprovalSettings(elicitation=False)  # a guarded tool that got as far as asking would answer with a token


def id_calls(dav: Dav, card: str, escape: str) -> list[tuple[str, dict[str, Any], str]]:
    """(tool, arguments, the field holding the escape) for every id field of every tool."""
    book = dav.book
    return [
        ("list_contacts", {"address_book": escape}, "address_book"),
        ("get_contact", {"contact_id": escape}, "contact_id"),
        ("search_contacts", {"query": "a", "address_book": escape}, "address_book"),
        ("get_contact_photo", {"contact_id": escape}, "contact_id"),
        ("export_contacts", {"address_book": escape}, "address_book"),
        ("list_changes", {"address_book": escape}, "address_book"),
        ("create_contact", {"address_book": escape, "fields": {"fn": "Eve"}}, "address_book"),
        ("update_contact", {"contact_id": escape, "changes": {"title": "Dr"}}, "contact_id"),
        ("delete_contact", {"contact_ids": [escape]}, "contact_ids"),
        ("move_contact", {"contact_id": escape, "destination": dav.other}, "contact_id"),
        ("move_contact", {"contact_id": card, "destination": escape}, "destination"),
        ("list_groups", {"address_book": escape}, "address_book"),
        ("get_group", {"group_id": escape}, "group_id"),
        ("get_group", {"group_id": f"{escape}#Team"}, "group_id"),
        ("create_group", {"address_book": escape, "name": "G"}, "address_book"),
        ("create_group", {"address_book": book, "name": "G", "members": [escape]}, "members"),
        ("update_group", {"group_id": escape, "add": [card]}, "group_id"),
        ("update_group", {"group_id": f"{book}#Team", "add": [escape]}, "add"),
        ("update_group", {"group_id": f"{book}#Team", "remove": [escape]}, "remove"),
        ("delete_group", {"group_id": escape}, "group_id"),
        ("list_restorable", {"address_book": escape}, "address_book"),
        ("restore_card", {"address_book": escape, "id": "0123456789abcdef"}, "address_book"),
        ("restore_card", {"address_book": book, "id": escape}, "id"),
    ]


async def test_no_id_of_any_tool_reaches_another_port(dav: Dav) -> None:
    card = dav.put(dav.book, "ada.vcf", vcard("UID:ada", "FN:Ada", "N:Lovelace;Ada;;;", "CATEGORIES:Team"))
    inside = dav.book.strip("/")
    covered: set[str] = set()
    with listening() as listener:
        async with connect(dav.server(OFF), revision="2025-11-25") as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            for escape in escape_corpus(listener.port, inside):
                for tool, arguments, field in id_calls(dav, card, escape):
                    covered.add(tool)
                    result = await client.call_tool(tool, arguments)
                    text = result.content[0].text if result.content else ""
                    where = f"{tool}.{field} = {escape[:60]!r}: {text[:300]}"
                    assert result.is_error, where
                    assert "unexpected internal error" not in text, where
                    clear = field.split("[")[0] in text or "not found" in text or "no card at" in text
                    assert clear, where
        assert listener.received == []
    # Every tool that takes an id is in the table (the two without arguments take none).
    assert tools - covered == {"list_address_books", "get_server_info"}


async def test_the_reported_reproduction_sends_nothing_and_names_the_field(dav: Dav) -> None:
    """The report: ``/%2F127.0.0.1:P/<book>/a.vcf`` made get_contact send the credentials to port P."""
    with listening() as listener:
        async with connect(dav.server(OFF), revision="2025-11-25") as client:
            escape = f"/%2F127.0.0.1:{listener.port}{dav.book}a.vcf"
            got = await client.call_tool("get_contact", {"contact_id": escape})
            book = f"/%2F127.0.0.1:{listener.port}{dav.book}"
            listed = await client.call_tool("list_contacts", {"address_book": book})
            moved = await client.call_tool(
                "move_contact", {"contact_id": f"{dav.book}a.vcf", "destination": f"/%2F127.0.0.1:{listener.port}/x/"}
            )
        assert listener.received == []
    assert "contact_id" in got.content[0].text
    assert "encoded slash" in got.content[0].text
    assert "address_book" in listed.content[0].text
    assert moved.is_error


class _Redirector(BaseHTTPRequestHandler):
    """The double: answers every request with a redirect to ``target`` (another origin)."""

    target = ""

    def _redirect(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.send_response(307)
        self.send_header("Location", f"{self.target}{self.path}")
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_PROPFIND = do_REPORT = do_OPTIONS = do_PUT = do_DELETE = _redirect

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def redirector() -> Iterator[tuple[ThreadingHTTPServer, type[_Redirector]]]:
    handler = type("Redirector", (_Redirector,), {})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server, handler
    finally:
        server.shutdown()
        server.server_close()


async def test_a_redirect_to_another_origin_is_not_followed_with_the_credentials(
    redirector: tuple[ThreadingHTTPServer, type[_Redirector]],
) -> None:
    server, handler = redirector
    from carddav_mcp.server import build_server

    with listening() as listener:
        handler.target = f"http://127.0.0.1:{listener.port}"
        url = f"http://127.0.0.1:{server.server_address[1]}/willi/"
        settings = CardDavSettings(
            url=url, username="willi", password="hunter2", extra_headers={"X-Remote-User": "willi"}
        )
        async with connect(build_server(OFF, settings), revision="2025-11-25") as client:
            books = await client.call_tool("list_address_books", {})
            info = await client.call_tool("get_server_info", {})
        assert listener.received == []
    for result in (books, info):
        text = result.content[0].text
        assert result.is_error
        assert f"redirected PROPFIND to another origin (http://127.0.0.1:{listener.port})" in text
        assert "did not follow" in text
        assert "hunter2" not in text


async def test_a_same_origin_redirect_is_followed(dav: Dav) -> None:
    """RFC 6764 §5: /.well-known/carddav redirects (Radicale 301, Xandikos 302) to where the service is."""
    assert dav.settings.url is not None
    root = dav.settings.url.split("/willi/")[0]
    async with connect(dav.server(OFF, url=f"{root}/.well-known/carddav"), revision="2025-11-25") as client:
        books = await client.call_tool("list_address_books", {})
    assert not books.is_error, books.content[0].text
    assert books.structured_content is not None
    assert sorted(b["id"] for b in books.structured_content["address_books"]) == sorted([dav.book, dav.other])
