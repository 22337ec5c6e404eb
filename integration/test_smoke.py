"""One smoke suite on every server (Radicale, Xandikos, DAViCal, Cyrus, SOGo): events, tasks, journals, contacts.

Each server is configured by its root URL, as a person would; discovery
(RFC 6764) finds the calendars and address books. Where a server differs,
the test says so.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import anyio
import httpx2 as httpx
import pytest
from other_client import OtherClient, event, vcard

from approval_core import ApprovalSettings
from approval_core.testing import accept, approval_of, connect, decline
from caldav_mcp.server import build_server as caldav_server
from caldav_mcp.settings import CalDAVSettings
from carddav_mcp.server import build_server as carddav_server
from carddav_mcp.settings import CardDavSettings
from webdav_core.versions import CollectionVersions

pytestmark = pytest.mark.anyio


def ok(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content[0].text
    return result.structured_content


"""The URL SOGo's documentation gives CalDAV clients, relative to its root."""


def calendars(target: Any, answer: Any = accept) -> Any:
    settings = CalDAVSettings(target.url, target.username, target.password)
    return connect(
        caldav_server(ApprovalSettings(), settings, headers=target.headers), revision="2026-07-28", answer=answer
    )


def contacts(target: Any, answer: Any = accept) -> Any:
    settings = CardDavSettings(
        url=target.url, username=target.username, password=target.password, extra_headers=target.headers
    )
    return connect(carddav_server(ApprovalSettings(), settings), revision="2026-07-28", answer=answer)


async def test_calendars_are_found_from_the_root(target: Any) -> None:
    async with calendars(target) as client:
        first = ok(await client.call_tool("get_server_info", {}))
        listed = ok(await client.call_tool("list_calendars", {}))
        info = ok(await client.call_tool("get_server_info", {}))
    assert target.calendar in [c["id"] for c in listed["calendars"]]
    # DAViCal behind Apache answers PROPFIND / with 405: only the well-known URI leads to the principal.
    # Cyrus answers the first PROPFIND / (sent before any 401 named the scheme) with DAV:unauthenticated;
    # once the well-known request is challenged, / is asked again with the credentials and names it.
    # SOGo's root redirects to its web application's HTML page: only the well-known URI leads to the principal.
    expected = "well-known" if target.kind in ("davical", "sogo") else "principal"
    assert (first["discovery"]["method"], info["discovery"]["method"]) == (expected, expected)


