"""caldav-mcp: an MCP server for CalDAV calendars, tasks and journals that asks a person first."""

from caldav_mcp.server import SERVER_NAME, build_server, main

__all__ = ["SERVER_NAME", "build_server", "main"]
