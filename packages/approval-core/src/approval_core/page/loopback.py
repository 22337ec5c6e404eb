"""Serving the approval page on a loopback listener: beside a stdio server, for the pairing command, in tests.

The page is addressed as ``http://localhost:<port>`` (browsers treat
``localhost`` as a secure context, so WebAuthn works without TLS, and its rp
id ``localhost`` is a domain, which an IP address cannot be). A browser may
reach ``localhost`` on either loopback: Chromium tries ``[::1]`` first. So the
listener holds the port on both, ``127.0.0.1`` and ``::1``; if another
program holds it on either, the page refuses to start rather than share the
name ``localhost`` with it (that program could serve a look-alike page, relay
the person's passkey to a change they did not see, or read a pairing code).
A machine without an IPv6 loopback (``::1`` cannot be bound: no such
address, or no IPv6) has nothing there to take the port; the page then
listens on ``127.0.0.1`` alone and says so on stderr.

Requests under any other Host name are refused by the page itself
(:mod:`approval_core.page.approval_page`).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import socket
from collections.abc import AsyncGenerator, Callable
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer

from approval_core.console import say
from approval_core.page.approval_page import PREFIX, ApprovalPage

__all__ = [
    "LOOPBACK_HOST",
    "LOOPBACK_HOSTS",
    "LoopbackTaken",
    "bind_loopbacks",
    "running_page",
    "serve_stdio_with_page",
]

LOOPBACK_HOST = "127.0.0.1"
LOOPBACK_HOSTS = ("127.0.0.1", "::1")
"""The two addresses a browser may reach for ``localhost``; the page holds its port on both."""
FREE_PORT_TRIES = 64
"""How many free ports of ``::1`` are tried for one free on ``127.0.0.1`` too, when the port is chosen (0)."""
_NO_ADDRESS = frozenset({errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT})

_logger = logging.getLogger("approval_core.page")

SocketFactory = Callable[[int], socket.socket]


class LoopbackTaken(OSError):
    """The page's port cannot be held on both loopbacks (another program listens there, or binding is refused)."""


def _socket(family: int) -> socket.socket:
    return socket.socket(family, socket.SOCK_STREAM)


def _listen(make: SocketFactory, host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = make(family)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart may reuse a port in TIME_WAIT
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind((host, port))
        sock.listen(64)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


def _taken(host: str, port: int, exc: OSError) -> LoopbackTaken:
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if exc.errno == errno.EADDRINUSE:
        why = (
            "another program listens there; it would answer for http://localhost too and could pose as the "
            "approval page. Stop that program or choose another port"
        )
    else:
        why = exc.strerror or str(exc)
    return LoopbackTaken(exc.errno or 0, f"the approval page cannot listen on {where}: {why}")


def bind_loopbacks(port: int, make: SocketFactory = _socket) -> list[socket.socket]:
    """Listening sockets on ``127.0.0.1`` and ``::1`` at one port (``port``, or with 0 one free on both).

    ``::1`` is left out only where this machine cannot have it (binding it
    fails with ``EADDRNOTAVAIL`` or ``EAFNOSUPPORT``); a warning says so.
    ``make`` builds a socket for an address family (tests).

    Raises:
        LoopbackTaken: ``port`` is in use on either address, or cannot be bound there; with 0,
            no port free on both was found in :data:`FREE_PORT_TRIES` tries.
    """
    for _ in range(FREE_PORT_TRIES if port == 0 else 1):
        try:
            six: socket.socket | None = _listen(make, "::1", port)
        except OSError as exc:
            if exc.errno not in _NO_ADDRESS:
                raise _taken("::1", port, exc) from None
            _logger.warning("this machine has no IPv6 loopback (::1): the approval page listens on 127.0.0.1 only")
            six = None
        chosen = six.getsockname()[1] if six is not None else port
        try:
            four = _listen(make, LOOPBACK_HOST, chosen)
        except OSError as exc:
            if six is not None:
                six.close()
            if port == 0 and six is not None and exc.errno == errno.EADDRINUSE:
                continue  # free on ::1 only: try another
            raise _taken(LOOPBACK_HOST, chosen, exc) from None
        return [four] if six is None else [four, six]
    raise LoopbackTaken(
        errno.EADDRINUSE, f"the approval page found no port free on both loopbacks in {FREE_PORT_TRIES} tries"
    )


@contextlib.asynccontextmanager
async def running_page(page: ApprovalPage, port: int = 0) -> AsyncGenerator[str]:
    """Serve ``page`` on ``127.0.0.1`` and ``[::1]`` at ``port`` (0: one free on both); yield its base URL.

    The page is bound to the origin ``http://localhost:<port>`` while it runs;
    the yielded URL is ``http://localhost:<port>/approval``.

    Raises:
        LoopbackTaken: the port is taken on either loopback (see :func:`bind_loopbacks`); nothing is served.
    """
    import uvicorn

    sockets = bind_loopbacks(port)
    bound = sockets[0].getsockname()[1]
    try:
        page.bind(f"http://localhost:{bound}")
        config = uvicorn.Config(
            page.app(), log_level="warning", proxy_headers=False, server_header=False, lifespan="off", access_log=False
        )
        http = uvicorn.Server(config)
        async with anyio.create_task_group() as group:
            group.start_soon(http.serve, sockets)
            try:
                while not http.started:  # noqa: ASYNC110 - uvicorn signals its start only by this flag
                    await anyio.sleep(0.01)
                yield f"http://localhost:{bound}{PREFIX}"
            finally:
                http.should_exit = True
    finally:
        for sock in sockets:
            sock.close()


async def serve_stdio_with_page(server: MCPServer[Any], server_name: str, page: ApprovalPage, port: int) -> None:
    """Serve ``server`` over stdio and its approval page on a loopback port, in one event loop, until stdin closes.

    Writes one line on stderr naming the page's URL and whether a passkey is paired, and announces
    passkeys that approve nothing and a new first passkey (:meth:`ApprovalPage.announce_passkeys`).

    Raises:
        LoopbackTaken: the page's port is taken on either loopback; nothing was served.
    """
    async with running_page(page, port):
        say(server_name, page.status_line())
        await page.announce_passkeys()
        await server.run_stdio_async()
