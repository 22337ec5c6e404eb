"""Contact groups in the three conventions address books use.

* ``kind``: a vCard 4 card with ``KIND:group`` and one ``MEMBER`` per member
  (RFC 6350 §6.1.4, §6.6.5), as ``urn:uuid:`` references to members' UIDs.
* ``apple``: a vCard 3 card with ``X-ADDRESSBOOKSERVER-KIND:group`` and
  ``X-ADDRESSBOOKSERVER-MEMBER:urn:uuid:...`` (Apple Contacts, iCloud).
* ``categories``: no group card at all; a group is a ``CATEGORIES`` label
  on its members' cards (Nextcloud Contacts, Google exports). Its id is
  ``<book path>#<label, percent-encoded>``.

A new group uses the convention the book already uses; in a book with
neither, vCard 4 books get ``kind`` and others ``apple``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import quote, unquote

from carddav_mcp.backend import Entry

__all__ = [
    "Convention",
    "GroupView",
    "book_version",
    "category_group_id",
    "collect_groups",
    "convention_for_new",
    "member_ref",
    "split_category_id",
    "uid_key",
]

Convention = Literal["kind", "apple", "categories"]
_MEMBER_PROPS = ("MEMBER", "X-ADDRESSBOOKSERVER-MEMBER")


def uid_key(ref: str) -> str:
    """A UID or member reference in one comparable form (``urn:uuid:`` prefix dropped, lower case)."""
    ref = ref.strip()
    return ref[9:].lower() if ref.lower().startswith("urn:uuid:") else ref.lower()


def member_ref(uid: str) -> str:
    """The member reference for a contact's UID (``urn:uuid:<uid>`` unless the UID is a URN already)."""
    return uid if uid.lower().startswith("urn:") else f"urn:uuid:{uid}"


def category_group_id(book: str, label: str) -> str:
    """The id of a CATEGORIES group."""
    return f"{book}#{quote(label, safe='')}"


def split_category_id(group_id: str) -> tuple[str, str] | None:
    """(book path, label) of a CATEGORIES group id, or None for a group-card id."""
    if "#" not in group_id:
        return None
    book, label = group_id.split("#", 1)
    return book, unquote(label)


@dataclass
class GroupView:
    """A group and its resolved members.

    Attributes:
        id: Group card path, or a CATEGORIES id.
        book: The address book's path.
        name: The group's name (FN, or the label): address-book data.
        convention: See the module docstring.
        entry: The group card (None for CATEGORIES).
        members: Member contact ids (card paths), sorted.
        unresolved: Member references that match no card in the book.
    """

    id: str
    book: str
    name: str
    convention: Convention
    entry: Entry | None = None
    members: list[str] = field(default_factory=lambda: [])
    unresolved: list[str] = field(default_factory=lambda: [])


def _card_convention(entry: Entry) -> Convention:
    kind = entry.card.text_of("KIND")
    return "kind" if kind and kind.strip().lower() == "group" else "apple"


def collect_groups(book: str, entries: list[Entry]) -> list[GroupView]:
    """Every group in ``book``: group cards of both kinds, and CATEGORIES labels."""
    by_uid = {uid_key(e.card.uid): e.data.href for e in entries if e.card.uid and not e.card.is_group}
    groups: list[GroupView] = []
    labels: dict[str, list[str]] = {}
    for entry in entries:
        if entry.card.is_group:
            refs = [p.text().strip() for p in entry.card.all(*_MEMBER_PROPS)]
            members = sorted({by_uid[uid_key(r)] for r in refs if uid_key(r) in by_uid})
            # One entry per referenced UID: urn:uuid:zz and URN:UUID:ZZ name the same missing member (uid_key).
            unresolved = sorted({uid_key(r): r for r in sorted(refs) if uid_key(r) not in by_uid}.values())
            name = entry.card.text_of("FN") or ""
            groups.append(GroupView(entry.data.href, book, name, _card_convention(entry), entry, members, unresolved))
            continue
        for prop in entry.card.all("CATEGORIES"):
            for label in prop.values():
                labels.setdefault(label, []).append(entry.data.href)
    for label, hrefs in sorted(labels.items()):
        groups.append(GroupView(category_group_id(book, label), book, label, "categories", None, sorted(set(hrefs))))
    return groups


def book_version(entries: list[Entry]) -> str:
    """The vCard version most cards of the book use (``3.0`` for an empty book; 2.1 counts as 3.0)."""
    versions = Counter("4.0" if e.card.version == "4.0" else "3.0" for e in entries)
    return versions.most_common(1)[0][0] if versions else "3.0"


def convention_for_new(entries: list[Entry]) -> Convention:
    """The convention a new group in this book uses (see the module docstring)."""
    cards = [_card_convention(e) for e in entries if e.card.is_group]
    if cards:
        return "kind" if Counter(cards).most_common(1)[0][0] == "kind" else "apple"
    if any(e.card.all("CATEGORIES") for e in entries):
        return "categories"
    return "kind" if book_version(entries) == "4.0" else "apple"
