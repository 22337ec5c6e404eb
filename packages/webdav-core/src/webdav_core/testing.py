"""The trust rules of the WebDAV layer as one pytest suite, run against the layer and through each server.

Subclass :class:`TrustSuite` in a test module (its name must start with
``Test``) and give it a ``make`` fixture that builds the client under test;
every rule is then checked on that client. ``webdav-core``'s own tests run it
on a bare :class:`~webdav_core.WebDavClient`; each DAV server runs it on its
own client, so a new server inherits the proofs::

    class TestCardDav(TrustSuite):
        @pytest.fixture
        def make(self) -> MakeClient:
            return lambda url, transport=None, **limits: CardDavClient(settings(url, **limits), transport)

Faults no real server can be made to produce on demand (a redirect
elsewhere, a dripping answer, an entity bomb) come from stand-in transports
(``httpx.MockTransport``, a double of the network only); discovery and
privileges are checked against a real Radicale (``testing/dav_servers.py``).
Importing this module needs pytest (the workspace's ``test`` group).
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

import anyio
import httpx2 as httpx
import pytest

from webdav_core.client import WebDavClient
from webdav_core.paths import resolve_path
from webdav_core.profile import Profile
from webdav_core.session import MAX_REDIRECTS
from webdav_core.xml import CARDDAV

__all__ = ["BARE_PROFILE", "ESCAPING_IDS", "OFF_ORIGIN", "MakeClient", "TrustSuite"]

BARE_PROFILE = Profile(
    server="WebDAV server",
    program="webdav-core",
    url_setting="DAV_URL",
    credential_settings="DAV_USERNAME and DAV_PASSWORD",
    timeout_setting="DAV_TIMEOUT",
    size_setting="DAV_MAX_RESPONSE_BYTES",
    item="resource",
    data_name="data",
    data_preconditions=(),
    collections="collections",
    home_name="home",
    home_set=(CARDDAV, "addressbook-home-set"),
    well_known="/.well-known/carddav",
    collection_type=(CARDDAV, "addressbook"),
    data_types=frozenset({"text/vcard"}),
)
"""The layer's own profile, in no server's words: for tests of the bare layer."""

ORIGIN = "https://dav.example.org"
BOOK = "/u/book/"

ESCAPING_IDS = [
    "/u/../other/",
    "/u/%2e%2e/other/",
    "/u/a%2Fb",
    "/u/%252e%252e/x",
    "//evil.example/u/",
    "http://evil.example/u/",
    "/u/a\\b",
    "/u/a?x=1",
    "/u/a#f",
    "/u//a",
    "u/a",
    "/u/\x00",
    "/u/%ff",
    "/u/\u202e/",
    "/u/%E2%80%AE/",
    "/u/a\u200bb",
]
"""Ids that would move a request off its collection or its server, each refused by the rules of ids."""

OFF_ORIGIN = [
    "http://evil.example/u/",
    "//evil.example/u/",
    "http://dav.example.org/u/",
    "https://dav.example.org:8443/u/",
    "https://user:pw@dav.example.org/u/",
    "https://dav.example.org\\@evil.example/",
    "mailto:u@dav.example.org",
]
"""URLs on another scheme, host or port, or carrying user information: nothing is sent to them."""


class MakeClient(Protocol):
    """Builds the client under test for ``url`` (credentials ``willi``/``secret``)."""

    def __call__(
        self,
        url: str,
        transport: httpx.AsyncBaseTransport | None = None,
        *,
        timeout: float = 5.0,
        max_bytes: int = 1_000_000,
    ) -> WebDavClient:
        """The client, not yet connected; ``timeout`` in seconds, ``max_bytes`` the largest answer read."""
        ...


def _multistatus(*hrefs: str) -> bytes:
    rows = "".join(
        f'<d:response><d:href>{h}</d:href><d:propstat><d:prop><d:getetag>"1"</d:getetag><d:resourcetype/>'
        "</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>"
        for h in hrefs
    )
    return f'<?xml version="1.0"?><d:multistatus xmlns:d="DAV:">{rows}</d:multistatus>'.encode()


class _Recorded:
    """A stand-in transport that answers with ``answer`` and keeps every request it was given."""

    def __init__(self, answer: Callable[[httpx.Request], httpx.Response]) -> None:
        self.seen: list[httpx.Request] = []

        def handle(request: httpx.Request) -> httpx.Response:
            # A copy: an auth flow may add a header to the same request object when it sends it again.
            self.seen.append(httpx.Request(request.method, request.url, headers=request.headers.copy(),
                                           content=request.content))  # fmt: skip
            return answer(request)

        self.transport = httpx.MockTransport(handle)


def _challenging(offered: str, scheme: str = "Basic ") -> Callable[[httpx.Request], httpx.Response]:
    """A stand-in server that answers 401 offering ``offered`` until a request carries ``scheme`` credentials."""

    def answer(request: httpx.Request) -> httpx.Response:
        if not request.headers.get("Authorization", "").startswith(scheme):
            return httpx.Response(401, headers={"WWW-Authenticate": offered})
        return httpx.Response(200, content=b"ok")

    return answer


class _Dripping(httpx.AsyncByteStream):
    """An answer body that arrives one byte every ``pause`` seconds, for ever (a server that never finishes)."""

    def __init__(self, pause: float) -> None:
        self._pause = pause

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            await anyio.sleep(self._pause)
            yield b" "


class TrustSuite:
    """The layer's rules of trust, checked on the client the ``make`` fixture builds."""

    @pytest.fixture
    def make(self) -> MakeClient:
        """The client under test; a subclass overrides this fixture."""
        raise NotImplementedError

    @pytest.fixture(scope="class")
    @classmethod
    def radicale_url(cls, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
        """A real Radicale on 127.0.0.1 with the user ``willi`` (password ``secret``)."""
        dav_servers: Any = importlib.import_module("dav_servers")  # testing/, on sys.path in the family's runs

        workdir: Path = tmp_path_factory.mktemp("radicale")
        with dav_servers.radicale(workdir) as server:
            url: str = server.url
            yield f"{url}willi/"

    @pytest.mark.parametrize("value", ESCAPING_IDS)
    def test_an_id_that_escapes_is_refused(self, make: MakeClient, value: str) -> None:
        """RFC 3986 §5.2.4, §2.4: dot segments, encoded slashes, double encodings, hosts, queries are refused."""
        errors = make(ORIGIN + BOOK).profile.errors
        with pytest.raises(errors.invalid_id):
            resolve_path("id", value, "a path on the server", errors)

    @pytest.mark.parametrize("value", OFF_ORIGIN)
    @pytest.mark.anyio
    async def test_nothing_is_sent_off_the_origin(self, make: MakeClient, value: str) -> None:
        """RFC 6454 §4: another scheme, host or port, or user information, and nothing is sent."""
        recorded = _Recorded(lambda _: httpx.Response(200))
        client = make(ORIGIN + BOOK, recorded.transport)
        with pytest.raises(client.profile.errors.off_origin):
            await client.session.send("GET", value, what="read")
        assert recorded.seen == []
        await client.aclose()

    @pytest.mark.anyio
    async def test_credentials_go_to_the_origin_only(self, make: MakeClient) -> None:
        """The credentials are attached to requests for the configured origin, when it asks, and to no other."""
        recorded = _Recorded(_challenging('Basic realm="x"'))
        client = make(ORIGIN + BOOK, recorded.transport)
        await client.session.send("GET", BOOK + "a.vcf", what="read")
        await client.session.http.get("https://elsewhere.example/")  # even a direct request elsewhere
        assert [(r.headers.get("Authorization", "")[:6], r.url.host) for r in recorded.seen] == [
            ("", "dav.example.org"),
            ("Basic ", "dav.example.org"),
            ("", "elsewhere.example"),
        ]
        await client.aclose()

    @pytest.mark.parametrize(
        "offered", ['Digest realm="x", nonce="n1", qop="auth"', 'Basic realm="x", Digest realm="x", nonce="n1"']
    )
    @pytest.mark.anyio
    async def test_digest_is_answered_when_offered_and_the_password_never_sent(
        self, make: MakeClient, offered: str
    ) -> None:
        """RFC 9110 §11.6.1, RFC 7616: no password before a challenge; Digest when offered, then up front."""
        recorded = _Recorded(_challenging(offered, "Digest "))
        client = make(ORIGIN + BOOK, recorded.transport)
        await client.session.send("GET", BOOK + "a.vcf", what="read")
        await client.session.send("GET", BOOK + "b.vcf", what="read")
        sent = [r.headers.get("Authorization") for r in recorded.seen]
        assert sent[0] is None
        assert len(sent) == 3  # the challenge once, then Digest up front
        assert all(a is None or a.startswith("Digest ") for a in sent)
        assert all("secret" not in (a or "") for a in sent)
        await client.aclose()

    @pytest.mark.anyio
    async def test_a_303_is_followed_by_a_get_without_the_body(self, make: MakeClient) -> None:
        """RFC 9110 §15.4.4: see other means GET there; other redirects keep the method and body."""

        def answer(request: httpx.Request) -> httpx.Response:
            if request.url.path == BOOK:
                return httpx.Response(303, headers={"Location": BOOK + "other"})
            return httpx.Response(200, content=b"ok")

        recorded = _Recorded(answer)
        client = make(ORIGIN + BOOK, recorded.transport)
        await client.session.send("POST", BOOK, body="<x/>", what="send")
        assert [(r.method, r.url.path, r.content) for r in recorded.seen] == [
            ("POST", BOOK, b"<x/>"),
            ("GET", BOOK + "other", b""),
        ]
        await client.aclose()

    @pytest.mark.anyio
    async def test_every_change_is_bound_to_a_version(self, make: MakeClient) -> None:
        """RFC 9110 §13.1.1: DELETE and MOVE carry If-Match, read by GET when not given; none at all is refused."""
        etag: list[str] = ['"7"']

        def answer(request: httpx.Request) -> httpx.Response:
            headers = {"ETag": etag[0]} if etag[0] and request.method == "GET" else {}
            return httpx.Response(200 if request.method == "GET" else 204, headers=headers)

        recorded = _Recorded(answer)
        client = make(ORIGIN + BOOK, recorded.transport)
        await client.delete(BOOK + "a.vcf", None)
        await client.move(BOOK + "b.vcf", "/u/other/b.vcf", None)
        changes = [r for r in recorded.seen if r.method in {"DELETE", "MOVE"}]
        assert [r.headers.get("If-Match") for r in changes] == ['"7"', '"7"']
        etag[0] = ""
        recorded.seen.clear()
        with pytest.raises(client.profile.errors.backend, match="gives no ETag"):
            await client.delete(BOOK + "a.vcf", None)
        assert [r.method for r in recorded.seen] == ["GET"]
        await client.aclose()

    @pytest.mark.parametrize(
        "location", ["https://elsewhere.example/u/", "http://dav.example.org/u/", "https://u:p@dav.example.org/u/"]
    )
    @pytest.mark.anyio
    async def test_a_redirect_off_the_origin_is_not_followed(self, make: MakeClient, location: str) -> None:
        """RFC 9110 §15.4: a redirect is followed only within the origin, never to a URL with user information."""
        recorded = _Recorded(lambda _: httpx.Response(302, headers={"Location": location}))
        client = make(ORIGIN + BOOK, recorded.transport)
        with pytest.raises(client.profile.errors.backend):
            await client.session.send("PROPFIND", BOOK, body="<x/>", what="list")
        assert [r.url.host for r in recorded.seen] == ["dav.example.org"]
        await client.aclose()

    @pytest.mark.anyio
    async def test_a_redirect_loop_ends(self, make: MakeClient) -> None:
        """At most MAX_REDIRECTS redirects are followed for one request."""
        recorded = _Recorded(lambda r: httpx.Response(301, headers={"Location": str(r.url)}))
        client = make(ORIGIN + BOOK, recorded.transport)
        with pytest.raises(client.profile.errors.backend, match="redirect"):
            await client.session.send("GET", BOOK, what="read")
        assert len(recorded.seen) == MAX_REDIRECTS + 1
        await client.aclose()

    @pytest.mark.anyio
    async def test_the_deadline_covers_the_whole_answer(self, make: MakeClient) -> None:
        """An answer that drips for ever ends at the deadline of the whole exchange."""
        recorded = _Recorded(lambda _: httpx.Response(200, stream=_Dripping(0.05)))
        client = make(ORIGIN + BOOK, recorded.transport, timeout=1.0)
        with anyio.fail_after(5), pytest.raises(client.profile.errors.unreachable):
            await client.session.send("GET", BOOK + "a.vcf", what="read")
        await client.aclose()

    @pytest.mark.parametrize("declared", [True, False])
    @pytest.mark.anyio
    async def test_an_answer_over_the_size_limit_is_not_read(self, make: MakeClient, declared: bool) -> None:
        """An answer larger than the limit is refused, whether it declares its length or not."""
        body = b"x" * 5000

        def answer(_: httpx.Request) -> httpx.Response:
            if declared:
                return httpx.Response(200, content=body)
            return httpx.Response(200, stream=httpx.ByteStream(body))

        client = make(ORIGIN + BOOK, _Recorded(answer).transport, max_bytes=4096)
        with pytest.raises(client.profile.errors.too_large):
            await client.session.send("GET", BOOK + "a.vcf", what="read")
        await client.aclose()

    @pytest.mark.anyio
    async def test_a_dtd_or_an_entity_is_never_expanded(self, make: MakeClient) -> None:
        """A multistatus that declares a DTD or entities is refused, never expanded."""
        bomb = (
            b'<?xml version="1.0"?><!DOCTYPE d:multistatus [<!ENTITY a "aaaaaaaaaa">'
            b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
            b'<d:multistatus xmlns:d="DAV:"><d:response><d:href>/u/book/&b;</d:href></d:response></d:multistatus>'
        )
        answer = httpx.Response(207, content=bomb, headers={"Content-Type": "application/xml"})
        client = make(ORIGIN + BOOK, _Recorded(lambda _: answer).transport)
        with pytest.raises(client.profile.errors.backend):
            await client.list_etags(BOOK)
        await client.aclose()

    @pytest.mark.anyio
    async def test_member_hrefs_outside_the_collection_are_left_out(self, make: MakeClient) -> None:
        """RFC 4918 §14.7: only hrefs naming one member directly inside the asked collection are taken."""
        listing = _multistatus(
            BOOK,
            BOOK + "ok.vcf",
            "/u/other/x.vcf",
            "https://evil.example/u/book/y.vcf",
            "//evil.example/u/book/y.vcf",
            BOOK + "../other/z.vcf",
            BOOK + "%2e%2e/z.vcf",
            BOOK + "sub/z.vcf",
            BOOK + "a%2Fb.vcf",
            BOOK + "%2e%2e",
        )
        answer = httpx.Response(207, content=listing, headers={"Content-Type": "application/xml"})
        client = make(ORIGIN + BOOK, _Recorded(lambda _: answer).transport)
        assert [href for href, _ in await client.list_etags(BOOK)] == [BOOK + "ok.vcf"]
        await client.aclose()

    @pytest.mark.anyio
    async def test_a_server_href_is_decoded_once(self, make: MakeClient) -> None:
        """RFC 4918 §8.3: ``a%2541`` names ``a%41`` (kept as ``a%2541``), never ``aA``, a second decoding."""
        answer = httpx.Response(
            207, content=_multistatus(BOOK + "a%2541.vcf"), headers={"Content-Type": "application/xml"}
        )
        client = make(ORIGIN + BOOK, _Recorded(lambda _: answer).transport)
        assert [href for href, _ in await client.list_etags(BOOK)] == [BOOK + "a%2541.vcf"]
        await client.aclose()

    @pytest.mark.parametrize(
        ("status", "kind"),
        [
            (401, "unauthenticated"),
            (403, "forbidden"),
            (404, "not_found"),
            (410, "not_found"),
            (409, "conflict"),
            (412, "precondition_failed"),
            (415, "rejected"),
            (500, "backend"),
        ],
    )
    @pytest.mark.anyio
    async def test_each_status_becomes_the_servers_error(self, make: MakeClient, status: int, kind: str) -> None:
        """RFC 9110 §15: each error status becomes the server's own error, without a credential in its text."""
        client = make(ORIGIN + BOOK, _Recorded(lambda _: httpx.Response(status)).transport)
        expected: Any = getattr(client.profile.errors, kind)
        with pytest.raises(expected) as caught:
            await client.store(BOOK + "a.vcf", b"data", "text/plain", etag='"1"')
        assert "secret" not in str(caught.value)
        await client.aclose()

    @pytest.mark.anyio
    async def test_discovery_and_the_write_privilege_on_a_real_server(
        self, make: MakeClient, radicale_url: str
    ) -> None:
        """RFC 6764 §6 and RFC 3744 §5.4 on Radicale: the principal, the home and the write privilege."""
        client = make(radicale_url)
        found = await client.discover()
        assert (found.method, found.principal, found.home) == ("principal", "/willi/", "/willi/")
        assert await client.can_write("/willi/") is True
        await client.aclose()
