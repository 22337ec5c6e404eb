"""What the approval dialogs of carddav-mcp say.

Every text here is a literal; the only things filled in are counts this
server worked out by reading the cards first, and caller values taken from
the call's own arguments: the address-book path (and a move's destination),
the contact and group ids exactly as the caller gave them, and, for an
update, the names of the fields from this server's own schema. No card text
(FN, N, ORG, NOTE, EMAIL, TEL, a group's name, ...) is ever passed in. An id
names a card by its path, which whoever created the card chose: it is shown
only under the caller heading, as the caller's own value, escaped as an
identifier (every non-ASCII character escaped), so the person sees
which card the call means and cannot mistake the id for the server's words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import LiteralString

from approval_core import CallerValue, Dialog, operation, undoable

__all__ = [
    "GroupChange",
    "delete_contacts_dialog",
    "delete_group_dialog",
    "move_contact_dialog",
    "replace_card_dialog",
    "restore_card_dialog",
    "update_fields_dialog",
    "update_group_dialog",
    "with_undo",
]


@dataclass(frozen=True)
class GroupChange:
    """What an update_group call named, as the caller gave it: the group id and the contact ids."""

    group_id: str
    add: Sequence[str] | None = None
    remove: Sequence[str] | None = None
    members: Sequence[str] | None = None


def _ids(ids: Sequence[str]) -> str:
    """Ids the caller gave as a set (the tools treat them so): sorted, each once, so their order is no new call."""
    return ", ".join(sorted(set(ids)))


_FN_ADDED: dict[str | None, LiteralString] = {
    None: "",
    "N": "; the card has no FN, which RFC 6350 requires, so one made from its N is added",
    "ORG": "; the card has no FN, which RFC 6350 requires, so one made from its ORG is added",
    "EMAIL": "; the card has no FN, which RFC 6350 requires, so one made from its first EMAIL is added",
}
"""What a dialog adds when a write-back adds the FN a card lacked, by the property it is made from
(:mod:`carddav_mcp.display_names`): a property name, never the name itself."""

_NO_HISTORY = (
    "The old values are overwritten on the server, and a CardDAV server keeps no earlier version to restore them from."
)
_REPLACED = (
    "Everything on the current card that is not in the new card is removed, and a CardDAV server keeps "
    "no earlier version to restore it from."
)
_NO_TRASH = "A CardDAV server has no trash: a deleted card, photo included, cannot be recovered from here."
_MOVED = (
    "The card leaves its current address book; groups there lose it, and the server keeps no record "
    "from which the move could be undone."
)
_GROUP_CHANGED = (
    "The contacts themselves stay in the address book; only the group changes. A CardDAV server keeps no "
    "earlier version of the group to go back to."
)
_GROUP_GONE = (
    "Every member remains in the address book as it is; only the group itself goes, and with no trash "
    "on a CardDAV server it cannot be brought back from here."
)
KEPT_FOR: dict[str, LiteralString] = {
    _NO_HISTORY: "A CardDAV server keeps no earlier version, so this server keeps the card as it is now in its own "
    "undo journal (list_restorable shows it); after that it is gone.",
    _REPLACED: "Everything on the current card that is not in the new card is removed from the server; this server "
    "keeps the card as it is now in its own undo journal (list_restorable shows it).",
    _NO_TRASH: "A CardDAV server has no trash, so this server keeps each card as it is now, photo included, in its "
    "own undo journal (list_restorable shows them); after that they are gone.",
    _MOVED: "The card leaves its current address book and groups there lose it; this server notes the move in its "
    "own undo journal (list_restorable shows it).",
    _GROUP_CHANGED: "The contacts themselves stay in the address book; only the group changes. This server keeps "
    "every card the change writes (the group card, or each member card whose CATEGORIES change) as it is now "
    "in its own undo journal (list_restorable shows each).",
    _GROUP_GONE: "Every member remains in the address book as it is; only the group itself goes. This server "
    "keeps every card the deletion changes (the group card, or each member card losing the label) as it is "
    "now in its own undo journal (list_restorable shows each).",
}
"""The consequence a dialog says instead where the undo journal keeps every card the change touches."""
RESTORE: LiteralString = "restore_card"
"""The tool a dialog names where the undo journal keeps what a change removes."""


def with_undo(dialog: Dialog, days: int | None) -> Dialog:
    """``dialog`` saying that the change stays recoverable for ``days`` days with restore_card.

    Only a dialog whose consequence is in :data:`KEPT_FOR` is reworded, and only where the undo journal
    will keep every card the change touches (``days`` not None); any other comes back as it was.
    """
    kept = KEPT_FOR.get(dialog.consequence)
    if days is None or kept is None:
        return dialog
    return Dialog(undoable(dialog.operation, days, RESTORE), kept, dialog.caller_values, dialog.value_limit)


def update_fields_dialog(book: str, contact_id: str, actions: dict[str, str], fn_added: str | None = None) -> Dialog:
    """update_contact with fields: how many fields are replaced, set or cleared.

    Args:
        book: The address book's path.
        contact_id: The contact id as the caller gave it.
        actions: Field name (a name from the tool's own schema, never card
            text) → ``"set"`` or ``"cleared"``.
        fn_added: The property (N, ORG, EMAIL) an FN added to a card without
            one is made from; None when none is added.
    """
    set_count = sum(1 for action in actions.values() if action == "set")
    cleared_count = len(actions) - set_count
    fields = ", ".join(f"{name} ({action})" for name, action in sorted(actions.items()))
    return Dialog(
        operation(
            "replace {fields} field(s) of one contact: {set} given new values, {cleared} cleared" + _FN_ADDED[fn_added],
            fields=set_count + cleared_count,
            set=set_count,
            cleared=cleared_count,
        ),
        _NO_HISTORY,
        [
            CallerValue("Address book", book, identifier=True),
            CallerValue("Contact", contact_id, identifier=True),
            CallerValue("Fields", fields),
        ],
    )


def replace_card_dialog(
    book: str, contact_id: str, current: int, new: int, dropped: int, photo: bool, fn_added: str | None = None
) -> Dialog:
    """update_contact with a whole vCard: everything not in the new card goes, the photo named when there is one.

    ``fn_added``: the property (N, ORG, EMAIL) an FN added to a new card without one is made from, or None.
    """
    values = [CallerValue("Address book", book, identifier=True), CallerValue("Contact", contact_id, identifier=True)]
    consequence = _REPLACED
    if photo:
        return Dialog(
            operation(
                "replace a whole contact card of {current} propert(ies) with a new card of {new}; "
                "{dropped} propert(ies) not in the new card go, its photo included" + _FN_ADDED[fn_added],
                current=current,
                new=new,
                dropped=dropped,
            ),
            consequence,
            values,
        )
    return Dialog(
        operation(
            "replace a whole contact card of {current} propert(ies) with a new card of {new}; "
            "{dropped} propert(ies) not in the new card go" + _FN_ADDED[fn_added],
            current=current,
            new=new,
            dropped=dropped,
        ),
        consequence,
        values,
    )


def delete_contacts_dialog(books: list[str], contact_ids: Sequence[str], count: int, photos: int) -> Dialog:
    """delete_contact: how many cards, how many of them carry a photo; ``contact_ids`` as the caller gave them."""
    return Dialog(
        operation("delete {count} contact(s), {photos} of them with a photo", count=count, photos=photos),
        _NO_TRASH,
        [
            CallerValue("Address book", ", ".join(books), identifier=True),
            CallerValue("Contacts", _ids(contact_ids), identifier=True),
        ],
    )


def move_contact_dialog(book: str, contact_id: str, destination: str, groups: int) -> Dialog:
    """move_contact: the card leaves its book, and the groups there that list it; ``contact_id`` as given."""
    return Dialog(
        operation(
            "move one contact to another address book, out of {groups} group(s) in its current book that list it",
            groups=groups,
        ),
        _MOVED,
        [
            CallerValue("Address book", book, identifier=True),
            CallerValue("Contact", contact_id, identifier=True),
            CallerValue("Destination", destination, identifier=True),
        ],
    )


def update_group_dialog(
    book: str, chosen: GroupChange, before: int, added: int, removed: int, after: int, renamed: bool
) -> Dialog:
    """update_group: member counts before and after; the contacts themselves stay.

    ``chosen`` holds the ids as the caller gave them: the group, and the contacts it named in ``add``,
    ``remove`` or ``members`` (each shown only when given).
    """
    values = [
        CallerValue("Address book", book, identifier=True),
        CallerValue("Group", chosen.group_id, identifier=True),
    ]
    if chosen.add:
        values.append(CallerValue("Contacts to add", _ids(chosen.add), identifier=True))
    if chosen.remove:
        values.append(CallerValue("Contacts to remove", _ids(chosen.remove), identifier=True))
    if chosen.members is not None:
        values.append(CallerValue("New member list", _ids(chosen.members), identifier=True))
    consequence = _GROUP_CHANGED
    template = (
        "rename a group of {before} contact(s) and change its members: {added} added, {removed} removed, "
        "{after} after the change"
        if renamed
        else "change the members of a group of {before} contact(s): {added} added, {removed} removed, "
        "{after} after the change"
    )
    return Dialog(operation(template, before=before, added=added, removed=removed, after=after), consequence, values)


def delete_group_dialog(book: str, group_id: str, members: int) -> Dialog:
    """delete_group: the member count; the contacts stay; ``group_id`` as the caller gave it."""
    return Dialog(
        operation("delete a group of {members} contact(s)", members=members),
        _GROUP_GONE,
        [CallerValue("Address book", book, identifier=True), CallerValue("Group", group_id, identifier=True)],
    )


def restore_card_dialog(how: str, book: str, *, restore_id: str, kept_at: str, undoes: str) -> Dialog:
    """restore_card: ``how`` is the write (``create``, ``replace``, ``move_back``); never the card's text or path.

    The values are the caller's address book and journal id, and what the journal says of the change (when
    it was kept, which tool made it); not the card's path, which whoever made the card chose.
    """
    if how == "move_back":
        op = operation("move a card back into this address book, out of the book it was moved to")
        consequence = "The card leaves the address book it is in now; its text is as it was."
    elif how == "replace":
        op = operation("put back the earlier version of a card, over the version a change left")
        consequence = "The version stored now is replaced, and this server keeps no copy of it: that cannot be undone."
    else:
        op = operation("put back a card that is gone, where it was")
        consequence = "It comes back with the text it had before the change; nothing stored is replaced."
    return Dialog(
        op,
        consequence,
        [
            CallerValue("Address book", book, identifier=True),
            CallerValue("Restore id", restore_id, identifier=True),
            CallerValue("Kept at", kept_at),
            CallerValue("Undoes", undoes, identifier=True),
        ],
    )
