"""Structured and list values keep their meaning through every read and write.

RFC 6350 §6.2.2 (N) and §6.3.1 (ADR) make each component a comma-separated
list; NICKNAME and CATEGORIES are lists (§6.2.3, §6.7.1); RFC 2426 says the
same for vCard 3.0, and vCard 2.1 has no lists (a comma is text there). The
tools return those components as lists, and a card read with get_contact and
written back with update_contact is left exactly as the server held it.
"""

from __future__ import annotations

from typing import Any

import pytest
from carddav_conftest import Dav, vcard

from approval_core import ApprovalSettings
from approval_core.testing import approval_of, connect
from carddav_mcp.fields import to_contact
from carddav_mcp.vcard import Card

pytestmark = pytest.mark.anyio

ADR = "ADR;TYPE=home:;;Flat 3,12 Example Road;Springfield;;12345;Exampleland"
WRITABLE = ["fn", "n", "nickname", "emails", "phones", "addresses", "urls", "org", "title", "note", "birthday",
            "anniversary", "categories"]  # fmt: skip


async def get(client: Any, href: str) -> dict[str, Any]:
    result = await client.call_tool("get_contact", {"contact_id": href})
    assert not result.is_error, result.content
    return result.structured_content


async def update(client: Any, href: str, changes: dict[str, Any]) -> Any:
    args = {"contact_id": href, "changes": changes}
    first = await client.call_tool("update_contact", args)
    token = approval_of(first)["confirm_token"]
    return await client.call_tool("update_contact", {**args, "confirm_token": token})


def writable(contact: dict[str, Any]) -> dict[str, Any]:
    """The fields of a get_contact result that update_contact takes, as they were read."""
    return {k: contact[k] for k in WRITABLE if contact[k] not in (None, [])}


async def test_an_address_with_two_street_lines_written_back_as_read_leaves_the_card_unchanged(radicale: Dav) -> None:
    href = radicale.put(radicale.book, "a.vcf", vcard("UID:a", "FN:Ann", ADR, version="4.0"))
    before = radicale.get(href)
    async with connect(radicale.server(ApprovalSettings(elicitation=False)), revision="2026-07-28") as client:
        contact = await get(client, href)
        done = await update(client, href, {"addresses": contact["addresses"]})
    assert not done.is_error, done.content
    assert radicale.get(href) == before
    assert contact["addresses"] == [{
        "types": ["home"], "po_box": [], "extended": [], "street": ["Flat 3", "12 Example Road"],
        "locality": ["Springfield"], "region": [], "postal_code": ["12345"], "country": ["Exampleland"],
    }]  # fmt: skip


async def test_changing_one_component_keeps_the_street_lines_a_list(radicale: Dav) -> None:
    href = radicale.put(radicale.book, "a.vcf", vcard("UID:a", "FN:Ann", ADR, version="4.0"))
    async with connect(radicale.server(ApprovalSettings(elicitation=False)), revision="2026-07-28") as client:
        address = (await get(client, href))["addresses"][0]
        done = await update(client, href, {"addresses": [{**address, "locality": ["Shelbyville"]}]})
        again = await get(client, href)
    assert not done.is_error, done.content
    assert Card.parse(radicale.get(href)).first("ADR").raw == (  # type: ignore[union-attr]
        ";;Flat 3,12 Example Road;Shelbyville;;12345;Exampleland"
    )
    assert again["addresses"][0]["street"] == ["Flat 3", "12 Example Road"]


