"""RFC 6764 discovery from CALDAV_URL: a server root, a sub-path, and a root that answers 405.

Radicale and Xandikos are the real servers; :func:`dav_servers.apache_front` is
a test double (405 on ``/``, a ``/.well-known/caldav`` redirect) in front of a
real Radicale, shaped like DAViCal behind Apache, and
:func:`dav_servers.cyrus_front` one shaped like Cyrus (an anonymous PROPFIND on
``/`` answers ``DAV:unauthenticated`` instead of asking for credentials).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from dav_servers import DavServer, apache_front, cyrus_front, xandikos

from approval_core import ApprovalSettings
from approval_core.testing import connect, listening
from caldav_mcp.server import build_server
from caldav_mcp.settings import CalDAVSettings

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def xandikos_server(tmp_path_factory) -> Iterator[DavServer]:
    with xandikos(tmp_path_factory.mktemp("xandikos-discovery")) as server:
        yield server


async def _info_and_ids(settings: CalDAVSettings, headers: dict[str, str] | None = None) -> tuple[dict, list[str]]:
    async with connect(build_server(ApprovalSettings(), settings, headers=headers), revision="2026-07-28") as client:
        listed = await client.call_tool("list_calendars", {})
        info = await client.call_tool("get_server_info", {})
    assert not listed.is_error, listed.content[0].text
    assert info.structured_content is not None
    return info.structured_content, [c["id"] for c in listed.structured_content["calendars"]]


async def test_radicale_root_finds_the_principal_and_its_home(account) -> None:
    info, ids = await _info_and_ids(CalDAVSettings(account.server.url, "willi", "secret"))
    assert account.work in ids
    assert info["discovery"] == {
        "method": "principal",
        "url": "/",
        "well_known": None,
        "principal": "/willi/",
        "home_sets": ["/willi/"],
    }


@pytest.mark.parametrize("sub_path", ["willi/", "calendar"])
async def test_radicale_from_a_sub_path_lists_the_same_calendars(account, sub_path: str) -> None:
    url = account.server.url + (account.work.lstrip("/") if sub_path == "calendar" else sub_path)
    info, ids = await _info_and_ids(CalDAVSettings(url, "willi", "secret"))
    assert {account.work, account.home} <= set(ids)
    assert info["discovery"]["method"] == "principal"
    assert info["discovery"]["url"] == url.removeprefix(account.server.url.rstrip("/"))
    assert info["discovery"]["home_sets"] == ["/willi/"]


@pytest.mark.parametrize("start", ["", "alice/", "alice/calendars/"])
async def test_xandikos_from_its_root_and_sub_paths(xandikos_server: DavServer, start: str) -> None:
    settings = CalDAVSettings(xandikos_server.url + start, "alice", "unused")  # the header authenticates
    info, ids = await _info_and_ids(settings, xandikos_server.headers_for("alice"))
    assert "/alice/calendars/calendar/" in ids
    assert info["discovery"]["method"] == "principal"
    assert info["discovery"]["principal"] == "/alice/"
    assert info["discovery"]["home_sets"] == ["/alice/calendars/"]


async def test_a_root_answering_405_is_found_through_the_well_known_redirect(account) -> None:
    with apache_front(account.server, {"/.well-known/caldav": "/willi/"}) as front:
        info, ids = await _info_and_ids(CalDAVSettings(front.url, "willi", "secret"))
    assert account.work in ids
    assert info["discovery"] == {
        "method": "well-known",
        "url": "/",
        "well_known": "/willi/",
        "principal": "/willi/",
        "home_sets": ["/willi/"],
    }
    assert front.seen[:2] == ["PROPFIND /", "PROPFIND /.well-known/caldav"]


async def test_without_well_known_the_error_says_what_was_tried(account) -> None:
    with apache_front(account.server, {"/.well-known/caldav": "/nowhere/"}) as front:
        settings = CalDAVSettings(front.url, "willi", "secret")
        async with connect(build_server(ApprovalSettings(), settings), revision="2026-07-28") as client:
            listed = await client.call_tool("list_calendars", {})
            info = await client.call_tool("get_server_info", {})
    text = listed.content[0].text
    assert listed.is_error
    assert "PROPFIND / answered HTTP 405" in text, text
    assert "PROPFIND /.well-known/caldav answered HTTP 403 at /nowhere/" in text, text
    assert "Set CALDAV_URL to your principal or calendar-home URL" in text
    assert "unexpected internal error" not in text
    assert info.structured_content["reachable"] is False


async def test_a_well_known_redirect_to_another_origin_is_not_followed(account) -> None:
    with listening() as listener:
        away = f"http://127.0.0.1:{listener.port}/willi/"
        with apache_front(account.server, {"/.well-known/caldav": away}) as front:
            settings = CalDAVSettings(front.url, "willi", "secret")
            async with connect(build_server(ApprovalSettings(), settings), revision="2026-07-28") as client:
                listed = await client.call_tool("list_calendars", {})
    assert listed.is_error
    assert f"redirected PROPFIND to another origin (http://127.0.0.1:{listener.port})" in listed.content[0].text
    assert listener.received == []


async def test_a_root_answering_unauthenticated_is_asked_again_with_the_credentials(account) -> None:
    """Cyrus answers an anonymous PROPFIND / with DAV:unauthenticated (RFC 5397 §3), not with a 401.

    caldav-mcp sends credentials only once a 401 has named the scheme, so the
    first PROPFIND / goes out without them; the well-known request is then
    challenged, and / is asked again with the credentials. Every call finds the
    principal the same way, the first included.
    """
    with cyrus_front(account.server, {"/.well-known/caldav": "/willi/"}) as front:
        settings = CalDAVSettings(front.url, "willi", "secret")
        async with connect(build_server(ApprovalSettings(), settings), revision="2026-07-28") as client:
            first = await client.call_tool("get_server_info", {})
            listed = await client.call_tool("list_calendars", {})
            again = await client.call_tool("get_server_info", {})
    assert not listed.is_error, listed.content[0].text
    assert account.work in [c["id"] for c in listed.structured_content["calendars"]]
    expected = {"method": "principal", "url": "/", "well_known": None, "principal": "/willi/", "home_sets": ["/willi/"]}
    assert first.structured_content["discovery"] == expected
    assert again.structured_content["discovery"] == expected
    # / bare, the well-known URI (redirected, then challenged and answered), then / again with the credentials.
    assert front.seen[:5] == [
        "PROPFIND /",
        "PROPFIND /.well-known/caldav",
        "PROPFIND /willi/",
        "PROPFIND /willi/",
        "PROPFIND /",
    ]
