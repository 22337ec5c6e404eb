"""carddav-mcp: an MCP server for address books on a CardDAV server, asking a person before anything irreversible."""

from carddav_mcp.server import SERVER_NAME, build_server, main

__all__ = ["SERVER_NAME", "build_server", "main"]
