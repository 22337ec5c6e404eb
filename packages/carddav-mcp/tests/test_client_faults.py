"""Faults no real server here can be made to produce on demand, answered by a stand-in transport.

The stand-in (``httpx.MockTransport``) is a double for the network only: it
plays a server that fails in one specific way, so the translation of each
failure in client.py can be checked.
"""

from __future__ import annotations

import httpx2 as httpx
import pytest

from carddav_mcp.client import CardDavClient
from carddav_mcp.errors import (
    AuthenticationFailed,
    BackendError,
    CardRejected,
    Conflict,
    Forbidden,
    NotConfigured,
    NotFound,
    PreconditionFailed,
    Unreachable,
)
from carddav_mcp.settings import CardDavSettings

pytestmark = pytest.mark.anyio
SETTINGS = CardDavSettings(url="https://dav.example.org/", username="u", password="hunter2")


def stand_in(status: int, body: str = "", error: Exception | None = None) -> httpx.MockTransport:
    def answer(request: httpx.Request) -> httpx.Response:
        if error is not None:
            raise error
        return httpx.Response(status, content=body.encode())

    return httpx.MockTransport(answer)


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (401, "", AuthenticationFailed),
        (403, "", Forbidden),
        (404, "", NotFound),
        (410, "", NotFound),
        (409, "", Conflict),
        (412, "", PreconditionFailed),
        (412, "<error><valid-address-data/></error>", CardRejected),
        (400, "", CardRejected),
        (415, "", CardRejected),
        (500, "", BackendError),
        (507, "", BackendError),
    ],
)
async def test_every_status_is_translated(status: int, body: str, expected: type[Exception]) -> None:
    client = CardDavClient(SETTINGS, transport=stand_in(status, body))
    with pytest.raises(expected) as caught:
        await client.put("/u/book/x.vcf", "BEGIN:VCARD\r\nEND:VCARD\r\n", etag='"1"')
    await client.aclose()
    assert "hunter2" not in str(caught.value)
    assert "/u/book/x.vcf" in str(caught.value)
    if expected is PreconditionFailed:
        assert "Nothing was written" in str(caught.value)


@pytest.mark.parametrize("error", [httpx.ConnectError("refused"), httpx.ReadTimeout("slow")])
async def test_no_answer_is_unreachable(error: Exception) -> None:
    client = CardDavClient(SETTINGS, transport=stand_in(200, error=error))
    with pytest.raises(Unreachable):
        await client.list_etags("/u/book/")
    await client.aclose()


@pytest.mark.parametrize(
    "body", ["not xml at all", "<other xmlns='DAV:'/>", '<!DOCTYPE x [<!ENTITY e "x">]><x>&e;</x>']
)
async def test_an_unreadable_or_hostile_multistatus_is_a_backend_error(body: str) -> None:
    client = CardDavClient(SETTINGS, transport=stand_in(207, body))
    with pytest.raises(BackendError) as caught:
        await client.list_etags("/u/book/")
    await client.aclose()
    assert "could not be read" in str(caught.value)


def test_settings_say_what_is_missing() -> None:
    with pytest.raises(NotConfigured, match="CARDDAV_URL"):
        CardDavSettings().require()
    with pytest.raises(NotConfigured, match="http"):
        CardDavSettings(url="ftp://x/").require()
    with pytest.raises(NotConfigured, match="CARDDAV_PASSWORD"):
        CardDavSettings(url="https://x/", username="u").require()
    settings = CardDavSettings.from_env(
        {
            "CARDDAV_URL": "https://x/",
            "CARDDAV_USERNAME": "u",
            "CARDDAV_PASSWORD": "p",
            "CARDDAV_ADDRESSBOOKS": " a, /u/b/ ,",
        }
    )
    assert settings.addressbooks == frozenset({"a", "/u/b/"})
    assert settings.require() == "https://x/"
    assert "password" not in repr(settings)


