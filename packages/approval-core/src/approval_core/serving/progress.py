"""Progress of a long tool call, sent as MCP ``notifications/progress`` (MCP 2025-11-25 §Progress).

The family's error boundary (:func:`approval_core.install_error_boundary`)
keeps the running call's context in a context variable, so a server's
lower layers (a batch of an addressbook-multiget, one card of a rename) can
say how far the call has come with :func:`report_progress`, without passing
the context down. The SDK sends a notification only when the caller's request
carried a ``progressToken``; otherwise a report costs nothing.

Counts are real (entries read, cards changed), with a total where one is
known; messages are the server's own words, never text read from the backend.
"""

from __future__ import annotations

from contextvars import ContextVar, Token
from typing import Any

from mcp.server.mcpserver import Context

__all__ = ["bind_call", "report_progress", "unbind_call"]

_CALL: ContextVar[Context[Any, Any] | None] = ContextVar("approval_core_progress_call", default=None)


def bind_call(context: Context[Any, Any] | None) -> Token[Context[Any, Any] | None]:
    """Make ``context`` the running call's, for :func:`report_progress` (the error boundary does this)."""
    return _CALL.set(context)


def unbind_call(token: Token[Context[Any, Any] | None]) -> None:
    """Undo :func:`bind_call`."""
    _CALL.reset(token)


async def report_progress(done: int, total: int | None = None, message: str | None = None) -> None:
    """Tell the caller how far the running tool call has come; a no-op outside a call or without a token.

    Args:
        done: What is done so far, counted (entries read, cards changed); it only grows within a call.
        total: The whole count when known, else None.
        message: What is being counted, in the server's words (``"cards read"``).
    """
    context = _CALL.get()
    if context is not None:
        await context.report_progress(done, total, message)
