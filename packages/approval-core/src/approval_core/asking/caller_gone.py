"""Whether the request that is waiting for a pushed dialog is still there (protocol 2025-11-25).

A pushed dialog (``elicitation/create`` sent inside a ``tools/call``) holds
the call open while the person reads. The caller can go away meanwhile, in
one of three ways, and an answer arriving after that must act on nothing,
since nobody would be told what it did:

- it cancels the call (``notifications/cancelled``, MCP 2025-11-25 basic
  utilities, Cancellation): every dispatcher the SDK (``mcp`` 2.x) builds
  applies it as ``"interrupt"`` and cancels the tool's scope, the pending
  ``elicitation/create`` with it (the client is sent its own
  ``notifications/cancelled``); the gate lets that cancellation through;
- its session or stdio pipe closes: the SDK cancels every handler of the
  session, the same way;
- over Streamable HTTP, the connection carrying the call's response (the
  POST's SSE stream) closes. The SDK keeps the handler running then (the
  spec does not count a dropped stream as a cancellation), so a late answer
  sent on another POST would still resume it. :class:`CallerWatch` is how
  the gate notices this one: it listens on the POST's ASGI ``receive`` for
  ``http.disconnect``.

Over stdio and in process there is no HTTP request: the watch then never
fires, and the first two ways are the SDK's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, cast

import anyio
from mcp.server.mcpserver import Context

__all__ = ["CallerWatch"]

Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
"""An ASGI ``receive`` callable (ASGI 3.0 HTTP connection scope)."""


def _receive_of(ctx: Context[Any, Any]) -> Receive | None:
    """The ASGI ``receive`` of the HTTP request that carries this call, or None (stdio, in process)."""
    try:
        request = ctx.request_context.request
    except (AttributeError, ValueError):  # no request behind it (a context outside a call, a test double)
        return None
    receive: object = getattr(request, "receive", None)
    return cast("Receive", receive) if callable(receive) else None


class CallerWatch:
    """Watches, while a pushed dialog is open, for the caller's HTTP request to close.

    Use::

        watch = CallerWatch(ctx)
        async with anyio.create_task_group() as tg:
            tg.start_soon(watch.until_gone, tg.cancel_scope)
            ...await the answer...
            tg.cancel_scope.cancel()
        if watch.gone or await watch.gone_now(): ...abandon...

    Attributes:
        gone: True once ``http.disconnect`` was received for the request.
    """

    def __init__(self, ctx: Context[Any, Any]) -> None:
        self._receive = _receive_of(ctx)
        self.gone = False

    async def until_gone(self, scope: anyio.CancelScope) -> None:
        """Wait until the request's connection closes, then cancel ``scope``; never returns without HTTP."""
        if self._receive is None:
            await anyio.sleep_forever()
            return
        while True:
            try:
                message = await self._receive()
            except Exception:  # a receive that fails has lost its client (Starlette's ClientDisconnect)
                message = {"type": "http.disconnect"}
            if message.get("type") == "http.disconnect":
                self.gone = True
                scope.cancel()
                return

    async def gone_now(self) -> bool:
        """Whether the connection is already known to be closed, without waiting (checked after an answer).

        The same test as Starlette's ``Request.is_disconnected``: a ``receive``
        in an already cancelled scope returns only a message that is ready.
        """
        if self.gone or self._receive is None:
            return self.gone
        message: MutableMapping[str, Any] = {}
        with anyio.CancelScope() as scope:
            scope.cancel()
            message = await self._receive()
        self.gone = message.get("type") == "http.disconnect"
        return self.gone
