"""One scenario per server: every tool driven once against the server's real backend.

``tests/test_results.py`` drives each scenario through a strict client (every
result checked against its outputSchema) and ``tests/test_effects.py`` drives
it again with the backend behind a recorder, to compare what each tool does
with what its server declares (``guards.EFFECTS``) and to decline every
guarded call once before it is approved.

A new server adds its :class:`Scenario` to :data:`SCENARIOS` (the family
tests fail until it does): the fixture that gives its real backend (one of
``tests/conftest.py``, or one it adds there), how to build the server against
that backend, the scenario, one guarded call to refuse, and how to put the
backend behind a recorder (:func:`recorded_http` for an HTTP backend,
:func:`recorded_folder` for a local folder).

Backends: caldav-mcp and carddav-mcp talk to a real Radicale on 127.0.0.1;
ntfy-mcp to the ntfy STAND-IN of its package's tests (a double, see
:class:`AccountsStandIn`: the ntfy the tests can run lacks the features three
tools need), and in ``tests/test_results.py`` to the real ntfy as well.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
import urllib.parse
import uuid
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import httpx2
import mcp_types as mt
from dav_servers import DavServer
from ntfy_server import NtfyServer

from approval_core import ApprovalSettings, PageSettings
from approval_core.settings import Profile
from approval_core.testing import FolderRecorder, HttpRecorder, Recorder, connect
from servers import row

ROOT = Path(__file__).resolve().parents[1]
USER, PASSWORD = "willi", "secret"

sys.path.insert(0, str(ROOT / "packages" / "ntfy-mcp" / "tests"))
from standin import NtfyStandIn  # noqa: E402


class Driver:
    """Calls tools through a checking client and records which tools were called.

    ``tests/test_effects.py`` subclasses it to watch the backend around each call.
    """

    def __init__(self, client: Any, refuses: dict[str, str] | None = None) -> None:
        """``refuses``: tool -> text its error must contain, for tools the backend at hand cannot serve."""
        self.client = client
        self.called: set[str] = set()
        self.refuses = refuses or {}
        self.refused: set[str] = set()

    async def call(self, tool: str, args: dict[str, Any]) -> mt.CallToolResult:
        self.called.add(tool)
        return await self.client.call_tool(tool, args)

    async def ok(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        result = await self.call(tool, args)
        if tool in self.refuses:
            assert result.is_error, tool
            assert self.refuses[tool] in result.content[0].text, result.content[0].text
            self.refused.add(tool)
            return {}
        assert not result.is_error, f"{tool}: {result.content[0].text if result.content else result}"
        assert isinstance(result.structured_content, dict)
        return result.structured_content

    async def listed(self) -> set[str]:
        return {tool.name for tool in (await self.client.list_tools()).tools}


def kept_by(listing: dict[str, Any], tool: str) -> str:
    """The journal id of the newest entry in a ``list_restorable`` answer that ``tool``'s change kept."""
    return next(entry["id"] for entry in listing["entries"] if entry["tool"] == tool)


async def restore_or_refuse(d: Driver, tool: str, where: dict[str, str], undoes: str) -> None:
    """Restore what ``undoes`` overwrote, an entry still there at the version that change left.

    It is put back (If-Match on that version); only where another client changed the entry since (the change
    ``tests/test_changed_meanwhile.py`` makes while the person is asked) the restore must refuse, before and
    after that yes, saying the entry changed since: a restore never writes over a change it did not see.
    """
    (collection,) = where.values()
    listed = await d.ok("list_restorable", where)
    result = await d.call(tool, {**where, "id": kept_by(listed, undoes)})
    text = result.content[0].text if result.content else ""
    if result.is_error:
        assert f"has changed since {undoes}" in text, text
        return
    assert isinstance(result.structured_content, dict), text
    assert result.structured_content["how"] == "replace", result.structured_content
    assert result.structured_content["collection"] == collection, result.structured_content


# ---------------------------------------------------------------- caldav-mcp

CHORE = """BEGIN:VCALENDAR\r
VERSION:2.0\r
PRODID:-//family test//EN\r
BEGIN:VTODO\r
UID:{uid}\r
DTSTAMP:20261101T090000Z\r
DTSTART:20261207T090000Z\r
DUE:20261207T180000Z\r
SUMMARY:Take out the bins\r
RRULE:FREQ=WEEKLY;COUNT=2\r
END:VTODO\r
END:VCALENDAR\r
"""

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


