"""A test client's side of MCP tasks, on both protocol revisions (:mod:`approval_core.serving.tasks`).

The SDK client (mcp 2.3) serves no task method of its own: on 2026-07-28 an extension may claim the
``resultType: "task"`` answer of ``tools/call`` (:class:`TasksExtension`), and on 2025-11-25 it checks a
``tools/call`` answer against ``CallToolResult``, which a ``CreateTaskResult`` is not. These helpers send
the task requests as they go on the wire and return the answers as JSON::

    async with Client(server, mode="2026-07-28", extensions=[TasksExtension()]) as client:
        created = await call_as_task(client, "delete_event", {...})
        state = await task_request(client, "tasks/get", created["taskId"])
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import anyio
import mcp_types as types
from mcp.client import Client
from mcp.client.extension import ClaimContext, ClientExtension, NotificationBinding, ResultClaim
from pydantic import ConfigDict

from approval_core.serving.tasks import TASKS_EXTENSION

__all__ = ["CreatedTask", "TasksExtension", "call_as_task", "paired_passkey_file", "raw_request", "task_request"]


class CreatedTask(types.Result):
    """A 2026-07-28 ``CreateTaskResult`` (SEP-2663) as the SDK client's claim hands it over."""

    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"] = "task"
    task_id: str
    status: str


async def _not_resolved(created: CreatedTask, context: ClaimContext) -> types.CallToolResult:
    raise AssertionError(f"task {created.task_id} of {context.tool_name}: call with allow_claimed=True")


class TasksExtension(ClientExtension):
    """Declares ``io.modelcontextprotocol/tasks`` and claims its ``CreateTaskResult`` (2026-07-28).

    It also keeps every ``notifications/tasks/status`` (2025-11-25) the server sends, in :attr:`statuses`;
    :attr:`notified` is set at each one.
    """

    identifier = TASKS_EXTENSION

    def __init__(self) -> None:
        self.statuses: list[types.TaskStatusNotificationParams] = []
        self.notified = anyio.Event()

    async def _status(self, params: types.TaskStatusNotificationParams) -> None:
        self.statuses.append(params)
        self.notified.set()

    def notifications(self) -> Sequence[NotificationBinding[Any]]:
        """``notifications/tasks/status``, which the SDK's 2025-11-25 tables leave out."""
        return (
            NotificationBinding(
                method="notifications/tasks/status",
                params_type=types.TaskStatusNotificationParams,
                handler=self._status,
            ),
        )

    def claims(self) -> Sequence[ResultClaim[Any]]:
        """The one claim: ``resultType: "task"`` on ``tools/call`` (left to the test: ``allow_claimed=True``)."""
        return (ResultClaim(result_type="task", model=CreatedTask, resolve=_not_resolved),)


async def raw_request(client: Client, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Send ``method`` with ``params`` as the session sends any request, and return the raw result.

    Raises:
        MCPError: the server answered with a JSON-RPC error.
    """
    session = client.session
    data: dict[str, Any] = {"method": method, "params": params}
    opts: Any = {}
    session._stamp(data, opts)  # pyright: ignore[reportPrivateUsage]  # the session's envelope (_meta, headers)
    return await session._dispatcher.send_raw_request(method, data.get("params"), opts)  # pyright: ignore[reportPrivateUsage]


async def call_as_task(client: Client, name: str, arguments: dict[str, Any], *, legacy: bool) -> dict[str, Any]:
    """Call tool ``name`` as a tasks client does; the answer as JSON.

    On 2025-11-25 (``legacy``) the params carry ``task: {"ttl": 60000}``; the answer is a ``CreateTaskResult``
    (``{"task": ...}``) or, when the server made no task, the ``CallToolResult``. On 2026-07-28 the client
    must carry :class:`TasksExtension`; the answer is the ``CreateTaskResult`` or the ``CallToolResult``.
    """
    if legacy:
        return await raw_request(client, "tools/call", {"name": name, "arguments": arguments, "task": {"ttl": 60000}})
    answer = await client.session.call_tool(name, arguments, allow_claimed=True)
    return answer.model_dump(by_alias=True, mode="json", exclude_none=True)


async def task_request(client: Client, method: str, task_id: str) -> dict[str, Any]:
    """``tasks/get``, ``tasks/result``, ``tasks/update`` or ``tasks/cancel`` for ``task_id``; the raw result."""
    params: dict[str, Any] = {"taskId": task_id}
    if method == "tasks/update":
        params["inputResponses"] = {}
    return await raw_request(client, method, params)


def paired_passkey_file(path: Path, rp_id: str = "localhost") -> Path:
    """A passkey file (owner-only) holding one public key for ``rp_id``, so the gate counts the page as paired.

    The key signs nothing: a test writes decisions through the page's own book (``page.book.decide``) as the
    page does after a verified passkey, or denies through the page's route, which needs none.
    """

    def b64(raw: bytes) -> str:
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

    entry = {"id": b64(b"cred"), "public_key": b64(b"key"), "rp_id": rp_id, "added": "x"}
    path.write_text(json.dumps({"version": 1, "user_id": b64(b"u" * 16), "credentials": [entry], "pairing": None}))
    path.chmod(0o600)
    return path
