"""Attendees on create_event and update_event (RFC 5545 ATTENDEE/ORGANIZER), and what the server is made to send.

Xandikos (RFC 6638 scheduling, two principals alice and bob: ``xandikos_pair`` in conftest) delivers the
invitations; Radicale (no scheduling) only stores them, and the result says
nobody was told. DAViCal and Cyrus are in ``integration/test_invitations.py``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import caldav
import httpx
import pytest
from dav_servers import DavServer, radicale

from approval_core import ApprovalSettings
from approval_core.testing import REVISIONS, DialogLog, accept, approval_of, connect, decline, unnumbered
from caldav_helpers import HOSTILE, structured
from caldav_mcp.server import build_server
from caldav_mcp.settings import CalDAVSettings

pytestmark = pytest.mark.anyio

PROPS = '<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop><d:getetag/></d:prop></d:propfind>'
ANN = "ann@example.org"


# ---------------------------------------------------------------- Xandikos: the server sends


def inbox(server: DavServer, user: str) -> list[str]:
    headers = {**server.headers_for(user), "Depth": "1", "Content-Type": "application/xml"}
    listing = httpx.request("PROPFIND", f"{server.url}{user}/inbox/", content=PROPS, headers=headers)
    hrefs = [h for h in re.findall(r"<ns0:href>([^<]+)</ns0:href>", listing.text) if h.endswith(".ics")]
    return [httpx.get(f"{server.url}{href.lstrip('/')}", headers=server.headers_for(user)).text for href in hrefs]


def alice(server: DavServer):
    settings = CalDAVSettings(server.url, "alice", "unused-behind-trusted-header")
    return build_server(ApprovalSettings(), settings, headers=server.headers_for("alice"))


def people(*addresses: str) -> list[dict[str, object]]:
    return [{"address": address} for address in addresses]


@pytest.mark.parametrize("revision", REVISIONS)
async def test_an_invitation_asks_with_counts_and_domains_and_the_server_delivers_it(xandikos_pair, revision) -> None:
    calendar = "/alice/calendars/calendar/"
    uid = f"meet-{revision}"
    args = {
        "calendar": calendar,
        "summary": HOSTILE,
        "start": "2026-12-10T10:00:00Z",
        "rrule": "FREQ=WEEKLY;COUNT=12",
        "uid": uid,
        "attendees": [
            {"address": "bob@example.org", "name": "Bob Builder", "role": "REQ-PARTICIPANT"},
            {"address": "mailto:Carol@Elsewhere.NET", "role": "OPT-PARTICIPANT", "rsvp": False},
            {"address": "dan@example.org"},
        ],
    }
    refused = DialogLog(decline)
    async with connect(alice(xandikos_pair), revision=revision, answer=refused) as client:
        result = await client.call_tool("create_event", args)
    assert result.is_error
    assert [m for m in inbox(xandikos_pair, "bob") if uid in m] == []
    (message,) = refused.messages
    assert "invite 3 person(s), 1 of them outside the organiser's domain, to a series of 12" in message.lower()
    assert "elsewhere.net" in message
    for private in ("bob", "Bob Builder", "carol", "dan@", "Approved by IT"):
        assert private not in message

    approved = DialogLog(accept)
    async with connect(alice(xandikos_pair), revision=revision, answer=approved) as client:
        done = structured(await client.call_tool("create_event", args))
        event = structured(await client.call_tool("get_event", {"calendar": calendar, "id": uid}))
    assert done["attendees_told"] is True
    assert "sends the invitations" in done["scheduling"]
    (request,) = [m for m in inbox(xandikos_pair, "bob") if uid in m]
    assert "METHOD:REQUEST" in request
    assert re.search(r'ATTENDEE;[^\r\n]*CN="?Bob Builder', request.replace("\r\n ", ""))
    assert event["organizer"] == "mailto:alice@example.org"
    roles = {a["address"]: a for a in event["attendees"]}
    assert set(roles) == {"mailto:bob@example.org", "mailto:Carol@elsewhere.net", "mailto:dan@example.org"}


async def test_a_token_for_one_list_of_people_never_invites_another(xandikos_pair) -> None:
    """Each argument of an invitation is bound: the family's binding test cannot reach it on Radicale."""
    settings = CalDAVSettings(xandikos_pair.url, "alice", "unused-behind-trusted-header")
    server = build_server(ApprovalSettings(elicitation=False), settings, headers=xandikos_pair.headers_for("alice"))
    calendar, uid = "/alice/calendars/calendar/", "bound-invite"
    args = {"calendar": calendar, "summary": "Sync", "start": "2026-12-17T10:00:00Z", "uid": uid}
    args["attendees"] = [{"address": "bob@example.org"}]
    changed = [
        {**args, "attendees": [{"address": "bob@example.org", "role": "CHAIR"}]},
        {**args, "attendees": [{"address": "bob@example.org", "rsvp": False}]},
        {**args, "attendees": [{"address": "bob@example.org", "name": "B"}]},
        {**args, "attendees": [{"address": "bob@example.org"}, {"address": "eve@example.org"}]},
        {**args, "summary": "Sync 2"},
        {**args, "start": "2026-12-17T11:00:00Z"},
    ]
    async with connect(server, revision="2025-11-25") as client:
        for other in changed:
            token = approval_of(await client.call_tool("create_event", args))["confirm_token"]
            refused = await client.call_tool("create_event", {**other, "confirm_token": token})
            assert approval_of(refused)["outcome"] != "approved", other
        assert [m for m in inbox(xandikos_pair, "bob") if uid in m] == []
        token = approval_of(await client.call_tool("create_event", args))["confirm_token"]
        done = structured(await client.call_tool("create_event", {**args, "confirm_token": token}))
    assert done["attendees_told"] is True
    assert [m for m in inbox(xandikos_pair, "bob") if uid in m]


