"""Group tools: list_groups, get_group, create_group (never ask); update_group, delete_group (always ask).

Groups come in three conventions (see :mod:`carddav_mcp.groups`). For a
CATEGORIES group the writes land on the member cards themselves (the label
is added or removed), each with its own If-Match.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Annotated, Any

import mcp_types as mt
from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from approval_core import ApprovalGate, NotApproved, annotations, structured
from carddav_mcp import dialogs
from carddav_mcp.backend import Backend, Entry
from carddav_mcp.errors import BackendError, Conflict, InvalidInput, NotAllowed, NotFound, PreconditionFailed
from carddav_mcp.groups import (
    GroupView,
    book_version,
    category_group_id,
    collect_groups,
    convention_for_new,
    member_ref,
    split_category_id,
)
from carddav_mcp.models import Deleted, Group, GroupList, GroupSummary
from carddav_mcp.tools.reading import BookArg
from carddav_mcp.vcard import Card, escape_text, make_line

__all__ = ["register"]

READ = annotations(read_only=True, destructive=False, idempotent=True, open_world=False)
GroupArg = Annotated[str, Field(min_length=1, max_length=1200, description="group id from list_groups")]
MemberIds = list[Annotated[str, Field(max_length=1000)]]
Token = Annotated[str | None, Field(max_length=200, description="only when a previous call returned one")]
NameArg = Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[^\r\n]+$", description="group name")]
_MEMBER_NAMES = {"kind": "MEMBER", "apple": "X-ADDRESSBOOKSERVER-MEMBER"}


def _as_model(group: GroupView) -> Group:
    return Group(
        id=group.id,
        name=group.name,
        convention=group.convention,
        member_count=len(group.members) + len(group.unresolved),
        address_book=group.book,
        members=group.members,
        unresolved_members=group.unresolved,
    )


def _with_label(card: Card, remove: str | None, add: str | None) -> Card:
    labels = [v for p in card.all("CATEGORIES") for v in p.values() if v != remove]
    if add is not None and add not in labels:
        labels.append(add)
    lines = [make_line("CATEGORIES", ",".join(escape_text(v) for v in labels))] if labels else []
    return card.replaced({"CATEGORIES"}, lines)


def register(server: MCPServer[Any], backend: Backend, gate: ApprovalGate) -> None:
    """Add the tools of this module to ``server``."""

    async def load(group_id: str) -> tuple[GroupView, list[Entry]]:
        split = split_category_id(group_id)
        if split is None:
            href, book = await backend.card_id("group_id", group_id)
        else:
            book = await backend.book_id("group_id", split[0])
            href = category_group_id(book, split[1])
        entries = await backend.entries(book)
        for group in collect_groups(book, entries):
            if group.id == href:
                if group.entry is not None:  # a write builds on the card as the server has it now
                    fresh = await backend.fresh("group_id", group.id)
                    if fresh.data.etag != group.entry.data.etag:
                        raise PreconditionFailed(
                            "group_id: the group card changed while it was being read; nothing was changed. Try again."
                        )
                    group.entry = fresh
                return group, entries
        if split is None and any(e.data.href == href for e in entries):
            raise NotAllowed(f"group_id: {href} is a contact card; the group tools take group ids from list_groups.")
        raise NotFound(f"group_id: there is no group {href}; list_groups shows the groups of a book.", 404)

    def members_of(field: str, ids: list[str], book: str, entries: list[Entry]) -> dict[str, Entry]:
        by_href = {e.data.href: e for e in entries}
        found: dict[str, Entry] = {}
        for index, value in enumerate(ids):
            href, member_book = backend.card_path(f"{field}[{index}]", value)
            if member_book != book:
                raise InvalidInput(f"{field}[{index}]", f"must be a contact in the group's address book {book}")
            entry = by_href.get(href)
            if entry is None:
                raise NotFound(f"{field}[{index}]: there is no contact {href}.", 404)
            if entry.card.is_group:
                raise InvalidInput(f"{field}[{index}]", "is a group card; groups hold contacts")
            if not entry.card.uid:
                raise InvalidInput(f"{field}[{index}]", "has no UID, so a group card cannot refer to it")
            found[href] = entry
        return found

    async def relabel(cards: Sequence[tuple[str, str | None, str | None]]) -> None:
        """Write CATEGORIES changes (href, label to remove, label to add), each card read fresh."""
        done: list[str] = []
        for href, remove, add in cards:
            try:
                entry = await backend.fresh("members", href)
                await backend.client().put(href, _with_label(entry.card, remove, add).serialize(), etag=entry.data.etag)
            except BackendError as exc:
                if not done:
                    raise
                raise BackendError(f"{exc} Cards already changed before this failure: {', '.join(done)}.") from exc
            done.append(href)

    @server.tool(annotations=READ)
    async def list_groups(address_book: BookArg) -> Annotated[mt.CallToolResult, GroupList]:
        """List the groups of an address book in every convention found (KIND:group, Apple, CATEGORIES)."""
        book = (await backend.book("address_book", address_book)).path
        entries = await backend.entries(book)
        groups = collect_groups(book, entries)
        return structured(
            GroupList(
                address_book=book,
                groups=[
                    GroupSummary(
                        id=g.id, name=g.name, convention=g.convention, member_count=len(g.members) + len(g.unresolved)
                    )
                    for g in groups
                ],
                convention_for_new_groups=convention_for_new(entries),
            )
        )

    @server.tool(annotations=READ)
    async def get_group(group_id: GroupArg) -> Annotated[mt.CallToolResult, Group]:
        """Read a group and its member contact ids."""
        group, _ = await load(group_id)
        return structured(_as_model(group))

    @server.tool(annotations=annotations(read_only=False, destructive=False, idempotent=False, open_world=False))
    async def create_group(
        address_book: BookArg,
        name: NameArg,
        members: Annotated[
            MemberIds | None, Field(max_length=1000, description="contact ids of the first members")
        ] = None,
    ) -> Annotated[mt.CallToolResult, Group]:
        """Create a group, in the convention the address book already uses (a CATEGORIES group needs members)."""
        book = (await backend.writable_book("address_book", address_book)).path
        entries = await backend.entries(book)
        chosen = members_of("members", members or [], book, entries)
        if any(g.name == name for g in collect_groups(book, entries)):
            raise Conflict("name: the address book already has a group with this name; use update_group.")
        convention = convention_for_new(entries)
        if convention == "categories":
            if not chosen:
                raise InvalidInput("members", "this address book keeps groups as CATEGORIES labels, so a group needs "
                                   "at least one member")  # fmt: skip
            await relabel([(href, None, name) for href in sorted(chosen)])
            group_id = category_group_id(book, name)
        else:
            uid = str(uuid.uuid4())
            refs = [make_line(_MEMBER_NAMES[convention], member_ref(e.card.uid or "")) for e in chosen.values()]
            if convention == "kind":
                head = ["VERSION:4.0", "KIND:group"]
            else:
                version = "3.0" if book_version(entries) != "4.0" else "4.0"
                head = [f"VERSION:{version}", f"N:{escape_text(name)};;;;", "X-ADDRESSBOOKSERVER-KIND:group"]
            lines = [*head, make_line("UID", uid), make_line("FN", escape_text(name)), *sorted(refs)]
            group_id = f"{book}{uid}.vcf"
            await backend.client().put(group_id, Card([]).replaced(set(), lines).serialize(), etag=None)
        group, _ = await load(group_id)
        return structured(_as_model(group))

    @server.tool(annotations=annotations(read_only=False, destructive=True, idempotent=True, open_world=False))
    async def update_group(
        group_id: GroupArg,
        ctx: Context,
        name: Annotated[
            str | None, Field(min_length=1, max_length=200, pattern=r"^[^\r\n]+$", description="a new name")
        ] = None,
        add: Annotated[MemberIds | None, Field(max_length=1000, description="contact ids to add")] = None,
        remove: Annotated[MemberIds | None, Field(max_length=1000, description="contact ids to remove")] = None,
        members: Annotated[
            MemberIds | None,
            Field(max_length=1000, description="the whole new member list (contact ids)"),
        ] = None,
        confirm_token: Token = None,
    ) -> Annotated[mt.CallToolResult, Group] | mt.InputRequiredResult:
        """Rename a group and/or change its members (add/remove, or a whole new list). Always asks first."""
        if members is not None and (add or remove):
            raise InvalidInput("members", "give either members (the whole list) or add/remove, not both")
        if name is None and members is None and not add and not remove:
            raise InvalidInput("name", "name a change: name, add, remove or members")
        group, entries = await load(group_id)
        await backend.writable_book("group_id", group.book)
        adding = members_of("add", add or [], group.book, entries)
        removing = members_of("remove", remove or [], group.book, entries)
        if set(adding) & set(removing):
            raise InvalidInput("remove", "a contact cannot be both added and removed")
        if not_in := sorted(set(removing) - set(group.members)):
            raise InvalidInput("remove", f"not members of this group: {', '.join(not_in)}")
        if members is not None:
            result = set(members_of("members", members, group.book, entries))
        else:
            result = (set(group.members) | set(adding)) - set(removing)
        if group.convention == "categories" and not result:
            raise InvalidInput("remove", "a CATEGORIES group with no members would no longer exist; use delete_group")
        renamed = name is not None and name != group.name
        before = set(group.members)
        dialog = dialogs.update_group_dialog(
            group.book, len(before) + len(group.unresolved), len(result - before), len(before - result),
            len(result) + len(group.unresolved), renamed,
        )  # fmt: skip
        etag = group.entry.data.etag if group.entry else None
        target = {"group": group.id, "etag": etag, "members": frozenset(result),
                  "unresolved": frozenset(group.unresolved), "name": name if renamed else None}  # fmt: skip
        decision = await gate.check(ctx, tool="update_group", target=target, dialog=dialog, confirm_token=confirm_token)
        if isinstance(decision, NotApproved):
            return decision.result
        by_href = {e.data.href: e for e in entries}
        if group.entry is None:
            new_label = name if renamed and name else group.name
            changes: list[tuple[str, str | None, str | None]] = [(h, group.name, None) for h in sorted(before - result)]
            changes += [(h, group.name, new_label) for h in sorted(result) if h not in before or renamed]
            await relabel(changes)
            group_id = category_group_id(group.book, new_label)
        else:
            prop = _MEMBER_NAMES[group.convention]
            refs = sorted({member_ref(by_href[h].card.uid or "") for h in result} | set(group.unresolved))
            lines = [make_line(prop, ref) for ref in refs]
            names = {"MEMBER", "X-ADDRESSBOOKSERVER-MEMBER"}
            card = group.entry.card.replaced(names, lines)
            if renamed and name:
                card = card.replaced({"FN"}, [make_line("FN", escape_text(name))])
                if group.convention == "apple":
                    card = card.replaced({"N"}, [f"N:{escape_text(name)};;;;"])
            await backend.client().put(group.id, card.serialize(), etag=etag)
            group_id = group.id
        updated, _ = await load(group_id)
        return structured(_as_model(updated))

    @server.tool(annotations=annotations(read_only=False, destructive=True, idempotent=True, open_world=False))
    async def delete_group(
        group_id: GroupArg, ctx: Context, confirm_token: Token = None
    ) -> Annotated[mt.CallToolResult, Deleted] | mt.InputRequiredResult:
        """Delete a group; its contacts stay in the address book. Always asks first."""
        group, _ = await load(group_id)
        await backend.writable_book("group_id", group.book)
        count = len(group.members) + len(group.unresolved)
        dialog = dialogs.delete_group_dialog(group.book, count)
        etag = group.entry.data.etag if group.entry else None
        target = {"groups": frozenset({group.id}), "etag": etag, "members": frozenset(group.members)}
        decision = await gate.check(ctx, tool="delete_group", target=target, dialog=dialog, confirm_token=confirm_token)
        if isinstance(decision, NotApproved):
            return decision.result
        if group.entry is None:
            await relabel([(h, group.name, None) for h in group.members])
        else:
            if not await backend.client().delete(group.id, etag):
                return structured(Deleted(deleted=[], already_gone=[group.id]))
        return structured(Deleted(deleted=[group.id]))

    _ = (list_groups, get_group, create_group, update_group, delete_group)
