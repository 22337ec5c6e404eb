"""What a guarded group tool read, asks about and would write (:mod:`carddav_mcp.tools.grouping`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from approval_core import Change, Dialog
from carddav_mcp.backend import Entry
from carddav_mcp.client import CardData
from carddav_mcp.groups import GroupView
from carddav_mcp.vcard import Card, escape_text, make_line

__all__ = ["GroupPlan", "Relabel", "with_label"]


def with_label(card: Card, remove: str | None, add: str | None) -> Card:
    """``card`` with the CATEGORIES label ``remove`` taken out and ``add`` put in (either may be None)."""
    labels = [v for p in card.all("CATEGORIES") for v in p.values() if v != remove]
    if add is not None and add not in labels:
        labels.append(add)
    lines = [make_line("CATEGORIES", ",".join(escape_text(v) for v in labels))] if labels else []
    return card.replaced({"CATEGORIES"}, lines)


Relabel = tuple[Entry, str | None, str | None]
"""A CATEGORIES change of one card: the card as read, the label to remove, the label to add."""


@dataclass
class GroupPlan:
    """What a guarded group tool read, asks about, and would write.

    Attributes:
        group: The group as read.
        dialog: What the person is asked.
        target: What the approval binds (with ``version``).
        etags: Path → ETag of every card the write touches (the group card, or the CATEGORIES members).
        relabels: For a CATEGORIES group, the label change of each touched card.
        card: For a group card, the card to write.
        edits: For update_group, what the page shows it changes (:func:`carddav_mcp.stored.group_changes`).
    """

    group: GroupView
    dialog: Dialog
    target: dict[str, Any]
    etags: dict[str, str | None]
    relabels: list[Relabel] = field(default_factory=lambda: [])
    card: Card | None = None
    edits: list[Change] = field(default_factory=lambda: [])

    @property
    def before(self) -> list[CardData]:
        """Every card the write changes, as read: what the undo journal keeps."""
        if self.card is not None and self.group.entry is not None:
            return [self.group.entry.data]
        return [entry.data for entry, _, _ in self.relabels]