async def test_a_change_to_an_organised_event_asks_and_says_who_gets_what(xandikos_pair) -> None:
    calendar, uid = "/alice/calendars/calendar/", "reshuffle"
    approved = DialogLog(accept)
    async with connect(alice(xandikos_pair), revision="2025-11-25", answer=approved) as client:
        first = {"address": "bob@example.org"}
        await client.call_tool(
            "create_event",
            {"calendar": calendar, "summary": "Sync", "start": "2026-12-11T10:00:00Z", "uid": uid}
            | {"attendees": [first]},
        )
        moved = structured(
            await client.call_tool("update_event", {"calendar": calendar, "id": uid, "start": "2026-12-11T11:00:00Z"})
        )
        dropped = structured(
            await client.call_tool(
                "update_event",
                {"calendar": calendar, "id": uid, "attendees": people("erin@example.org", "frank@far.example")},
            )
        )
    create, move, drop = approved.messages
    assert "invite 1 person(s), 0 of them outside the organiser's domain, to an event" in create.lower()
    assert "change 1 field(s) of an event; send the change to the 1 person(s) already invited" in move.lower()
    assert (
        "change 1 field(s) of an event; invite 2 new person(s), 1 of them outside the organiser's domain; "
        "send a cancellation to the 1 person(s) taken off it" in drop.lower()
    )
    assert moved["attendees_told"] is True
    assert dropped["attendees_told"] is True
    mail = [m for m in inbox(xandikos_pair, "bob") if uid in m]
    assert any("METHOD:CANCEL" in m for m in mail) or any("STATUS:CANCELLED" in m for m in mail)


async def test_a_new_rule_for_an_organised_series_says_the_server_sends_it(xandikos_pair) -> None:
    calendar, uid = "/alice/calendars/calendar/", "new-rule"
    approved = DialogLog(accept)
    async with connect(alice(xandikos_pair), revision="2025-11-25", answer=approved) as client:
        made = {"calendar": calendar, "summary": "Weekly", "start": "2026-12-07T09:00:00Z", "uid": uid}
        made |= {"rrule": "FREQ=WEEKLY;COUNT=4", "attendees": people("bob@example.org", "hal@example.org")}
        structured(await client.call_tool("create_event", made))
        structured(
            await client.call_tool(
                "update_event", {"calendar": calendar, "id": uid, "scope": "series", "rrule": "FREQ=WEEKLY;COUNT=2"}
            )
        )
    assert approved.messages[-1].lower().startswith("replace the recurrence rule of an event")
    assert "; the server sends the change to the 2 person(s) on the event" in approved.messages[-1]


