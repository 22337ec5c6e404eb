"""approval-core's test helpers for its HTTP app: the settings of a test server, and the app served in-loop.

A helper module of this package's tests, named with the package's ``core_`` prefix so that it cannot
collide with another package's helper when several packages' tests run in one process
(``tests/test_test_modules.py``).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import anyio
import uvicorn
from pydantic import BaseModel, Field

from approval_core.serving.remote import HttpSettings

HTTP = {"MCP_TRANSPORT": "streamable-http"}


def settings(**env: str) -> HttpSettings:
    """HTTP settings as a server reads them from ``env``, with Streamable HTTP chosen."""
    return HttpSettings.from_env({**HTTP, **env})


@contextlib.asynccontextmanager
async def running(server: uvicorn.Server, port: int) -> AsyncIterator[str]:
    """``server`` served in this event loop until the block ends; yields its MCP endpoint on 127.0.0.1."""
    async with anyio.create_task_group() as group:
        group.start_soon(server.serve)
        while not server.started:  # noqa: ASYNC110 - uvicorn sets a flag, it has no event to wait on
            await anyio.sleep(0.02)
        try:
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            server.should_exit = True


class Found(BaseModel):
    """A tool's result model, importable by name as a schemas file names it (test_tool_schemas)."""

    name: str = Field(description="The name found.")
    count: int = 0


class Shorter(BaseModel):
    """``Found`` without its count: a result model changed since a schemas file was written."""

    name: str
