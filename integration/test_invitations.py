"""Invitations between two local users on servers with RFC 6638 scheduling: DAViCal and Cyrus.

willi organises through caldav-mcp (``create_event`` with an attendee, then
``delete_event``); anna's scheduling inbox, found from her principal's
``schedule-inbox-URL`` (RFC 6638 §2.2), must then hold the iTIP REQUEST and
the CANCEL (RFC 5546), and her calendar the event. Both addresses are the
ones each server publishes in ``calendar-user-address-set`` (DAViCal:
``<name>@example.org`` from the fixture; Cyrus: ``<name>@internal``). Each
server is started here with the two users (``testing/dav_servers.py``), so a
run from nothing needs only what the fixtures install.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import dav_servers
import httpx2 as httpx
import pytest

from approval_core import ApprovalSettings
from approval_core.testing import DialogLog, accept, connect
from caldav_mcp.server import build_server
from caldav_mcp.settings import CalDAVSettings

pytestmark = pytest.mark.anyio

USERS = {"willi": "secret", "anna": "secret"}
PROPS = (
    '<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop>'
    "<c:calendar-user-address-set/><c:schedule-inbox-URL/></d:prop></d:propfind>"
)
ETAGS = '<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop><d:getetag/></d:prop></d:propfind>'
HREF = re.compile(r"<(?:\w+:)?href>([^<]+)</(?:\w+:)?href>")
INBOX = re.compile(r"schedule-inbox-URL>\s*<(?:\w+:)?href>([^<]+)<")


@dataclass
class Pair:
    """A scheduling server with two users: where willi's calendar is, anna's address and inbox."""

    kind: str
    url: str
    calendar: str
    principal: str

    def request(self, user: str, method: str, path: str, body: str = "", depth: str = "0") -> httpx.Response:
        headers = {"Depth": depth, "Content-Type": "application/xml; charset=utf-8"}
        return httpx.request(
            method, self.url.rstrip("/") + path, content=body or None, headers=headers, auth=(user, USERS[user])
        )

    def address_and_inbox(self, user: str) -> tuple[str, str]:
        answer = self.request(user, "PROPFIND", self.principal.format(user=user), PROPS)
        assert answer.status_code == 207, answer.text
        address = next(h for h in HREF.findall(answer.text) if h.lower().startswith("mailto:"))
        inbox = INBOX.search(answer.text)
        assert inbox is not None, answer.text
        return address, inbox.group(1)

    def messages(self, user: str, folder: str) -> list[str]:
        listing = self.request(user, "PROPFIND", folder, ETAGS, depth="1")
        assert listing.status_code == 207, listing.text
        return [
            self.request(user, "GET", href).text.replace("\r\n ", "")
            for href in HREF.findall(listing.text)
            if href.endswith(".ics")
        ]


@pytest.fixture(scope="module", params=["davical", "cyrus"])
def pair(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    kind = request.param
    start = dav_servers.davical if kind == "davical" else dav_servers.cyrus
    with start(tmp_path_factory.mktemp(f"{kind}-two"), USERS) as server:
        if kind == "davical":
            yield Pair(kind, server.url, "/davical/caldav.php/willi/calendar/", "/davical/caldav.php/{user}/")
        else:
            yield Pair(kind, server.url, "/dav/calendars/user/willi/Default/", "/dav/principals/user/{user}/")


def willi(pair: Pair, log: DialogLog) -> Any:
    settings = CalDAVSettings(pair.url, "willi", USERS["willi"])
    return connect(build_server(ApprovalSettings(), settings), revision="2025-11-25", answer=log)


def ok(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content[0].text
    return result.structured_content


async def test_the_invitee_receives_the_request_and_then_the_cancel(pair: Pair) -> None:
    anna, inbox = pair.address_and_inbox("anna")
    uid = f"invite-{uuid.uuid4().hex[:12]}"
    log = DialogLog(accept)
    async with willi(pair, log) as client:
        made = ok(
            await client.call_tool(
                "create_event",
                {
                    "calendar": pair.calendar,
                    "summary": "Planning",
                    "start": "2026-12-10T10:00:00Z",
                    "uid": uid,
                    "attendees": [{"address": anna, "name": "Anna"}],
                },
            )
        )
        assert made["attendees_told"] is True
        requests = [m for m in pair.messages("anna", inbox) if f"UID:{uid}" in m]
        assert len(requests) == 1, requests
        assert "METHOD:REQUEST" in requests[0]
        assert anna.split(":", 1)[1].lower() in requests[0].lower()
        deleted = ok(await client.call_tool("delete_event", {"calendar": pair.calendar, "id": uid}))
    assert deleted["cancellations"] == 1
    create, delete = log.messages
    assert "invite 1 person(s), 0 of them outside the organiser's domain, to an event" in create.lower()
    assert "the server sends a cancellation to 1 person(s)" in delete
    for message in log.messages:
        assert "anna" not in message.lower()
        assert "Planning" not in message
    cancels = [m for m in pair.messages("anna", inbox) if f"UID:{uid}" in m and "METHOD:CANCEL" in m]
    assert len(cancels) == 1, pair.messages("anna", inbox)
