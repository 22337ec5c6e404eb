"""What a listing and a search read from the server: only what the call needs, with the same results as before.

The requests are counted by a recording proxy double (tests/fault_proxy.py) in front of the real Radicale
and Xandikos: it passes every request on unchanged and keeps its method, path and body. A second proxy
double plays a server that ignores the filter of an addressbook-query (it strips the filter before passing
the request on), and a stand-in transport plays one that refuses it; no real server here does either.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

import httpx2 as httpx
import pytest
from carddav_conftest import Dav, vcard
from fault_proxy import FaultProxy, Seen, fault_proxy
from hypothesis import given, settings
from hypothesis import strategies as st

from approval_core.testing import connect
from carddav_mcp.backend import Backend
from carddav_mcp.client import CardDavClient
from carddav_mcp.davxml import norm_href
from carddav_mcp.search import server_needle
from carddav_mcp.settings import CardDavSettings

pytestmark = pytest.mark.anyio
HREF = re.compile(rb"<d:href>([^<]*)</d:href>")
FILTER = re.compile(rb"<c:filter[^>]*>.*</c:filter>", re.S)


def reports(proxy: FaultProxy, kind: str) -> list[Seen]:
    """The REPORT requests whose body is a ``kind`` (addressbook-multiget, addressbook-query, sync-collection)."""
    return [s for s in proxy.requests("REPORT") if kind.encode() in s.body]


def asked(seen: Seen) -> list[str]:
    """The hrefs a multiget asked for."""
    return [h.decode() for h in HREF.findall(seen.body)]


@contextmanager
def proxied(dav: Dav, *, ignore_filters: bool = False) -> Iterator[tuple[FaultProxy, Any]]:
    """A recording proxy double in front of ``dav``'s server, and a carddav-mcp talking through it."""
    parts = urlsplit(dav.settings.url)

    def rewrite(method: str, body: bytes) -> bytes:
        return FILTER.sub(b"", body) if ignore_filters and method == "REPORT" else body

    with fault_proxy(f"{parts.scheme}://{parts.netloc}/", lambda method, path: "pass", rewrite) as proxy:
        yield proxy, dav.server(url=proxy.url.rstrip("/") + parts.path)


def fill(dav: Dav, count: int) -> list[str]:
    hrefs = [
        dav.put(dav.book, f"c{i:02d}.vcf", vcard(f"UID:c{i}", f"FN:Person {i:02d}", f"N:P{i};;;;", f"EMAIL:p{i}@x.org"))
        for i in range(count)
    ]
    return sorted(hrefs)


async def test_the_first_page_reads_only_its_own_cards(dav: Dav) -> None:
    hrefs = fill(dav, 12)
    with proxied(dav) as (proxy, server):
        async with connect(server, revision="2026-07-28") as client:
            first = (await client.call_tool("list_contacts", {"address_book": dav.book, "limit": 5})).structured_content
            assert reports(proxy, "sync-collection") == []  # the book is listed by PROPFIND, not synced
            (multiget,) = reports(proxy, "addressbook-multiget")
            assert asked(multiget) == hrefs[:5]
            assert [c["id"] for c in first["contacts"]] == hrefs[:5]

            args = {"address_book": dav.book, "limit": 5, "cursor": first["next_cursor"]}
            second = (await client.call_tool("list_contacts", args)).structured_content
            assert [asked(s) for s in reports(proxy, "addressbook-multiget")] == [hrefs[:5], hrefs[5:10]]
            assert [c["id"] for c in second["contacts"]] == hrefs[5:10]

            again = (await client.call_tool("list_contacts", {"address_book": dav.book, "limit": 5})).structured_content
            assert again == first
            assert len(reports(proxy, "addressbook-multiget")) == 2  # unchanged cards come from the cache

            dav.put(dav.book, "c03.vcf", vcard("UID:c3", "FN:Person three", "N:P3;;;;"))
            changed = (
                await client.call_tool("list_contacts", {"address_book": dav.book, "limit": 5})
            ).structured_content
            assert [asked(s) for s in reports(proxy, "addressbook-multiget")][-1] == [hrefs[3]]
            assert changed["contacts"][3]["fn"] == "Person three"
    assert [s.method for s in proxy.seen].count("REPORT") == 3


