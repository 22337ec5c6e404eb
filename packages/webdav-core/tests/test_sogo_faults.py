"""Two faults met on SOGo (issue 23 §1), as rules of the layer that every DAV server inherits.

* Discovery: an answer that is not a WebDAV multistatus (an HTML page, one that
  declares a DTD, other XML) means "nothing here"; the next RFC 6764 step is tried.
* A request that a closed connection left without any answer is sent once more on
  another connection when its method is idempotent; a non-idempotent write is not.

Stand-ins: ``httpx.MockTransport`` (a double of the network) for the answers, and
``testing/closing_server.py`` (a loopback double shaped like sogod) for the connection.
"""

from __future__ import annotations

import httpx2 as httpx
import pytest
from closing_server import closing_server

from webdav_core import Profile
from webdav_core.discovery import discover
from webdav_core.errors import BackendError, Errors
from webdav_core.profile import CARDDAV_DIALECT
from webdav_core.session import ConfinedSession

pytestmark = pytest.mark.anyio

PROFILE = Profile.of(CARDDAV_DIALECT, program="webdav-core", prefix="DAV", errors=Errors())

SOGO_PAGE = (
    b'\n\n  <!DOCTYPE html>\n  <html lang="en" xmlns="http://www.w3.org/1999/xhtml"><head><title>SOGo</title>'
    b"</head><body>SOGo requires Javascript to run.</body></html>\n"
)
"""The start of the page sogod answers at ``/SOGo/`` (SOGo 5.8), where its site root redirects."""

PRINCIPAL = (
    b'<?xml version="1.0" encoding="utf-8"?><d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">'
    b"<d:response><d:href>/SOGo/dav/</d:href><d:propstat><d:prop><d:current-user-principal>"
    b"<d:href>/SOGo/dav/willi/</d:href></d:current-user-principal></d:prop>"
    b"<d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>"
)
HOME = (
    b'<?xml version="1.0" encoding="utf-8"?><d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">'
    b"<d:response><d:href>/SOGo/dav/willi/</d:href><d:propstat><d:prop><c:addressbook-home-set>"
    b"<d:href>/SOGo/dav/willi/Contacts/</d:href></c:addressbook-home-set></d:prop>"
    b"<d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>"
)


def _session(url: str, transport: httpx.AsyncBaseTransport | None = None) -> ConfinedSession:
    return ConfinedSession(
        url, PROFILE, username="willi", password="secret", timeout=10, max_bytes=1_000_000, transport=transport
    )


def _sogo_like(root: tuple[int, str, bytes]) -> httpx.MockTransport:
    """A SOGo site behind Apache: ``/`` answers ``root``; the well-known path redirects to ``/SOGo/dav``."""
    status, media, body = root

    def answer(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path == "/":
            return httpx.Response(302, headers={"Location": "/SOGo/"})
        if path == "/SOGo/":
            return httpx.Response(status, headers={"Content-Type": media}, content=body)
        if path == "/.well-known/carddav":
            return httpx.Response(301, headers={"Location": "/SOGo/dav"})
        if path == "/SOGo/dav":
            return httpx.Response(207, headers={"Content-Type": "text/xml"}, content=PRINCIPAL)
        if path == "/SOGo/dav/willi/":
            return httpx.Response(207, headers={"Content-Type": "text/xml"}, content=HOME)
        return httpx.Response(404)

    return httpx.MockTransport(answer)


@pytest.mark.parametrize(
    "root",
    [
        (200, "text/html; charset=utf-8", SOGO_PAGE),  # what sogod answers
        (207, "text/html; charset=utf-8", SOGO_PAGE),  # the same page with a WebDAV status
        (207, "text/xml", SOGO_PAGE),  # ... mislabelled as XML: it declares a DTD
        (207, "application/xml", b'<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"/>'),  # other XML
    ],
    ids=["html-200", "html-207", "dtd-207", "xhtml-207"],
)
async def test_a_root_that_answers_no_multistatus_leads_on_to_the_well_known_path(root: tuple[int, str, bytes]) -> None:
    session = _session("https://dav.example.org/", _sogo_like(root))
    try:
        found = await discover(session)
    finally:
        await session.aclose()
    assert (found.method, found.principal, found.home) == (
        "well-known",
        "/SOGo/dav/willi/",
        "/SOGo/dav/willi/Contacts/",
    )


async def test_when_no_step_answers_a_multistatus_the_error_names_each() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"Content-Type": "text/html"}, content=SOGO_PAGE)

    session = _session("https://dav.example.org/", httpx.MockTransport(answer))
    try:
        with pytest.raises(BackendError) as caught:
            await discover(session)
    finally:
        await session.aclose()
    assert (
        "PROPFIND / answered HTTP 200 with text/html that is not a WebDAV XML answer; PROPFIND /.well-known/carddav"
        in str(caught.value)
    )


@pytest.mark.parametrize("method", ["PROPFIND", "REPORT", "GET"])
async def test_a_safe_request_left_unanswered_is_sent_once_more(method: str) -> None:
    with closing_server() as server:
        session = _session(server.url)
        try:
            first = await session.exchange("PROPFIND", "/", headers={"Depth": "0"}, what="first")
            again = await session.exchange(method, "/willi/x", body=b"<x/>", what="second")
        finally:
            await session.aclose()
    assert first.status_code == 207
    assert again.status_code in (201, 207)
    # The second request went out on the kept-alive connection, which closed unanswered; then on a new one.
    assert server.unanswered == [f"{method} /willi/x"]
    assert server.seen == ["PROPFIND /", f"{method} /willi/x", f"{method} /willi/x"]


@pytest.mark.parametrize("method", ["PUT", "DELETE", "MKCOL", "MOVE", "POST", "PROPPATCH"])
async def test_a_write_left_unanswered_is_not_sent_again(method: str) -> None:
    """Even an idempotent PUT or DELETE: the server may have carried it out before closing, and the servers'
    lost-reply rules read the entry back rather than send a write twice."""
    with closing_server() as server:
        session = _session(server.url)
        try:
            await session.exchange("PROPFIND", "/", headers={"Depth": "0"}, what="first")
            with pytest.raises(BackendError) as caught:
                await session.exchange(method, "/willi/x", body=b"<x/>", what="the write")
        finally:
            await session.aclose()
    assert "could not reach the CardDAV server" in str(caught.value)
    assert server.seen == ["PROPFIND /", f"{method} /willi/x"]
