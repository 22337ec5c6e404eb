"""Group tools: list_groups, get_group, create_group (never ask); update_group, delete_group (always ask).

Groups come in three conventions (see :mod:`carddav_mcp.groups`). For a
CATEGORIES group the writes land on the member cards themselves (the label
is added or removed), each with its own If-Match. Every card a guarded group
change writes or deletes is kept in the undo journal just before
(:mod:`carddav_mcp.tools.undo`), so restore_card puts each back.

update_group and delete_group bind the version their dialog was built from (the group card's ETag, or for a
CATEGORIES group a digest of the ETags of every card it touches), the member set and the dialog's counts, and
hand the approval page the group as stored (:mod:`carddav_mcp.stored`). After a pushed dialog the group is read
again and must still be as described. A CATEGORIES change checks every touched card's ETag first, writes each
with If-Match, and on a failure part-way names the cards changed and not (:func:`carddav_mcp.writes.write_each`).
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any, Literal

import mcp_types as mt
from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from approval_core import ApprovalGate, Approved, NotApproved, annotations, stable, structured
from carddav_mcp import dialogs, stored
from carddav_mcp import writes as cards
from carddav_mcp.backend import Backend, Entry
from carddav_mcp.client import CardData
from carddav_mcp.errors import Conflict, InvalidInput, NotAllowed, NotFound, PreconditionFailed
from carddav_mcp.group_plans import GroupPlan, Relabel, with_label
from carddav_mcp.groups import (
    GroupView,
    book_version,
    category_group_id,
    collect_groups,
    convention_for_new,
    member_ref,
    split_category_id,
)
from carddav_mcp.models import UID_DESCRIPTION, UID_PATTERN, CreatedGroup, Deleted, Group, GroupList, GroupSummary
from carddav_mcp.tools import undo
from carddav_mcp.tools.reading import BookArg
from carddav_mcp.vcard import Card, escape_text, make_line
from carddav_mcp.writes import Write, create_card, existing_card, still_as_asked, unchanged, version_of, write_each

__all__ = ["register"]

READ = annotations(read_only=True, destructive=False, idempotent=True, open_world=False)
GroupArg = Annotated[str, Field(min_length=1, max_length=1200, description="group id from list_groups")]
MemberIds = list[Annotated[str, Field(max_length=1000)]]
Token = Annotated[str | None, Field(max_length=200, description="only when a previous call returned one")]
NameArg = Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[^\r\n]+$", description="group name")]
UidArg = Annotated[
    str | None,
    Field(
        max_length=200,
        pattern=UID_PATTERN,
        description=f"{UID_DESCRIPTION}. Not for a book that keeps groups as CATEGORIES labels (they have no card)",
    ),
]
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
                    if cards.moved_since_listed(group.entry.data, fresh.data):
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

    async def relabel(what: str, book: str, cards: Sequence[Relabel], decision: Approved | None = None) -> None:
        """Write CATEGORIES changes, each card with If-Match on the ETag it was read with, all checked first.

        After a yes (``decision``), each card is kept in the undo journal just before its write
        (``overwritten``), as a GET answers it; create_group, which never asks, keeps nothing.
        """
        await unchanged(backend, what, book, {entry.data.href: entry.data.etag for entry, _, _ in cards})
        client = backend.client()

        def write(entry: Entry, remove: str | None, add: str | None) -> Write:
            href = entry.data.href

            async def run() -> None:
                body = with_label(entry.card, remove, add).serialize()
                if decision is None or gate.journal is None:
                    await client.put(href, body, etag=entry.data.etag)
                    return
                as_sent = (await backend.fresh("members", href)).data  # a listing's REPORT turned CRLF into LF
                kept_card = as_sent if as_sent.etag == entry.data.etag else entry.data
                async with undo.keeping(gate, decision, what, "overwritten", kept_card, client=client) as kept:
                    kept.left(await client.put(href, body, etag=entry.data.etag))

            async def landed() -> bool:
                labels = {v for p in (await backend.fresh("members", href)).card.all("CATEGORIES") for v in p.values()}
                return (add is None or add in labels) and (remove is None or remove == add or remove not in labels)

            return Write(href, run, landed)

        await write_each(what, [write(*card) for card in sorted(cards, key=lambda c: c[0].data.href)])

    async def act(tool: str, plan: GroupPlan, again: Callable[[], Awaitable[GroupPlan]], decision: Approved) -> bool:
        """After approval: re-check a pushed dialog's target, then write what the plan says.

        Returns:
            False when a group card to delete was already gone (404), else True.
        """
        if decision.path == "dialog":
            still_as_asked(tool, plan.target, (await again()).target)
        if plan.card is None:
            await relabel(tool, plan.group.book, plan.relabels, decision)
            return True
        [before] = plan.before
        return await group_card_write(tool, plan.card, before, decision)

    async def group_card_write(tool: str, card: Card, before: CardData, decision: Approved) -> bool:
        """DELETE or PUT the one group card (``before``: as read, kept in the undo journal first).

        After a lost reply, read back and say whether it changed.

        Returns:
            False when a group card to delete was already gone (404), else True.
        """
        client = backend.client()
        found: list[bool] = []
        href, etag = before.href, before.etag

        async def run() -> None:
            kind = "deleted" if tool == "delete_group" else "overwritten"
            async with undo.keeping(gate, decision, tool, kind, before, client=client) as kept:
                if tool == "delete_group":
                    found.append(await client.delete(href, etag))
                else:
                    kept.left(await client.put(href, card.serialize(), etag=etag))

        async def landed() -> bool:
            try:
                now = await client.get(href)
            except NotFound:
                return tool == "delete_group"
            return tool != "delete_group" and now.etag != etag

        await write_each(tool, [Write(href, run, landed)])
        return all(found)

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
        uid: UidArg = None,
    ) -> Annotated[mt.CallToolResult, CreatedGroup]:
        """Create a group, in the convention the address book already uses (a CATEGORIES group needs members).

        Give a uid (group cards only) to make a retry safe: a group card with that UID already in the book
        is answered already_exists. If the server's reply is lost, the tool reads the card back and says
        whether it was created.
        """
        book = (await backend.writable_book("address_book", address_book)).path
        entries = await backend.entries(book)
        convention = convention_for_new(entries)
        if uid is not None:
            if convention == "categories":
                raise InvalidInput("uid", "this address book keeps groups as CATEGORIES labels, which have no card "
                                   "and so no UID; leave uid out")  # fmt: skip
            found = await existing_card(backend, book, f"{book}{uid}.vcf", uid)
            if found is not None:
                return await created(found.href, found.text, "already_exists")
        chosen = members_of("members", members or [], book, entries)
        if any(g.name == name for g in collect_groups(book, entries)):
            raise Conflict("name: the address book already has a group with this name; use update_group.")
        if convention == "categories":
            if not chosen:
                raise InvalidInput("members", "this address book keeps groups as CATEGORIES labels, so a group needs "
                                   "at least one member")  # fmt: skip
            await relabel("create_group", book, [(chosen[href], None, name) for href in sorted(chosen)])
            group, _ = await load(category_group_id(book, name))
            return structured(CreatedGroup(**_as_model(group).model_dump(), outcome="created"))
        uid = uid or stable("uid", lambda: str(uuid.uuid4()))  # the same on an input_required retry
        refs = [make_line(_MEMBER_NAMES[convention], member_ref(e.card.uid or "")) for e in chosen.values()]
        if convention == "kind":
            head = ["VERSION:4.0", "KIND:group"]
        else:
            version = "3.0" if book_version(entries) != "4.0" else "4.0"
            head = [f"VERSION:{version}", f"N:{escape_text(name)};;;;", "X-ADDRESSBOOKSERVER-KIND:group"]
        lines = [*head, make_line("UID", escape_text(uid)), make_line("FN", escape_text(name)), *sorted(refs)]
        made = await create_card(backend, "create_group", book, uid, Card([]).replaced(set(), lines).serialize())
        return await created(made.card.href, made.card.text, made.outcome)

    async def created(href: str, text: str, outcome: Literal["created", "already_exists"]) -> mt.CallToolResult:
        try:
            is_group = Card.parse(text).is_group
        except ValueError:
            is_group = False
        if not is_group:
            raise Conflict(f"uid: the card {href} already has this UID and is not a group card; nothing was written. "
                           "Choose another uid.")  # fmt: skip
        group, _ = await load(href)
        return structured(CreatedGroup(**_as_model(group).model_dump(), outcome=outcome))

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

        chosen = dialogs.GroupChange(group_id, add, remove, members)

        async def prepare() -> GroupPlan:
            group, entries = await load(group_id)
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
                raise InvalidInput(
                    "remove", "a CATEGORIES group with no members would no longer exist; use delete_group"
                )
            renamed = name is not None and name != group.name
            before = set(group.members)
            counts = {"before": len(before) + len(group.unresolved), "added": len(result - before),
                      "removed": len(before - result), "after": len(result) + len(group.unresolved)}  # fmt: skip
            dialog = dialogs.update_group_dialog(group.book, chosen, **counts, renamed=renamed)
            target = {"group": group.id, "members": frozenset(result), "unresolved": frozenset(group.unresolved),
                      "name": name if renamed else None, "counts": counts}  # fmt: skip
            by_href = {e.data.href: e for e in entries}
            edits = stored.group_changes(group, result, by_href, name if renamed else None)
            if group.entry is None:
                new_label = name if renamed and name else group.name
                relabels: list[Relabel] = [(by_href[h], group.name, None) for h in sorted(before - result)]
                relabels += [(by_href[h], group.name, new_label) for h in sorted(result) if h not in before or renamed]
                etags = {entry.data.href: entry.data.etag for entry, _, _ in relabels}
                target["touched"] = frozenset(etags)
                return GroupPlan(group, dialog, target, etags, relabels=relabels, edits=edits)
            prop = _MEMBER_NAMES[group.convention]
            refs = sorted({member_ref(by_href[h].card.uid or "") for h in result} | set(group.unresolved))
            card = group.entry.card.replaced(
                {"MEMBER", "X-ADDRESSBOOKSERVER-MEMBER"}, [make_line(prop, r) for r in refs]
            )
            if renamed and name:
                card = card.replaced({"FN"}, [make_line("FN", escape_text(name))])
                if group.convention == "apple":
                    card = card.replaced({"N"}, [f"N:{escape_text(name)};;;;"])
            return GroupPlan(group, dialog, target, {group.id: group.entry.data.etag}, card=card, edits=edits)

        plan = await prepare()
        group = plan.group
        info = await backend.writable_book("group_id", group.book)
        decision = await undo.gate(gate, plan.before).check(
            ctx, tool="update_group", target=plan.target, dialog=plan.dialog,
            version=version_of("group_id", plan.etags), confirm_token=confirm_token,
            stored=stored.group(info, group, plan.edits),
        )  # fmt: skip
        if isinstance(decision, NotApproved):
            return decision.result
        await act("update_group", plan, prepare, decision)
        renamed_to = plan.target["name"]
        new_id = category_group_id(group.book, renamed_to) if group.entry is None and renamed_to else group.id
        updated, _ = await load(new_id)
        return structured(_as_model(updated))

    @server.tool(annotations=annotations(read_only=False, destructive=True, idempotent=True, open_world=False))
    async def delete_group(
        group_id: GroupArg, ctx: Context, confirm_token: Token = None
    ) -> Annotated[mt.CallToolResult, Deleted] | mt.InputRequiredResult:
        """Delete a group; its contacts stay in the address book. Always asks first."""

        async def prepare() -> GroupPlan:
            group, entries = await load(group_id)
            count = len(group.members) + len(group.unresolved)
            dialog = dialogs.delete_group_dialog(group.book, group_id, count)
            target = {"group": group.id, "members": frozenset(group.members), "counts": {"members": count}}
            if group.entry is None:
                by_href = {e.data.href: e for e in entries}
                relabels: list[Relabel] = [(by_href[h], group.name, None) for h in group.members]
                etags = {entry.data.href: entry.data.etag for entry, _, _ in relabels}
                return GroupPlan(group, dialog, target, etags, relabels=relabels)
            return GroupPlan(group, dialog, target, {group.id: group.entry.data.etag}, card=group.entry.card)

        plan = await prepare()
        info = await backend.writable_book("group_id", plan.group.book)
        version = version_of("group_id", plan.etags)
        decision = await undo.gate(gate, plan.before).check(
            ctx, tool="delete_group", target=plan.target, dialog=plan.dialog, version=version,
            confirm_token=confirm_token, stored=stored.group(info, plan.group),
        )  # fmt: skip
        if isinstance(decision, NotApproved):
            return decision.result
        if not await act("delete_group", plan, prepare, decision):
            return structured(Deleted(deleted=[], already_gone=[plan.group.id]))
        return structured(Deleted(deleted=[plan.group.id]))

    _ = (list_groups, get_group, create_group, update_group, delete_group)