CARDS = {
    "ada.vcf": ("FN:Ada Lovelace", "N:Lovelace;Ada;;;", "EMAIL:ada@analytical.example", "ORG:Analytical Engines"),
    "grace.vcf": ("FN:Grace Hopper", "N:Hopper;Grace;;;", "NICKNAME:Amazing Grace", "TEL:+1 202 555 0100"),
    "strasse.vcf": ("FN:Jörg Straße Dorfmann", "N:Straße;Jörg;;;", "ORG:Dorfmeister GmbH"),
    "kelvin.vcf": ("FN:\u212aarl Kelvin", "N:Kelvin;\u212aarl;;;", "EMAIL:karl@kelvin.example"),
    "fold.vcf": ("FN:A very long name that a server folds: Bartholomew Oppenheimer-Rodriguez the third",),
    "group.vcf": ("FN:Hopper fans", "KIND:group"),
}
QUERIES = ["hopper", "OPPER", "Lovelace", "engines", "strasse dorf", "Dorfmeister", "KARL", "kelvin",
           "202 555", "+1 202 555 0100", "amazing", "analytical.example", "oppenheimer-rod", "nobody here",
           "Person", "ö", "ada"]  # fmt: skip


def put_cards(dav: Dav, *, other: bool = True) -> None:
    if other:
        dav.put(dav.other, "else.vcf", vcard("UID:else", "FN:Someone Else"))
    for name, lines in CARDS.items():
        version = "4.0" if "KIND:group" in lines else "3.0"
        dav.put(dav.book, name, vcard(f"UID:{name[:-4]}", *lines, version=version))


async def searches(server: Any) -> list[Any]:
    found: list[Any] = []
    async with connect(server, revision="2026-07-28") as client:
        for query in QUERIES:
            result = await client.call_tool("search_contacts", {"query": query, "limit": 3})
            assert not result.is_error, result.content
            found.append(result.structured_content)
    return found


async def test_a_search_asks_the_server_for_candidates_and_finds_what_reading_every_card_finds(dav: Dav) -> None:
    put_cards(dav)
    with proxied(dav) as (narrowed, server):
        by_query = await searches(server)
    with proxied(dav, ignore_filters=True) as (ignoring, server):
        by_reading = await searches(server)
    assert by_query == by_reading
    hits = {q: [h["id"].rsplit("/", 1)[-1] for h in r["hits"]] for q, r in zip(QUERIES, by_query, strict=True)}
    assert hits["hopper"] == hits["OPPER"] == ["grace.vcf"]  # the group card is left out
    assert hits["strasse dorf"] == ["strasse.vcf"]  # casefold: ß is ss, though the server never sees that
    assert hits["KARL"] == hits["kelvin"] == ["kelvin.vcf"]  # the Kelvin sign folds to k
    assert hits["Lovelace"] == hits["analytical.example"] == ["ada.vcf"]
    assert hits["+1 202 555 0100"] == hits["202 555"] == ["grace.vcf"]
    assert hits["oppenheimer-rod"] == ["fold.vcf"]
    assert hits["nobody here"] == []

    queries = asked_for = reports(narrowed, "addressbook-query")  # no separate probe: the searches themselves tell
    texts = [re.findall(rb'match-type="contains">([^<]*)<', s.body)[0].decode() for s in asked_for]
    # one server query per query with a piece every match must hold; the others (phone numbers, "kelvin",
    # "amazing", "ö" ...) read every card; each in both books of the test's scope
    expected = ["opper", "opper", "ove", "dor", "dor", "ex", "oppe", "obod", "per"]
    # the first answer's check asks once more, for a piece of a contact's FN outside its family name: "very"
    # of fold.vcf, or "Someone" in the other book, whichever book was searched first
    assert texts.pop(1) in ("ver", "omeo"), texts
    assert texts == [text for text in expected for _ in range(2)]
    assert all(b"<c:filter" not in s.body or b"text-match" in s.body for s in queries)

    first_ignored, *rest = reports(ignoring, "addressbook-query")
    assert b'match-type="contains">opper<' in first_ignored.body
    assert rest == []  # found out from the first answer that the filter is ignored; then every card is read


