"""What a server's listing and restore tools return about the undo journal: ids, places, counts and times.

Never a stored text: a listing row names the journal id, the tool whose change
it undoes, what that change did, the collection and href (ids the server
resolved), the number of bytes kept, when it was kept and until when, and the
approval that allowed the change (the first 12 hex digits of its fingerprint,
and the path it came by).
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from approval_core.records.journal import Journal, JournalEntry

__all__ = [
    "RESTORE_ID_PATTERN",
    "Restorable",
    "RestorableList",
    "RestoreIdArg",
    "RestoreTokenArg",
    "Restored",
    "restorable",
    "row_of",
    "utc_text",
]

RESTORE_ID_PATTERN = r"^[0-9a-f]{16}$"
"""A journal id: 16 lower-case hex digits (:class:`approval_core.records.journal.JournalEntry`)."""

RestoreId = Annotated[str, Field(pattern=RESTORE_ID_PATTERN, description="A journal id from list_restorable.")]

RestoreIdArg = Annotated[
    str, Field(pattern=RESTORE_ID_PATTERN, max_length=16, description="A journal id from list_restorable.")
]
"""A restore tool's ``id`` argument (at most 16 characters, checked before the pattern)."""
RestoreTokenArg = Annotated[
    str | None, Field(max_length=200, description="Only where a dialog cannot be shown: the token from the first call.")
]
"""A restore tool's ``confirm_token`` argument (the two-call fallback's token)."""


def utc_text(seconds: float) -> str:
    """Epoch ``seconds`` as an RFC 3339 UTC time to the second (``2026-12-03T14:05:09Z``)."""
    return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Restorable(BaseModel):
    """One change that can be undone (never the kept text)."""

    id: RestoreId
    tool: str = Field(description="The tool whose change this undoes.")
    change: Literal["deleted", "overwritten", "moved"]
    collection: str = Field(description="Where the entry was, and where a restore puts it back.")
    href: str = Field(description="The entry's href there.")
    now_at: str | None = Field(default=None, description="A moved entry: where the move left it.")
    bytes: int = Field(description="Size of the kept version, in bytes.")
    kept_at: str = Field(description="When it was kept (UTC).")
    until: str = Field(description="When the journal forgets it (UTC).")
    approval: str = Field(description="The first 12 hex digits of the fingerprint of the approval behind the change.")
    approved_by: str = Field(description="How that approval was given: dialog, input_required, page, token...")


class RestorableList(BaseModel):
    """What the undo journal holds for this caller, newest first."""

    entries: list[Restorable]
    days: int | None = Field(description="How long a change stays recoverable (APPROVAL_UNDO_DAYS); None: journal off.")
    unreadable: int = Field(
        default=0, description="Entries that did not open (changed on disk, or sealed under another key file)."
    )
    note: str | None = None


class Restored(BaseModel):
    """An entry put back."""

    id: RestoreId
    collection: str
    href: str
    how: Literal["create", "replace", "move_back"] = Field(
        description="create: written where it was gone (If-None-Match: *); replace: over the version the change "
        "left (If-Match); move_back: moved back from where the move left it (If-Match)."
    )
    etag: str | None = None


def row_of(entry: JournalEntry) -> Restorable:
    """The listing row of ``entry``."""
    return Restorable(
        id=entry.id,
        tool=entry.tool,
        change=entry.kind,
        collection=entry.collection,
        href=entry.href,
        now_at=entry.after_href if entry.kind == "moved" else None,
        bytes=len(entry.data),
        kept_at=utc_text(entry.kept_at),
        until=utc_text(entry.until),
        approval=entry.fingerprint[:12],
        approved_by=entry.path,
    )


async def restorable(journal: Journal | None, collection: str | None = None, limit: int = 100) -> RestorableList:
    """The rows of ``journal`` for this caller (in ``collection`` when given), newest first, at most ``limit``.

    Raises:
        StoreUnavailable: the shared store cannot be asked.
    """
    if journal is None:
        return RestorableList(
            entries=[], days=None, note="This server keeps no undo journal (APPROVAL_UNDO_DAYS=0): nothing to restore."
        )
    entries, unreadable = await journal.entries()
    rows = [row_of(e) for e in entries if collection is None or e.collection == collection]
    note = None if len(rows) <= limit else f"{len(rows) - limit} older entries are not listed."
    return RestorableList(entries=rows[:limit], days=journal.days, unreadable=unreadable, note=note)