@pytest.mark.parametrize("version", ["3.0", "4.0"])
async def test_every_list_and_structured_value_reads_back_unchanged(radicale: Dav, version: str) -> None:
    # RFC 6350 §6.2.2's own example of N, escapes of RFC 6350 §3.4 in every kind of value, NICKNAME lines (one
    # name each: Radicale keeps only the first item of a NICKNAME list) with parameters, Apple item groups, a
    # 4.0 tel: URI.
    lines = [
        "UID:b", "FN:Dr. John Philip Paul Stevenson Jr.", r"N:Stevenson;John;Philip,Paul;Dr.;Jr.,M.D.,A.C.P.",
        r"NICKNAME;TYPE=work:Boss\, the", "NICKNAME:JP", "NICKNAME:Johnny",
        r"ADR;TYPE=work,pref:PO 1;Suite 5\; rear;Line 1\nstill line 1,Line 2\\;Town;;;",
        r"item1.EMAIL;TYPE=INTERNET:j@example.org", "item1.X-ABLabel:_$!<Other>!$_",
        r"ORG:ABC\, Inc.;North American Division;Marketing", r"CATEGORIES:a\,b,c\;d,e\\f",
        r"NOTE:one\ntwo\, three\; four\\ five", "TEL;VALUE=uri;TYPE=cell:tel:+1-555-0100",
    ]  # fmt: skip
    href = radicale.put(radicale.book, "b.vcf", vcard(*lines, version=version))
    before = radicale.get(href)
    async with connect(radicale.server(ApprovalSettings(elicitation=False)), revision="2026-07-28") as client:
        contact = await get(client, href)
        assert contact["n"] == {"family": ["Stevenson"], "given": ["John"], "additional": ["Philip", "Paul"],
                                "prefix": ["Dr."], "suffix": ["Jr.", "M.D.", "A.C.P."]}  # fmt: skip
        assert contact["nickname"] == ["Boss, the", "JP", "Johnny"]
        address = contact["addresses"][0]
        assert (address["po_box"], address["extended"]) == (["PO 1"], ["Suite 5; rear"])
        assert address["street"] == ["Line 1\nstill line 1", "Line 2\\"]
        assert contact["org"] == ["ABC, Inc.", "North American Division", "Marketing"]
        assert contact["categories"] == ["a,b", "c;d", "e\\f"]
        assert contact["note"] == "one\ntwo, three; four\\ five"
        done = await update(client, href, writable(contact))
        assert not done.is_error, done.content
        assert await get(client, href) == {**contact, "etag": (await get(client, href))["etag"]}
    assert radicale.get(href) == before


async def test_escapes_written_by_the_tools_round_trip(radicale: Dav) -> None:
    href = radicale.put(radicale.book, "c.vcf", vcard("UID:c", "FN:C", "N:C;;;;", version="4.0"))
    nasty = ["a,b", "c;d", "e\\f", "g\nh", "\\,", "x\\"]
    changes = {
        "n": {"family": nasty, "given": "One, with a comma", "suffix": ["", "Jr."]},
        "addresses": [{"street": nasty, "locality": "St. Ives; Cornwall"}],
        "nickname": ["n,1", "n;2"], "categories": ["k\\1", "k,2"], "org": ["O, Inc;", "Unit\\"],
        "note": "l1\nl2,;\\",
    }  # fmt: skip
    async with connect(radicale.server(ApprovalSettings(elicitation=False)), revision="2026-07-28") as client:
        done = await update(client, href, changes)
        contact = await get(client, href)
    assert not done.is_error, done.content
    assert contact["n"]["family"] == nasty
    assert contact["n"]["given"] == ["One, with a comma"]
    assert contact["n"]["suffix"] == ["", "Jr."]
    assert contact["addresses"][0]["street"] == nasty
    assert contact["addresses"][0]["locality"] == ["St. Ives; Cornwall"]
    assert (contact["nickname"], contact["categories"]) == (["n,1", "n;2"], ["k\\1", "k,2"])
    assert (contact["org"], contact["note"]) == (["O, Inc;", "Unit\\"], "l1\nl2,;\\")
    adr = Card.parse(radicale.get(href)).first("ADR")
    assert adr is not None
    assert adr.raw == ";;a\\,b,c\\;d,e\\\\f,g\\nh,\\\\\\,,x\\\\;St. Ives\\; Cornwall;;;"


async def test_a_vcard_21_component_is_one_value_with_its_commas() -> None:
    card = Card.parse("BEGIN:VCARD\r\nVERSION:2.1\r\nN:Doe;John, Jr.;;;\r\nFN:John Doe\r\n"
                      "ADR;HOME:;;Flat 3, 12 Road;Town;;;\r\nEND:VCARD\r\n")  # fmt: skip
    contact = to_contact("/b/a.vcf", "/b/", None, card)
    assert contact.n is not None
    assert contact.n.given == ["John, Jr."]
    assert contact.addresses[0].street == ["Flat 3, 12 Road"]


async def test_several_values_in_a_vcard_21_component_are_refused_by_name(radicale: Dav) -> None:
    text = "BEGIN:VCARD\r\nVERSION:2.1\r\nUID:d\r\nN:Doe;John;;;\r\nFN:John Doe\r\nEND:VCARD\r\n"
    href = radicale.put(radicale.book, "d.vcf", text)
    async with connect(radicale.server(ApprovalSettings(elicitation=False)), revision="2026-07-28") as client:
        result = await client.call_tool(
            "update_contact", {"contact_id": href, "changes": {"addresses": [{"street": ["Flat 3", "12 Road"]}]}}
        )
    assert result.is_error
    assert "addresses[0].street" in result.content[0].text
    assert "2.1" in result.content[0].text
    assert Card.parse(radicale.get(href)).first("ADR") is None