async def test_a_weekly_series_over_a_dst_change(target: Any) -> None:
    cal = target.calendar
    window = {"calendar": cal, "start": "2026-10-01", "end": "2026-11-30"}
    async with calendars(target) as client:
        created = ok(
            await client.call_tool(
                "create_event",
                {
                    "calendar": cal,
                    "summary": "Weekly review",
                    "start": "2026-10-15T10:00:00",
                    "end": "2026-10-15T11:00:00",
                    "tzid": "Europe/Berlin",
                    "rrule": "FREQ=WEEKLY;COUNT=4",
                },
            )
        )
        uid = created["uid"]
        events = [e for e in ok(await client.call_tool("list_events", window))["events"] if e["uid"] == uid]
        # 10:00 in Berlin on both sides of 25 October 2026 (CEST → CET).
        assert [e["start"] for e in events] == [
            "2026-10-15T10:00:00+02:00",
            "2026-10-22T10:00:00+02:00",
            "2026-10-29T10:00:00+01:00",
            "2026-11-05T10:00:00+01:00",
        ]
        second, third = events[1]["id"], events[2]["id"]
        ok(
            await client.call_tool(
                "update_event",
                {
                    "calendar": cal,
                    "id": second,
                    "scope": "occurrence",
                    "summary": "Review (moved)",
                    "start": "2026-10-22T14:00:00",
                    "end": "2026-10-22T15:00:00",
                    "tzid": "Europe/Berlin",
                },
            )
        )
        ok(await client.call_tool("delete_event", {"calendar": cal, "id": third, "scope": "occurrence"}))
        events = [e for e in ok(await client.call_tool("list_events", window))["events"] if e["uid"] == uid]
        assert [(e["start"], e["summary"]) for e in events] == [
            ("2026-10-15T10:00:00+02:00", "Weekly review"),
            ("2026-10-22T14:00:00+02:00", "Review (moved)"),  # an override (RECURRENCE-ID)
            ("2026-11-05T10:00:00+01:00", "Weekly review"),  # 29 October: an EXDATE
        ], [(e["start"], e["summary"]) for e in events]
        ok(
            await client.call_tool(
                "update_event", {"calendar": cal, "id": uid, "scope": "series", "location": "Room 4"}
            )
        )
        found = ok(
            await client.call_tool(
                "search_events", {"query": "Weekly review", "start": "2026-10-01", "end": "2026-11-30"}
            )
        )
        assert uid in {e["uid"] for e in found["events"]}
        first = (dt.datetime(2026, 10, 15, 8, tzinfo=dt.UTC), dt.datetime(2026, 10, 15, 9, tzinfo=dt.UTC))
        day = {"start": "2026-10-15T00:00:00Z", "end": "2026-10-16T00:00:00Z", "calendars": [cal]}
        for method in ("auto", "server"):
            if method == "server" and target.kind == "sogo":
                # SOGo 5.8 offers no free-busy-query REPORT on a calendar (RFC 4791 §7.10): refused, and said so.
                refused = await client.call_tool("get_free_busy", {**day, "method": method})
                assert refused.is_error
                assert "free-busy REPORT did not work" in refused.content[0].text, refused.content[0].text
                continue
            busy = ok(await client.call_tool("get_free_busy", {**day, "method": method}))
            assert busy["source"] == ("server" if method == "server" else "events"), busy
            if method == "server" and target.kind == "radicale":
                # Radicale 3.9 answers from the VTIMEZONE it stored, and it keeps only the first date of each
                # RDATE list there: the zone stops changing in 1981 and 10:00 CEST comes back as 09:00Z.
                continue
            spans = [(dt.datetime.fromisoformat(b["start"]), dt.datetime.fromisoformat(b["end"])) for b in busy["busy"]]
            assert any(s <= first[0] and first[1] <= e for s, e in spans), (method, busy["busy"])
    async with calendars(target, answer=decline) as client:
        declined = await client.call_tool("delete_event", {"calendar": cal, "id": uid, "scope": "series"})
        assert approval_of(declined)["outcome"] == "declined"
        assert [e for e in ok(await client.call_tool("list_events", window))["events"] if e["uid"] == uid]
    async with calendars(target) as client:
        gone = ok(await client.call_tool("delete_event", {"calendar": cal, "id": uid, "scope": "series"}))
        assert gone["uid"] == uid
        assert not [e for e in ok(await client.call_tool("list_events", window))["events"] if e["uid"] == uid]


async def test_tasks_and_journals(target: Any) -> None:
    cal = target.calendar
    # SOGo 5.8 offers no journals (its calendars' supported-calendar-component-set is VEVENT and VTODO):
    # a journal is refused before anything is sent, and the refusal says why.
    journals = target.kind != "sogo"
    async with calendars(target) as client:
        task = ok(
            await client.call_tool(
                "create_task", {"calendar": cal, "summary": "File the report", "due": "2026-12-01T12:00:00Z"}
            )
        )
        tasks = ok(await client.call_tool("list_tasks", {"calendar": cal}))
        assert task["uid"] in {t["uid"] for t in tasks["tasks"]}
        made = await client.call_tool("create_journal", {"calendar": cal, "summary": "Notes", "date": "2026-11-02"})
        if journals:
            journal = ok(made)
            listed = ok(await client.call_tool("list_journals", {"calendar": cal}))
            assert journal["uid"] in {j["uid"] for j in listed["journals"]}
        else:
            assert made.is_error
            assert "does not accept journal entries" in made.content[0].text, made.content[0].text
            journal = None
        done = ok(await client.call_tool("complete_task", {"calendar": cal, "uid": task["uid"]}))
        assert done["action"] == "completed"
        got = ok(await client.call_tool("get_task", {"calendar": cal, "uid": task["uid"]}))
        assert got["status"] == "COMPLETED", got
        if journal is not None:
            ok(await client.call_tool("update_journal", {"calendar": cal, "uid": journal["uid"], "summary": "Notes 2"}))
            listed = ok(await client.call_tool("list_journals", {"calendar": cal}))
            assert {j["summary"] for j in listed["journals"] if j["uid"] == journal["uid"]} == {"Notes 2"}
            ok(await client.call_tool("delete_journal", {"calendar": cal, "uid": journal["uid"]}))
        ok(await client.call_tool("delete_task", {"calendar": cal, "uid": task["uid"]}))
        tasks = ok(await client.call_tool("list_tasks", {"calendar": cal}))  # every status by default
        assert task["uid"] not in {t["uid"] for t in tasks["tasks"]}
        if journal is not None:
            listed = ok(await client.call_tool("list_journals", {"calendar": cal}))
            assert journal["uid"] not in {j["uid"] for j in listed["journals"]}


