"""Tools that write contacts: create_contact never asks; the other three always do.

update_contact, delete_contact and move_contact: each guarded tool reads the cards fresh, validates everything,
and asks with the ETag(s) it read bound into the approval (``gate.check(version=...)``) together with the counts
its dialog states, and hands the approval page the cards as stored (:mod:`carddav_mcp.stored`: the page alone shows
them). The write then carries that ETag (If-Match), so a card changed meanwhile is reported (412),
never overwritten. After a pushed dialog the cards are read again first, and a count that changed meanwhile
stops the call; a delete of several cards checks every ETag before the first DELETE; a MOVE, whose If-Match
Radicale and Xandikos ignore, is preceded by a read of the card's ETag.

create_contact takes an optional caller-given UID and writes with If-None-Match: *; see
:func:`carddav_mcp.writes.create_card` for retries and lost replies.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import mcp_types as mt
from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from approval_core import ApprovalGate, Dialog, NotApproved, StoredView, annotations, stable, structured
from carddav_mcp import dialogs, stored
from carddav_mcp.backend import Backend, Entry
from carddav_mcp.client import CardData
from carddav_mcp.errors import BackendError, Conflict, InvalidInput, NotFound, PreconditionFailed
from carddav_mcp.fields import changed_lines, replacement, stored_form
from carddav_mcp.groups import book_version, collect_groups
from carddav_mcp.models import UID_DESCRIPTION, UID_PATTERN, ContactFields, CreatedContact, Deleted, Moved, Written
from carddav_mcp.tools import undo
from carddav_mcp.tools.reading import BookArg, ContactArg, contact_entry
from carddav_mcp.vcard import Card, Prop, escape_text, make_line
from carddav_mcp.writes import Write, create_card, still_as_asked, unchanged, version_of, write_each

__all__ = ["register"]

Token = Annotated[str | None, Field(max_length=200, description="only when a previous call returned one")]
UidArg = Annotated[str | None, Field(max_length=200, pattern=UID_PATTERN, description=UID_DESCRIPTION)]
_VERSION_PROBE = 20


async def _version_of(backend: Backend, book: str) -> str:
    rows = (await backend.rows(book))[:_VERSION_PROBE]
    return book_version(await backend.entries(book, rows)) if rows else "3.0"


def _property_count(card: Card) -> int:
    return sum(1 for p in card.props if p.name != "VERSION")


def _same(prop: Prop) -> tuple[Any, ...]:
    """What makes two property lines the same property: group, name, parameters and value (RFC 6350 §3.3).

    Group and parameter values compare without case, and parameters in any
    order, so a line the server rewrote still counts as the one sent; a line
    of the current card with no such twin in the new card is one that goes.
    """
    params = tuple(sorted((key, tuple(sorted(v.lower() for v in values))) for key, values in prop.params.items()))
    return ((prop.group or "").lower(), prop.name, params, prop.raw)


def register(server: MCPServer[Any], backend: Backend, gate: ApprovalGate) -> None:
    """Add the tools of this module to ``server``."""

    @server.tool(annotations=annotations(read_only=False, destructive=False, idempotent=False, open_world=False))
    async def create_contact(
        address_book: BookArg,
        fields: Annotated[ContactFields, Field(description="the new contact's fields; fn is required")],
        uid: UidArg = None,
    ) -> Annotated[mt.CallToolResult, CreatedContact]:
        """Create a new contact (fn required) in the vCard version the address book already uses.

        Give a uid to make a retry safe: a card with that UID already in the book is answered
        already_exists (nothing written). If the server's reply is lost, the tool reads the card back and
        says whether it was created.
        """
        if not fields.fn:
            raise InvalidInput("fields.fn", "a new contact needs a formatted name (FN)")
        info = await backend.writable_book("address_book", address_book)
        version = await _version_of(backend, info.path)
        uid = uid or stable("uid", lambda: str(uuid.uuid4()))  # the same on an input_required retry
        actions, _, lines = changed_lines(fields, version, creating=True)
        head = [f"VERSION:{version}", make_line("UID", escape_text(uid))]
        if version != "4.0" and "n" not in actions:
            head.append("N:;;;;")  # required in vCard 3.0 (RFC 2426 §5)
        card = Card([]).replaced(set(), head + lines)
        made = await create_card(backend, "create_contact", info.path, uid, card.serialize())
        if made.outcome == "already_exists":
            existing = Card.parse(made.card.text)
            if existing.is_group:
                raise Conflict(
                    f"uid: the group card {made.card.href} already has this UID; nothing was written. "
                    "Choose another uid."
                )
            return structured(
                CreatedContact(id=made.card.href, etag=made.card.etag, uid=existing.uid, outcome="already_exists")
            )
        return structured(
            CreatedContact(
                id=made.card.href, etag=made.card.etag, uid=uid, fields_changed=sorted(actions), outcome="created"
            )
        )

    @server.tool(annotations=annotations(read_only=False, destructive=True, idempotent=True, open_world=False))
    async def update_contact(
        contact_id: ContactArg,
        ctx: Context,
        changes: Annotated[
            ContactFields | None,
            Field(description="fields to change: leave a field out to keep it, set it to null to remove it"),
        ] = None,
        vcard: Annotated[
            str | None,
            Field(max_length=1_000_000, description="a whole new vCard replacing the card; same UID and version"),
        ] = None,
        confirm_token: Token = None,
    ) -> Annotated[mt.CallToolResult, Written] | mt.InputRequiredResult:
        """Change fields of a contact, or replace its whole card. Always asks the person first."""
        if (changes is None) == (vcard is None):
            raise InvalidInput("changes", "give exactly one of changes or vcard")
        if changes is not None and not changes.model_fields_set:
            raise InvalidInput("changes", "name at least one field to change")
        href, book = await backend.card_id("contact_id", contact_id)
        info = await backend.writable_book("contact_id", book)

        async def prepare() -> tuple[Entry, Card, list[str], Dialog, dict[str, Any]]:
            entry = contact_entry(await backend.fresh("contact_id", href), "contact_id")
            current = entry.card
            target: dict[str, Any] = {"contact": href}
            if changes is not None:
                actions, names, lines = changed_lines(changes, current.version, creating=False, current=current)
                new, added = stored_form(current.replaced(names, lines), "changes.fn")
                target["changes"] = changes.model_dump(mode="json", exclude_unset=True)
                target["actions"] = actions
                target["fn_added"] = added
                set_count = sum(1 for action in actions.values() if action == "set")
                target["counts"] = {"fields": len(actions), "set": set_count, "cleared": len(actions) - set_count}
                dialog = dialogs.update_fields_dialog(book, contact_id, actions, added)
                return entry, new, sorted(actions), dialog, target
            assert vcard is not None
            new, added = stored_form(replacement(current, vcard), "vcard")
            target["fn_added"] = added
            kept = {_same(p) for p in new.props}
            dropped = sum(1 for p in current.props if p.name != "VERSION" and _same(p) not in kept)
            photo = bool(current.all("PHOTO")) and not new.all("PHOTO")
            counts = {"current": _property_count(current), "new": _property_count(new), "dropped": dropped}
            dialog = dialogs.replace_card_dialog(
                book, contact_id, counts["current"], counts["new"], dropped, photo, added
            )
            target["vcard"] = vcard
            target["counts"] = {**counts, "photo_goes": photo}
            old_lines, new_lines = {p.line for p in current.props}, {p.line for p in new.props}
            changed = sorted(
                {p.name for p in [*current.props, *new.props] if (p.line in old_lines) != (p.line in new_lines)}
            )
            return entry, new, changed, dialog, target

        entry, new, changed, dialog, target = await prepare()
        version = version_of("contact_id", {href: entry.data.etag})
        if changes is not None:
            edits = stored.field_changes(entry.card, new, changed)
        else:
            edits = stored.property_changes(entry.card, new, changed)
        photo = "is removed by this change" if entry.card.all("PHOTO") and not new.all("PHOTO") else "stays"
        view = StoredView(entries=(stored.contact(info, entry, photo=photo, changes=edits),))
        decision = await undo.gate(gate, [entry.data]).check(
            ctx,
            tool="update_contact",
            target=target,
            dialog=dialog,
            version=version,
            confirm_token=confirm_token,
            stored=view,
        )
        if isinstance(decision, NotApproved):
            return decision.result
        if decision.path == "dialog":
            still_as_asked("update_contact", target, (await prepare())[4])
        written: list[str | None] = []

        async def put() -> None:
            written.append(await backend.client().put(href, new.serialize(), etag=version))

        async with undo.keeping(
            gate, decision, "update_contact", "overwritten", entry.data, client=backend.client()
        ) as kept:
            await write_each("update_contact", [Write(href, put, _etag_moved_on(backend, href, version))])
            kept.left(written[0])
        added = target["fn_added"]
        return structured(Written(id=href, etag=written[0], uid=new.uid, fields_changed=changed, fn_added=added))

    @server.tool(annotations=annotations(read_only=False, destructive=True, idempotent=True, open_world=False))
    async def delete_contact(
        contact_ids: Annotated[list[ContactArg], Field(min_length=1, max_length=100, description="contact ids")],
        ctx: Context,
        confirm_token: Token = None,
    ) -> Annotated[mt.CallToolResult, Deleted] | mt.InputRequiredResult:
        """Delete one or more contacts (photos included). Always asks the person first."""
        hrefs: dict[str, str] = {}
        for index, value in enumerate(contact_ids):
            href, book = await backend.card_id(f"contact_ids[{index}]", value)
            hrefs[href] = book
        books = sorted(set(hrefs.values()))
        infos = {book: await backend.writable_book("contact_ids", book) for book in books}

        entries = [contact_entry(await backend.fresh("contact_ids", h), "contact_ids") for h in sorted(hrefs)]
        photos = sum(1 for e in entries if e.card.all("PHOTO"))
        dialog = dialogs.delete_contacts_dialog(books, contact_ids, len(hrefs), photos)
        etags = {e.data.href: e.data.etag for e in entries}
        read: dict[str, CardData] = {e.data.href: e.data for e in entries}
        version = version_of("contact_ids", etags)
        target: dict[str, Any] = {"contacts": frozenset(hrefs), "counts": {"contacts": len(hrefs), "photos": photos}}
        if len(etags) > 1:
            target["etags"] = stored.etags_bound(etags)  # each card's ETag, as the page shows it
        view = stored.delete_view([(infos[hrefs[h]], e) for h, e in zip(sorted(hrefs), entries, strict=True)])
        decision = await undo.gate(gate, list(read.values())).check(
            ctx,
            tool="delete_contact",
            target=target,
            dialog=dialog,
            version=version,
            confirm_token=confirm_token,
            stored=view,
            # a standing grant counts calls, so it may cover one card in one address book, never several
            collection=books[0] if len(hrefs) == 1 else None,
        )
        if isinstance(decision, NotApproved):
            return decision.result
        # Every card still as read (a pushed dialog may have waited, and a multi-card delete must not stop
        # half-way on a 412); a card someone else deleted meanwhile is already as asked.
        gone: list[str] = []
        if decision.path == "dialog" or len(etags) > 1:
            for book in books:
                in_book = {h: e for h, e in etags.items() if hrefs[h] == book}
                gone += await unchanged(backend, "delete_contact", book, in_book, gone_ok=True)
        client = backend.client()

        def deletion(href: str) -> Write:
            async def run() -> None:
                async with undo.keeping(gate, decision, "delete_contact", "deleted", read[href]):
                    if not await client.delete(href, etags[href]):
                        gone.append(href)  # someone else deleted it meanwhile: already as asked

            async def landed() -> bool:
                try:
                    await client.get(href)
                except NotFound:
                    return True
                return False

            return Write(href, run, landed)

        done = await write_each("delete_contact", [deletion(h) for h in sorted(etags) if h not in gone])
        return structured(Deleted(deleted=[h for h in done if h not in gone], already_gone=gone))

    @server.tool(annotations=annotations(read_only=False, destructive=True, idempotent=False, open_world=False))
    async def move_contact(
        contact_id: ContactArg,
        destination: Annotated[str, Field(min_length=1, max_length=1000, description="address book id to move it to")],
        ctx: Context,
        confirm_token: Token = None,
    ) -> Annotated[mt.CallToolResult, Moved] | mt.InputRequiredResult:
        """Move a contact to another address book (WebDAV MOVE). The destination is checked first. Always asks."""
        href, book = await backend.card_id("contact_id", contact_id)
        source = await backend.writable_book("contact_id", book)
        dest = await backend.writable_book("destination", destination)
        if dest.path == book:
            raise InvalidInput("destination", "is the address book the contact is already in")
        new_href = dest.path + href.rsplit("/", 1)[1]

        async def prepare() -> tuple[Entry, Dialog, dict[str, Any]]:
            entry = contact_entry(await _still_there(backend, href, new_href), "contact_id")
            if entry.card.uid and await backend.hrefs_with_uid(dest.path, entry.card.uid):
                raise Conflict(
                    f"destination: {dest.path} already has a card with this contact's UID; nothing was moved."
                )
            try:
                await backend.client().get(new_href)
            except NotFound:
                pass
            else:
                raise Conflict(f"destination: {dest.path} already has a card at {new_href}; nothing was moved.")
            groups = sum(1 for g in collect_groups(book, await backend.entries(book)) if g.entry and href in g.members)
            dialog = dialogs.move_contact_dialog(book, contact_id, dest.path, groups)
            return entry, dialog, {"contact": href, "destination": dest.path, "counts": {"groups": groups}}

        entry, dialog, target = await prepare()
        version = version_of("contact_id", {href: entry.data.etag})
        view = StoredView(entries=(stored.contact(source, entry, photo="moves with the card", moved_to=dest),))
        decision = await undo.gate(gate, [entry.data]).check(
            ctx,
            tool="move_contact",
            target=target,
            dialog=dialog,
            version=version,
            confirm_token=confirm_token,
            stored=view,
        )
        if isinstance(decision, NotApproved):
            return decision.result
        if decision.path == "dialog":
            still_as_asked("move_contact", target, (await prepare())[2])
        # Radicale and Xandikos ignore If-Match on MOVE, so the ETag is compared here too, just before it.
        if (await backend.client().get(href)).etag != version:
            raise PreconditionFailed(
                f"move_contact: {href} changed on the server since it was read, so nothing was moved. "
                "Read it again and repeat the move if it still applies."
            )
        async with undo.keeping(gate, decision, "move_contact", "moved", entry.data, after_href=new_href):
            await write_each(
                "move_contact",
                [
                    Write(
                        f"{href} (moved to {new_href})",
                        lambda: backend.client().move(href, new_href, version),
                        _moved(backend, href, new_href),
                    )
                ],
            )
        return structured(Moved(id=new_href, previous_id=href, address_book=dest.path))

    _ = (create_contact, update_contact, delete_contact, move_contact)


def _etag_moved_on(backend: Backend, href: str, version: str) -> Callable[[], Awaitable[bool]]:
    """After a lost reply to a PUT with ``If-Match: version``: whether it landed (the card no longer has that ETag).

    The PUT could only apply to the card with that ETag (RFC 7232 §3.1), so a
    card read back with another ETag was written (by this request, or by
    somebody else after it); a card still with that ETag was not.
    """

    async def landed() -> bool:
        return (await backend.client().get(href)).etag != version

    return landed


def _moved(backend: Backend, href: str, new_href: str) -> Callable[[], Awaitable[bool]]:
    """After a lost reply to a MOVE: whether it landed (the card is gone from ``href`` and is at ``new_href``)."""

    async def landed() -> bool:
        client = backend.client()
        try:
            await client.get(href)
        except NotFound:
            await client.get(new_href)  # NotFound here too: the card is in neither place (an error of its own)
            return True
        return False

    return landed


async def _still_there(backend: Backend, href: str, new_href: str) -> Entry:
    """The card to move, read fresh; when it is gone but a card is at ``new_href``, say that the move already happened.

    A move whose reply was lost may be called again; the card is then already
    in the destination, and the caller is told where it is instead of only
    that it is missing.

    Raises:
        NotFound: no card at ``href`` (the text names ``new_href`` when a card is there).
    """
    try:
        return await backend.fresh("contact_id", href)
    except NotFound:
        try:
            moved = await backend.client().get(new_href)
        except BackendError:
            gone = f"contact_id: there is no card at {href} (it may have been moved or deleted)."
            raise NotFound(gone, 404) from None
        raise NotFound(
            f"contact_id: there is no card at {href} any more; a card of that name is now at {moved.href} in the "
            "destination, so the move has already been done. Nothing was changed.",
            404,
        ) from None
