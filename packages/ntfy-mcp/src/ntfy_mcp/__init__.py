"""ntfy-mcp: an MCP server for push notifications on an ntfy server, asking a person before anything irreversible."""

import gc

_collecting = gc.isenabled()
gc.disable()  # the SDK and this server load faster without the cyclic collector: approval_core.collector_paused
try:
    from ntfy_mcp.server import SERVER_NAME, build_server, main
finally:
    if _collecting:
        gc.enable()

__all__ = ["SERVER_NAME", "build_server", "main"]