def partial_server() -> httpx.MockTransport:
    """A stand-in for a server that honours a request for some properties only (Radicale and Xandikos do not)."""
    full = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:a\r\nFN:Ada\r\nN:A;;;;\r\nNICKNAME:Enchantress\r\nEND:VCARD\r\n"
    partial = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:a\r\nFN:Ada\r\nEND:VCARD\r\n"

    def answer(request: httpx.Request) -> httpx.Response:
        body = request.content.decode()
        if "sync-collection" in body:
            inner = '<d:response><d:href>/u/b/a.vcf</d:href><d:propstat><d:prop><d:getetag>"1"</d:getetag></d:prop>'
            inner += "<d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response><d:sync-token>t1</d:sync-token>"
        else:
            card = partial if 'c:prop name="FN"' in body else full
            inner = (
                '<d:response><d:href>/u/b/a.vcf</d:href><d:propstat><d:prop><d:getetag>"1"</d:getetag>'
                f"<c:address-data>{card}</c:address-data></d:prop><d:status>HTTP/1.1 200 OK</d:status>"
                "</d:propstat></d:response>"
            )
        xml = f'<d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">{inner}</d:multistatus>'
        return httpx.Response(207, content=xml.encode(), headers={"Content-Type": "text/xml; charset=utf-8"})

    return httpx.MockTransport(answer)


async def test_a_listing_asks_for_summary_properties_and_a_search_then_reads_whole_cards() -> None:
    from carddav_mcp.backend import Backend
    from carddav_mcp.tools.reading import SUMMARY

    backend = Backend(SETTINGS)
    backend._client = CardDavClient(SETTINGS, transport=partial_server())
    try:
        rows = await backend.rows("/u/b/")
        (listed,) = await backend.entries("/u/b/", rows, SUMMARY)
        (whole,) = await backend.entries("/u/b/")
    finally:
        await backend.aclose()
    assert listed.partial
    assert listed.card.all("NICKNAME") == []
    assert not whole.partial
    assert whole.card.text_of("NICKNAME") == "Enchantress"


async def test_paths_off_the_configured_origin_are_refused_before_anything_is_sent() -> None:
    """Server-given hrefs pass through the client too: a path or URL naming another origin is never requested."""
    from carddav_mcp.errors import OffOrigin

    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(httpx.Request(request.method, request.url, headers=request.headers.copy()))
        if request.url.host == "dav.example.org" and "Authorization" not in request.headers:
            return httpx.Response(401, headers={"WWW-Authenticate": 'Basic realm="x"'})  # the password when asked
        return httpx.Response(200, content=b"")

    client = CardDavClient(SETTINGS, transport=httpx.MockTransport(answer))
    try:
        for path in ["//evil.example/u/b/a.vcf", "http://evil.example/a", "https://dav.example.org:8443/a",
                     "http://dav.example.org/a", "https://u@dav.example.org/a", "\\\\evil\\a", "a.vcf"]:  # fmt: skip
            with pytest.raises(OffOrigin, match="not a path on the configured CardDAV server"):
                await client.get(path)
        with pytest.raises(OffOrigin):
            await client.move("/u/b/a.vcf", "//evil.example/u/b/a.vcf", '"1"')
        assert seen == []
        await client.get("https://dav.example.org:443/u/b/a.vcf")  # the same origin, spelled with its port
        await client._http.get("https://elsewhere.example/")  # even a direct request elsewhere carries nothing
    finally:
        await client.aclose()
    assert "Authorization" not in seen[0].headers  # no password before the origin asks for it
    assert seen[1].headers["Authorization"].startswith("Basic ")
    assert "Authorization" not in seen[2].headers


async def test_an_unreadable_card_in_a_uid_search_is_left_out() -> None:
    """A double answers the addressbook-query with one broken card and one good one."""
    from carddav_mcp.backend import Backend

    good = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:a\r\nFN:A\r\nEND:VCARD\r\n"
    cards = {"/u/b/broken.vcf": "BEGIN:VCARD\r\nthis is no content line\r\n", "/u/b/good.vcf": good}

    def answer(request: httpx.Request) -> httpx.Response:
        inner = "".join(
            f'<d:response><d:href>{href}</d:href><d:propstat><d:prop><d:getetag>"1"</d:getetag>'
            f"<c:address-data>{text}</c:address-data></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat>"
            "</d:response>"
            for href, text in cards.items()
        )
        xml = f'<d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">{inner}</d:multistatus>'
        return httpx.Response(207, content=xml.encode(), headers={"Content-Type": "application/xml"})

    backend = Backend(SETTINGS)
    backend._client = CardDavClient(SETTINGS, transport=httpx.MockTransport(answer))
    try:
        assert await backend.hrefs_with_uid("/u/b/", "a") == ["/u/b/good.vcf"]
    finally:
        await backend.aclose()
