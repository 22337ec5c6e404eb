"""Making the SDK's own ``requestState`` seal fail into a fresh question.

``MCPServer`` (mcp 2.x) wraps every outgoing ``requestState`` in its own
AES-GCM envelope under a per-process key and answers an envelope it cannot
open (tampered, expired after 600 s, bound to other arguments, minted before
a restart) with JSON-RPC error -32602, before any tool runs. The seeds want
the opposite for an approval: a state that does not open counts as *no
answer*, and the person is simply asked again.

approval-core keeps the SDK layer (it adds confidentiality and binds the
exact arguments) and puts this middleware in front of it. When the SDK
refuses the state of a ``tools/call``, the middleware runs the same call once
more without ``requestState`` and ``inputResponses``: the tool starts from
round one and the gate asks a fresh question. Nothing ran in the refused
round (the SDK refuses before the handler), so the retry cannot act twice.
approval-core's own HMAC seal and single-use nonce sit inside the SDK
envelope and hold on their own where the SDK layer is absent (the low-level
``Server``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, cast

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.shared.exceptions import MCPError

from approval_core.records.audit import audit

__all__ = ["StateRecovery", "install_state_recovery", "share_sdk_state_keys"]

_STRIPPED = ("requestState", "inputResponses")


def _is_state_rejection(exc: MCPError) -> bool:
    data: object = exc.error.data
    return isinstance(data, Mapping) and cast("Mapping[str, object]", data).get("reason") == "invalid_request_state"


class StateRecovery:
    """Server middleware: an SDK-refused ``requestState`` on ``tools/call`` becomes round one.

    Args:
        server_name: For the audit line.
    """

    def __init__(self, server_name: str) -> None:
        self.server_name = server_name

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """Run the request; on an SDK state refusal of a ``tools/call``, run it once more as round one."""
        try:
            return await call_next(ctx)
        except MCPError as exc:
            if ctx.method != "tools/call" or ctx.params is None or not _is_state_rejection(exc):
                raise
            params = {key: value for key, value in ctx.params.items() if key not in _STRIPPED}
            audit(
                "state_refused",
                server=self.server_name,
                tool=str(params.get("name", "")),
                path="input_required",
                fp="-",
                reason="sdk_seal",
            )
            return await call_next(replace(ctx, params=params))


def install_state_recovery(server: MCPServer[Any]) -> None:
    """Put :class:`StateRecovery` just outside the SDK's ``RequestStateBoundary``.

    Idempotent. A server without the SDK boundary is left as it is.
    """
    chain = server.middleware
    if any(isinstance(layer, StateRecovery) for layer in chain):
        return
    for index, layer in enumerate(chain):
        if isinstance(layer, RequestStateBoundary):
            chain.insert(index, StateRecovery(server.name))
            return


def share_sdk_state_keys(server: MCPServer[Any], keys: tuple[bytes, ...]) -> None:
    """Give the SDK's request-state boundary of ``server`` the ring ``keys`` (current first).

    ``MCPServer`` seals every ``requestState`` in an AES-GCM envelope
    (``mcp.server.request_state``) under a key made per process unless it was
    built with ``request_state_security=``. This replaces the boundary the
    SDK installed with one under ``RequestStateSecurity(keys=keys)`` and the
    same audience (the server's name), so every replica holding the key file
    opens what another sealed; ``keys[0]`` seals, every key opens. A server
    whose chain has no SDK boundary is left as it is.
    """
    chain = server.middleware
    for index, layer in enumerate(chain):
        if isinstance(layer, RequestStateBoundary):
            chain[index] = RequestStateBoundary(RequestStateSecurity(keys=list(keys)), default_audience=server.name)
            return