async def test_a_server_ignoring_the_filter_is_found_out_from_the_first_answer_that_lists_a_card(dav: Dav) -> None:
    put_cards(dav, other=False)
    with proxied(dav, ignore_filters=True) as (proxy, server):
        async with connect(server, revision="2026-07-28") as client:
            for book, query in [(dav.other, "hopper"), (dav.book, "hopper"), (dav.book, "lovelace")]:
                result = await client.call_tool("search_contacts", {"query": query, "address_book": book})
                hits = [h["id"] for h in result.structured_content["hits"]]
                assert hits == ([] if book == dav.other else [f"{dav.book}{'grace' if 'h' in query else 'ada'}.vcf"])
    queries = reports(proxy, "addressbook-query")
    assert [s.path for s in queries] == [dav.other, dav.book]  # an empty book cannot tell; the next answer can
    # the last search read the book as before: its listing, and no multiget (the cards came whole in the answer)
    listings = [s for s in proxy.requests("PROPFIND") if s.path == dav.book and s.headers.get("depth") == "1"]
    assert len(listings) == 1
    assert proxy.seen.index(listings[0]) > proxy.seen.index(queries[-1])
    assert reports(proxy, "addressbook-multiget") == []


@given(
    st.text(alphabet=st.sampled_from("abcdeKkſsßSİIiıﬁfοΣσς0123 -xyzOPQR\u212a"), min_size=1, max_size=30),
    st.data(),
)
def test_every_card_that_matches_holds_the_server_needle(value: str, data: st.DataObject) -> None:
    """Whatever a card holds, a query it matches (casefold) has a needle that Radicale's lower() and Xandikos'
    ASCII upper() both find in it."""
    folded = value.casefold()
    start = data.draw(st.integers(0, len(folded) - 1))
    end = data.draw(st.integers(start + 1, len(folded)))
    query = data.draw(st.sampled_from([str.upper, str.lower, str.title, str]))(folded[start:end])
    if query.casefold().strip() not in folded or not query.strip():
        return  # upper() can change what casefold gives back (ß -> SS is fine, but not every case round-trips)
    needle = server_needle(query)
    if needle is not None:
        assert needle in value.lower()
        assert needle.encode().upper() in value.encode().upper()


def test_the_server_needle() -> None:
    assert server_needle("Person 0421") == "0421"
    assert server_needle("HOPPER") == "opper"
    assert server_needle("Lovelace") == "ove"
    assert server_needle("strasse") is None  # only runs of one letter: ß, ſ and ﬅ fold to s and t
    assert server_needle("+49 30 1234") is None  # phone numbers match by digits, whatever the formatting
    assert server_needle("tel:0301234") is None
    assert server_needle("42") == "42"


async def test_a_server_that_refuses_the_query_is_searched_by_reading_every_card() -> None:
    """A stand-in transport double for a server answering 501 to addressbook-query (none here does)."""
    card = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:a\r\nFN:Grace Hopper\r\nEND:VCARD\r\n"
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        body = request.content.decode()
        kind = "query" if "addressbook-query" in body else "multiget" if "multiget" in body else request.method
        seen.append(f"{kind} {request.headers['Depth']}" if kind == "PROPFIND" else kind)
        if kind == "query":
            return httpx.Response(501, content=b"not implemented")
        data = f"<c:address-data>{card}</c:address-data>" if kind == "multiget" else ""
        inner = (
            f'<d:response><d:href>/u/b/a.vcf</d:href><d:propstat><d:prop><d:getetag>"1"</d:getetag>{data}'
            "</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>"
        )
        xml = f'<d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">{inner}</d:multistatus>'
        return httpx.Response(207, content=xml.encode(), headers={"Content-Type": "application/xml"})

    settings = CardDavSettings(url="https://dav.example.org/u/b/", username="u", password="p")
    backend = Backend(settings)
    backend._client = CardDavClient(settings, transport=httpx.MockTransport(answer))
    try:
        assert await backend.text_candidates("/u/b/", "hopper") is None
        assert await backend.text_candidates("/u/b/", "grace") is None
        (entry,) = await backend.entries("/u/b/")
    finally:
        await backend.aclose()
    # Refused once, then never asked again. The book's version is asked first (this double gives neither a
    # CTag nor a sync-token), then the listing.
    assert seen == ["query", "PROPFIND 0", "PROPFIND 0", "PROPFIND 1", "multiget"]
    assert entry.card.text_of("FN") == "Grace Hopper"


