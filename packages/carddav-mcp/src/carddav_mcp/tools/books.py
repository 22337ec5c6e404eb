"""Tools about the server and its address books: list_address_books, get_server_info."""

from __future__ import annotations

from typing import Annotated, Any

import mcp_types as mt
from mcp.server.mcpserver import MCPServer

from approval_core import ApprovalGate, annotations, structured
from carddav_mcp.backend import Backend
from carddav_mcp.book_models import AddressBook, AddressBooks, DiscoveryOut, ServerInfo
from carddav_mcp.davxml import norm_href

__all__ = ["register"]

READ = annotations(read_only=True, destructive=False, idempotent=True, open_world=False)


def register(server: MCPServer[Any], backend: Backend, gate: ApprovalGate) -> None:
    """Add the tools of this module to ``server``."""

    @server.tool(annotations=READ)
    async def list_address_books() -> Annotated[mt.CallToolResult, AddressBooks]:
        """List the address books this server may use, with their ids (paths) and whether they are writable."""
        books = await backend.books()
        return structured(
            AddressBooks(
                address_books=[
                    AddressBook(id=b.path, display_name=b.display_name, description=b.description, writable=b.writable)
                    for b in books
                ],
                limited_by_configuration=bool(backend.settings.addressbooks),
            )
        )

    @server.tool(annotations=READ)
    async def get_server_info() -> Annotated[mt.CallToolResult, ServerInfo]:
        """Describe the CardDAV server: its DAV classes (OPTIONS), how the address books were found (RFC 6764), sync."""
        client = backend.client()
        found = await client.discover(refresh=True)
        classes = await client.options(found.principal or found.home or norm_href(client.base_url))
        books = await backend.books()
        return structured(
            ServerInfo(
                url=client.base_url,
                principal=found.principal,
                discovery=DiscoveryOut(**DiscoveryOut.shared(found), home=found.home),
                dav_classes=sorted(classes),
                supports_sync_collection=bool(books) and await client.supports_sync(books[0].path),
                allowed_address_books=sorted(backend.settings.addressbooks),
            )
        )
