"""carddav-mcp against a CardDAV double that answers like a real server, except where it lies.

The backend here is a double, a CardDAV server on 127.0.0.1 that answers like a real one for the book
``/willi/book/`` but, test by test, lies in one way no real server does:

* it slips hrefs of cards elsewhere into its answers (in another book of the same account, through a
  ``..`` segment, as an absolute URL on another host, in a nested collection): every path that follows
  a backend href is tried (sync-collection and PROPFIND listings, addressbook-multiget answers carrying
  cards not asked for, addressbook-query answers, CATEGORIES and Apple group members);
* it names a principal or address-book home on another server;
* it redirects to an address carrying a user name and password;
* it serves a card of hundreds of thousands of folded lines;
* it lists many cards and answers every card read with none.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

import pytest

from approval_core import ApprovalSettings
from approval_core.testing import accept, connect
from carddav_mcp.server import build_server
from carddav_mcp.settings import CardDavSettings

pytestmark = pytest.mark.anyio

BOOK = "/willi/book/"
VICTIM = "/willi/secret/victim.vcf"
FOREIGN = {
    "other book": VICTIM,
    "dot segment": "/willi/book/../secret/victim.vcf",
    "other host": "http://evil.invalid:81/willi/secret/victim.vcf",
    "nested": "/willi/book/sub/victim.vcf",
}


def _card(uid: str, fn: str, *extra: str) -> str:
    return "\r\n".join(["BEGIN:VCARD", "VERSION:3.0", f"UID:{uid}", f"FN:{fn}", f"N:{fn};;;;", *extra, "END:VCARD", ""])


def _response(href: str, props: str) -> str:
    return (
        f"<d:response><d:href>{href}</d:href><d:propstat><d:prop>{props}</d:prop>"
        "<d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>"
    )


def _multistatus(responses: list[str]) -> bytes:
    return (
        '<?xml version="1.0"?><d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">'
        + "".join(responses)
        + "<d:sync-token>t1</d:sync-token></d:multistatus>"
    ).encode()


@dataclass
class Double:
    """What the double holds and how it lies.

    ``cards``: path -> (ETag, vCard). ``foreign``: hrefs slipped into answers (each serves the victim's
    card); ``where``: which answers carry them (``sync``, ``propfind``, ``multiget``, ``query``).
    ``sync``: whether sync-collection is supported. ``writes``: (method, path) of every write received.
    """

    port: int = 0
    cards: dict[str, tuple[str, str]] = field(default_factory=lambda: {})
    foreign: list[str] = field(default_factory=lambda: [])
    where: set[str] = field(default_factory=lambda: set())
    sync: bool = True
    writes: list[tuple[str, str]] = field(default_factory=lambda: [])
    reads: list[str] = field(default_factory=lambda: [])
    hook: Callable[[BaseHTTPRequestHandler, str], bool] | None = None
    requests: list[tuple[str, str, str]] = field(default_factory=lambda: [])

    def slipped(self, kind: str, data: bool) -> list[str]:
        if kind not in self.where:
            return []
        etag, text = self.cards[VICTIM]
        props = f"<d:getetag>{etag}</d:getetag>" + (f"<c:address-data>{text}</c:address-data>" if data else "")
        return [_response(h, props + ("<d:resourcetype/>" if not data else "")) for h in self.foreign]


def _handler(double: Double) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, body: bytes = b"", media: str = "application/xml", etag: str = "") -> None:
            self.send_response(status)
            self.send_header("Content-Type", media)
            self.send_header("Content-Length", str(len(body)))
            if etag:
                self.send_header("ETag", etag)
            self.end_headers()
            self.wfile.write(body)

        def do_any(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
            path = unquote(self.path)
            double.requests.append((self.command, path, body))
            if double.hook is not None and double.hook(self, body):
                return None
            if self.command in {"PUT", "DELETE", "MOVE"}:
                double.writes.append((self.command, path))
            elif path.startswith("/willi/secret/"):
                double.reads.append(path)
            if self.command == "PROPFIND":
                if "current-user-principal" in body:
                    href = "<d:current-user-principal><d:href>/willi/</d:href></d:current-user-principal>"
                    return self._send(207, _multistatus([_response(self.path, href)]))
                if "addressbook-home-set" in body:
                    href = "<c:addressbook-home-set><d:href>/willi/</d:href></c:addressbook-home-set>"
                    return self._send(207, _multistatus([_response(self.path, href)]))
                book = "<d:resourcetype><d:collection/><c:addressbook/></d:resourcetype>"
                answer = [_response(b, book) for b in ("/willi/book/", "/willi/secret/") if b.startswith(path)]
                if self.headers.get("Depth") == "1" and path == BOOK:
                    answer = [_response(BOOK, book)]
                    answer += [
                        _response(h, f"<d:getetag>{e}</d:getetag><d:resourcetype/>")
                        for h, (e, _) in double.cards.items()
                        if h.startswith(BOOK)
                    ]
                    answer += double.slipped("propfind", data=False)
                return self._send(207, _multistatus(answer))
            if self.command == "REPORT":
                if "sync-collection" in body:
                    if not double.sync:
                        return self._send(403, b"")
                    answer = [
                        _response(h, f"<d:getetag>{e}</d:getetag>")
                        for h, (e, _) in double.cards.items()
                        if h.startswith(BOOK)
                    ]
                    return self._send(207, _multistatus(answer + double.slipped("sync", data=False)))
                if "addressbook-query" in body:
                    return self._send(207, _multistatus(double.slipped("query", data=True)))
                answer = []
                for href in re.findall(r"<d:href>([^<]*)</d:href>", body):
                    key = VICTIM if href in double.foreign else unquote(href)
                    if key in double.cards:
                        etag, text = double.cards[key]
                        answer.append(
                            _response(href, f"<d:getetag>{etag}</d:getetag><c:address-data>{text}</c:address-data>")
                        )
                return self._send(207, _multistatus(answer + double.slipped("multiget", data=True)))
            if self.command == "GET":
                if path in double.cards:
                    etag, text = double.cards[path]
                    return self._send(200, text.encode(), "text/vcard", etag)
                return self._send(404)
            if self.command == "PUT":
                etag = f'"e{time.monotonic_ns()}"'
                status = 204 if path in double.cards else 201
                double.cards[path] = (etag, body)
                return self._send(status, etag=etag)
            if self.command == "DELETE":
                double.cards.pop(path, None)
                return self._send(204)
            return self._send(405)

        do_GET = do_PUT = do_DELETE = do_PROPFIND = do_REPORT = do_MOVE = do_any

    return Handler


@pytest.fixture
def double() -> Iterator[Double]:
    state = Double()
    state.cards[f"{BOOK}ada.vcf"] = ('"a1"', _card("ada", "Ada", "CATEGORIES:Friends"))
    state.cards[VICTIM] = ('"v1"', _card("victim", "Victim", "CATEGORIES:Friends"))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def _server(double: Double, books: frozenset[str] = frozenset({BOOK})) -> Any:
    settings = CardDavSettings(
        url=f"http://127.0.0.1:{double.port}/willi/",
        username="willi",
        password="s3cret",
        addressbooks=books,
        timeout=5,
    )
    return build_server(ApprovalSettings(), settings)


def _answer(handler: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str]) -> bool:
    handler.send_response(status)
    for name, value in {**headers, "Content-Length": str(len(body))}.items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(body)
    return True


def _outside(double: Double) -> list[tuple[str, str]]:
    return [(m, p) for m, p in double.writes if not p.startswith(BOOK) or "/" in p[len(BOOK) :]]


@pytest.mark.parametrize("listing", ["sync", "propfind"])
@pytest.mark.parametrize("kind", sorted(FOREIGN))
async def test_a_categories_group_never_writes_a_member_the_listing_placed_outside_the_book(
    double: Double, listing: str, kind: str
) -> None:
    double.foreign, double.where, double.sync = [FOREIGN[kind]], {listing}, listing == "sync"
    async with connect(_server(double), revision="2025-11-25", answer=accept) as client:
        listed = await client.call_tool("list_groups", {"address_book": BOOK})
        assert listed.structured_content is not None
        assert [g["member_count"] for g in listed.structured_content["groups"]] == [1]
        deleted = await client.call_tool("delete_group", {"group_id": f"{BOOK}#Friends"})
    assert not deleted.is_error, deleted.content
    assert _outside(double) == []
    assert double.writes == [("PUT", f"{BOOK}ada.vcf")]
    assert "CATEGORIES:Friends" in double.cards[VICTIM][1]


@pytest.mark.parametrize("kind", sorted(FOREIGN))
async def test_a_multiget_answer_carrying_cards_not_asked_for_leaves_them_out(double: Double, kind: str) -> None:
    double.foreign, double.where = [FOREIGN[kind]], {"multiget"}
    async with connect(_server(double), revision="2025-11-25", answer=accept) as client:
        exported = await client.call_tool("export_contacts", {"address_book": BOOK})
        listed = await client.call_tool("list_contacts", {"address_book": BOOK})
    assert exported.structured_content is not None
    assert listed.structured_content is not None
    assert [c["id"] for c in exported.structured_content["cards"]] == [f"{BOOK}ada.vcf"]
    assert [c["id"] for c in listed.structured_content["contacts"]] == [f"{BOOK}ada.vcf"]


async def test_an_apple_group_lists_no_member_the_backend_placed_outside_the_book(double: Double) -> None:
    double.cards[f"{BOOK}team.vcf"] = (
        '"t1"',
        _card("team", "Team", "X-ADDRESSBOOKSERVER-KIND:group", "X-ADDRESSBOOKSERVER-MEMBER:urn:uuid:victim"),
    )
    double.foreign, double.where = [VICTIM], {"sync", "multiget"}
    async with connect(_server(double), revision="2025-11-25", answer=accept) as client:
        group = await client.call_tool("get_group", {"group_id": f"{BOOK}team.vcf"})
    assert group.structured_content is not None
    assert group.structured_content["members"] == []
    assert double.reads == []


@pytest.mark.parametrize("kind", sorted(FOREIGN))
async def test_a_create_never_takes_a_card_the_query_answer_placed_outside_the_book(double: Double, kind: str) -> None:
    double.foreign, double.where = [FOREIGN[kind]], {"query"}
    async with connect(_server(double), revision="2025-11-25", answer=accept) as client:
        made = await client.call_tool("create_contact", {"address_book": BOOK, "fields": {"fn": "V"}, "uid": "victim"})
    assert made.structured_content is not None, made.content
    assert made.structured_content["outcome"] == "created"
    assert made.structured_content["id"] == f"{BOOK}victim.vcf"
    assert double.reads == []
    assert _outside(double) == []


# ---------------------------------------------------------------- discovery pointing at another server


@pytest.mark.parametrize("where", ["addressbook-home-set", "current-user-principal"])
@pytest.mark.parametrize("href", ["http://127.0.0.2:1/", "//127.0.0.2:1/", "http://127.0.0.2:1/other/"])
async def test_a_home_or_principal_on_another_server_does_not_widen_the_scope(
    double: Double, where: str, href: str
) -> None:
    double.cards["/other/book/o.vcf"] = ('"o1"', _card("o", "Other"))

    def discovery(handler: BaseHTTPRequestHandler, body: str) -> bool:
        if handler.command != "PROPFIND" or where not in body:
            return False
        element = "d:current-user-principal" if where == "current-user-principal" else "c:addressbook-home-set"
        prop = f"<{element}><d:href>{href}</d:href></{element}>"
        return _answer(handler, 207, _multistatus([_response(handler.path, prop)]), {"Content-Type": "text/xml"})

    double.hook = discovery
    async with connect(_server(double, books=frozenset()), revision="2025-11-25", answer=accept) as client:
        outside = await client.call_tool("list_contacts", {"address_book": "/other/book/"})
        inside = await client.call_tool("list_contacts", {"address_book": BOOK})
    assert outside.is_error
    assert "outside this account's address books" in outside.content[0].text
    assert not [p for m, p, _ in double.requests if p.startswith("/other/")]  # not even asked
    assert not inside.is_error, inside.content


# ---------------------------------------------------------------- a redirect carrying credentials


async def test_a_redirect_carrying_a_user_name_is_refused_without_showing_it(double: Double) -> None:
    def redirect(handler: BaseHTTPRequestHandler, body: str) -> bool:
        if handler.command != "REPORT":
            return False
        target = f"http://mallory:hunter2@127.0.0.1:{double.port}/willi/book/"
        return _answer(handler, 307, b"", {"Location": target})

    double.hook = redirect
    async with connect(_server(double), revision="2025-11-25", answer=accept) as client:
        result = await client.call_tool("list_contacts", {"address_book": BOOK})
    assert result.is_error
    text = result.content[0].text
    assert "redirected to an address carrying a user name or password" in text
    assert "another server" not in text
    assert "mallory" not in text
    assert "hunter2" not in text


# ---------------------------------------------------------------- a card of many folded lines


async def test_a_large_card_is_parsed_off_the_event_loop(double: Double, monkeypatch: pytest.MonkeyPatch) -> None:
    """The parse of a card of 150,000 characters runs in a worker thread; the unfolded value is whole."""
    from carddav_mcp.vcard import Card

    lines = 50_000
    folded = "NOTE:" + "\r\n x" * lines
    quoted = "X-QP;ENCODING=QUOTED-PRINTABLE:" + "=\r\ny" * lines
    double.cards[f"{BOOK}big.vcf"] = ('"b1"', _card("big", "Big", folded, quoted).replace("VERSION:3.0", "VERSION:2.1"))
    threads: list[str] = []
    parse = Card.parse

    def watched(text: str) -> Card:
        if len(text) > 100_000:
            threads.append(threading.current_thread().name)
        return parse(text)

    monkeypatch.setattr(Card, "parse", staticmethod(watched))
    async with connect(_server(double), revision="2025-11-25", answer=accept) as client:
        got = await client.call_tool("get_contact", {"contact_id": f"{BOOK}big.vcf"})
        listed = await client.call_tool("list_contacts", {"address_book": BOOK})
    assert got.structured_content is not None, got.content
    assert got.structured_content["note"] == "x" * lines
    assert listed.structured_content is not None
    assert len(threads) >= 2
    assert threading.main_thread().name not in threads


# ---------------------------------------------------------------- a listing whose cards never come


MAX_READS_PER_PAGE = 4  # as docs/carddav-mcp.md states


async def test_a_page_whose_cards_never_come_ends_after_a_bounded_number_of_reads(double: Double) -> None:
    rows = [_response(f"{BOOK}c{i:05d}.vcf", f'<d:getetag>"e{i}"</d:getetag>') for i in range(1000)]

    def empty(handler: BaseHTTPRequestHandler, body: str) -> bool:
        listing = handler.command == "PROPFIND" and handler.headers.get("Depth") == "1"
        if listing or (handler.command == "REPORT" and "sync-collection" in body):
            return _answer(handler, 207, _multistatus(rows), {"Content-Type": "text/xml"})
        if handler.command == "REPORT" and "addressbook-multiget" in body:
            return _answer(handler, 207, _multistatus([]), {"Content-Type": "text/xml"})
        return False

    double.hook = empty
    async with connect(_server(double), revision="2025-11-25", answer=accept) as client:
        page = await client.call_tool("list_contacts", {"address_book": BOOK, "limit": 10})
        assert page.structured_content is not None, page.content
        following = await client.call_tool(
            "list_contacts", {"address_book": BOOK, "limit": 10, "cursor": page.structured_content["next_cursor"]}
        )
    reads = [b for m, _, b in double.requests if m == "REPORT" and "addressbook-multiget" in b]
    assert len(reads) == 2 * MAX_READS_PER_PAGE
    assert page.structured_content["cut"] is True
    assert page.structured_content["contacts"] == []
    assert page.structured_content["next_cursor"]
    asked_first = set(re.findall(r"<d:href>([^<]*)</d:href>", "".join(reads[:MAX_READS_PER_PAGE])))
    asked_next = set(re.findall(r"<d:href>([^<]*)</d:href>", "".join(reads[MAX_READS_PER_PAGE:])))
    assert len(asked_first) == 10 * MAX_READS_PER_PAGE
    assert not asked_first & asked_next  # the cursor goes on where the cut page stopped
    assert following.structured_content is not None
    assert following.structured_content["cut"] is True