async def test_a_search_result_past_the_size_cap_falls_back_to_reading_every_card(radicale: Dav) -> None:
    put_cards(radicale)
    with proxied(radicale) as (proxy, _):
        url = proxy.url.rstrip("/") + urlsplit(radicale.settings.url).path
        backend = Backend(CardDavSettings(**{**radicale.settings.__dict__, "url": url, "max_response_bytes": 900}))
        try:
            assert backend.client().honours_text_match()
            assert await backend.text_candidates(radicale.book, "er") is None  # four whole cards: too large
            found = await backend.text_candidates(radicale.book, "hopper") or []  # the tool leaves the group out
            assert [e.data.href for e in found] == [f"{radicale.book}grace.vcf", f"{radicale.book}group.vcf"]
        finally:
            await backend.aclose()


HREF_CHARS = st.sampled_from("abcXYZ019._~-/%2e%2F?#;:@!$&'()*+,= \\\u00e9\u0000")


@settings(deadline=None)
@given(st.text(alphabet=HREF_CHARS, max_size=40), st.sampled_from(["/u/b/", "/u/b%20c/", "/u/"]))
def test_the_quick_reading_of_plain_hrefs_gives_what_the_rules_give(segment: str, book: str) -> None:
    """A listing takes a plain href as it stands; for every href that is what the full rules of ids give."""
    from carddav_mcp import client as client_module
    from carddav_mcp.backend import MAX_ID_LENGTH
    from carddav_mcp.davxml import HREF_SAFE

    client = CardDavClient(CardDavSettings(url="https://dav.example.org/u/", username="u", password="p"))
    for raw in (book + segment, segment, "https://dav.example.org" + book + segment, book + "x" * 1000):
        assert client.card_in(book, raw) == client._resolved_card(book, raw), raw
        general = davxml_general(raw, HREF_SAFE)
        assert norm_href(raw) == general, raw
    assert client_module._MAX_HREF == MAX_ID_LENGTH


def davxml_general(href: str, safe: str) -> str:
    """norm_href's general rule, without its quick path."""
    from urllib.parse import quote, unquote, urlsplit

    return quote(unquote(urlsplit(href.strip()).path), safe=safe)


async def test_an_unchanged_book_listed_again_costs_one_small_request(dav: Dav) -> None:
    fill(dav, 6)
    with proxied(dav) as (proxy, server):
        async with connect(server, revision="2026-07-28") as client:
            first = (await client.call_tool("list_contacts", {"address_book": dav.book})).structured_content
            before = len(proxy.seen)
            again = (await client.call_tool("list_contacts", {"address_book": dav.book})).structured_content
            asked_again = proxy.seen[before:]
    assert again["contacts"] == first["contacts"]
    # The book's own properties and its version: small requests of depth 0, no listing and no card read.
    assert {(s.method, s.headers.get("depth")) for s in asked_again} == {("PROPFIND", "0")}
    assert len(asked_again) <= 2


async def test_changes_by_another_client_between_two_listings_are_seen(dav: Dav) -> None:
    hrefs = fill(dav, 3)
    async with connect(dav.server(), revision="2026-07-28") as client:
        first = (await client.call_tool("list_contacts", {"address_book": dav.book})).structured_content
        dav.put(dav.book, "c00.vcf", vcard("UID:c0", "FN:Renamed Elsewhere", "N:R;;;;"))
        dav.put(dav.book, "new.vcf", vcard("UID:new", "FN:Newly Added", "N:N;;;;"))
        assert dav.http.delete(hrefs[2]).status_code in {200, 204}
        second = (await client.call_tool("list_contacts", {"address_book": dav.book})).structured_content
        found = await client.call_tool("search_contacts", {"query": "Newly", "address_book": dav.book})
    assert sorted(c["fn"] for c in first["contacts"]) == ["Person 00", "Person 01", "Person 02"]
    assert sorted(c["fn"] for c in second["contacts"]) == ["Newly Added", "Person 01", "Renamed Elsewhere"]
    assert [h["fn"] for h in found.structured_content["hits"]] == ["Newly Added"]
