"""carddav-mcp: an MCP server for address books on a CardDAV server, asking a person before anything irreversible."""

import gc

_collecting = gc.isenabled()
gc.disable()  # the SDK and this server load faster without the cyclic collector: approval_core.collector_paused
try:
    from carddav_mcp.server import SERVER_NAME, build_server, main
finally:
    if _collecting:
        gc.enable()

__all__ = ["SERVER_NAME", "build_server", "main"]
