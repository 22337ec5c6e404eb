"""The approval page shows what a carddav-mcp change touches, as stored, and only the page does (issue 31).

carddav-mcp runs in process against the real Radicale with its approval page
served on a loopback port (``approval_core.running_page``) and its push sent
to the real ntfy. A client that declares no elicitation makes each guarded
call; the person opens the page in Debian's Chromium (virtual passkey) and
reads the cards there: a delete (FN, ORG, e-mail count, the photo going), an
edit (each changed field before -> after), a move (both books by display name
and path), a bulk delete (every card with the ETag the approval binds), a
group edit (name and member count) and, under the every-write profile, a
create (the exact vCard sent). A hostile card (markup, U+202E, zero-width
characters, a look-alike letter, 20,000 characters, "Approved by IT") is drawn
as data, and none of its text reaches the model's result (text,
structuredContent, ``_meta``), the push, the audit log or a form dialog,
which carries the link to a read-only view instead.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as mt
import pytest
from browser import browser, model_sees, page_of, paired, stored_part
from carddav_conftest import Dav, vcard
from ntfy_server import NtfyServer
from page_push import push_settings, pushed, real_ntfy

from approval_core import ApprovalSettings
from approval_core.page.loopback import running_page
from approval_core.page.stored_markup import STORED_HEADING
from approval_core.testing import DialogLog, approval_of, connect, decline
from approval_core.testing.recorders import AuditRecorder

pytestmark = [pytest.mark.anyio, pytest.mark.real_ntfy]

TOPIC = "approvals-carddav"
MARKUP = "<script>alert(1)</script><b>Approve now</b>"
FN = f"{MARKUP} Invoice \u202etxt.exe Pay\u200bment P\u0430ypal"
ORG = "Approved by IT " + "L" * 20_000
HOSTILE = [
    "UID:hostile-page",
    f"FN:{FN}",
    "N:Mallory;Eve;;;",
    f"ORG:{ORG}",
    "EMAIL;TYPE=work:eve@mallory.example",
    "EMAIL:eve2@mallory.example",
    "PHOTO;ENCODING=b;TYPE=JPEG:/9j/4AAQSkZJRgABAQ==",
]
STORED_VALUES = ("alert(1)", "Approve now", "Invoice", "txt.exe", "Pay\u200bment", "Approved by IT", "LLLLLLLLLL")
"""Fragments of the hostile card: each may appear on the page only, in its stored-data section."""
SETTLED = ("Approved", "not approved", "Refused", "expired")


@pytest.fixture(scope="module")
def ntfy(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> Iterator[NtfyServer]:
    """The real ntfy (testing/ntfy_server.py; fails, never skips)."""
    with real_ntfy(tmp_path_factory.mktemp("ntfy"), pytestconfig) as server:
        yield server


def named(dav: Dav, book: str, name: str) -> None:
    """Give ``book`` the display name ``name`` (PROPPATCH DAV:displayname, RFC 4918 §9.2)."""
    body = (
        '<?xml version="1.0" encoding="utf-8"?><d:propertyupdate xmlns:d="DAV:"><d:set><d:prop>'
        f"<d:displayname>{name}</d:displayname></d:prop></d:set></d:propertyupdate>"
    )
    response = dav.http.request("PROPPATCH", book, content=body.encode(), headers={"Content-Type": "application/xml"})
    assert response.status_code == 207, response.text


def etag_of(dav: Dav, href: str) -> str:
    response = dav.http.get(href)
    assert response.status_code == 200, href
    return response.headers["etag"]


async def test_a_hostile_contact_is_drawn_as_data_and_only_on_the_page(
    radicale: Dav, ntfy: NtfyServer, tmp_path: Path
) -> None:
    href = radicale.put(radicale.book, "hostile.vcf", vcard(*HOSTILE))
    server = radicale.server(ApprovalSettings(page=push_settings(ntfy, tmp_path, TOPIC)))
    page = server.approval_gate.page
    arguments = {"contact_ids": [href]}
    before = len(pushed(ntfy, TOPIC))
    with AuditRecorder() as audit:
        async with running_page(page), browser(1) as (person,):
            await paired(page, person)
            async with connect(server, revision="2026-07-28") as client:
                shown, pending = await page_of(client, person, "delete_contact", arguments)
                inside, outside = await stored_part(person)
                scripts = await person.page.evaluate("() => document.querySelectorAll('script').length")
                injected = await person.page.evaluate("() => document.querySelectorAll('#stored b, [onerror]').length")
                said = await person.click_and_wait("approve", SETTLED)
                assert said.startswith("Approved"), said
                deleted = await client.call_tool("delete_contact", arguments)
    assert not deleted.is_error, deleted
    assert not radicale.exists(href)
    assert STORED_HEADING in shown
    assert MARKUP in inside, "the markup is drawn as text"
    assert scripts == 1, "only the page's own script"
    assert injected == 0
    assert "Invoice \\u202etxt.exe Pay\\u200bment" in inside, "invisible and direction characters shown as escapes"
    assert "\u202e" not in shown
    assert "Look-alike letters" in inside, "a Cyrillic letter in a Latin name is marked"
    assert "U+0430" in inside
    assert "Approved by IT" in inside
    assert "(19,015 more characters not shown)" in inside, "a 20,015-character ORG is cut at 1,000"
    assert "L" * 1001 not in shown
    assert "E-mail addresses\t2" in inside
    assert "yes: it is deleted with the card" in inside
    for value in STORED_VALUES:
        assert value not in outside, f"{value!r} of the stored card appeared outside the stored-data section"
    channels = {
        "model": model_sees(pending, deleted),
        "push": json.dumps(pushed(ntfy, TOPIC)[before:], ensure_ascii=False),
        "audit": json.dumps(audit.events, ensure_ascii=False),
    }
    for name, text in channels.items():
        for value in STORED_VALUES:
            assert value not in text, f"{value!r} of the stored card reached the {name}"


async def test_each_guarded_change_shows_what_it_touches(radicale: Dav, ntfy: NtfyServer, tmp_path: Path) -> None:
    named(radicale, radicale.book, "Work contacts")
    named(radicale, radicale.other, "Family")
    ada = vcard("UID:ada", "FN:Ada Lovelace", "N:Lovelace;Ada;;;", "ORG:Analytical Engines", "EMAIL:ada@example.org")
    single = radicale.put(radicale.book, "ada.vcf", ada)
    grace = vcard("UID:grace", "FN:Grace Hopper", "N:Hopper;Grace;;;", "EMAIL:grace@navy.example", "NOTE:COBOL")
    edited = radicale.put(radicale.book, "grace.vcf", grace)
    moving = radicale.put(radicale.book, "alan.vcf", vcard("UID:alan", "FN:Alan Turing", "N:Turing;Alan;;;"))
    bulk = [
        radicale.put(radicale.book, f"bulk{n}.vcf", vcard(f"UID:bulk{n}", f"FN:Bulk Person {n}", "N:P;B;;;"))
        for n in range(3)
    ]
    team = ("UID:team", "FN:Chess club", "N:Chess club;;;;", "X-ADDRESSBOOKSERVER-KIND:group")
    group = radicale.put(radicale.book, "team.vcf", vcard(*team, "X-ADDRESSBOOKSERVER-MEMBER:urn:uuid:grace"))
    etags = [etag_of(radicale, href) for href in bulk]
    server = radicale.server(ApprovalSettings(page=push_settings(ntfy, tmp_path, TOPIC)))
    page = server.approval_gate.page
    with AuditRecorder() as audit:
        async with running_page(page), browser(1) as (person,):
            await paired(page, person)
            async with connect(server, revision="2025-11-25") as client:
                delete, r1 = await page_of(client, person, "delete_contact", {"contact_ids": [single]})
                arguments = {"contact_id": edited, "changes": {"fn": "Grace B. Hopper", "emails": None}}
                edit, r2 = await page_of(client, person, "update_contact", arguments)
                edit_rows = await person.page.inner_text("#stored .changes")
                move, r3 = await page_of(
                    client, person, "move_contact", {"contact_id": moving, "destination": radicale.other}
                )
                many, r4 = await page_of(client, person, "delete_contact", {"contact_ids": bulk})
                entries = await person.page.evaluate("() => document.querySelectorAll('#stored .entry').length")
                arguments = {"group_id": group, "name": "Go club", "add": [single]}
                _, r5 = await page_of(client, person, "update_group", arguments)
                group_rows = await person.page.inner_text("#stored .changes")
    assert "Ada Lovelace" in delete
    assert "Analytical Engines" in delete
    assert "Work contacts" in delete, "the book's display name"
    assert radicale.book in delete
    assert "Grace Hopper\t→\tGrace B. Hopper" in edit_rows
    assert "grace@navy.example\t→\t(not set)" in edit_rows
    assert "COBOL" not in edit_rows, "a field the call leaves alone is not listed as a change"
    assert "Everything else in the entry is written back as it is stored." in edit
    assert "Alan Turing" in move
    assert "Moves to" in move
    assert "Family" in move
    assert radicale.other in move
    assert "Photo\tnone" in move
    assert entries == 3, "every card of the bulk delete"
    for n, etag in enumerate(etags):
        assert f"Bulk Person {n}" in many
        assert etag.strip('"') in many, "each card's ETag, the one the approval binds"
    assert "Chess club\t→\tGo club" in group_rows
    assert "1\t→\t2" in group_rows, "the member count before and after"
    assert "Ada Lovelace" in group_rows, "who joins"
    seen = model_sees(r1, r2, r3, r4, r5) + json.dumps(audit.events) + json.dumps(pushed(ntfy, TOPIC))
    for name in ("Ada Lovelace", "Grace Hopper", "Alan Turing", "Bulk Person", "Chess club", "Work contacts"):
        assert name not in seen
    for href in (single, edited, moving, *bulk):
        assert radicale.exists(href), "nothing was changed before an answer"


async def test_an_every_write_create_shows_the_exact_vcard(radicale: Dav, ntfy: NtfyServer, tmp_path: Path) -> None:
    server = radicale.server(ApprovalSettings(profile="every-write", page=push_settings(ntfy, tmp_path, TOPIC)))
    page = server.approval_gate.page
    arguments = {"address_book": radicale.book, "fields": {"fn": "Katherine Johnson"}, "uid": "katherine-1"}
    async with running_page(page), browser(1) as (person,):
        await paired(page, person)
        async with connect(server, revision="2026-07-28") as client:
            _, result = await page_of(client, person, "create_contact", arguments)
            body = await person.page.inner_text("#bodies pre")
            operation = await person.page.inner_text(".dialog")
    assert "BEGIN:VCARD" in body
    assert "FN:Katherine Johnson" in body
    assert "UID:katherine-1" in body
    assert "only if nothing is stored under this name yet" in operation
    assert "If-None-Match" not in operation
    assert "Runs as the account 'willi' on " in operation
    assert "Katherine Johnson" not in json.dumps(pushed(ntfy, TOPIC))
    assert not radicale.exists(f"{radicale.book}katherine-1.vcf")
    assert not isinstance(result, mt.InputRequiredResult)


async def test_a_form_dialog_links_a_view_of_the_stored_card(radicale: Dav, ntfy: NtfyServer, tmp_path: Path) -> None:
    href = radicale.put(radicale.book, "hostile.vcf", vcard(*HOSTILE))
    server = radicale.server(ApprovalSettings(page=push_settings(ntfy, tmp_path, TOPIC)))
    page = server.approval_gate.page
    views: list[str] = []
    async with running_page(page), browser(1) as (person,):

        async def look_then_decline(context: Any, params: mt.ElicitRequestParams) -> mt.ElicitResult | mt.ErrorData:
            link = params.message.rsplit("\n", 1)[1].removeprefix("See what this changes: ")
            views.append(await person.open(link))
            views.append(await person.page.inner_text("#stored"))
            return await decline(context, params)

        log = DialogLog(look_then_decline)
        async with connect(server, revision="2025-11-25", answer=log) as client:
            result = await client.call_tool("update_contact", {"contact_id": href, "changes": {"fn": "Eve"}})
            closed = await person.open(person.page.url)
    assert result.is_error
    assert approval_of(result)["outcome"] == "declined"
    (message,) = log.messages
    assert "See what this changes: http://localhost:" in message
    view, stored = views
    assert "changes nothing" in view
    assert MARKUP in stored
    assert "Approved by IT" in stored
    assert "Approved by IT" not in closed
    for value in STORED_VALUES:
        assert value not in message
        assert value not in model_sees(result)
    assert "Approved by IT" in radicale.get(href), "the card was not changed"