async def test_deleting_an_organised_event_counts_the_cancellations(xandikos_pair) -> None:
    calendar, uid = "/alice/calendars/calendar/", "called-off"
    approved = DialogLog(accept)
    async with connect(alice(xandikos_pair), revision="2025-11-25", answer=approved) as client:
        await client.call_tool(
            "create_event",
            {
                "calendar": calendar,
                "summary": "Offsite",
                "start": "2026-12-12",
                "uid": uid,
                "attendees": people("bob@example.org", "gina@example.org"),
            },
        )
        deleted = structured(await client.call_tool("delete_event", {"calendar": calendar, "id": uid}))
    assert "the server sends a cancellation to 2 person(s)" in approved.messages[-1]
    assert deleted["cancellations"] == 2
    assert any("METHOD:CANCEL" in m for m in inbox(xandikos_pair, "bob") if uid in m)


async def test_an_update_without_attendees_on_an_event_with_none_does_not_ask(xandikos_pair) -> None:
    calendar, uid = "/alice/calendars/calendar/", "alone"
    log = DialogLog(decline)
    async with connect(alice(xandikos_pair), revision="2025-11-25", answer=log) as client:
        made = structured(
            await client.call_tool(
                "create_event", {"calendar": calendar, "summary": "Focus", "start": "2026-12-13T08:00:00Z", "uid": uid}
            )
        )
        changed = structured(
            await client.call_tool("update_event", {"calendar": calendar, "id": uid, "summary": "Deep focus"})
        )
    assert log.messages == []
    assert made["attendees_told"] is None
    assert changed["attendees_told"] is None


# ---------------------------------------------------------------- Radicale: written, nobody told


@pytest.fixture(scope="module")
def mail_account(tmp_path_factory) -> Iterator[tuple[DavServer, str]]:
    """A Radicale whose user name is an email address (Radicale publishes no calendar-user-address-set)."""
    with radicale(tmp_path_factory.mktemp("radicale-mail"), {ANN: "secret"}) as server:
        dav = caldav.DAVClient(url=server.url, username=ANN, password="secret")
        made = dav.principal().make_calendar(name="Team", cal_id="team")
        yield server, made.url.path


def ann(server: DavServer):
    return build_server(ApprovalSettings(), CalDAVSettings(server.url, ANN, "secret"))


def stored(server: DavServer, calendar: str, uid: str) -> str:
    return httpx.get(f"{server.url.rstrip('/')}{calendar}{uid}.ics", auth=(ANN, "secret")).text.replace("\r\n ", "")


def status(server: DavServer, method: str, path: str, body: str | None = None) -> int:
    """The status of one request as ann (outside the event loop's concerns: a test's own setup and checks)."""
    return httpx.request(method, f"{server.url.rstrip('/')}{path}", content=body, auth=(ANN, "secret")).status_code


async def test_without_scheduling_the_attendees_are_written_and_the_result_says_nobody_was_told(mail_account) -> None:
    server, calendar = mail_account
    log = DialogLog(decline)
    async with connect(ann(server), revision="2025-11-25", answer=log) as client:
        done = structured(
            await client.call_tool(
                "create_event",
                {
                    "calendar": calendar,
                    "summary": "Review",
                    "start": "2026-12-14T09:00:00Z",
                    "uid": "review",
                    "attendees": [{"address": "bob@example.org", "name": "Bob", "role": "CHAIR"}],
                },
            )
        )
        changed = structured(
            await client.call_tool("update_event", {"calendar": calendar, "id": "review", "summary": "Review 2"})
        )
    assert log.messages == []  # nothing is sent, so nothing asks
    assert done["attendees_told"] is False
    assert "The 1 attendee(s) were written into the event" in done["scheduling"]
    assert "nobody was told" in done["scheduling"]
    assert changed["attendees_told"] is False
    assert "nobody was told of this change" in changed["scheduling"]
    text = stored(server, calendar, "review")
    assert "ORGANIZER:mailto:ann@example.org" in text
    (line,) = [line for line in text.splitlines() if line.startswith("ATTENDEE")]
    assert line.endswith(":mailto:bob@example.org")
    for param in ("CN=Bob", "ROLE=CHAIR", "PARTSTAT=NEEDS-ACTION", "RSVP=TRUE"):
        assert param in line


