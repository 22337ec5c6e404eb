"""One set of capabilities on both protocol revisions.

``Server.get_capabilities`` (mcp 2.x) derives the ``listChanged`` flags and
``resources.subscribe`` two ways: for a 2025-11-25 ``initialize`` from the
``NotificationOptions`` given at start (all false by default) and from a
``resources/subscribe`` handler (none); for a 2026-07-28 ``server/discover``
from whether ``subscriptions/listen`` is served, which ``MCPServer`` always
does. So the same server told a 2025-11-25 client that its tool list never
changes and a 2026-07-28 client that it does, and that it offers resource
subscriptions it has no resources for.

The family's servers register their tools once, at start, and send no
change notifications: the handshake-era derivation is the true one.
:func:`install_one_capability_set` makes the server answer with it on every
revision.
"""

from __future__ import annotations

from typing import Any

from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.mcpserver import MCPServer
from mcp_types import ServerCapabilities

__all__ = ["install_one_capability_set"]

_MARK = "_approval_core_one_capability_set"


def install_one_capability_set(server: MCPServer[Any]) -> None:
    """Make ``server/discover`` (2026-07-28) advertise what ``initialize`` (2025-11-25) advertises.

    Idempotent. Called by :meth:`approval_core.ApprovalGate.attach`, so every
    server of the family gets it.
    """
    low = server._lowlevel_server  # pyright: ignore[reportPrivateUsage]
    if getattr(low, _MARK, False):
        return
    derive = low.get_capabilities

    def get_capabilities(
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
        *,
        protocol_version: str | None = None,
    ) -> ServerCapabilities:
        return derive(notification_options, experimental_capabilities, extensions)

    low.get_capabilities = get_capabilities  # type: ignore[method-assign]
    setattr(low, _MARK, True)
