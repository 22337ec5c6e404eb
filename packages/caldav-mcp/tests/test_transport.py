"""The confined session's credentials and redirects, against an in-memory HTTP double (httpx MockTransport).

A double because neither Radicale nor Xandikos (in the test setup) asks for
Digest, offers two schemes, or redirects to another host.
"""

from __future__ import annotations

import httpx2 as httpx
import pytest

from caldav_mcp.transport import BadAnswer, ConfinedSession, OffOrigin

MULTISTATUS = b'<d:multistatus xmlns:d="DAV:"/>'


def _session(handler) -> ConfinedSession:
    return ConfinedSession(
        "https://dav.example.org/dav/",
        username="willi",
        password="secret",
        timeout=5,
        max_bytes=65536,
        transport=httpx.MockTransport(handler),
    )


@pytest.mark.parametrize(
    "offered", ['Digest realm="x", nonce="n1", qop="auth"', 'Basic realm="x", Digest realm="x", nonce="n1"']
)
def test_digest_is_answered_when_offered_and_the_password_never_sent(offered: str) -> None:
    seen: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("Authorization"))
        if not request.headers.get("Authorization", "").startswith("Digest "):
            return httpx.Response(401, headers={"WWW-Authenticate": offered})
        return httpx.Response(207, content=MULTISTATUS, headers={"Content-Type": "text/xml"})

    session = _session(handler)
    first = session.request("PROPFIND", "https://dav.example.org/dav/", b"<x/>", {"Depth": "0"})
    second = session.request("PROPFIND", "https://dav.example.org/dav/willi/", b"<x/>", {"Depth": "0"})
    assert (first.status_code, second.status_code) == (207, 207)
    assert seen[0] is None
    assert all(a is None or a.startswith("Digest ") for a in seen)
    assert all("secret" not in (a or "") for a in seen)
    assert len(seen) == 3  # the challenge once, then Digest up front


def test_basic_only_when_that_is_what_the_server_asks() -> None:
    seen: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("Authorization"))
        if "Authorization" not in request.headers:
            return httpx.Response(401, headers={"WWW-Authenticate": 'Basic realm="x"'})
        return httpx.Response(207, content=MULTISTATUS)

    _session(handler).request("PROPFIND", "https://dav.example.org/dav/", b"<x/>", {})
    assert seen == [None, "Basic d2lsbGk6c2VjcmV0"]


def test_redirects_stay_on_the_origin_and_keep_the_method() -> None:
    asked: list[tuple[str, str, str | None]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        asked.append((request.method, str(request.url), request.headers.get("Authorization")))
        if request.url.path == "/.well-known/caldav":
            return httpx.Response(301, headers={"Location": "/dav/"})
        if request.url.path == "/dav/":
            return httpx.Response(307, headers={"Location": "https://elsewhere.example/dav/"})
        raise AssertionError(request.url)  # pragma: no cover

    session = _session(handler)
    with pytest.raises(OffOrigin, match=r"redirected PROPFIND to another origin \(https://elsewhere.example\)"):
        session.request("PROPFIND", "https://dav.example.org/.well-known/caldav", b"<x/>", {})
    assert [(m, u) for m, u, _ in asked] == [
        ("PROPFIND", "https://dav.example.org/.well-known/caldav"),
        ("PROPFIND", "https://dav.example.org/dav/"),
    ]


@pytest.mark.parametrize(
    "url",
    [
        "http://dav.example.org/dav/",
        "https://dav.example.org:8443/dav/",
        "https://dav.example.org.evil.example/dav/",
        "https://willi@dav.example.org/dav/",
    ],
)
def test_no_request_leaves_the_origin(url: str) -> None:
    def handler(request: httpx.Request) -> httpx.Response:  # pragma: no cover
        raise AssertionError(f"sent to {request.url}")

    with pytest.raises(OffOrigin, match=r"talks only to https://dav\.example\.org"):
        _session(handler).request("GET", url)


VFREEBUSY = b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VFREEBUSY\r\nEND:VFREEBUSY\r\nEND:VCALENDAR\r\n"


@pytest.mark.parametrize("kind", ["text/calendar", "application/octet-stream"])
def test_only_the_free_busy_report_may_answer_with_icalendar(kind: str) -> None:
    """RFC 4791 §7.10: free-busy-query answers 200 with iCalendar; every other REPORT must be a multistatus."""

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=VFREEBUSY, headers={"Content-Type": kind})

    freebusy = b'<c:free-busy-query xmlns:c="urn:ietf:params:xml:ns:caldav"><c:time-range/></c:free-busy-query>'
    query = b'<c:calendar-query xmlns:c="urn:ietf:params:xml:ns:caldav"/>'
    session = _session(handler)
    answer = session.request("REPORT", "https://dav.example.org/dav/willi/cal/", freebusy, {"Depth": "1"})
    assert answer.content == VFREEBUSY
    with pytest.raises(BadAnswer, match="not a WebDAV XML answer"):
        session.request("REPORT", "https://dav.example.org/dav/willi/cal/", query, {"Depth": "1"})