async def test_an_attendee_update_keeps_everything_else_and_the_answers_of_those_who_stay(mail_account) -> None:
    server, calendar = mail_account
    uid = "kept"
    body = (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//tests//EN\r\nBEGIN:VEVENT\r\nUID:kept\r\n"
        "DTSTAMP:20261101T000000Z\r\nDTSTART:20261215T100000Z\r\nDTEND:20261215T110000Z\r\nSUMMARY:Plan\r\n"
        "X-SOMETHING;X-P=1:kept as it is\r\nORGANIZER;CN=Ann:mailto:ann@example.org\r\n"
        "ATTENDEE;PARTSTAT=ACCEPTED;X-KEEP=yes:mailto:bob@example.org\r\n"
        "ATTENDEE;PARTSTAT=DECLINED:mailto:gone@example.org\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )
    assert status(server, "PUT", f"{calendar}{uid}.ics", body) == 201
    before = stored(server, calendar, uid)
    async with connect(ann(server), revision="2025-11-25") as client:
        done = structured(
            await client.call_tool(
                "update_event",
                {"calendar": calendar, "id": uid, "attendees": people("BOB@example.org", "new@example.org")},
            )
        )
    after = stored(server, calendar, uid)
    assert done["attendees_told"] is False
    changed = {"ATTENDEE", "SEQUENCE", "DTSTAMP", "LAST-MODIFIED"}

    def rest(text: str) -> list[str]:
        return [line for line in text.splitlines() if re.split("[;:]", line, maxsplit=1)[0] not in changed]

    assert rest(after) == rest(before)
    attendees = [line for line in after.splitlines() if line.startswith("ATTENDEE")]
    (bob,) = [line for line in attendees if "bob@" in line]
    assert "PARTSTAT=ACCEPTED" in bob
    assert "X-KEEP=yes" in bob
    assert not any("gone@" in line for line in attendees)
    assert any("new@example.org" in line and "PARTSTAT=NEEDS-ACTION" in line for line in attendees)


@pytest.mark.parametrize(
    ("attendees", "words"),
    [
        (
            [{"address": "not an address"}],
            'attendees[0].address: ⟦stored⟧"not an address"⟦/stored⟧ is not an email address',
        ),
        ([{"address": "Bob <bob@example.org>"}], "attendees[0].address"),
        (people("a@example.org", "A@EXAMPLE.org"), "attendees[1].address: this address is already given"),
        ([{"address": "a@example.org", "name": 'say "hi"'}], "attendees[0].name"),
        ([{"address": "a@example.org", "name": "two\nlines"}], "attendees[0].name"),
        ([{"address": "a@example.org", "name": "bell\x07"}], "attendees[0].name"),
    ],
)
async def test_bad_attendees_are_refused_naming_the_field_and_nothing_is_written(
    mail_account, attendees, words
) -> None:
    server, calendar = mail_account
    async with connect(ann(server), revision="2025-11-25") as client:
        result = await client.call_tool(
            "create_event",
            {"calendar": calendar, "summary": "x", "start": "2026-12-16", "uid": "bad", "attendees": attendees},
        )
    assert result.is_error
    assert words in unnumbered(result.content[0].text)
    assert status(server, "GET", f"{calendar}bad.ics") == 404


async def test_a_create_that_asks_nobody_refuses_a_confirm_token(mail_account) -> None:
    server, calendar = mail_account
    args = {"calendar": calendar, "summary": "x", "start": "2026-12-16", "uid": "tokened"}
    async with connect(ann(server), revision="2025-11-25") as client:
        plain = await client.call_tool("create_event", {**args, "confirm_token": "abc"})
        invited = await client.call_tool(
            "create_event", {**args, "attendees": people("b@example.org"), "confirm_token": "abc"}
        )
    for result in (plain, invited):
        assert result.is_error
        assert "confirm_token: this call does not ask a person" in result.content[0].text
    assert status(server, "GET", f"{calendar}tokened.ics") == 404


async def test_more_attendees_than_the_bound_are_refused(mail_account) -> None:
    server, calendar = mail_account
    many = people(*(f"p{n}@example.org" for n in range(101)))
    async with connect(ann(server), revision="2025-11-25") as client:
        result = await client.call_tool(
            "create_event", {"calendar": calendar, "summary": "x", "start": "2026-12-16", "attendees": many}
        )
    assert result.is_error
    assert "attendees" in result.content[0].text


async def test_an_account_without_an_address_cannot_organise(account) -> None:
    async with connect(account.build(), revision="2025-11-25") as client:
        result = await client.call_tool(
            "create_event",
            {"calendar": account.work, "summary": "x", "start": "2026-12-16", "attendees": people("b@example.org")},
        )
        listed = structured(
            await client.call_tool(
                "list_events", {"calendar": account.work, "start": "2026-12-01", "end": "2027-01-01"}
            )
        )
    assert result.is_error
    assert "attendees: an event with attendees needs an ORGANIZER" in result.content[0].text
    assert listed["events"] == []
