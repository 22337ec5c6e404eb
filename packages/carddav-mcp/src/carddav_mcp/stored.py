"""What a guarded call touches, as the address book stores it: the approval page's view of it (issue 31).

Each guarded tool already reads the cards it changes (for their ETags and the
counts its dialog states). These functions describe those cards for the
approval page alone (:class:`approval_core.StoredView`, passed to
``gate.check(stored=...)``):

* a contact: its formatted name (FN), its organisation (ORG), how many
  e-mail addresses it has, and whether a photo goes with the change;
* a group: its name and how many members it has;
* an edit: each field the call changes, before -> after (the page adds that
  the rest of the card is written back as stored);
* a move: the source and destination address books by display name and path;
* a delete of several cards: every card, up to the view's bound (the page
  gives the number of the others).

Nothing here goes into a dialog, a result or a log: approval-core keeps the
view in the pending approval's record only, and draws it as stored data.

Each card names the ETag it was read at. The gate refuses a view naming an
ETag the approval does not bind, so a one-card change shows the ETag it binds
as ``version`` (and its write carries as If-Match), and a change of several
cards puts each card's ETag in its target (:func:`etags_bound`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from approval_core import Change, Collection, StoredEntry, StoredField, StoredView
from carddav_mcp.client import CardData
from carddav_mcp.entries import Entry
from carddav_mcp.fields import FIELD_PROPERTIES
from carddav_mcp.vcard import Card

if TYPE_CHECKING:
    from carddav_mcp.client import BookInfo
    from carddav_mcp.groups import GroupView
    from carddav_mcp.vcard import Prop

__all__ = [
    "book",
    "contact",
    "delete_view",
    "etags_bound",
    "field_changes",
    "group",
    "group_changes",
    "property_changes",
    "restore_view",
]

_LABELS = {
    "fn": "Name (FN)",
    "n": "Structured name (N)",
    "nickname": "Nickname",
    "emails": "E-mail addresses",
    "phones": "Phone numbers",
    "addresses": "Postal addresses",
    "urls": "Web addresses",
    "org": "Organisation (ORG)",
    "title": "Job title",
    "note": "Note",
    "birthday": "Birthday",
    "anniversary": "Anniversary",
    "categories": "Categories",
}
"""The page's label for each field of :class:`carddav_mcp.models.ContactFields`."""
_BY_PROPERTY = {prop: field for field, props in FIELD_PROPERTIES.items() for prop in props}
_BINARY = frozenset({"PHOTO", "LOGO", "SOUND", "KEY"})
_STRUCTURED = frozenset({"N", "ADR", "ORG"})


def book(info: BookInfo) -> Collection:
    """The address book as the page names it: its display name as stored (``DAV:displayname``), and its path."""
    return Collection(path=info.path, name=info.display_name or None)


def _shown(prop: Prop) -> str:
    """One property line's value as a person reads it: decoded, with its TYPE (``work: ada@example.org``)."""
    if prop.name in _BINARY:
        media = prop.media_type()
        return f"{prop.name.lower()} ({media})" if media else prop.name.lower()
    parts = prop.components() if prop.name in _STRUCTURED else [prop.text()]
    text = ", ".join(part for part in parts if part.strip())
    types = [t for t in prop.types if t != "pref"]
    return f"{', '.join(types)}: {text}" if types else text


def _values(card: Card, names: Iterable[str]) -> str | None:
    """Every line of ``card`` with one of ``names``, each as :func:`_shown`, joined by "; " (None: none)."""
    found = card.all(*names)
    return "; ".join(_shown(prop) for prop in found) if found else None


def _photo(card: Card, goes: str) -> StoredField:
    """Whether the card has a photo, and what the call does with it (``goes``: "is deleted with it", ...)."""
    count = len(card.all("PHOTO"))
    return StoredField(label="Photo", value=f"yes: it {goes}" if count else "none")


def contact(
    info: BookInfo,
    entry: Entry,
    *,
    photo: str = "stays",
    changes: Iterable[Change] = (),
    moved_to: BookInfo | None = None,
) -> StoredEntry:
    """One contact card as stored: FN, ORG, the number of e-mail addresses, and whether a photo goes.

    Args:
        info: The address book it is in.
        entry: The card as read, with the ETag the approval binds.
        photo: What the call does with a photo on the card ("is deleted with it", "moves with it", ...).
        changes: For an edit, each field it changes (:func:`field_changes`, :func:`property_changes`).
        moved_to: For a move, the destination book.
    """
    card = entry.card
    org = card.first("ORG")
    emails = len(card.all("EMAIL"))
    fields = (
        StoredField(label="Name (FN)", value=card.text_of("FN"), name=True),
        StoredField(label="Organisation (ORG)", value=None if org is None else _shown(org), name=True),
        StoredField(label="E-mail addresses", value=f"{emails}"),
        _photo(card, photo),
    )
    return StoredEntry(
        kind="Contact",
        collection=book(info),
        href=entry.data.href,
        etag=entry.data.etag,
        fields=fields,
        changes=tuple(changes),
        moved_to=None if moved_to is None else book(moved_to),
    )


