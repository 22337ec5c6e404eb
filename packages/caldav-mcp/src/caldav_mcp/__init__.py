"""caldav-mcp: an MCP server for CalDAV calendars, tasks and journals that asks a person first."""

import gc

_collecting = gc.isenabled()
gc.disable()  # the SDK and this server load faster without the cyclic collector: approval_core.collector_paused
try:
    from caldav_mcp.server import SERVER_NAME, build_server, main
finally:
    if _collecting:
        gc.enable()

__all__ = ["SERVER_NAME", "build_server", "main"]
