"""Cancel a tool call while a recording proxy holds its first backend request, and see what goes out after.

The proxy's rule calls :meth:`Hold.rule` for each request; the first request of the chosen method is held
(the rule blocks) until the test releases it. :func:`cancel_while_held` starts the call, waits until that
request is held, cancels the call, and makes sure the server has acted on the cancellation before letting
the request go: the client sends ``notifications/cancelled`` from a task of its own, so it is let out first,
and the server acts on messages in the order they arrive, so once a ``tools/list`` sent after it is
answered, the cancellation was acted on (MCP 2025-11-25 §Cancellation). Nothing then depends on how fast a
loaded machine delivers the cancellation.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

__all__ = ["Hold", "cancel_while_held"]


@dataclass
class Hold:
    """Holds the first request of ``method`` until released (a proxy thread waits on it)."""

    method: str = "REPORT"
    reached: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)

    def rule(self, method: str, *_: Any) -> str:
        """A proxy rule: block the request of ``method`` (at most 30 s) until released; pass everything."""
        if method == self.method and not self.released.is_set():
            self.reached.set()
            self.released.wait(30)
        return "pass"


async def cancel_while_held(
    client: Any, tool: str, arguments: dict[str, Any], hold: Hold, recorded: Callable[[], int]
) -> tuple[int, int]:
    """Call ``tool``, cancel it while ``hold`` holds its request, release it, and wait a second after it is recorded.

    Returns:
        How many requests the proxy had recorded when the held one was released, and a second later
        (the held one is recorded once released: it was sent before the cancellation).
    """
    async with anyio.create_task_group() as calls:
        calls.start_soon(client.call_tool, tool, arguments)
        with anyio.fail_after(60):
            while not hold.reached.is_set():  # noqa: ASYNC110 - a thread's event, not an anyio one
                await anyio.sleep(0.05)
        calls.cancel_scope.cancel()
    await anyio.sleep(0.1)
    await client.list_tools()
    before = recorded()
    hold.released.set()
    with anyio.fail_after(30):  # the held request is recorded once the proxy has passed it on
        while recorded() == before:  # noqa: ASYNC110 - a proxy thread appends to the record
            await anyio.sleep(0.05)
    await anyio.sleep(1.0)  # long enough for the next request to be sent, had the work gone on
    return before, recorded()
