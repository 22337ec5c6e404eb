"""Running a family server over Streamable HTTP as its own process on 127.0.0.1, and clients for it.

``served_over_http("caldav-mcp", env, workdir)`` starts ``python -m caldav_mcp``
with ``MCP_TRANSPORT=streamable-http`` on a free port (plus ``env``) and
yields a :class:`HttpServer` once the port answers; ``bearer_transport(url,
token)`` is the SDK's Streamable HTTP client transport with an
``Authorization: Bearer`` header, for ``approval_core.testing.connect`` or
``mcp.client.Client``.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
from mcp.client.streamable_http import streamable_http_client
from processes import answers_http, free_port, started

__all__ = ["HttpServer", "ServerDidNotStart", "bearer_transport", "served_over_http"]

STARTUP_SECONDS = 60.0


class ServerDidNotStart(RuntimeError):
    """The MCP server process exited or did not answer in time; the message carries its output."""


@dataclass
class HttpServer:
    """A family server serving Streamable HTTP.

    Attributes:
        url: The MCP endpoint, ``http://127.0.0.1:<port>/mcp`` (also its ``MCP_PUBLIC_URL`` unless ``env`` set one).
        port: The TCP port.
        process: The server process.
        log: Its stdout and stderr.
    """

    url: str
    port: int
    process: subprocess.Popen[bytes]
    log: Path


@contextlib.contextmanager
def served_over_http(
    server: str, env: Mapping[str, str], workdir: Path, *, port: int | None = None
) -> Iterator[HttpServer]:
    """Run family server ``server`` (e.g. ``caldav-mcp``) over Streamable HTTP until the block ends.

    Args:
        server: The package name; started as ``python -m <module>``.
        env: Settings added to a copy of this process's environment (``MCP_*``, the backend's, ...).
        workdir: Where its log (``<server>.log``) goes.
        port: The port (default: a free one).

    Raises:
        ServerDidNotStart: with the server's output, when it exits or does not answer within 60 s.
    """
    port = port or free_port()
    full = {**os.environ, "MCP_TRANSPORT": "streamable-http", "MCP_PORT": str(port), **env}
    log = workdir / f"{server}.log"
    argv = [sys.executable, "-m", server.replace("-", "_")]
    with started(
        argv,
        name=server,
        port=port,
        workdir=workdir,
        log=log,
        ready=lambda: answers_http(port, "GET", "/.well-known/oauth-protected-resource/mcp"),
        error=ServerDidNotStart,
        seconds=STARTUP_SECONDS,
        env=full,
    ) as process:
        yield HttpServer(f"http://127.0.0.1:{port}/mcp", port, process, log)


def bearer_transport(url: str, token: str | None, **headers: str) -> Any:
    """The SDK's Streamable HTTP client transport for ``url``, sending ``Authorization: Bearer <token>``.

    Extra ``headers`` (e.g. ``Origin``) go with every request. The underlying
    ``httpx2.AsyncClient`` is closed with the transport.
    """

    @contextlib.asynccontextmanager
    async def transport() -> Any:
        sent = dict(headers)
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        async with (
            httpx2.AsyncClient(headers=sent, timeout=httpx2.Timeout(60.0)) as client,
            streamable_http_client(url, http_client=client) as streams,
        ):
            yield streams

    return transport()