def field_changes(current: Card, new: Card, fields: Iterable[str]) -> list[Change]:
    """Before -> after of each field of :class:`~carddav_mcp.models.ContactFields` an update names.

    ``fields`` are the field names (``fn``, ``emails``...); each is shown as the lines of the vCard
    properties it replaces (:data:`carddav_mcp.fields.FIELD_PROPERTIES`), in the current and the new card.
    """
    return [
        Change(
            label=_LABELS.get(field, field),
            before=_values(current, FIELD_PROPERTIES[field]),
            after=_values(new, FIELD_PROPERTIES[field]),
            name=field in {"fn", "n", "org"},
        )
        for field in sorted(fields)
        if field in FIELD_PROPERTIES
    ]


def property_changes(current: Card, new: Card, names: Iterable[str]) -> list[Change]:
    """Before -> after of each vCard property a whole-card replacement changes (``names``: ``EMAIL``, ``NOTE``...).

    A property that belongs to a field is labelled as that field (the field's other properties shown with it).
    """
    out: list[Change] = []
    seen: set[str] = set()
    for name in sorted(names):
        field = _BY_PROPERTY.get(name)
        key = field or name
        if key in seen:
            continue
        seen.add(key)
        props = FIELD_PROPERTIES[field] if field else frozenset({name})
        label = _LABELS[field] if field else name
        out.append(
            Change(label=label, before=_values(current, props), after=_values(new, props), name=name in {"FN", "N"})
        )
    return out


def delete_view(cards: Iterable[tuple[BookInfo, Entry]]) -> StoredView:
    """A delete of one or more contacts: every card (with the book it is in), listed up to the view's bound."""
    return StoredView(entries=tuple(contact(info, e, photo="is deleted with the card") for info, e in cards))


def etags_bound(etags: Mapping[str, str | None]) -> dict[str, str | None]:
    """What a change of several cards adds to its target so the approval binds each card's ETag by name.

    ``etags`` maps each card's path to the ETag it was read at. The version (:func:`carddav_mcp.writes.version_of`)
    already binds a digest of these pairs; naming them in the target as well lets the page show each card's
    ETag (the gate refuses a view naming one the approval does not bind).
    """
    return dict(sorted(etags.items()))


def group_changes(
    view: GroupView, members: Iterable[str], names: Mapping[str, Entry], renamed_to: str | None
) -> list[Change]:
    """Before -> after of a group edit: its name (when renamed), its member count, and who joins or leaves.

    ``members`` are the member paths after the edit; ``names`` maps card paths to the cards read (their FN
    names the contacts that join or leave).
    """
    after = set(members)
    before = set(view.members)
    unresolved = len(view.unresolved)

    def fns(hrefs: set[str]) -> str | None:
        found = [(names[h].card.text_of("FN") or h) if h in names else h for h in sorted(hrefs)]
        return "; ".join(found) if found else None

    out: list[Change] = []
    if renamed_to is not None:
        out.append(Change(label="Name", before=view.name, after=renamed_to, name=True))
    out.append(Change(label="Members", before=f"{len(before) + unresolved}", after=f"{len(after) + unresolved}"))
    if after - before:
        out.append(Change(label="Joins", before=None, after=fns(after - before)))
    if before - after:
        out.append(Change(label="Leaves", before=fns(before - after), after=None))
    return out


def group(info: BookInfo, view: GroupView, changes: Iterable[Change] = ()) -> StoredView:
    """One group as stored: its name and number of members, and for an edit its changes.

    The ETag shown is the group card's, the version the approval binds; a CATEGORIES group has no card of its
    own (its label is on each member's card), so none is shown for it.
    """
    etag = view.entry.data.etag if view.entry is not None else None
    count = len(view.members) + len(view.unresolved)
    conventions = {
        "kind": "a group card (KIND:group)",
        "apple": "a group card (X-ADDRESSBOOKSERVER-KIND:group)",
        "categories": "a CATEGORIES label on each member's card",
    }
    fields = (
        StoredField(label="Name", value=view.name, name=True),
        StoredField(label="Members", value=f"{count}"),
        StoredField(label="Kept as", value=conventions.get(view.convention, view.convention)),
    )
    entry = StoredEntry(
        kind="Group",
        collection=book(info),
        href=view.entry.data.href if view.entry is not None else None,
        etag=etag,
        fields=fields,
        changes=tuple(changes),
    )
    return StoredView(entries=(entry,))


def restore_view(info: BookInfo, href: str, data: bytes, undoes: str) -> StoredView | None:
    """A restore: the card as the undo journal kept it (before ``undoes`` changed it), for the page only.

    The kept version names no ETag (it is not on the server now; the approval binds the version the restore
    writes over). None when the kept bytes are not a vCard.
    """
    text = data.decode("utf-8", errors="replace")
    try:
        card = Card.parse(text)
    except ValueError:
        return None
    kept = contact(info, Entry(CardData(href, None, text), card), photo="comes back with it")
    return StoredView(entries=(kept.model_copy(update={"kind": f"Contact, as kept before {undoes}"}),))
