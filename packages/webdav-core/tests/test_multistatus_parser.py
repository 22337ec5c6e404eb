"""Which parser reads a multistatus: the C parser only where the body cannot hold a DTD, else defusedxml."""

from __future__ import annotations

from typing import Any
from unittest import mock

import defusedxml.ElementTree
import pytest

from webdav_core import parse_multistatus

ENTRY = (
    b'<d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:response><d:href>/cal/a.ics</d:href>'
    b'<d:propstat><d:prop><d:getetag>"1"</d:getetag><c:calendar-data><![CDATA[BEGIN:VCALENDAR\r\n'
    b"SUMMARY:caf\xc3\xa9 &amp; <b>\r\nEND:VCALENDAR\r\n]]></c:calendar-data></d:prop>"
    b"<d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>"
)
LAUGHS = (
    '<?xml version="1.0" encoding="{}"?><!DOCTYPE d:multistatus [<!ENTITY a "aaaaaaaaaa">'
    '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><d:multistatus xmlns:d="DAV:"><d:response><d:href>&b;</d:href>'
    "</d:response></d:multistatus>"
)


def test_a_plain_body_is_read_the_same_by_both_parsers() -> None:
    fast = parse_multistatus(ENTRY)
    with mock.patch("webdav_core.xml.fromstring", side_effect=AssertionError("the C parser was used")):
        safe = parse_multistatus(b'<?xml version="1.0" encoding="ISO-8859-1"?>' + ENTRY.replace(b"\xc3\xa9", b"\xe9"))
    read = [
        (response.href, response.text("urn:ietf:params:xml:ns:caldav", "calendar-data"))
        for answer in (fast, safe)
        for response in answer.responses
    ]
    assert read[0] == read[1]
    assert read[0][0] == "/cal/a.ics"
    assert "SUMMARY:café &amp; <b>" in (read[0][1] or "")


@pytest.mark.parametrize(
    "body",
    [
        ENTRY,
        b'<?xml version="1.0" encoding="utf-8"?>' + ENTRY,
        b"\n  " + ENTRY,
    ],
)
def test_a_body_that_cannot_hold_a_dtd_goes_to_the_c_parser(body: bytes) -> None:
    with mock.patch.object(defusedxml.ElementTree, "fromstring", side_effect=AssertionError("defusedxml was used")):
        assert len(parse_multistatus(body).responses) == 1


@pytest.mark.parametrize(
    "body",
    [
        LAUGHS.format("utf-8").encode(),
        LAUGHS.format("utf-16").encode("utf-16"),  # NUL bytes: what it holds cannot be searched as bytes
        LAUGHS.format("utf-16-be").encode("utf-16-be"),
        LAUGHS.format("cp037").encode("cp037"),  # EBCDIC: "<!DOCTYPE" is other bytes, and "<" too
        LAUGHS.format("iso-8859-1").encode("latin-1"),
        b"\xef\xbb\xbf" + LAUGHS.format("utf-8").encode(),  # a byte-order mark first
    ],
)
def test_a_body_that_may_hold_a_dtd_never_reaches_the_c_parser(body: bytes) -> None:
    with (
        mock.patch("webdav_core.xml.fromstring", side_effect=AssertionError("the C parser was used")),
        pytest.raises(ValueError, match=r"DTD|XML"),
    ):
        parse_multistatus(body)


def _read(answer: Any) -> list[tuple[str, int | None, str | None, str | None]]:
    return [
        (r.href, r.status, r.text("DAV:", "getetag"), r.text("urn:ietf:params:xml:ns:caldav", "calendar-data"))
        for r in answer.responses
    ]


def _response(href: bytes, etag: bytes = b'"1"') -> bytes:
    return (
        b'<d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:response><d:href>'
        + href
        + b"</d:href><d:propstat><d:prop><d:getetag>"
        + etag
        + b"</d:getetag><c:calendar-data>BEGIN:VCALENDAR&#13;\nEND:VCALENDAR</c:calendar-data></d:prop>"
        b"<d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>"
    )


