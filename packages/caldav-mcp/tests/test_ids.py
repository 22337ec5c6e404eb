"""Id resolution rules, as caldav-mcp applies them (webdav_core.paths with caldav-mcp's errors).

The rules are the WebDAV layer's, the same for every DAV server of the
family; where caldav-mcp's own copy differed, the stricter rule now holds: a
dot segment or an absolute URL given as an id is refused (it was resolved
before), and an id is at most 1,000 characters (it was 1,024).
"""

from __future__ import annotations

import pytest

from caldav_mcp.client import resource_name
from caldav_mcp.errors import InvalidInput
from caldav_mcp.settings import CalDAVSettings
from caldav_mcp.wire import PROFILE, CalDAVWire
from webdav_core import resolve_path

RULE = "a calendar id from list_calendars"


def canonical(value: str, field: str = "calendar") -> str:
    return resolve_path(field, value, RULE, PROFILE.errors)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("/willi/work/", "/willi/work/"),
        ("/willi/my%20cal/", "/willi/my%20cal/"),
        ("/willi/my cal/", "/willi/my%20cal/"),
        ("/willi/%77ork/", "/willi/work/"),
        ("/willi/100%/", "/willi/100%25/"),
    ],
)
def test_ids_that_stay_home_resolve_to_one_form(value: str, expected: str) -> None:
    assert canonical(value) == expected


@pytest.mark.parametrize(
    ("value", "rule"),
    [
        ("//evil.example/x/", "never a URL or a host"),
        ("/%2F%2Fevil.example/x/", "encoded slash"),
        ("/willi/..%2F..%2F%2Fevil/", "encoded slash"),
        ("\\\\evil\\x", "never a URL or a host"),
        ("/\\evil/x", "backslash"),
        ("http://dav.example.org/willi/", "never a URL or a host"),
        ("https://dav.example.org:443/willi/work/", "never a URL or a host"),
        ("https://me@dav.example.org/willi/", "never a URL or a host"),
        ("willi/work/", "never a URL or a host"),
        ("a@evil.example/x", "never a URL or a host"),
        ("/willi/%00/", "control"),
        ("/willi/\u202e/", "invisible"),
        ("/willi/%2577ork/", "percent-encoded twice"),
        ("/willi/%252F%252Fevil/", "percent-encoded twice"),
        ("/willi/%25252525/", "percent-encoded twice"),
        ("/willi/%ff/", "UTF-8"),
        ("/willi/x?y", "query"),
        ("/willi/x/../work/", "'.' and '..' segments"),
        ("/willi/x/%2E%2E/work/", "'.' and '..' segments"),
        ("/" + "a" * 1100, "longer than 1000"),
    ],
)
def test_escapes_are_refused_naming_the_field_and_rule(value: str, rule: str) -> None:
    with pytest.raises(InvalidInput) as raised:
        canonical(value, "destination")
    assert str(raised.value).startswith("destination: ")
    assert rule in str(raised.value)


@pytest.mark.parametrize(
    ("href", "entry"),
    [
        ("/willi/work/a%2541.ics", "/willi/work/a%2541.ics"),
        ("/willi/work/100%25.ics", "/willi/work/100%25.ics"),
        ("/willi/work/a%252F..%252F..%252Fb.ics", "/willi/work/a%252F..%252F..%252Fb.ics"),
        ("/willi/work/my%20e.ics", "/willi/work/my%20e.ics"),
        ("https://dav.example.org/willi/work/a%2541.ics", "/willi/work/a%2541.ics"),
    ],
)
def test_a_server_href_is_decoded_once_and_goes_back_to_the_same_resource(href: str, entry: str) -> None:
    wire = CalDAVWire(CalDAVSettings("https://dav.example.org/dav/", "willi", "secret"), {})
    assert wire.member_in("/willi/work/", href) == entry


def test_members_are_one_segment_below_their_collection() -> None:
    wire = CalDAVWire(CalDAVSettings("https://dav.example.org/dav/", "willi", "secret"), {})
    assert wire.member_in("/willi/work/", "/willi/work/a.ics") == "/willi/work/a.ics"
    assert wire.member_in("/willi/work/", "/willi/work/sub/a.ics") is None
    assert wire.member_in("/willi/work/", "/willi/workshop/a.ics") is None
    assert wire.member_in("/willi/work/", "/willi/work/a%2F..%2F..%2Fb.ics") is None  # %2F: a slash
    assert wire.member_in("/willi/work/", "https://dav.example.org.evil/willi/work/a.ics") is None


@pytest.mark.parametrize("uid", ["../../escape", "a/b", "%2e%2e", ".hidden", "x" * 300, "ümlaut"])
def test_a_uid_that_is_not_a_plain_name_becomes_a_digest(uid: str) -> None:
    name = resource_name(uid)
    assert len(name) == 44
    assert name.endswith(".ics")
    assert "/" not in name
    assert "%" not in name


def test_a_plain_uid_names_its_file() -> None:
    assert resource_name("standup-1@example.org") == "standup-1@example.org.ics"