async def test_contacts_crud_a_group_and_changes(target: Any) -> None:
    book = target.book
    uid = f"smoke-{uuid.uuid4().hex[:8]}"
    async with contacts(target) as client:
        listed = ok(await client.call_tool("list_address_books", {}))
        assert book in [b["id"] for b in listed["address_books"]]
        start = ok(await client.call_tool("list_changes", {"address_book": book}))
        created = ok(
            await client.call_tool(
                "create_contact",
                {
                    "address_book": book,
                    "uid": uid,
                    "fields": {"fn": "Ada Lovelace", "emails": [{"value": "ada@example.org"}]},
                },
            )
        )
        contact_id = created["id"]
        got = ok(await client.call_tool("get_contact", {"contact_id": contact_id}))
        assert got["fn"] == "Ada Lovelace"
        # DAViCal 1.1.12 answers a card's PUT without an ETag: the update reads the card fresh (GET) and
        # binds the ETag of that read, so it still writes with If-Match.
        ok(await client.call_tool("update_contact", {"contact_id": contact_id, "changes": {"title": "Analyst"}}))
        found = ok(await client.call_tool("search_contacts", {"query": "Lovelace", "address_book": book}))
        # SOGo 5.8 answers a text-match on FN from the surname it keeps (N), which this card leaves empty: the
        # first narrowed answer is checked against a full read, and a server that left a card out is not trusted.
        assert contact_id in [h["id"] for h in found["hits"]], found
        # narrowed on the server by "org", which only the EMAIL holds (DAViCal filters EMAIL after its SQL)
        found = ok(await client.call_tool("search_contacts", {"query": "ADA@example.ORG", "address_book": book}))
        assert [h["matched"] for h in found["hits"] if h["id"] == contact_id] == [["email"]]
        changes = ok(
            await client.call_tool("list_changes", {"address_book": book, "sync_token": start.get("sync_token")})
        )
        assert contact_id in [c["id"] for c in changes["changed"]], changes
        group = ok(
            await client.call_tool("create_group", {"address_book": book, "name": "Friends", "members": [contact_id]})
        )
        groups = ok(await client.call_tool("list_groups", {"address_book": book}))
        assert group["id"] in [g["id"] for g in groups["groups"]]
        ok(
            await client.call_tool(
                "update_contact", {"contact_id": contact_id, "vcard": None, "changes": {"note": "photo below"}}
            )
        )
    async with contacts(target, answer=decline) as client:
        declined = await client.call_tool("delete_contact", {"contact_ids": [contact_id]})
        assert approval_of(declined)["outcome"] == "declined"
    async with contacts(target) as client:
        ok(await client.call_tool("delete_contact", {"contact_ids": [contact_id]}))
        gone = await client.call_tool("get_contact", {"contact_id": contact_id})
        assert gone.is_error
        since = ok(
            await client.call_tool("list_changes", {"address_book": book, "sync_token": changes.get("sync_token")})
        )
        assert contact_id in since["deleted"], since  # RFC 6578 §3.5.1: a deleted member is reported (404)


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="  # a 1x1 PNG


