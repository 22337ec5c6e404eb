"""Serving the approval page on a loopback listener: beside a stdio server, for the pairing command, in tests.

The listener binds ``127.0.0.1`` only; the page is addressed as
``http://localhost:<port>`` (browsers treat ``localhost`` as a secure context,
so WebAuthn works without TLS, and its rp id ``localhost`` is a domain, which
an IP address cannot be). Requests under any other Host name are refused by
the page itself (:mod:`approval_core.page.approval_page`).
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncGenerator
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer

from approval_core.console import say
from approval_core.page.approval_page import PREFIX, ApprovalPage

__all__ = ["LOOPBACK_HOST", "running_page", "serve_stdio_with_page"]

LOOPBACK_HOST = "127.0.0.1"


def _bind(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((LOOPBACK_HOST, port))
    sock.listen(64)
    sock.setblocking(False)
    return sock


@contextlib.asynccontextmanager
async def running_page(page: ApprovalPage, port: int = 0) -> AsyncGenerator[str]:
    """Serve ``page`` on ``127.0.0.1:port`` (0: a free port) in the running event loop; yield its base URL.

    The page is bound to the origin ``http://localhost:<port>`` while it runs;
    the yielded URL is ``http://localhost:<port>/approval``.

    Raises:
        OSError: the port cannot be bound (in use, not allowed).
    """
    import uvicorn

    sock = _bind(port)
    bound = sock.getsockname()[1]
    page.bind(f"http://localhost:{bound}")
    config = uvicorn.Config(
        page.app(), log_level="warning", proxy_headers=False, server_header=False, lifespan="off", access_log=False
    )
    http = uvicorn.Server(config)
    async with anyio.create_task_group() as group:
        group.start_soon(http.serve, [sock])
        try:
            while not http.started:  # noqa: ASYNC110 - uvicorn signals its start only by this flag
                await anyio.sleep(0.01)
            yield f"http://localhost:{bound}{PREFIX}"
        finally:
            http.should_exit = True
    sock.close()


async def serve_stdio_with_page(server: MCPServer[Any], server_name: str, page: ApprovalPage, port: int) -> None:
    """Serve ``server`` over stdio and its approval page on a loopback port, in one event loop, until stdin closes.

    Writes one line on stderr naming the page's URL and whether a passkey is paired.
    """
    async with running_page(page, port):
        say(server_name, page.status_line())
        await server.run_stdio_async()
