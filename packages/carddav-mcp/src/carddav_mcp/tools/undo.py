"""Undo: keeping what a guarded change removes from a card (the journal), list_restorable and restore_card.

update_contact, delete_contact, move_contact, update_group and delete_group ask through :func:`gate`
(``await undo.gate(gate, cards).check(ctx, ...)``, the gate's own arguments), which words the dialog
"recoverable for N day(s) with restore_card" only where the journal will hold every card as it was read
(:mod:`approval_core.records.journal`), and call :func:`keeping` around each card's write (a group card, or
each member card a CATEGORIES group change relabels, is one card each). ``list_restorable`` shows ids,
places, sizes and times, never a card's text; ``restore_card`` asks, then puts the card back with one
conditional write (:mod:`webdav_core.restore`).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Sequence
from typing import Annotated, Any

import mcp_types as mt
from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from approval_core import (
    ApprovalGate,
    Approved,
    Decision,
    Dialog,
    JournalUnavailable,
    Keeping,
    NotApproved,
    RestorableList,
    Restored,
    RestoreIdArg,
    RestoreTokenArg,
    annotations,
    restorable,
    structured,
)
from approval_core.records.journal import Kind
from approval_core.records.restorable import utc_text
from approval_core.serving.stored_text import name_in_text
from carddav_mcp import dialogs, stored
from carddav_mcp.backend import Backend
from carddav_mcp.client import CardData, CardDavClient
from carddav_mcp.errors import BackendError, InvalidInput, NotAllowed, NotFound, Unreachable
from carddav_mcp.tools.reading import BookArg
from webdav_core.restore import plan_restore, put_back

__all__ = ["CONTENT_TYPE", "RESTORE", "gate", "keeping", "register", "undo_days"]

CONTENT_TYPE = "text/vcard; charset=utf-8"
RESTORE = annotations(read_only=False, destructive=True, idempotent=True, open_world=False)
"""restore_card: it may write over the version a change left (destructive); a repeat finds the card restored and
changes nothing (idempotent); a CardDAV server sends nothing to anyone (closed world)."""


def undo_days(gate: ApprovalGate, cards: Sequence[CardData]) -> int | None:
    """How long the journal would keep every card of ``cards`` as read (for the dialog); None when it would not."""
    journal = gate.journal
    if journal is None or not all(journal.keeps(len(card.text.encode())) for card in cards):
        return None
    return journal.days


class _UndoGate:
    """The gate, with the dialog worded for the undo journal (:func:`carddav_mcp.dialogs.with_undo`)."""

    def __init__(self, gate: ApprovalGate, cards: Sequence[CardData]) -> None:
        self._gate = gate
        self._cards = cards

    async def check(self, ctx: Context, *, dialog: Dialog, **arguments: Any) -> Decision:
        """``gate.check(ctx, dialog=..., **arguments)`` with the dialog saying how long the cards stay recoverable."""
        worded = dialogs.with_undo(dialog, undo_days(self._gate, self._cards))
        return await self._gate.check(ctx, dialog=worded, **arguments)


def gate(approval_gate: ApprovalGate, cards: Sequence[CardData]) -> _UndoGate:
    """The gate for a guarded change of ``cards`` (see the module docstring)."""
    return _UndoGate(approval_gate, cards)


@contextlib.asynccontextmanager
async def keeping(
    gate: ApprovalGate,
    decision: Approved,
    tool: str,
    kind: Kind,
    card: CardData,
    after_href: str | None = None,
    client: CardDavClient | None = None,
) -> AsyncGenerator[Keeping]:
    """Keep ``card`` as read while the ``async with`` block changes it (see ``Journal.keeping``).

    A lost answer (:class:`Unreachable`) leaves the card kept: the change may have been made. After an
    overwrite whose answer named no ETag, ``client`` is asked for the version the write left.

    Raises:
        BackendError: the journal could not keep it; the block did not run and nothing was changed.
    """
    journal = gate.journal
    if journal is None:
        yield Keeping(None)
        return
    try:
        async with journal.keeping(
            decision,
            tool=tool,
            kind=kind,
            collection=card.href.rsplit("/", 1)[0] + "/",
            href=card.href,
            etag=card.etag,
            data=card.text,
            content_type=CONTENT_TYPE,
            after_href=after_href,
            lost=(Unreachable,),
        ) as handle:
            yield handle
            if client is not None and handle.entry_id is not None and handle.after_etag is None:
                # The PUT's answer named no ETag (DAViCal): ask for the version it left, for the restore's If-Match.
                with contextlib.suppress(BackendError):
                    handle.left(await client.current_etag(card.href))
    except JournalUnavailable as exc:  # raised before the block runs: nothing was changed
        raise BackendError(str(exc)) from None


def register(server: MCPServer[Any], backend: Backend, gate: ApprovalGate) -> None:
    """Add list_restorable and restore_card to ``server``."""

    @server.tool(annotations=annotations(read_only=True, destructive=False, idempotent=True, open_world=False))
    async def list_restorable(
        address_book: Annotated[
            str | None, Field(min_length=1, max_length=1000, description="Only this book's cards; omit for all.")
        ] = None,
    ) -> Annotated[mt.CallToolResult, RestorableList]:
        """What guarded changes removed and can still be put back with restore_card, newest first.

        Ids, places, sizes and times only (never a card's text), and the approval behind each change.
        """
        book = None if address_book is None else await backend.book_id("address_book", address_book)
        return structured(await restorable(gate.journal, book))

    @server.tool(annotations=RESTORE)
    async def restore_card(
        address_book: BookArg,
        id: RestoreIdArg,
        ctx: Context,
        confirm_token: RestoreTokenArg = None,
    ) -> Annotated[mt.CallToolResult, Restored] | mt.InputRequiredResult:
        """Put back a card that a guarded change deleted, overwrote or moved (an id from list_restorable).

        Always asks. Where the card is gone it is written with If-None-Match: *; where the change left a
        version it is written over exactly that version (If-Match); a moved card is moved back. A card
        changed since is not overwritten: the call refuses and says so.
        """
        info = await backend.writable_book("address_book", address_book)
        book = info.path
        journal = gate.journal
        if journal is None:
            raise NotFound("id: this server keeps no undo journal (APPROVAL_UNDO_DAYS=0); nothing can be restored")
        entry = await journal.entry(id)
        if entry is None:
            raise NotFound(
                f"id: the undo journal holds no entry {name_in_text(id)} for this caller (never kept, restored "
                f"already, older than {journal.days} day(s), or it does not open); list_restorable shows what can be "
                "restored"
            )
        if entry.collection != book:
            raise InvalidInput(
                "id", f"journal entry {name_in_text(id)} was kept from another address book; it goes back only there"
            )
        for href in {entry.href, entry.after_href}:
            _, where = await backend.card_id("id", href)
            if href == entry.href and where != book:
                raise NotAllowed(f"id: the journal names a card outside {book}")
        client = backend.client()
        plan = await plan_restore(
            client,
            kind=entry.kind,
            href=entry.href,
            after_href=entry.after_href,
            after_etag=entry.after_etag,
            data=entry.data,
            tool=entry.tool,
        )
        decision = await gate.check(
            ctx,
            tool="restore_card",
            target={"id": id, "address_book": book, "href": entry.href, "how": plan.action, "from": plan.source},
            dialog=dialogs.restore_card_dialog(
                plan.action, book, restore_id=id, kept_at=utc_text(entry.kept_at), undoes=entry.tool
            ),
            version=plan.version or "absent",
            confirm_token=confirm_token,
            stored=stored.restore_view(info, entry.href, entry.data, entry.tool),
        )
        if isinstance(decision, NotApproved):
            return decision.result
        etag = await put_back(client, plan, entry.data, entry.content_type)
        await journal.spend(id)
        return structured(Restored(id=id, collection=book, href=entry.href, how=plan.action, etag=etag))

    _ = (list_restorable, restore_card)
