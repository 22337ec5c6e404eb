"""A small server built on approval-core, used by the tests in-process and over stdio.

It keeps a set of items in memory so a test can see whether a guarded call
changed anything. Run it as a script to serve over stdio.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import mcp_types as mt
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

from approval_core import (
    ApprovalGate,
    ApprovalSettings,
    CallerValue,
    Collection,
    Dialog,
    Guard,
    GuardTable,
    Mismatch,
    NotApproved,
    StoredEntry,
    StoredField,
    StoredView,
    annotations,
    install_error_boundary,
    load_settings_or_exit,
    operation,
    serve,
    structured,
)

NAME = "example-mcp"

GUARDS = GuardTable(
    {
        "list_items": Guard.never(),
        "delete_items": Guard.always(),
        "grant": Guard.always(),
        "update_item": Guard.when(lambda call: call.arguments.get("scope") == "all", "only when changing every item"),
    },
    mismatches=[Mismatch("grant", "guarded-not-destructive", "it changes who may reach the items")],
    unversioned={"grant": "a grant adds a (user, topic) pair; nothing is read before asking, so there is no version"},
)


class Items(BaseModel):
    items: list[str]


class Grant(BaseModel):
    granted: list[str]


class Example:
    """The server and its observable state."""

    def __init__(self, settings: ApprovalSettings | None = None, *, strict: bool = False, **gate: Any) -> None:
        self.items: set[str] = {"a", "b", "c"}
        self.grants: list[tuple[str, str]] = []
        self.updates = 0
        self.version = 1  # bumped by every change, as an ETag would be
        self.titles: dict[str, str] = {}  # item -> title "as stored" (written by someone else); shown on the page only
        self.server: MCPServer[Any] = MCPServer(NAME)
        settings = settings or ApprovalSettings()
        self.gate = ApprovalGate.attach(self.server, GUARDS, settings, strict=strict, **gate)
        install_error_boundary(self.server, ())
        self._register()

    def _register(self) -> None:
        server, gate = self.server, self.gate

        @server.tool(annotations=annotations(read_only=True, destructive=False, idempotent=True, open_world=False))
        async def list_items() -> Annotated[mt.CallToolResult, Items]:
            """List the items."""
            return structured(Items(items=sorted(self.items)))

        @server.tool(annotations=annotations(read_only=False, destructive=True, idempotent=True, open_world=False))
        async def delete_items(
            book: str, ids: list[str], ctx: Context, confirm_token: str | None = None
        ) -> Annotated[mt.CallToolResult, Items] | mt.InputRequiredResult:
            """Delete items from a book."""
            missing = sorted(set(ids) - self.items)
            if missing:
                raise ToolError(f"ids: no such item(s) {missing}")
            dialog = Dialog(
                operation("delete {count} item(s)", count=len(set(ids))),
                "Items are not kept anywhere else, so they cannot be restored.",
                [CallerValue("Book", book)],
            )
            decision = await gate.check(
                ctx,
                tool="delete_items",
                target={"book": book, "ids": set(ids)},
                dialog=dialog,
                version=str(self.version),
                confirm_token=confirm_token,
                stored=self._stored(sorted(set(ids))) if self.titles else None,
            )
            if isinstance(decision, NotApproved):
                return decision.result
            self.items -= set(ids)
            self.version += 1
            return structured(Items(items=sorted(self.items)))

        @server.tool(annotations=annotations(read_only=False, destructive=False, idempotent=True, open_world=False))
        async def grant(
            username: str, topic: str, password: str, ctx: Context, confirm_token: str | None = None
        ) -> Annotated[mt.CallToolResult, Grant] | mt.InputRequiredResult:
            """Grant a user a topic (positional binding; the password is not bound)."""
            dialog = Dialog(
                operation("grant a user access to a topic"),
                "Access takes effect at once.",
                [CallerValue("User", username), CallerValue("Topic", topic)],
            )
            decision = await gate.check(
                ctx,
                tool="grant",
                target={"pair": (username, topic), "password": password},
                dialog=dialog,
                confirm_token=confirm_token,
                exclude=["password"],
            )
            if isinstance(decision, NotApproved):
                return decision.result
            self.grants.append((username, topic))
            return structured(Grant(granted=[username, topic]))

        @server.tool(annotations=annotations(read_only=False, destructive=True, idempotent=False, open_world=False))
        async def update_item(
            scope: str, ctx: Context, confirm_token: str | None = None
        ) -> Annotated[mt.CallToolResult, Items] | mt.InputRequiredResult:
            """Update one item, or all of them (only the latter asks)."""
            dialog = Dialog(operation("change all {count} items", count=len(self.items)), "No history is kept.")
            decision = await gate.check(
                ctx,
                tool="update_item",
                target={"scope": scope},
                dialog=dialog,
                arguments={"scope": scope},
                version=str(self.version),
                confirm_token=confirm_token,
            )
            if isinstance(decision, NotApproved):
                return decision.result
            self.updates += 1
            self.version += 1
            return structured(Items(items=sorted(self.items)))

    def _stored(self, ids: list[str]) -> StoredView:
        """The items as "stored": each with its title, in the book, at the version the approval binds."""
        book = Collection(path="/books/work/", name="Work")
        entries = [
            StoredEntry(
                kind="Item",
                collection=book,
                href=f"/books/work/{item}",
                etag=str(self.version),
                fields=(StoredField(label="Title", value=self.titles.get(item), name=True),),
            )
            for item in ids
        ]
        return StoredView(entries=tuple(entries))


def main() -> None:
    settings = load_settings_or_exit(NAME)
    serve(Example(settings).server, NAME)


if __name__ == "__main__":
    sys.exit(main())
