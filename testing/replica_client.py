"""A checking MCP client over Streamable HTTP that records which replica answered each request.

Built from the Python SDK's ``streamable_http_client`` and
:func:`approval_core.testing.connect` (every tool result is checked against
the tool's outputSchema). Each HTTP response is recorded with the JSON-RPC
method it answered, the ``X-Backend`` header HAProxy adds (the replica's
name), the ``Mcp-Session-Id`` it carried and its status, so a test can assert
that a question and its answer went to different replicas.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx2
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from approval_core.testing import Answer, ElicitationSupport, Revision, connect

__all__ = ["Exchange", "Seen", "call_tool_json", "http_client"]

BACKEND_HEADER = "X-Backend"


@dataclass(frozen=True)
class Exchange:
    """One HTTP request and its response.

    Attributes:
        method: The JSON-RPC method of the request body (``tools/call``...), the HTTP method for a bodiless one.
        tool: ``params.name`` of a ``tools/call``, else None.
        backend: The replica that answered (``X-Backend``), None without a proxy.
        session: The request's ``Mcp-Session-Id``, None without.
        status: The HTTP status.
    """

    method: str
    tool: str | None
    backend: str | None
    session: str | None
    status: int


@dataclass
class Seen:
    """Every exchange of one client, in order."""

    exchanges: list[Exchange] = field(default_factory=lambda: [])

    def backends(self, method: str = "tools/call") -> list[str | None]:
        """The replica of each exchange of ``method``, in order."""
        return [e.backend for e in self.exchanges if e.method == method]

    def last(self, method: str = "tools/call") -> str | None:
        """The replica that answered the last ``method`` request."""
        found = self.backends(method)
        assert found, f"no {method} request was made: {self.exchanges}"
        return found[-1]


def _method(request: httpx2.Request) -> tuple[str, str | None]:
    try:
        body = json.loads(request.content or b"null")
    except (ValueError, httpx2.RequestNotRead):
        return request.method, None
    if isinstance(body, dict) and isinstance(body.get("method"), str):
        params = body.get("params")
        tool = params.get("name") if isinstance(params, dict) and body["method"] == "tools/call" else None
        return body["method"], tool if isinstance(tool, str) else None
    return "response" if isinstance(body, dict) else request.method, None


@contextlib.asynccontextmanager
async def http_client(
    url: str,
    token: str | None,
    *,
    revision: Revision,
    answer: Answer | None = None,
    headers: Mapping[str, str] | None = None,
    check: bool = True,
    elicitation: ElicitationSupport | None = None,
) -> AsyncIterator[tuple[Client, Seen]]:
    """A checking client of ``url`` with ``Authorization: Bearer <token>``, and the record of its exchanges.

    Args:
        url: The MCP endpoint (the proxy's).
        token: The bearer token; None sends none.
        revision: ``2025-11-25`` (session, pushed dialogs) or ``2026-07-28``.
        answer: How the client answers a dialog; None declares no elicitation (the token path).
        headers: More request headers (an ``Origin``...).
        check: False only for a benchmark that must not time the outputSchema check.
        elicitation: What the client declares (``form+url``, ``form``, ``url``, ``none``); default as
            :func:`approval_core.testing.connect` (``form+url`` with an ``answer``, else ``none``).
    """
    seen = Seen()

    async def record(response: httpx2.Response) -> None:
        method, tool = _method(response.request)
        seen.exchanges.append(
            Exchange(
                method,
                tool,
                response.headers.get(BACKEND_HEADER),
                response.request.headers.get("mcp-session-id"),
                response.status_code,
            )
        )

    sent = dict(headers or {})
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    timeout = httpx2.Timeout(60, read=300)
    http = httpx2.AsyncClient(headers=sent, timeout=timeout, event_hooks={"response": [record]})
    async with (
        http,
        connect(
            streamable_http_client(url, http_client=http),
            revision=revision,
            answer=answer,
            check=check,
            elicitation=elicitation,
        ) as client,
    ):
        yield client, seen


def call_tool_json(name: str, arguments: dict[str, Any], *, request_id: int = 1) -> dict[str, Any]:
    """The JSON-RPC body of a 2026-07-28 ``tools/call`` (for raw HTTP requests that must not get through)."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {
            "name": name,
            "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
