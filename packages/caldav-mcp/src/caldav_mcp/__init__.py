"""caldav-mcp: an MCP server for calendars, tasks and journals on a CalDAV server, asking a person before anything irreversible."""

from caldav_mcp.server import SERVER_NAME, build_server, main

__all__ = ["SERVER_NAME", "build_server", "main"]
