"""carddav-mcp: an MCP server for address books on a CardDAV server, asking a person before anything irreversible."""

import gc

_collecting = gc.isenabled()
gc.disable()  # the SDK and this server load faster without the cyclic collector: approval_core.collector_paused
try:
    from carddav_mcp.server import SERVER_NAME, build_server, main

    if _collecting and not gc.get_freeze_count():  # what the import made lives as long as the process:
        gc.freeze()  # moved, without a pass over it, from the youngest generation (which the resumed collector
        gc.unfreeze()  # would walk at once) into the oldest one; nothing is left frozen
finally:
    if _collecting:
        gc.enable()

__all__ = ["SERVER_NAME", "build_server", "main"]
