"""Which pending approval a ``tools/call`` ended up waiting for, told to whoever runs the call.

The approval page's path (:mod:`approval_core.page.path`) ends a call that must wait for the person with a
refusal carrying the page's link and code. A layer around ``tools/call`` that turns such a wait into an MCP
task (:mod:`approval_core.serving.tasks`) needs the pending approval's id, which the refusal gives only
inside a URL. It opens a :func:`watching` scope around the call; the page's path notes the id in it with
:func:`note_waiting`. Outside a scope, :func:`note_waiting` does nothing.

The holder is a mutable object in a :class:`contextvars.ContextVar`, so a note made in a task the SDK
spawned for the call (which runs in a copy of the context) still reaches the scope that opened it.
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

__all__ = ["Waiting", "note_waiting", "watching"]


@dataclass(slots=True)
class Waiting:
    """What one call waits for.

    Attributes:
        pending_id: The id of the pending approval the call's refusal sends the person to, or None.
    """

    pending_id: str | None = None


_CURRENT: ContextVar[Waiting | None] = ContextVar("approval_core_waiting", default=None)


@contextmanager
def watching() -> Generator[Waiting]:
    """A scope in which :func:`note_waiting` records what the call waits for (nestable; the inner one wins)."""
    waiting = Waiting()
    token = _CURRENT.set(waiting)
    try:
        yield waiting
    finally:
        _CURRENT.reset(token)


def note_waiting(pending_id: str) -> None:
    """Record that the running call waits for the pending approval ``pending_id`` (no-op outside a scope)."""
    waiting = _CURRENT.get()
    if waiting is not None:
        waiting.pending_id = pending_id