async def test_the_three_group_conventions_and_a_photo(target: Any) -> None:
    """Groups written by other clients (vCard 4 KIND:group, Apple's X-ADDRESSBOOKSERVER-*, CATEGORIES)."""
    n = uuid.uuid4().hex[:8]
    cards = {
        f"m-{n}.vcf": f"VERSION:3.0\r\nUID:m-{n}\r\nFN:Grace Hopper\r\nN:Hopper;Grace;;;\r\nCATEGORIES:Team {n}\r\n"
        f"PHOTO;ENCODING=b;TYPE=PNG:{PNG}\r\n",
        f"gk-{n}.vcf": f"VERSION:4.0\r\nUID:gk-{n}\r\nKIND:group\r\nFN:Kind {n}\r\nMEMBER:urn:uuid:m-{n}\r\n",
        f"ga-{n}.vcf": f"VERSION:3.0\r\nUID:ga-{n}\r\nFN:Apple {n}\r\nN:Apple {n};;;;\r\n"
        f"X-ADDRESSBOOKSERVER-KIND:group\r\nX-ADDRESSBOOKSERVER-MEMBER:urn:uuid:m-{n}\r\n",
    }
    auth = None if target.headers else (target.username, target.password)
    with httpx.Client(base_url=target.url, auth=auth, headers=target.headers) as http:
        for name, body in cards.items():
            put = http.put(
                f"{target.book}{name}",
                content=f"BEGIN:VCARD\r\n{body}END:VCARD\r\n".encode(),
                headers={"Content-Type": "text/vcard; charset=utf-8", "If-None-Match": "*"},
            )
            assert put.status_code in (201, 204), put.text
    async with contacts(target) as client:
        groups = ok(await client.call_tool("list_groups", {"address_book": target.book}))["groups"]
        mine = {g["name"]: g for g in groups if n in g["name"]}
        # Cyrus keeps vCard 3.0 (RFC 6352 §5.1.1 lets a server store one format): it stores the vCard 4 group
        # as an Apple group (X-ADDRESSBOOKSERVER-KIND/-MEMBER, in lower case), and answers it so unless a
        # client asks for 4.0; the tools read it as the Apple group it now is.
        kind_group = "apple" if target.kind == "cyrus" else "kind"
        assert {name: g["convention"] for name, g in mine.items()} == {
            f"Kind {n}": kind_group,
            f"Apple {n}": "apple",
            f"Team {n}": "categories",
        }, groups
        assert all(g["member_count"] == 1 for g in mine.values()), mine
        photo = ok(await client.call_tool("get_contact_photo", {"contact_id": f"{target.book}m-{n}.vcf"}))
        assert (photo["kind"], photo["media_type"], photo["included"]) == ("inline", "image/png", True)


def other_client(target: Any) -> OtherClient:
    """Plain HTTP straight to the server, not through an MCP server: another user's phone."""
    return OtherClient(target.url, None if target.headers else (target.username, target.password), target.headers)


ICS, VCF = "text/calendar; charset=utf-8", "text/vcard; charset=utf-8"


async def test_kept_listings_see_another_clients_changes(
    target: Any, monkeypatch: pytest.MonkeyPatch, record_property: Any
) -> None:
    """Issue 24 §2, correct first: a listing kept by its version shows every change made by another client."""
    cal, n = target.calendar, uuid.uuid4().hex[:8]
    href = {k: f"{cal}{k}-{n}.ics" for k in ("a", "b", "c", "d", "p1", "p2", "p3")}
    with other_client(target) as other:
        kinds = other.version_kinds(cal)
        record_property("calendar_version", kinds)
        print(f"{target.kind}: the calendar's version: {kinds or 'none'}")
        # Each of the five servers offers one: a server offering none would be read on every call (still correct).
        assert kinds, target.kind
        for key, day in (("a", 5), ("b", 10), ("c", 15)):
            other.create(
                href[key],
                event(f"{key}-{n}", f"Meeting {key}", f"202703{day:02}T100000Z", f"202703{day:02}T110000Z"),
                ICS,
            )
        window = {"calendar": cal, "start": "2027-03-01", "end": "2027-04-01"}
        async with calendars(target) as client:
            mine = lambda listed: {e["uid"]: e["summary"] for e in listed["events"] if n in e["uid"]}  # noqa: E731
            assert mine(ok(await client.call_tool("list_events", window))) == {
                f"{k}-{n}": f"Meeting {k}" for k in "abc"
            }
            other.replace(href["a"], event(f"a-{n}", "Meeting a (moved)", "20270305T100000Z", "20270305T110000Z"), ICS)
            other.create(href["d"], event(f"d-{n}", "Meeting d", "20270320T100000Z", "20270320T110000Z"), ICS)
            other.delete(href["c"])
            again = ok(await client.call_tool("list_events", window))
            expected = {f"a-{n}": "Meeting a (moved)", f"b-{n}": "Meeting b", f"d-{n}": "Meeting d"}
            assert mine(again) == expected, again
            found = ok(
                await client.call_tool(
                    "search_events",
                    {"query": "Meeting", "start": "2027-03-01", "end": "2027-04-01", "calendars": [cal]},
                )
            )
            assert mine(found) == expected, found
            # Paging: the listing behind a cursor is trusted for CONFIRMED_SECONDS, then checked again.
            for key, day in (("p1", 3), ("p2", 4), ("p3", 5)):
                other.create(
                    href[key],
                    event(f"{key}-{n}", f"Page {key}", f"202705{day:02}T100000Z", f"202705{day:02}T110000Z"),
                    ICS,
                )
            paged = {"calendar": cal, "start": "2027-05-01", "end": "2027-06-01", "limit": 2}
            first = ok(await client.call_tool("list_events", paged))
            assert [e["summary"] for e in first["events"]] == ["Page p1", "Page p2"], first
            other.replace(
                href["p1"], event(f"p1-{n}", "Page p1 (changed)", "20270503T100000Z", "20270503T110000Z"), ICS
            )
            monkeypatch.setattr("caldav_mcp.tools.windows.CONFIRMED_SECONDS", 0.0)
            later = ok(await client.call_tool("list_events", {**paged, "cursor": first["next_cursor"]}))
            assert "starts again from its first occurrence" in (later["reread"] or ""), later
            assert [e["summary"] for e in later["events"]] == ["Page p1 (changed)", "Page p2"], later


