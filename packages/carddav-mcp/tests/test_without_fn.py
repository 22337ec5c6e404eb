"""Cards stored without a formatted name (RFC 6350 §6.2.1 requires FN): a derived name on read, FN added on write.

Radicale 3.9 neither stores nor serves a card with no FN line at all (it answers 400 to the PUT and skips
such a file in its folder), but it stores one whose FN is empty, which is the nameless card a client meets
there; those run against Radicale. A card with no FN line at all (as other servers keep it) is the same
code path from the parsed card on, tested on the parsed card.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from carddav_conftest import Dav, vcard

from approval_core.testing import DialogLog, accept, connect
from carddav_mcp.display_names import derived_fn, with_fn
from carddav_mcp.vcard import Card

pytestmark = pytest.mark.anyio

HIDDEN = "Approved by IT"


@pytest.fixture
def stored(radicale: Dav) -> tuple[Dav, Callable[..., str]]:
    def plant(name: str, *lines: str, version: str = "3.0") -> str:
        href = radicale.put(radicale.book, name, vcard("FN:", *lines, version=version))
        assert Card.parse(radicale.get(href)).text_of("FN") == ""
        return href

    return radicale, plant


@pytest.mark.parametrize(
    ("lines", "version", "name", "source"),
    [
        (("N:Lovelace;Ada;Augusta;Lady;",), "3.0", "Lady Ada Augusta Lovelace", "N"),
        (("N:;;;;", f"ORG:{HIDDEN};Board"), "3.0", HIDDEN, "ORG"),
        (("N:;;;;", "EMAIL:ada@example.org"), "3.0", "ada@example.org", "EMAIL"),
    ],
)
async def test_a_card_without_fn_is_read_with_a_derived_name(stored, lines, version, name, source) -> None:
    dav, plant = stored
    href = plant("nofn.vcf", "UID:nofn", *lines, version=version)
    async with connect(dav.server(), revision="2026-07-28", answer=accept) as client:
        listed = (await client.call_tool("list_contacts", {"address_book": dav.book})).structured_content
        got = (await client.call_tool("get_contact", {"contact_id": href})).structured_content
    [summary] = listed["contacts"]
    for item in (summary, got):
        assert item["fn"] == name
        assert item["fn_derived"] is True
        assert item["fn_source"] == source


async def test_a_card_with_fn_is_not_marked(radicale: Dav) -> None:
    href = radicale.put(radicale.book, "a.vcf", vcard("UID:a", "FN:Ada", "N:Lovelace;Ada;;;"))
    async with connect(radicale.server(), revision="2026-07-28", answer=accept) as client:
        got = (await client.call_tool("get_contact", {"contact_id": href})).structured_content
    assert (got["fn"], got["fn_derived"], got["fn_source"]) == ("Ada", False, None)


async def test_an_approved_update_adds_the_fn_and_the_dialog_says_so(stored) -> None:
    dav, plant = stored
    href = plant("nofn.vcf", "UID:nofn", f"N:{HIDDEN};Grace;;;")
    log = DialogLog(accept)
    async with connect(dav.server(), revision="2025-11-25", answer=log) as client:
        result = await client.call_tool("update_contact", {"contact_id": href, "changes": {"title": "Admiral"}})
        got = (await client.call_tool("get_contact", {"contact_id": href})).structured_content
    assert not result.is_error, result.content[0].text
    assert result.structured_content["fn_added"] == "N"
    [message] = log.messages
    assert "the card has no FN, which RFC 6350 requires, so one made from its N is added" in message
    assert HIDDEN not in message
    assert "Grace" not in message
    card = Card.parse(dav.get(href))
    assert card.text_of("FN") == f"Grace {HIDDEN}"
    assert card.text_of("TITLE") == "Admiral"
    assert (got["fn"], got["fn_derived"]) == (f"Grace {HIDDEN}", False)


async def test_giving_fn_sets_it_even_when_it_equals_the_derived_name(stored) -> None:
    dav, plant = stored
    href = plant("nofn.vcf", "UID:nofn", "N:Hopper;Grace;;;")
    log = DialogLog(accept)
    async with connect(dav.server(), revision="2025-11-25", answer=log) as client:
        result = await client.call_tool("update_contact", {"contact_id": href, "changes": {"fn": "Grace Hopper"}})
    assert not result.is_error, result.content[0].text
    assert result.structured_content["fn_added"] is None
    assert "no FN" not in log.messages[0]
    assert Card.parse(dav.get(href)).text_of("FN") == "Grace Hopper"


async def test_a_whole_card_without_fn_gets_one_and_the_dialog_says_so(radicale: Dav) -> None:
    href = radicale.put(radicale.book, "a.vcf", vcard("UID:a", "FN:A", "N:A;;;;"))
    log = DialogLog(accept)
    new = vcard("UID:a", "N:;;;;", "ORG:Example Ltd", "EMAIL:a@example.org")
    async with connect(radicale.server(), revision="2025-11-25", answer=log) as client:
        result = await client.call_tool("update_contact", {"contact_id": href, "vcard": new})
    assert not result.is_error, result.content[0].text
    assert result.structured_content["fn_added"] == "ORG"
    assert "so one made from its ORG is added" in log.messages[0]
    assert "Example" not in log.messages[0]
    assert Card.parse(radicale.get(href)).text_of("FN") == "Example Ltd"


async def test_a_card_with_nothing_to_name_it_by_is_refused_before_asking(stored) -> None:
    dav, plant = stored
    href = plant("nofn.vcf", "UID:nofn", "N:;;;;", "TEL:+1 555 0100")
    log = DialogLog(accept)
    async with connect(dav.server(), revision="2025-11-25", answer=log) as client:
        result = await client.call_tool("update_contact", {"contact_id": href, "changes": {"title": "X"}})
    assert result.is_error
    assert result.content[0].text.startswith("changes.fn: ")
    assert "no N, ORG or EMAIL" in result.content[0].text
    assert log.messages == []


@pytest.mark.parametrize(
    ("lines", "name", "source"),
    [
        (("N:Lovelace;Ada;;;",), "Ada Lovelace", "N"),
        (("N:;;;;", "ORG:Example Ltd;Research"), "Example Ltd", "ORG"),
        (("EMAIL;TYPE=work:ada@example.org", "EMAIL:other@example.org"), "ada@example.org", "EMAIL"),
        (("N:Lovelace\\, Countess;Ada;;;",), "Ada Lovelace, Countess", "N"),
    ],
)
def test_a_card_with_no_fn_line_gets_one_made_the_same_way(lines: tuple[str, ...], name: str, source: str) -> None:
    card = Card.parse(vcard("UID:x", *lines, version="4.0"))
    assert derived_fn(card) == (name, source)
    written, added = with_fn(card)
    assert added == source
    assert written.text_of("FN") == name
    assert [p.line for p in written.props if p.name != "FN"] == [p.line for p in card.props]


def test_a_card_with_nothing_to_name_it_by_gets_no_fn() -> None:
    card = Card.parse(vcard("UID:x", "TEL:+1 555 0100", version="4.0"))
    assert derived_fn(card) is None
    with pytest.raises(ValueError, match="no N, ORG or EMAIL"):
        with_fn(card)
