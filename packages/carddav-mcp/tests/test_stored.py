"""What carddav-mcp hands the approval page (carddav_mcp.stored), checked without a server.

The browser tests (test_page_stored.py) show the page drawing these views
from Radicale; here each builder's choices are pinned: which fields a card
shows, how an edit's fields are labelled and paired, that a CATEGORIES group
names no ETag, and that a multi-card delete's view passes the gate's binding
check only with the cards' ETags in its target.
"""

from __future__ import annotations

import pytest
from carddav_conftest import vcard

from approval_core import StoredView
from approval_core.page.stored import unbound_etags
from carddav_mcp import stored
from carddav_mcp.backend import Entry
from carddav_mcp.client import BookInfo, CardData
from carddav_mcp.groups import GroupView
from carddav_mcp.vcard import Card

BOOK = BookInfo(path="/willi/work/", display_name="Work", description=None, writable=True)


def entry(name: str, *lines: str, etag: str = '"e1"') -> Entry:
    text = vcard(*lines)
    return Entry(CardData(f"{BOOK.path}{name}.vcf", etag, text), Card.parse(text))


def test_a_contact_shows_fn_org_the_email_count_and_the_photo() -> None:
    card = entry("ada", "FN:Ada", "ORG:Engines;Research", "EMAIL:a@x", "EMAIL:b@x", "PHOTO;ENCODING=b;TYPE=JPEG:AAAA")
    shown = stored.contact(BOOK, card, photo="is deleted with the card")
    fields = {f.label: f.value for f in shown.fields}
    assert fields == {
        "Name (FN)": "Ada",
        "Organisation (ORG)": "Engines, Research",
        "E-mail addresses": "2",
        "Photo": "yes: it is deleted with the card",
    }
    assert shown.etag == '"e1"'
    assert shown.collection.name == "Work"
    assert shown.collection.path == BOOK.path


def test_field_changes_pair_the_properties_of_each_named_field() -> None:
    current = Card.parse(vcard("FN:Ada", "EMAIL;TYPE=work:a@x", "NOTE:kept"))
    new = current.replaced({"FN", "EMAIL"}, ["FN:Ada L.", "EMAIL;TYPE=home:b@x", "EMAIL:c@x"])
    changes = {c.label: (c.before, c.after) for c in stored.field_changes(current, new, ["fn", "emails"])}
    assert changes == {"Name (FN)": ("Ada", "Ada L."), "E-mail addresses": ("work: a@x", "home: b@x; c@x")}


def test_a_whole_card_replacement_labels_properties_by_their_field() -> None:
    current = Card.parse(vcard("FN:Ada", "N:L;Ada;;;", "X-CUSTOM:old"))
    new = Card.parse(vcard("FN:Ada", "N:Lovelace;Ada;;;"))
    changes = stored.property_changes(current, new, ["N", "X-CUSTOM"])
    assert [(c.label, c.before, c.after) for c in changes] == [
        ("Structured name (N)", "L, Ada", "Lovelace, Ada"),
        ("X-CUSTOM", "old", None),
    ]


def test_a_card_with_thousands_of_dropped_properties_lists_a_bounded_number() -> None:
    """A whole-card replacement of a card holding 3,000 distinct X- properties: the page lists a bounded few."""
    from approval_core.page.stored import ROW_LIMIT

    lines = [f"X-JUNK{i}:{'j' * 200}" for i in range(3000)]
    current = entry("ada", "FN:Ada", *lines)
    new = Card.parse(vcard("FN:Ada"))
    changes = stored.property_changes(current.card, new, [f"X-JUNK{i}" for i in range(3000)])
    shown = stored.contact(BOOK, current, changes=changes)
    assert len(shown.changes) == ROW_LIMIT
    assert shown.not_listed == 3000 - ROW_LIMIT


def test_a_categories_group_names_no_etag_and_a_card_group_its_own() -> None:
    labelled = GroupView(id=f"{BOOK.path}#Chess", book=BOOK.path, name="Chess", convention="categories",
                         members=["/willi/work/a.vcf"])  # fmt: skip
    view = stored.group(BOOK, labelled)
    assert view.etags() == frozenset()
    assert view.entries[0].href is None
    card = entry("team", "FN:Team", "X-ADDRESSBOOKSERVER-KIND:group", etag='"g1"')
    grouped = GroupView(id=card.data.href, book=BOOK.path, name="Team", convention="apple", entry=card)
    assert stored.group(BOOK, grouped).etags() == {'"g1"'}


def test_group_changes_name_the_contacts_that_join_and_leave() -> None:
    ada = entry("ada", "FN:Ada")
    grace = entry("grace", "FN:Grace")
    team = GroupView(id="/willi/work/t.vcf", book=BOOK.path, name="Team", convention="kind", members=[ada.data.href])
    names = {ada.data.href: ada, grace.data.href: grace}
    changes = stored.group_changes(team, [grace.data.href], names, "Crew")
    assert [(c.label, c.before, c.after) for c in changes] == [
        ("Name", "Team", "Crew"),
        ("Members", "1", "1"),
        ("Joins", None, "Grace"),
        ("Leaves", "Ada", None),
    ]


@pytest.mark.parametrize("named", [True, False])
def test_a_bulk_view_is_bound_only_with_each_etag_in_the_target(named: bool) -> None:
    cards = [entry(f"c{n}", f"FN:C{n}", etag=f'"e{n}"') for n in range(3)]
    view: StoredView = stored.delete_view([(BOOK, card) for card in cards])
    etags = {card.data.href: card.data.etag for card in cards}
    target = {"contacts": sorted(etags), **({"etags": stored.etags_bound(etags)} if named else {})}
    loose = unbound_etags(view, target, "3 cards sha256:digest")
    assert loose == ([] if named else ['"e0"', '"e1"', '"e2"'])