async def test_a_listing_served_before_its_version_answered_sees_the_next_change(
    target: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first listing served on the calendar's unchanged last change (getlastmodified) sees a change made after it.

    The events are written more than two seconds before the calendar list, so the last change it names is
    settled where the server gives one (Radicale, DAViCal, Cyrus); Xandikos gives none and SOGo the time of
    the answer, so there the first listing waits for the CTag as before. Either way the change is seen.
    """
    cal, n = target.calendar, uuid.uuid4().hex[:8]
    hrefs = {key: f"{cal}{key}-{n}.ics" for key in ("a", "b")}
    with other_client(target) as other:
        for key, day in (("a", 6), ("b", 7)):
            at = f"202709{day:02}T10"
            other.create(hrefs[key], event(f"{key}-{n}", f"Last {key}", f"{at}0000Z", f"{at}3000Z"), ICS)
        asked: list[str | None] = []
        modified = CollectionVersions.modified

        async def counted(self: CollectionVersions, path: str) -> str | None:
            asked.append(await modified(self, path))
            return asked[-1]

        monkeypatch.setattr(CollectionVersions, "modified", counted)
        await anyio.sleep(2.1)  # the server's clock is two seconds past the last change when the calendars are listed
        window = {"calendar": cal, "start": "2027-09-01", "end": "2027-10-01"}
        async with calendars(target) as client:
            ok(await client.call_tool("list_calendars", {}))
            first = ok(await client.call_tool("list_events", window))
            other.delete(hrefs["b"])
            second = ok(await client.call_tool("list_events", window))
    mine = lambda listed: sorted(e["uid"] for e in listed["events"] if n in e["uid"])  # noqa: E731
    assert mine(first) == [f"a-{n}", f"b-{n}"]
    assert mine(second) == [f"a-{n}"]
    assert len(asked) == (1 if target.kind in ("radicale", "davical", "cyrus") else 0), asked


async def test_kept_card_listings_see_another_clients_changes(target: Any, record_property: Any) -> None:
    """Issue 24 §2, correct first: a book's ETags kept by its version show every change made by another client."""
    book, n = target.book, uuid.uuid4().hex[:8]
    href = {k: f"{book}{k}-{n}.vcf" for k in ("x", "y", "z", "w")}
    with other_client(target) as other:
        kinds = other.version_kinds(book)
        record_property("book_version", kinds)
        print(f"{target.kind}: the address book's version: {kinds or 'none'}")
        assert kinds, target.kind
        for key in ("x", "y", "z"):
            other.create(href[key], vcard(f"{key}-{n}", f"Kate{key}", f"Cache{n}"), VCF)
        async with contacts(target) as client:

            async def mine() -> dict[str, str]:
                listed = ok(await client.call_tool("list_contacts", {"address_book": book, "limit": 500}))
                assert listed["next_cursor"] is None, listed
                return {c["id"]: c["fn"] for c in listed["contacts"] if n in c["id"]}

            assert await mine() == {href[k]: f"Kate{k} Cache{n}" for k in "xyz"}
            other.replace(href["x"], vcard(f"x-{n}", "Renamed", f"Cache{n}"), VCF)
            other.create(href["w"], vcard(f"w-{n}", "Katew", f"Cache{n}"), VCF)
            other.delete(href["z"])
            expected = {href["x"]: f"Renamed Cache{n}", href["y"]: f"Katey Cache{n}", href["w"]: f"Katew Cache{n}"}
            assert await mine() == expected
            found = ok(await client.call_tool("search_contacts", {"query": f"Cache{n}", "address_book": book}))
            assert {h["id"] for h in found["hits"]} == set(expected), found
            renamed = ok(await client.call_tool("search_contacts", {"query": "Renamed", "address_book": book}))
            assert href["x"] in {h["id"] for h in renamed["hits"]}, renamed
