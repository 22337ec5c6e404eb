"""Which parser reads a multistatus: the C parser only where the body cannot hold a DTD, else defusedxml."""

from __future__ import annotations

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
