"""A value's own label (Apple's grouped ``itemN.X-ABLabel``) is shown with it, found by search, and kept."""

from __future__ import annotations

import pytest
from carddav_conftest import Dav, vcard

from approval_core.testing import DialogLog, accept, connect

pytestmark = pytest.mark.anyio

LABELLED = (
    "UID:lab",
    "FN:Ada Lovelace",
    "N:Lovelace;Ada;;;",
    "item1.EMAIL;TYPE=INTERNET:desk@example.org",
    "item1.X-ABLabel:Volunteer desk",
    "item2.TEL:+44 20 7946 0000",
    "item2.X-ABLabel:_$!<Assistant>!$_",
    "EMAIL;TYPE=HOME:ada@example.org",
)


async def test_labels_are_shown_with_their_values_and_searched(dav: Dav) -> None:
    href = dav.put(dav.book, "lab.vcf", vcard(*LABELLED))
    async with connect(dav.server(), revision="2025-11-25") as client:
        contact = (await client.call_tool("get_contact", {"contact_id": href})).structured_content
        found = (await client.call_tool("search_contacts", {"query": "volunteer"})).structured_content
        assistant = (await client.call_tool("search_contacts", {"query": "Assistant"})).structured_content
    labels = {e["value"]: e.get("label") for e in contact["emails"]}
    assert labels == {"desk@example.org": "Volunteer desk", "ada@example.org": None}
    assert contact["phones"][0]["label"] == "Assistant"
    assert [(hit["id"], hit["matched"]) for hit in found["hits"]] == [(href, ["label"])]
    assert [hit["id"] for hit in assistant["hits"]] == [href]


async def test_a_card_read_and_written_back_keeps_its_labels_and_a_new_label_is_refused(dav: Dav) -> None:
    href = dav.put(dav.book, "lab.vcf", vcard(*LABELLED))
    before = dav.get(href)
    async with connect(dav.server(), revision="2025-11-25", answer=DialogLog(accept)) as client:
        read = (await client.call_tool("get_contact", {"contact_id": href})).structured_content
        same = await client.call_tool(
            "update_contact", {"contact_id": href, "changes": {"emails": read["emails"], "phones": read["phones"]}}
        )
        labelled_new = [*read["emails"], {"value": "new@example.org", "label": "Invented"}]
        refused = await client.call_tool("update_contact", {"contact_id": href, "changes": {"emails": labelled_new}})
    assert not same.is_error, same.content
    assert "item1.x-ablabel:volunteer desk" in dav.get(href).lower()
    assert "item1.email" in dav.get(href).lower()
    assert refused.is_error
    assert "emails[2].label" in refused.content[0].text
    assert "new@example.org" not in dav.get(href)
    assert before.lower().count("x-ablabel") == dav.get(href).lower().count("x-ablabel") == 2
