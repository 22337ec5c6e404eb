"""restore_card's stored view: the card as the undo journal kept it, for the approval page only."""

from __future__ import annotations

from carddav_mcp import stored
from carddav_mcp.client import BookInfo

BOOK = BookInfo(path="/ab/home/", display_name="Home", description=None, writable=True)
KEPT = b"BEGIN:VCARD\r\nVERSION:4.0\r\nUID:c1\r\nFN:Ada Lovelace\r\nEMAIL:ada@example.org\r\nEND:VCARD\r\n"


def test_the_kept_card_is_shown_with_its_name_and_no_etag() -> None:
    view = stored.restore_view(BOOK, "/ab/home/c1.vcf", KEPT, "delete_contact")
    assert view is not None
    (entry,) = view.entries
    assert entry.kind == "Contact, as kept before delete_contact"
    assert entry.etag is None
    assert [f.value for f in entry.fields if f.label == "Name (FN)"] == ["Ada Lovelace"]
    assert [f.value for f in entry.fields if f.label == "E-mail addresses"] == ["1"]


def test_bytes_that_are_no_vcard_give_no_view() -> None:
    assert stored.restore_view(BOOK, "/ab/home/c1.vcf", b"not a card", "delete_contact") is None
