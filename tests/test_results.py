"""Every tool of every server, driven through a strict client: each result must validate against its outputSchema.

A strict client (the TypeScript SDK client 1.x) validates any
``structuredContent`` against the tool's ``outputSchema``, error or not, and
throws -32602 on a mismatch, so the person and the model never see the
result. The clients of ``approval_core.testing.connect`` apply the same rule
with a JSON Schema Draft 2020-12 validator (``check_result``) to every
``tools/call`` result; this file drives every tool each server lists at
least once through such a client, on both protocol revisions, and refuses
one guarded tool per server on both revisions (a declined dialog and a
confirm token).

Backends: caldav-mcp and carddav-mcp talk to a real Radicale on 127.0.0.1.
ntfy-mcp talks to the in-process ntfy STAND-IN of its package's tests (a
double: the real ntfy cannot be built where the Go module proxy refuses it);
with ``-m real_ntfy`` (``nox -s integration``) the same scenario runs against
the real ntfy too.
The stand-in gains the account-administration routes it lacks
(:class:`AccountsStandIn`), so every tool reaches a successful result.
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import mcp_types as mt
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "testing"))
sys.path.insert(0, str(ROOT / "packages" / "ntfy-mcp" / "tests"))

from dav_servers import DavServer, radicale  # noqa: E402

from approval_core import ApprovalSettings  # noqa: E402
from approval_core.testing import REVISIONS, DialogLog, accept, approval_of, connect, decline  # noqa: E402
from standin import NtfyStandIn  # noqa: E402

SERVERS = sorted(p.name for p in (ROOT / "packages").glob("*-mcp") if (p / "pyproject.toml").is_file())
USER, PASSWORD = "willi", "secret"

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def dav(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DavServer]:
    with radicale(tmp_path_factory.mktemp("radicale"), {USER: PASSWORD}) as server:
        yield server


def test_every_server_has_a_scenario() -> None:
    assert sorted(SCENARIOS) == SERVERS


class Driver:
    """Calls tools through a checking client and records which tools were called."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.called: set[str] = set()

    async def call(self, tool: str, args: dict[str, Any]) -> mt.CallToolResult:
        self.called.add(tool)
        return await self.client.call_tool(tool, args)

    async def ok(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        result = await self.call(tool, args)
        assert not result.is_error, f"{tool}: {result.content[0].text if result.content else result}"
        assert isinstance(result.structured_content, dict)
        return result.structured_content

    async def refused(self, tool: str, args: dict[str, Any], why: str) -> str:
        """A call that must end in a tool error (checked like any result); returns its text."""
        result = await self.call(tool, args)
        assert result.is_error, f"{tool}: expected a refusal, got {result}"
        text = result.content[0].text
        assert why in text, f"{tool}: {text}"
        return text

    async def listed(self) -> set[str]:
        return {tool.name for tool in (await self.client.list_tools()).tools}


# ---------------------------------------------------------------- caldav-mcp

INVITE = """BEGIN:VCALENDAR\r
VERSION:2.0\r
PRODID:-//family test//EN\r
BEGIN:VEVENT\r
UID:{uid}\r
DTSTAMP:20261101T090000Z\r
DTSTART:20261210T100000Z\r
DTEND:20261210T110000Z\r
SUMMARY:Review\r
ORGANIZER:mailto:boss@example.org\r
ATTENDEE;PARTSTAT=NEEDS-ACTION:mailto:willi@example.org\r
END:VEVENT\r
END:VCALENDAR\r
"""


def make_calendar(server: DavServer, name: str, components: tuple[str, ...] = ("VEVENT", "VTODO", "VJOURNAL")) -> str:
    comps = "".join(f'<C:comp name="{c}"/>' for c in components)
    body = (
        '<?xml version="1.0" encoding="utf-8"?>'
        '<C:mkcalendar xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:set><D:prop>'
        f"<D:displayname>{name}</D:displayname><C:supported-calendar-component-set>{comps}"
        "</C:supported-calendar-component-set></D:prop></D:set></C:mkcalendar>"
    )
    path = f"/{USER}/{name}/"
    with httpx.Client(base_url=server.url, auth=(USER, PASSWORD)) as http:
        response = http.request("MKCALENDAR", path, content=body, headers={"Content-Type": "application/xml"})
        assert response.status_code == 201, response.text
    return path


def put(server: DavServer, path: str, text: str, content_type: str) -> None:
    with httpx.Client(base_url=server.url, auth=(USER, PASSWORD)) as http:
        response = http.put(path, content=text.encode(), headers={"Content-Type": content_type})
        assert response.status_code in {201, 204}, response.text


def caldav_server(dav: DavServer, elicitation: bool = True) -> Any:
    from caldav_mcp.server import build_server
    from caldav_mcp.settings import CalDAVSettings

    return build_server(ApprovalSettings(elicitation=elicitation), CalDAVSettings(dav.url, USER, PASSWORD))


async def caldav_scenario(d: Driver, dav: DavServer) -> None:
    tag = uuid.uuid4().hex[:8]
    work, home = make_calendar(dav, f"work{tag}"), make_calendar(dav, f"home{tag}")
    december = {"start": "2026-12-01", "end": "2027-01-01"}
    await d.ok("list_calendars", {})
    await d.ok("get_server_info", {})
    created = await d.ok(
        "create_event",
        {
            "calendar": work,
            "summary": "Standup",
            "start": "2026-12-07T09:00:00",
            "end": "2026-12-07T09:30:00",
            "tzid": "Europe/Berlin",
            "rrule": "FREQ=WEEKLY;COUNT=3",
        },
    )
    uid = created["uid"]
    listed = await d.ok("list_events", {"calendar": work, **december})
    assert len(listed["events"]) == 3
    await d.ok("get_event", {"calendar": work, "id": uid})
    await d.ok("search_events", {"query": "Standup", **december})
    await d.ok("get_free_busy", december)
    await d.ok("update_event", {"calendar": work, "id": uid, "scope": "series", "summary": "Daily"})
    await d.ok("move_event", {"calendar": work, "id": uid, "destination": home})
    await d.ok("delete_event", {"calendar": home, "id": uid, "scope": "series"})
    invite = f"invite-{tag}"
    put(dav, f"{work}{invite}.ics", INVITE.format(uid=invite), "text/calendar")
    await d.ok(
        "respond_to_event", {"calendar": work, "id": invite, "partstat": "ACCEPTED", "attendee": "willi@example.org"}
    )
    task = (await d.ok("create_task", {"calendar": work, "summary": "Pay the rent", "due": "2026-12-10"}))["uid"]
    await d.ok("list_tasks", {"calendar": work})
    await d.ok("get_task", {"calendar": work, "uid": task})
    await d.ok("update_task", {"calendar": work, "uid": task, "priority": 1})
    await d.ok("complete_task", {"calendar": work, "uid": task})
    await d.ok("delete_task", {"calendar": work, "uid": task})
    entry = (await d.ok("create_journal", {"calendar": work, "summary": "Notes", "date": "2026-12-07"}))["uid"]
    await d.ok("list_journals", {"calendar": work})
    await d.ok("get_journal", {"calendar": work, "uid": entry})
    await d.ok("update_journal", {"calendar": work, "uid": entry, "summary": "More notes"})
    await d.ok("delete_journal", {"calendar": work, "uid": entry})


async def caldav_refusal(dav: DavServer) -> tuple[Any, str, dict[str, Any]]:
    work = make_calendar(dav, f"refuse{uuid.uuid4().hex[:8]}")
    async with connect(caldav_server(dav), revision="2025-11-25") as client:
        created = await client.call_tool("create_event", {"calendar": work, "summary": "x", "start": "2026-12-07"})
    assert isinstance(created.structured_content, dict)
    return caldav_server, "delete_event", {"calendar": work, "id": created.structured_content["uid"]}


# ---------------------------------------------------------------- carddav-mcp

MKCOL_BOOK = (
    '<?xml version="1.0" encoding="utf-8"?>'
    '<D:mkcol xmlns:D="DAV:" xmlns:CR="urn:ietf:params:xml:ns:carddav"><D:set><D:prop>'
    "<D:resourcetype><D:collection/><CR:addressbook/></D:resourcetype>"
    "<D:displayname>{name}</D:displayname></D:prop></D:set></D:mkcol>"
)


def make_book(server: DavServer, name: str) -> str:
    path = f"/{USER}/{name}/"
    with httpx.Client(base_url=server.url, auth=(USER, PASSWORD)) as http:
        body = MKCOL_BOOK.format(name=name)
        response = http.request("MKCOL", path, content=body, headers={"Content-Type": "application/xml"})
        assert response.status_code == 201, response.text
    return path


def carddav_server(dav: DavServer, elicitation: bool = True) -> Any:
    from carddav_mcp.server import build_server
    from carddav_mcp.settings import CardDavSettings

    settings = CardDavSettings(url=f"{dav.url}{USER}/", username=USER, password=PASSWORD)
    return build_server(ApprovalSettings(elicitation=elicitation), settings)


async def carddav_scenario(d: Driver, dav: DavServer) -> None:
    tag = uuid.uuid4().hex[:8]
    book, other = make_book(dav, f"book{tag}"), make_book(dav, f"other{tag}")
    await d.ok("list_address_books", {})
    await d.ok("get_server_info", {})
    ada = (
        await d.ok(
            "create_contact",
            {
                "address_book": book,
                "fields": {
                    "fn": "Ada Lovelace",
                    "emails": [{"value": "ada@example.org", "types": ["home"]}],
                    "birthday": {"year": 1815, "month": 12, "day": 10},
                },
            },
        )
    )["id"]
    alan = (await d.ok("create_contact", {"address_book": book, "fields": {"fn": "Alan Turing"}}))["id"]
    await d.ok("list_contacts", {"address_book": book})
    await d.ok("get_contact", {"contact_id": ada})
    await d.ok("search_contacts", {"query": "Ada"})
    await d.call("get_contact_photo", {"contact_id": ada})  # no photo: an error result, checked all the same
    await d.ok("export_contacts", {"address_book": book})
    changes = await d.ok("list_changes", {"address_book": book})
    await d.ok("list_changes", {"address_book": book, "sync_token": changes["sync_token"]})
    group = (await d.ok("create_group", {"address_book": book, "name": "Friends", "members": [ada]}))["id"]
    await d.ok("list_groups", {"address_book": book})
    await d.ok("get_group", {"group_id": group})
    await d.ok("update_group", {"group_id": group, "add": [alan]})
    await d.ok("update_contact", {"contact_id": ada, "changes": {"org": ["Analytical Engines"]}})
    moved = await d.ok("move_contact", {"contact_id": alan, "destination": other})
    await d.ok("delete_group", {"group_id": group})
    await d.ok("delete_contact", {"contact_ids": [ada, moved["id"]]})


async def carddav_refusal(dav: DavServer) -> tuple[Any, str, dict[str, Any]]:
    book = make_book(dav, f"refuse{uuid.uuid4().hex[:8]}")
    async with connect(carddav_server(dav), revision="2025-11-25") as client:
        created = await client.call_tool("create_contact", {"address_book": book, "fields": {"fn": "Eve"}})
    assert isinstance(created.structured_content, dict)
    return carddav_server, "delete_contact", {"contact_ids": [created.structured_content["id"]]}


# ---------------------------------------------------------------- ntfy-mcp


class AccountsStandIn(NtfyStandIn):
    """The ntfy STAND-IN (a double, not ntfy) plus the admin routes ntfy-mcp uses that it lacks.

    ``POST`` / ``DELETE /v1/users``, ``PUT /v1/users/access`` and
    ``GET /<topic>/auth``, as docs.ntfy.sh ("Access control", admin API)
    describes them: enough for every tool to reach a successful result.
    """

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        path, body = request.url.path, json.loads(request.content) if request.content else {}
        if path == "/v1/users" and request.method == "POST":
            self.users[body["username"]] = {"username": body["username"], "role": "user", "grants": []}
            return httpx2.Response(200, json={"success": True})
        if path == "/v1/users" and request.method == "DELETE":
            self.users.pop(body["username"], None)
            return httpx2.Response(200, json={"success": True})
        if path == "/v1/users/access" and request.method == "PUT":
            grant = {"topic": body["topic"], "permission": body["permission"]}
            self.users[body["username"]].setdefault("grants", []).append(grant)
            return httpx2.Response(200, json={"success": True})
        if request.method == "GET" and path.endswith("/auth") and path.count("/") == 2:
            return httpx2.Response(200, json={"success": True})
        return super().handle(request)


STANDIN = AccountsStandIn()


def ntfy_standin_server(_: Any = None, elicitation: bool = True) -> Any:
    """ntfy-mcp against the module's ntfy STAND-IN (a double, see the module docstring)."""
    from ntfy_mcp import build_server
    from ntfy_mcp.settings import NtfySettings

    settings = NtfySettings(url="http://standin.invalid", token="tk_standin", timeout=2)
    return build_server(ApprovalSettings(elicitation=elicitation), settings, transport=STANDIN.transport)


async def ntfy_scenario(d: Driver, _: Any, *, revisions: bool = True) -> None:
    """Every ntfy-mcp tool once; ``revisions=False`` for a server older than 2.16 (the revision tools refuse)."""
    topic = f"family-{uuid.uuid4().hex[:8]}"
    await d.ok("get_server_info", {})
    await d.ok("get_account", {})
    await d.ok("check_topic_access", {"topic": topic})
    published = await d.ok("publish_message", {"topics": [topic], "message": "Backup done", "title": "Backup"})
    (sent,) = published["results"]
    await d.ok("list_messages", {"topics": [topic]})
    await d.ok("get_message", {"topic": topic, "id": sent["id"]})
    revise = {
        "update_message": {"topic": topic, "sequence_id": sent["sequence_id"], "message": "Backup done (2)"},
        "mark_messages_read": {"topic": topic, "sequence_ids": [sent["sequence_id"]]},
        "delete_messages": {"topic": topic, "sequence_ids": [sent["sequence_id"]]},
    }
    for tool, args in revise.items():
        if revisions:
            await d.ok(tool, args)
        else:
            await d.refused(tool, args, "needs ntfy 2.16 or newer")
    await d.ok("list_users", {})
    user = f"user{uuid.uuid4().hex[:6]}"
    await d.ok("create_user", {"username": user, "password": "a-long-password-1"})
    await d.ok("manage_user_access", {"username": user, "topic": topic, "permission": "read-only"})
    await d.ok("delete_user", {"username": user})


async def ntfy_refusal(_: Any) -> tuple[Any, str, dict[str, Any]]:
    topic = f"refuse-{uuid.uuid4().hex[:8]}"
    sent = STANDIN.publish(topic, "to be deleted")
    return ntfy_standin_server, "delete_messages", {"topic": topic, "sequence_ids": [sent["sequence_id"]]}


SCENARIOS = {
    "caldav-mcp": (caldav_server, caldav_scenario, caldav_refusal),
    "carddav-mcp": (carddav_server, carddav_scenario, carddav_refusal),
    "ntfy-mcp": (ntfy_standin_server, ntfy_scenario, ntfy_refusal),
}


# ---------------------------------------------------------------- the tests


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("name", SERVERS)
async def test_every_tool_answers_a_strict_client(name: str, revision: str, dav: DavServer) -> None:
    make, scenario, _ = SCENARIOS[name]
    async with connect(make(dav), revision=revision, answer=accept) as client:
        driver = Driver(client)
        await scenario(driver, dav)
        listed = await driver.listed()
    assert driver.called == listed, f"not driven: {sorted(listed - driver.called)}"


@pytest.fixture(scope="module")
def real_ntfy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The real ntfy (testing/ntfy_server.py): built from its Go module on first use, fails with the reason."""
    from ntfy_server import ntfy_server

    with ntfy_server(tmp_path_factory.mktemp("ntfy")) as server:
        yield server


@pytest.mark.real_ntfy
@pytest.mark.parametrize("revision", REVISIONS)
async def test_every_ntfy_tool_answers_a_strict_client_on_the_real_ntfy(revision: str, real_ntfy: Any) -> None:
    from ntfy_mcp import build_server
    from ntfy_mcp.settings import NtfySettings

    settings = NtfySettings(url=real_ntfy.url, username=real_ntfy.admin_user, password=real_ntfy.admin_password)
    async with connect(build_server(ApprovalSettings(), settings), revision=revision, answer=accept) as client:
        driver = Driver(client)
        await ntfy_scenario(driver, real_ntfy, revisions=real_ntfy.supports_sequences)
        listed = await driver.listed()
    assert driver.called == listed, f"not driven: {sorted(listed - driver.called)}"


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("name", SERVERS)
async def test_a_refusal_answers_a_strict_client(name: str, revision: str, dav: DavServer) -> None:
    _, _, refusal = SCENARIOS[name]
    make, tool, args = await refusal(dav)
    log = DialogLog(decline)
    async with connect(make(dav), revision=revision, answer=log) as client:
        declined = await client.call_tool(tool, args)
    async with connect(make(dav, elicitation=False), revision=revision) as client:
        first = await client.call_tool(tool, args)
        token = approval_of(first)["confirm_token"]
        done = await client.call_tool(tool, {**args, "confirm_token": token})
    assert len(log.messages) == 1
    assert declined.structured_content is None
    assert approval_of(declined)["outcome"] == "declined"
    assert first.structured_content is None
    assert token in first.content[0].text
    assert not done.is_error
