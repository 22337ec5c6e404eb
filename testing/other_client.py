"""Another client of a DAV server: plain HTTP requests straight to it, beside the MCP servers under test.

What a phone or a second desktop does to a calendar or an address book while
an MCP server keeps a listing of it: create, change and delete entries with
``If-None-Match: *`` / ``If-Match`` (RFC 9110 §13.1), nothing kept between calls
except the connection. A test uses it to prove that what the MCP servers keep
is checked against the server's own word.
"""

from __future__ import annotations

from collections.abc import Mapping

import httpx2 as httpx
from defusedxml import ElementTree

__all__ = ["OtherClient", "event", "vcard"]

_VERSION_PROPFIND = (
    '<?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:" xmlns:cs="http://calendarserver.org/ns/">'
    "<d:prop><cs:getctag/><d:sync-token/></d:prop></d:propfind>"
)


def event(uid: str, summary: str, start: str, end: str) -> bytes:
    """A VEVENT in UTC (``start``/``end`` as ``20270301T100000Z``)."""
    return (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//other client//EN\r\nBEGIN:VEVENT\r\n"
        f"UID:{uid}\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:{start}\r\nDTEND:{end}\r\nSUMMARY:{summary}\r\n"
        "END:VEVENT\r\nEND:VCALENDAR\r\n"
    ).encode()


def vcard(uid: str, given: str, family: str) -> bytes:
    """A vCard 3.0 whose FN and N agree (SOGo answers a text-match on FN from N)."""
    return (
        f"BEGIN:VCARD\r\nVERSION:3.0\r\nUID:{uid}\r\nFN:{given} {family}\r\nN:{family};{given};;;\r\nEND:VCARD\r\n"
    ).encode()


class OtherClient:
    """Plain requests to one server, as one account (``auth``) or with header authentication (``headers``)."""

    def __init__(self, url: str, auth: tuple[str, str] | None, headers: Mapping[str, str]) -> None:
        self.http = httpx.Client(base_url=url, auth=auth, headers=dict(headers))

    def __enter__(self) -> OtherClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.http.close()

    def create(self, href: str, body: bytes, media: str) -> None:
        """PUT a new entry (``If-None-Match: *``)."""
        put = self.http.put(href, content=body, headers={"Content-Type": media, "If-None-Match": "*"})
        assert put.status_code in (201, 204), (href, put.status_code, put.text)

    def etag(self, href: str) -> str:
        """The entry's ETag now, from a GET (DAViCal answers a card's PUT without one)."""
        got = self.http.get(href)
        assert got.status_code == 200, (href, got.status_code, got.text)
        assert got.headers.get("ETag"), (href, got.headers)
        return got.headers["ETag"]

    def replace(self, href: str, body: bytes, media: str) -> None:
        """PUT over an existing entry, with ``If-Match`` its current ETag."""
        put = self.http.put(href, content=body, headers={"Content-Type": media, "If-Match": self.etag(href)})
        assert put.status_code in (200, 201, 204), (href, put.status_code, put.text)

    def delete(self, href: str) -> None:
        """DELETE an entry, with ``If-Match`` its current ETag."""
        gone = self.http.delete(href, headers={"If-Match": self.etag(href)})
        assert gone.status_code in (200, 204), (href, gone.status_code, gone.text)

    def version_kinds(self, collection: str) -> list[str]:
        """Which of ``getctag`` and ``sync-token`` the collection answers with a value (PROPFIND, depth 0)."""
        answer = self.http.request(
            "PROPFIND",
            collection,
            content=_VERSION_PROPFIND,
            headers={"Depth": "0", "Content-Type": "application/xml; charset=utf-8"},
        )
        assert answer.status_code == 207, (answer.status_code, answer.text)
        root = ElementTree.fromstring(answer.content)
        kinds: list[str] = []
        for name, tag in (("getctag", "{http://calendarserver.org/ns/}getctag"), ("sync-token", "{DAV:}sync-token")):
            if any((found.text or "").strip() for found in root.iter(tag)):
                kinds.append(name)
        return kinds
