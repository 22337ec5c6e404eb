"""Tools that write contacts: create_contact never asks; the other three always do.

update_contact, delete_contact and move_contact: each guarded tool reads the card fresh, validates everything, asks,
then writes with the ETag it read (If-Match), so a card changed meanwhile is reported, not overwritten.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any

import mcp_types as mt
from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from approval_core import ApprovalGate, NotApproved, annotations, structured
from carddav_mcp import dialogs
from carddav_mcp.backend import Backend
from carddav_mcp.errors import BackendError, Conflict, InvalidInput, NotFound
from carddav_mcp.fields import changed_lines
from carddav_mcp.groups import book_version, collect_groups
from carddav_mcp.models import ContactFields, Deleted, Moved, Written
from carddav_mcp.tools.reading import BookArg, ContactArg, contact_entry
from carddav_mcp.vcard import Card, escape_text, make_line

__all__ = ["register"]

Token = Annotated[str | None, Field(max_length=200, description="only when a previous call returned one")]
_VERSION_PROBE = 20


async def _version_of(backend: Backend, book: str) -> str:
    rows = (await backend.rows(book))[:_VERSION_PROBE]
    return book_version(await backend.entries(book, rows)) if rows else "3.0"


def _property_count(card: Card) -> int:
    return sum(1 for p in card.props if p.name != "VERSION")


def register(server: MCPServer[Any], backend: Backend, gate: ApprovalGate) -> None:
    """Add the tools of this module to ``server``."""

    @server.tool(annotations=annotations(read_only=False, destructive=False, idempotent=False, open_world=False))
    async def create_contact(
        address_book: BookArg,
        fields: Annotated[ContactFields, Field(description="the new contact's fields; fn is required")],
    ) -> Annotated[mt.CallToolResult, Written]:
        """Create a new contact (fn required). It is written in the vCard version the address book already uses."""
        if not fields.fn:
            raise InvalidInput("fields.fn", "a new contact needs a formatted name (FN)")
        info = await backend.writable_book("address_book", address_book)
        version = await _version_of(backend, info.path)
        uid = str(uuid.uuid4())
        actions, _, lines = changed_lines(fields, version, creating=True)
        head = [f"VERSION:{version}", make_line("UID", escape_text(uid))]
        if version != "4.0" and "n" not in actions:
            head.append("N:;;;;")  # required in vCard 3.0 (RFC 2426 §5)
        card = Card([])
        card = card.replaced(set(), head + lines)
        href = f"{info.path}{uid}.vcf"
        etag = await backend.client().put(href, card.serialize(), etag=None)
        return structured(Written(id=href, etag=etag, uid=uid, fields_changed=sorted(actions)))

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
        await backend.writable_book("contact_id", book)
        entry = contact_entry(await backend.fresh("contact_id", href), "contact_id")
        current = entry.card
        target: dict[str, Any] = {"contact": href, "etag": entry.data.etag}
        if changes is not None:
            actions, names, lines = changed_lines(changes, current.version, creating=False)
            new = current.replaced(names, lines)
            target["changes"] = changes.model_dump(mode="json", exclude_unset=True)
            target["actions"] = actions
            dialog = dialogs.update_fields_dialog(book, actions)
            changed = sorted(actions)
        else:
            assert vcard is not None
            try:
                new = Card.parse(vcard)
            except ValueError as exc:
                raise InvalidInput("vcard", f"is not a vCard: {exc}") from None
            if new.is_group:
                raise InvalidInput("vcard", "is a group card; the contact tools write contact cards only")
            if new.version != current.version:
                raise InvalidInput("vcard", f"must be vCard {current.version}, the version of the card it replaces")
            if new.uid is None and current.uid:
                new = new.replaced(set(), [make_line("UID", escape_text(current.uid))])
            elif new.uid != current.uid:
                raise InvalidInput("vcard", "must keep the UID of the card it replaces (or leave UID out)")
            if not new.text_of("FN"):
                raise InvalidInput("vcard", "must have FN (RFC 6350 §6.2.1)")
            if new.version != "4.0" and not new.all("N"):
                raise InvalidInput("vcard", f"must have N: it is required in vCard {new.version} (RFC 2426 §5)")
            kept = {p.name for p in new.props}
            dropped = sum(1 for p in current.props if p.name not in kept)
            photo = bool(current.all("PHOTO")) and not new.all("PHOTO")
            dialog = dialogs.replace_card_dialog(book, _property_count(current), _property_count(new), dropped, photo)
            target["vcard"] = vcard
            old_lines, new_lines = {p.line for p in current.props}, {p.line for p in new.props}
            changed = sorted(
                {p.name for p in [*current.props, *new.props] if (p.line in old_lines) != (p.line in new_lines)}
            )
        decision = await gate.check(
            ctx, tool="update_contact", target=target, dialog=dialog, confirm_token=confirm_token
        )
        if isinstance(decision, NotApproved):
            return decision.result
        etag = await backend.client().put(href, new.serialize(), etag=entry.data.etag)
        return structured(Written(id=href, etag=etag, uid=new.uid, fields_changed=changed))

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
        for book in sorted(set(hrefs.values())):
            await backend.writable_book("contact_ids", book)
        entries = [contact_entry(await backend.fresh("contact_ids", href), "contact_ids") for href in sorted(hrefs)]
        photos = sum(1 for e in entries if e.card.all("PHOTO"))
        dialog = dialogs.delete_contacts_dialog(sorted(set(hrefs.values())), len(hrefs), photos)
        target = {"contacts": {e.data.href: e.data.etag for e in entries}}
        decision = await gate.check(
            ctx, tool="delete_contact", target=target, dialog=dialog, confirm_token=confirm_token
        )
        if isinstance(decision, NotApproved):
            return decision.result
        done: list[str] = []
        gone: list[str] = []
        for entry in entries:
            try:
                deleted = await backend.client().delete(entry.data.href, entry.data.etag)
            except BackendError as exc:
                if not done:
                    raise
                raise BackendError(f"{exc} Deleted before this failure: {', '.join(done)}.", exc.status) from exc
            (done if deleted else gone).append(entry.data.href)
        return structured(Deleted(deleted=done, already_gone=gone))

    @server.tool(annotations=annotations(read_only=False, destructive=True, idempotent=False, open_world=False))
    async def move_contact(
        contact_id: ContactArg,
        destination: Annotated[str, Field(min_length=1, max_length=1000, description="address book id to move it to")],
        ctx: Context,
        confirm_token: Token = None,
    ) -> Annotated[mt.CallToolResult, Moved] | mt.InputRequiredResult:
        """Move a contact to another address book (WebDAV MOVE). The destination is checked first. Always asks."""
        href, book = await backend.card_id("contact_id", contact_id)
        await backend.writable_book("contact_id", book)
        entry = contact_entry(await backend.fresh("contact_id", href), "contact_id")
        dest = await backend.writable_book("destination", destination)
        if dest.path == book:
            raise InvalidInput("destination", "is the address book the contact is already in")
        new_href = dest.path + href.rsplit("/", 1)[1]
        if entry.card.uid and await backend.hrefs_with_uid(dest.path, entry.card.uid):
            raise Conflict(f"destination: {dest.path} already has a card with this contact's UID; nothing was moved.")
        try:
            await backend.client().get(new_href)
        except NotFound:
            pass
        else:
            raise Conflict(f"destination: {dest.path} already has a card at {new_href}; nothing was moved.")
        groups = sum(1 for g in collect_groups(book, await backend.entries(book)) if g.entry and href in g.members)
        dialog = dialogs.move_contact_dialog(book, dest.path, groups)
        target = {"contact": href, "etag": entry.data.etag, "destination": dest.path}
        decision = await gate.check(ctx, tool="move_contact", target=target, dialog=dialog, confirm_token=confirm_token)
        if isinstance(decision, NotApproved):
            return decision.result
        await backend.client().move(href, new_href, entry.data.etag)
        return structured(Moved(id=new_href, previous_id=href, address_book=dest.path))

    _ = (create_contact, update_contact, delete_contact, move_contact)
