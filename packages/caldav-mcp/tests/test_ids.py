"""Id resolution rules (caldav_mcp.ids): decoding, dot segments, one origin."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from caldav_mcp.client import resource_name
from caldav_mcp.errors import InvalidInput
from caldav_mcp.ids import Origin, canonical_path, name_in, remove_dot_segments, wire_path

ORIGIN = Origin("https://dav.example.org/dav/")


@pytest.mark.parametrize(
    ("path", "expected"),
    [  # RFC 3986 §5.2.4 and §5.4 examples, on absolute paths
        ("/a/b/c/./../../g", "/a/g"),
        ("/a/b/c/../..", "/a/"),
        ("/a/b/./", "/a/b/"),
        ("/../../x", "/x"),
        ("/a/b/..", "/a/"),
        ("/", "/"),
    ],
)
def test_dot_segments_are_removed(path: str, expected: str) -> None:
    assert remove_dot_segments(path) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("/willi/work/", "/willi/work/"),
        ("/willi/my%20cal/", "/willi/my cal/"),
        ("/willi/x/../work/", "/willi/work/"),
        ("/willi/x/%2E%2E/work/", "/willi/work/"),
        ("https://DAV.example.org:443/willi/work/", "/willi/work/"),
        ("/willi/%77ork/", "/willi/work/"),
        ("/willi/100%/", "/willi/100%/"),
    ],
)
def test_ids_that_stay_home_resolve(value: str, expected: str) -> None:
    assert canonical_path(value, "calendar", ORIGIN) == expected


@pytest.mark.parametrize(
    ("value", "rule"),
    [
        ("//evil.example/x/", "empty path segment"),
        ("/%2F%2Fevil.example/x/", "empty path segment"),
        ("/willi/..%2F..%2F%2Fevil/", "empty path segment"),
        ("\\\\evil\\x", "not an absolute path"),
        ("/\\evil/x", "backslash"),
        ("http://dav.example.org/willi/", "must be on https://dav.example.org"),
        ("https://dav.example.org:8443/willi/", "must be on"),
        ("https://me@dav.example.org/willi/", "without a user name"),
        ("https://[::1]:443/willi/", "must be on"),
        ("https://[::1/willi/", "not a valid path or URL"),
        ("willi/work/", "not an absolute path"),
        ("a@evil.example/x", "not an absolute path"),
        ("/willi/%00/", "control"),
        ("/willi/\u202e/", "control"),
        ("/willi/%2577ork/", "percent-encoded twice"),
        ("/willi/%252F%252Fevil/", "percent-encoded twice"),
        ("/willi/%25252525/", "percent-encoded twice"),
        ("/willi/%ff/", "not UTF-8"),
        ("/willi/x?y", "? or #"),
        ("/" + "a" * 1100, "longer than 1024"),
    ],
)
def test_escapes_are_refused_naming_the_field_and_rule(value: str, rule: str) -> None:
    with pytest.raises(InvalidInput) as raised:
        canonical_path(value, "destination", ORIGIN)
    assert str(raised.value).startswith("destination: ")
    assert rule in str(raised.value)


@pytest.mark.parametrize(
    ("href", "entry"),
    [
        ("/willi/work/a%2541.ics", "/willi/work/a%41.ics"),
        ("/willi/work/100%25.ics", "/willi/work/100%.ics"),
        ("/willi/work/a%252F..%252F..%252Fb.ics", "/willi/work/a%2F..%2F..%2Fb.ics"),
        ("/willi/work/my%20e.ics", "/willi/work/my e.ics"),
        ("https://dav.example.org/willi/work/a%2541.ics", "/willi/work/a%41.ics"),
    ],
)
def test_a_server_href_is_decoded_once_and_goes_back_to_the_same_resource(href: str, entry: str) -> None:
    path = canonical_path(href, "href", ORIGIN, from_server=True)
    assert path == entry
    assert name_in(path, "/willi/work/") == entry.rsplit("/", 1)[1]
    assert wire_path(path) == urlsplit(href).path


def test_members_are_one_segment_below_their_collection() -> None:
    assert name_in("/willi/work/a.ics", "/willi/work/") == "a.ics"
    assert name_in("/willi/work/sub/a.ics", "/willi/work/") is None
    assert name_in("/willi/workshop/a.ics", "/willi/work/") is None
    assert name_in("/willi/work/", "/willi/work/") is None


def test_wire_paths_are_encoded_and_origins_compared_with_default_ports() -> None:
    assert wire_path("/willi/my cal/a@b.ics") == "/willi/my%20cal/a@b.ics"
    assert ORIGIN.same("https://dav.example.org/x")
    assert ORIGIN.same("HTTPS://dav.EXAMPLE.org:443/x")
    assert not ORIGIN.same("https://dav.example.org.evil/x")
    assert ORIGIN.url("/willi/") == "https://dav.example.org/willi/"
    assert Origin("http://[::1]:8080/").url("/x") == "http://[::1]:8080/x"


@pytest.mark.parametrize("uid", ["../../escape", "a/b", "%2e%2e", ".hidden", "x" * 300, "ümlaut"])
def test_a_uid_that_is_not_a_plain_name_becomes_a_digest(uid: str) -> None:
    name = resource_name(uid)
    assert len(name) == 44
    assert name.endswith(".ics")
    assert "/" not in name
    assert "%" not in name


def test_a_plain_uid_names_its_file() -> None:
    assert resource_name("standup-1@example.org") == "standup-1@example.org.ics"