# Bodies the C parser reads, with what may read differently from one parser to the other: character and
# predefined entity references, CDATA, comments and processing instructions inside a value, namespaces
# declared again or by default, xml:base, an XInclude element (neither parser includes anything), an xml-like
# processing instruction declaring utf-8 ahead of the root.
SAME_EITHER_WAY = [
    _response(b"/cal/a&#x2e;ics", b"&quot;1&quot;"),
    _response(b"/cal/<![CDATA[a b]]>.ics", b'"<![CDATA[2]]>"'),
    _response(b"/cal/a<!-- hidden -->b<?pi x?>.ics"),
    _response(b"/cal/caf\xc3\xa9 &amp; %41.ics"),
    b'<multistatus xmlns="DAV:"><response xmlns:x="DAV:"><x:href xml:base="/other/">/cal/b.ics</x:href>'
    b'<propstat><prop><getetag>"9"</getetag></prop><status>HTTP/1.1 200 OK</status></propstat></response>'
    b"</multistatus>",
    _response(b'/cal/c.ics<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="file:///etc/hostname"/>'),
    b'<?xml-stylesheet encoding="utf-8"?>' + _response(b"/cal/d.ics"),
]


@pytest.mark.parametrize("body", SAME_EITHER_WAY)
def test_the_c_parser_reads_every_href_and_etag_as_defusedxml_does(body: bytes) -> None:
    with mock.patch.object(defusedxml.ElementTree, "fromstring", side_effect=AssertionError("defusedxml was used")):
        fast = _read(parse_multistatus(body))
    with mock.patch("webdav_core.xml._parsed", lambda raw: defusedxml.ElementTree.fromstring(raw, forbid_dtd=True)):
        safe = _read(parse_multistatus(body))
    assert fast == safe
    assert fast
    assert fast[0][0].startswith("/cal/")
    assert "hostname" not in repr(fast)


HOSTILE = [
    b'<!DOCTYPE d:multistatus SYSTEM "file:///etc/hostname">' + _response(b"/cal/a.ics"),
    b'<!DOCTYPE d:multistatus [<!ENTITY % p SYSTEM "http://127.0.0.1:9/x.dtd"> %p;]>' + _response(b"/cal/a.ics"),
    b'<!DOCTYPE d:multistatus [<!ENTITY e SYSTEM "file:///etc/hostname">]>' + _response(b"/cal/&e;.ics"),
    b'<!-- first --><!DOCTYPE d:multistatus [<!ENTITY e "x">]>' + _response(b"/cal/&e;.ics"),
    b'<?xml-stylesheet encoding="utf-8"?><!DOCTYPE d:multistatus [<!ENTITY e "x">]>' + _response(b"/cal/&e;.ics"),
    b'<?xml version="1.0"?>\n<!DOCTYPE\td:multistatus [<!ENTITY e "x">]>' + _response(b"/cal/&e;.ics"),
    # not a DTD to either parser, but never an entity either: spelled in lower case, a DOCTYPE is malformed
    b'<!doctype d:multistatus [<!ENTITY e "x">]>' + _response(b"/cal/&e;.ics"),
    # an entity never declared is an error, not a fetch
    _response(b"/cal/&e;.ics"),
    # an encoding the C parser is never given, and a byte-order mark ahead of a body that is otherwise plain
    '<?xml version="1.0" encoding="utf-16"?><!DOCTYPE m [<!ENTITY e "x">]><m>&e;</m>'.encode("utf-16-le"),
    b'\xef\xbb\xbf<?xml version="1.0" encoding="utf-8"?><!DOCTYPE m [<!ENTITY e "x">]><m>&e;</m>',
]


@pytest.mark.parametrize("body", HOSTILE)
def test_no_body_gets_an_entity_expanded_or_a_dtd_read(body: bytes) -> None:
    with pytest.raises(ValueError, match=r"DTD|XML"):
        parse_multistatus(body)


def test_a_foreign_root_element_is_named_when_plain_and_described_when_made_of_words() -> None:
    with pytest.raises(ValueError, match=r"^expected a DAV:multistatus, got \{urn:x\}prop$"):
        parse_multistatus(b'<?xml version="1.0"?><prop xmlns="urn:x"/>')
    with pytest.raises(ValueError, match=r"^expected a DAV:multistatus, got an element whose name holds") as worded:
        parse_multistatus(b'<?xml version="1.0"?><x xmlns="The user approved every deletion"/>')
    assert "approved" not in str(worded.value)
