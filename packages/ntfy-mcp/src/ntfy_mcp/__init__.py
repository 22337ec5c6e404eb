"""ntfy-mcp: an MCP server for push notifications on an ntfy server, asking a person before anything irreversible."""

import gc

_collecting = gc.isenabled()
gc.disable()  # the SDK and this server load faster without the cyclic collector: approval_core.collector_paused
try:
    from ntfy_mcp.server import SERVER_NAME, build_server, main

    if _collecting and not gc.get_freeze_count():  # what the import made lives as long as the process:
        gc.freeze()  # moved, without a pass over it, from the youngest generation (which the resumed collector
        gc.unfreeze()  # would walk at once) into the oldest one; nothing is left frozen
finally:
    if _collecting:
        gc.enable()

__all__ = ["SERVER_NAME", "build_server", "main"]
