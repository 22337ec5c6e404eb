"""ntfy-mcp: an MCP server for push notifications on an ntfy server, asking a person before anything irreversible."""

from ntfy_mcp.server import SERVER_NAME, build_server, main

__all__ = ["SERVER_NAME", "build_server", "main"]