def caldav_server(
    dav: DavServer, elicitation: bool = True, profile: Profile = "guarded", page: PageSettings | None = None
) -> Any:
    from caldav_mcp.server import build_server
    from caldav_mcp.settings import CalDAVSettings

    approval = ApprovalSettings(elicitation=elicitation, profile=profile, page=page)
    return build_server(approval, CalDAVSettings(dav.url, USER, PASSWORD))


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
    chore = f"chore-{tag}"
    put(dav, f"{work}{chore}.ics", CHORE.format(uid=chore), "text/calendar")
    await d.ok("complete_task", {"calendar": work, "uid": chore})  # one occurrence at a time, never asks
    await d.ok("complete_task", {"calendar": work, "uid": chore})
    await d.ok("complete_task", {"calendar": work, "uid": chore, "scope": "series"})  # the series: asks
    # The completed series' version as it was, put back over the version the completion left (If-Match).
    await restore_or_refuse(d, "restore_entry", {"calendar": work}, "complete_task")
    await d.ok("delete_task", {"calendar": work, "uid": task})
    entry = (await d.ok("create_journal", {"calendar": work, "summary": "Notes", "date": "2026-12-07"}))["uid"]
    await d.ok("list_journals", {"calendar": work})
    await d.ok("get_journal", {"calendar": work, "uid": entry})
    await d.ok("update_journal", {"calendar": work, "uid": entry, "summary": "More notes"})
    await d.ok("delete_journal", {"calendar": work, "uid": entry})
    # The deleted journal entry, written again where it was gone (If-None-Match: *).
    kept = await d.ok("list_restorable", {"calendar": work})
    await d.ok("restore_entry", {"calendar": work, "id": kept_by(kept, "delete_journal")})


async def caldav_refusal(dav: DavServer) -> tuple[str, dict[str, Any]]:
    work = make_calendar(dav, f"refuse{uuid.uuid4().hex[:8]}")
    async with connect(caldav_server(dav), revision="2025-11-25") as client:
        created = await client.call_tool("create_event", {"calendar": work, "summary": "x", "start": "2026-12-07"})
    assert isinstance(created.structured_content, dict)
    return "delete_event", {"calendar": work, "id": created.structured_content["uid"]}


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


def carddav_server(
    dav: DavServer, elicitation: bool = True, profile: Profile = "guarded", page: PageSettings | None = None
) -> Any:
    from carddav_mcp.server import build_server
    from carddav_mcp.settings import CardDavSettings

    settings = CardDavSettings(url=f"{dav.url}{USER}/", username=USER, password=PASSWORD)
    return build_server(ApprovalSettings(elicitation=elicitation, profile=profile, page=page), settings)


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
    # Ada's card as it was before update_contact, put back over the version the update left (If-Match).
    await restore_or_refuse(d, "restore_card", {"address_book": book}, "update_contact")
    moved = await d.ok("move_contact", {"contact_id": alan, "destination": other})
    await d.ok("delete_group", {"group_id": group})
    await d.ok("delete_contact", {"contact_ids": [ada, moved["id"]]})
    # Ada's deleted card, written again where it was gone (If-None-Match: *).
    kept = await d.ok("list_restorable", {"address_book": book})
    await d.ok("restore_card", {"address_book": book, "id": kept_by(kept, "delete_contact")})


async def carddav_refusal(dav: DavServer) -> tuple[str, dict[str, Any]]:
    book = make_book(dav, f"refuse{uuid.uuid4().hex[:8]}")
    async with connect(carddav_server(dav), revision="2025-11-25") as client:
        created = await client.call_tool("create_contact", {"address_book": book, "fields": {"fn": "Eve"}})
    assert isinstance(created.structured_content, dict)
    return "delete_contact", {"contact_ids": [created.structured_content["id"]]}


# ---------------------------------------------------------------- ntfy-mcp


