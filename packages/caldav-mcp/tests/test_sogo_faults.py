"""Two faults met on SOGo (issue 23 §1), through caldav-mcp: both are rules of webdav-core, which it uses.

Discovery goes on past an answer that is no WebDAV multistatus (``webdav_core.discovery.probe``), and a safe
request a closed connection left unanswered is sent once more (``webdav_core.session.send_answered``).

* :func:`dav_servers.sogo_front` (a double in front of a real Radicale) answers ``/`` with SOGo's HTML page.
* :func:`closing_server.closing_server` (a double shaped like sogod) answers a first request without
  credentials with a 401 challenge and closes the connection when the next request comes on it.
"""

from __future__ import annotations

import pytest
from closing_server import closing_server
from dav_servers import sogo_front

from approval_core import ApprovalSettings
from approval_core.testing import connect
from caldav_mcp.server import build_server
from caldav_mcp.settings import CalDAVSettings

pytestmark = pytest.mark.anyio


async def test_a_root_answering_an_html_page_is_found_through_the_well_known_redirect(account) -> None:
    with sogo_front(account.server, {"/.well-known/caldav": "/willi/"}) as front:
        settings = CalDAVSettings(front.url, "willi", "secret")
        async with connect(build_server(ApprovalSettings(), settings), revision="2026-07-28") as client:
            listed = await client.call_tool("list_calendars", {})
            info = await client.call_tool("get_server_info", {})
    assert not listed.is_error, listed.content[0].text
    assert account.work in [c["id"] for c in listed.structured_content["calendars"]]
    assert info.structured_content["discovery"]["method"] == "well-known"
    assert front.seen[:2] == ["PROPFIND /", "PROPFIND /.well-known/caldav"]


async def test_calendars_are_listed_from_a_server_that_closes_each_connection_after_one_answer() -> None:
    with closing_server(challenge=True) as server:
        settings = CalDAVSettings(server.url, "willi", "secret")
        async with connect(build_server(ApprovalSettings(), settings), revision="2026-07-28") as client:
            listed = await client.call_tool("list_calendars", {})
    assert not listed.is_error, listed.content[0].text
    assert server.unanswered, server.seen  # the double did close a connection on a request
