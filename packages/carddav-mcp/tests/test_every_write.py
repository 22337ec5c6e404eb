"""APPROVAL_PROFILE=every-write on real CardDAV servers: creates on 2026-07-28, several cards in one question."""

from __future__ import annotations

import pytest
from carddav_conftest import Dav, vcard

from approval_core import ApprovalSettings
from approval_core.testing import DialogLog, accept, connect, decline

pytestmark = pytest.mark.anyio
EVERY_WRITE = ApprovalSettings(profile="every-write")


def cards_in(dav: Dav, book: str) -> list[str]:
    response = dav.http.request("PROPFIND", book, headers={"Depth": "1"})
    assert response.status_code == 207, response.text
    return [part for part in response.text.split(".vcf") if "<" in part][:-1] if ".vcf" in response.text else []


async def test_a_create_without_a_uid_is_asked_once_on_2026_and_written_once(dav: Dav) -> None:
    log = DialogLog(decline)
    args = {"address_book": dav.book, "fields": {"fn": "Ada Lovelace"}}
    async with connect(dav.server(EVERY_WRITE), revision="2026-07-28", answer=log) as client:
        declined = await client.call_tool("create_contact", args)
        assert declined.is_error
        assert len(log.messages) == 1
        assert cards_in(dav, dav.book) == []
        log.answer = accept
        created = await client.call_tool("create_contact", args)
    assert not created.is_error, created.content
    assert len(log.messages) == 2  # one question per call: the retry built the same request (its new UID kept)
    uid = created.structured_content["uid"]
    assert f"UID:{uid}" in dav.get(created.structured_content["id"])
    assert len(cards_in(dav, dav.book)) == 1
    assert f'PUT "{dav.settings.url.split("//")[0]}//' in log.messages[-1]
    assert "(only if nothing is stored under this name yet)" in log.messages[-1]


async def test_deleting_several_cards_is_one_question_listing_each_delete(dav: Dav) -> None:
    hrefs = [dav.put(dav.book, f"c{n}.vcf", vcard(f"UID:c{n}", f"FN:Card {n}")) for n in range(3)]
    log = DialogLog(accept)
    async with connect(dav.server(EVERY_WRITE), revision="2025-11-25", answer=log) as client:
        result = await client.call_tool("delete_contact", {"contact_ids": hrefs})
    assert not result.is_error, result.content
    (dialog,) = log.messages
    assert "This call sends 3 requests to the server:" in dialog
    assert dialog.count("  DELETE ") == 3
    assert "Card 1" not in dialog  # a stored name never reaches a dialog
    assert not any(dav.exists(href) for href in hrefs)


async def test_a_structured_value_shows_its_letters_and_still_escapes_what_cannot_be_seen(dav: Dav) -> None:
    log = DialogLog(decline)
    fields = {"fn": "Jürgen Weiß\u202eevil", "note": "ok"}
    async with connect(dav.server(EVERY_WRITE), revision="2025-11-25", answer=log) as client:
        await client.call_tool("create_contact", {"address_book": dav.book, "fields": fields})
    (dialog,) = log.messages
    assert "Jürgen Weiß" in dialog  # letters as written, not \\u escapes
    assert "\u202e" not in dialog  # a bidi override is escaped
    assert "\\u202e" in dialog