class AccountsStandIn(NtfyStandIn):
    """The ntfy STAND-IN (a double, not ntfy) plus the admin routes ntfy-mcp uses that it lacks.

    A double because the ntfy the tests can run (2.13) has no message revisions, clear or delete by sequence
    id (ntfy 2.16 and newer), so update_message, mark_messages_read and delete_messages cannot succeed on
    it; ``tests/test_results.py`` drives every other tool on the real ntfy too. ``POST`` / ``DELETE
    /v1/users``, ``PUT /v1/users/access`` and ``GET /<topic>/auth`` answer as docs.ntfy.sh ("Access
    control", admin API) describes them: enough for every tool to reach a successful result.
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


@dataclass(frozen=True)
class StandIn:
    """The ntfy stand-in and the transport a server built for a test should use to reach it."""

    standin: AccountsStandIn
    transport: httpx2.AsyncBaseTransport


def ntfy_server(
    backend: StandIn | NtfyServer,
    elicitation: bool = True,
    profile: Profile = "guarded",
    page: PageSettings | None = None,
) -> Any:
    """ntfy-mcp against the stand-in (:class:`StandIn`) or the real ntfy (as its admin)."""
    from ntfy_mcp import build_server
    from ntfy_mcp.settings import NtfySettings

    if isinstance(backend, StandIn):
        settings = NtfySettings(url="http://standin.invalid", token="tk_standin", timeout=2)
        return build_server(
            ApprovalSettings(elicitation=elicitation, profile=profile, page=page), settings, transport=backend.transport
        )
    settings = NtfySettings(url=backend.url, username=backend.admin_user, password=backend.admin_password)
    return build_server(ApprovalSettings(elicitation=elicitation, profile=profile, page=page), settings)


@contextmanager
def recorded_standin(backend: StandIn) -> Iterator[tuple[StandIn, HttpRecorder]]:
    """The stand-in with every request through its transport recorded."""
    with HttpRecorder() as recorder:
        yield StandIn(backend.standin, recorder.transport(backend.transport)), recorder


NEEDS_NTFY_2_16 = frozenset({"update_message", "mark_messages_read", "delete_messages"})
"""The tools that work on sequence ids, which only ntfy 2.16 and newer keep."""


async def ntfy_scenario(d: Driver, _: Any) -> None:
    """Every tool; on the real ntfy 2.13, the tools of :data:`NEEDS_NTFY_2_16` are expected to refuse."""
    topic = f"family-{uuid.uuid4().hex[:8]}"
    await d.ok("get_server_info", {})
    await d.ok("get_account", {})
    await d.ok("check_topic_access", {"topic": topic})
    published = await d.ok("publish_message", {"topics": [topic], "message": "Backup done", "title": "Backup"})
    (sent,) = published["results"]
    await d.ok("list_messages", {"topics": [topic]})
    await d.ok("get_message", {"topic": topic, "id": sent["id"]})
    await d.ok("update_message", {"topic": topic, "sequence_id": sent["sequence_id"], "message": "Backup done (2)"})
    await d.ok("mark_messages_read", {"topic": topic, "sequence_ids": [sent["sequence_id"]]})
    await d.ok("delete_messages", {"topic": topic, "sequence_ids": [sent["sequence_id"]]})
    await d.ok("list_users", {})
    user = f"user{uuid.uuid4().hex[:6]}"
    await d.ok("create_user", {"username": user, "password": "a-long-password-1"})
    await d.ok("manage_user_access", {"username": user, "topic": topic, "permission": "read-only"})
    await d.ok("delete_user", {"username": user})


async def ntfy_refusal(backend: StandIn) -> tuple[str, dict[str, Any]]:
    topic = f"refuse-{uuid.uuid4().hex[:8]}"
    sent = backend.standin.publish(topic, "to be deleted")
    return "delete_messages", {"topic": topic, "sequence_ids": [sent["sequence_id"]]}


@dataclass(frozen=True)
class Scenario:
    """How the family tests drive one server.

    Attributes:
        backend: The name of the pytest fixture that gives the real backend (``tests/conftest.py``).
        make: ``make(backend, elicitation=True, profile="guarded", page=None)`` -> the server, built against that
            backend (``profile``: ``APPROVAL_PROFILE``; ``page``: the approval page's settings, None for none).
        drive: Calls every tool at least once through the :class:`Driver` (each call must succeed, so each
            changing call really changes something); a guarded tool is reached with arguments that make it ask.
        refusal: Prepares one guarded call and returns its (tool, arguments).
        record: ``record(backend)`` -> a context giving (the backend as the server should see it, a recorder).
        change: ``change(backend, tool, arguments)`` changes, as another client would, what a guarded call of
            ``tool`` with ``arguments`` acts on, so that the version it read no longer holds
            (``tests/test_changed_meanwhile.py`` calls it while the person is being asked).
            :func:`change_files` for a folder, :func:`change_dav_entries` for a DAV server.
        asks_elsewhere: Guarded tools that can ask only on a backend with a capability the scenario's backend
            lacks, each mapped to the test (``path::name``, from the repository root) that makes it ask on a
            backend that has it. The family tests that need every guarded tool to ask leave these out, and
            ``tests/test_guards.py`` checks that each named test exists.
    """

    backend: str
    make: Callable[..., Any]
    drive: Callable[[Driver, Any], Awaitable[None]]
    refusal: Callable[[Any], Awaitable[tuple[str, dict[str, Any]]]]
    record: Callable[[Any], AbstractContextManager[tuple[Any, Recorder]]]
    change: Callable[[Any, str, dict[str, Any]], None]
    asks_elsewhere: Mapping[str, str] = dataclasses.field(default_factory=lambda: {})


@contextmanager
def recorded_http(backend: Any) -> Iterator[tuple[Any, HttpRecorder]]:
    """``backend`` (a DavServer or NtfyServer) behind an :class:`HttpRecorder`: the copy to point servers at."""
    with HttpRecorder(backend.url) as recorder:
        yield dataclasses.replace(backend, url=recorder.url + ("/" if backend.url.endswith("/") else "")), recorder


@contextmanager
def recorded_folder(folder: Path) -> Iterator[tuple[Path, FolderRecorder]]:
    """A local backend's folder, watched by a :class:`FolderRecorder` (the server keeps using the folder itself)."""
    with FolderRecorder(folder) as recorder:
        yield folder, recorder


def change_files(folder: Path, tool: str, arguments: dict[str, Any]) -> None:
    """Every file under ``folder`` gets one more line at its end, as another program editing the folder might."""
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            with path.open("a", encoding="utf-8") as file:
                file.write("\nchanged by another program\n")


def _paths_named(value: Any) -> set[str]:
    """Every string in ``value`` that is an absolute path (a collection or an entry's href)."""
    return {text for text in strings_in(value) if text.startswith("/")}


def strings_in(value: Any) -> set[str]:
    """Every string in a JSON-like value."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set().union(*(strings_in(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(strings_in(v) for v in value)) if value else set()
    return set()


def change_dav_entries(dav: DavServer, tool: str, arguments: dict[str, Any]) -> None:
    """Every entry the arguments name by href, or that lies in a collection they name, changed by another client.

    Each entry (an iCalendar object or a vCard) gets an ``X-`` property before its last ``END:`` line and is
    PUT back with ``If-Match``: a real change, so the server gives it a new ETag.
    """
    with httpx.Client(base_url=dav.url, auth=(USER, PASSWORD), timeout=30) as http:
        entries: set[str] = set()
        for path in _paths_named(arguments):
            if not path.endswith("/"):
                entries.add(path)
                continue
            listing = http.request("PROPFIND", path, headers={"Depth": "1"})
            if listing.status_code != 207:
                continue
            for href in re.findall(r"<(?:\w+:)?href>([^<]+)</(?:\w+:)?href>", listing.text):
                if not href.endswith("/"):
                    entries.add(urllib.parse.unquote(urllib.parse.urlsplit(href).path))
        for entry in sorted(entries):
            got = http.get(entry)
            if got.status_code != 200:
                continue
            text = got.text
            end = text.rstrip().rfind("END:")
            changed = f"{text[:end]}X-CHANGED-BY-ANOTHER-CLIENT:{uuid.uuid4().hex}\r\n{text[end:]}"
            headers = {"Content-Type": got.headers.get("content-type", "text/plain"), "If-Match": got.headers["etag"]}
            put_back = http.put(entry, content=changed.encode(), headers=headers)
            assert put_back.status_code in {200, 201, 204}, (entry, put_back.status_code, put_back.text)


def change_ntfy(backend: StandIn, tool: str, arguments: dict[str, Any]) -> None:
    """What a guarded ntfy-mcp call acts on, changed by someone else on the stand-in.

    A sequence it names gets a newer message (a revision by another publisher); an account it names gets one
    more access rule.
    """
    standin = backend.standin
    topic = arguments.get("topic")
    sequences = [
        *arguments.get("sequence_ids", []),
        *([arguments["sequence_id"]] if "sequence_id" in arguments else []),
    ]
    for sequence in sequences:
        standin.publish(topic, "revised by another publisher", sequence_id=sequence)
    user = standin.users.get(arguments.get("username", ""))
    if user is not None:
        user.setdefault("grants", []).append({"topic": f"other-{uuid.uuid4().hex[:6]}", "permission": "read-only"})


SCENARIOS = {
    "caldav-mcp": Scenario(
        "dav",
        caldav_server,
        caldav_scenario,
        caldav_refusal,
        recorded_http,
        change_dav_entries,
        # Radicale does no RFC 6638 scheduling, so nothing is sent and create_event never asks there.
        asks_elsewhere={
            "create_event": "packages/caldav-mcp/tests/test_attendees.py::"
            "test_an_invitation_asks_with_counts_and_domains_and_the_server_delivers_it",
        },
    ),
    "carddav-mcp": Scenario(
        "dav", carddav_server, carddav_scenario, carddav_refusal, recorded_http, change_dav_entries
    ),
    "ntfy-mcp": Scenario("ntfy_standin", ntfy_server, ntfy_scenario, ntfy_refusal, recorded_standin, change_ntfy),
}


def scenario_of(name: str) -> Scenario:
    """Server ``name``'s :class:`Scenario`; a failure naming the guide's section when it has none yet."""
    return row(SCENARIOS, name, "SCENARIOS in tests/scenarios.py")
