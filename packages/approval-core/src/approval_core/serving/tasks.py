"""A call waiting for the approval page as an MCP task, for clients that declare tasks.

Where no dialog can be shown, a guarded call ends with a refusal that gives the approval page's link and
code, and the model must make the same call again once the person has decided
(:mod:`approval_core.page.path`). A client that declares tasks gets a task instead, which finishes by
itself when the person decides: approved, the result of the call made once more on the client's behalf;
denied, expired or cancelled, a refusal (``isError``, nothing changed).

* MCP 2026-07-28 with the ``io.modelcontextprotocol/tasks`` extension (SEP-2663) declared in the request's
  client capabilities: the ``tools/call`` answer is a ``CreateTaskResult`` (``resultType: "task"``,
  status ``working``), then ``tasks/get`` (the result inline once terminal), ``tasks/update`` (no input is
  ever requested: acknowledged) and ``tasks/cancel``. A refusal is a ``completed`` task whose result has
  ``isError``.
* MCP 2025-11-25 (experimental tasks): the server declares ``tasks.requests.tools.call`` and
  ``tasks.cancel``, ``tools/list`` marks the tools that may ask ``execution.taskSupport: "optional"``, and
  a call to one of them carrying ``task`` in its params gets a ``CreateTaskResult`` (``{"task": ...}``,
  ``_meta["io.modelcontextprotocol/model-immediate-response"]`` telling the model where the person
  decides); ``tasks/get``, ``tasks/result`` (blocks until the task is terminal, then gives exactly what the
  call returned), ``tasks/cancel``, and ``notifications/tasks/status`` when this server settles a task.
  ``tasks/list`` is not offered (optional in that revision).

Same binding and single use as the refusal it replaces: the task remembers the call, and once the person
approved, the call is made again through the server's own ``tools/call`` handler, whose gate finds the
approval by the call's fingerprint (:func:`approval_core.asking.binding.bind`) and spends it; an entry
changed meanwhile is not approved. One request settles a task (``task-run``), and a task settles once.
Cancelling withdraws the approval (it is recorded as denied and spent), so it acts for nobody. A task id
reads only the task's state and result, and only for the principal that made it (over HTTP); it approves
nothing. The decision is acted on when the client next asks about the task (``tasks/get``,
``tasks/result``), within the approval's lifetime.

Installed by :func:`approval_core.serving.equip.equip` where the approval page is set up; every other
client, and every call that does not wait for the page, is served as before.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any, cast

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import (
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    RequestParams,
    ServerCapabilities,
    ServerTasksCapability,
    ServerTasksRequestsCapability,
    TasksCallCapability,
    TasksCancelCapability,
    TaskStatusNotification,
    TaskStatusNotificationParams,
    TasksToolsCapability,
    ToolExecution,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ConfigDict, Field

from approval_core.asking.decisions import NOTHING_CHANGED
from approval_core.asking.results import APPROVAL_META_KEY, refusal
from approval_core.asking.waiting import watching
from approval_core.gate import ApprovalGate
from approval_core.page.approval_page import ApprovalPage
from approval_core.page.path import POLL_SECONDS, denied
from approval_core.records.audit import audit
from approval_core.records.store import StoreUnavailable
from approval_core.serving.task_book import Outcome, TaskBook, TaskRecord, task_fields

__all__ = ["IMMEDIATE_RESPONSE_KEY", "RELATED_TASK_KEY", "TASKS_EXTENSION", "install_page_tasks"]

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
"""The tasks extension's identifier (SEP-2663)."""
IMMEDIATE_RESPONSE_KEY = "io.modelcontextprotocol/model-immediate-response"
"""``_meta`` key of a 2025-11-25 ``CreateTaskResult``: what the host may tell the model at once."""
RELATED_TASK_KEY = "io.modelcontextprotocol/related-task"
"""``_meta`` key naming the task a 2025-11-25 ``tasks/result`` answers for."""

_MARK = "_approval_core_page_tasks"
_KEPT = ("name", "arguments")
_logger = logging.getLogger(__name__)


class TaskParams(RequestParams):
    """The params of ``tasks/get``, ``tasks/result``, ``tasks/update`` and ``tasks/cancel``."""

    model_config = ConfigDict(extra="allow")
    task_id: str = Field(alias="taskId")


def _modern(ctx: ServerRequestContext[Any, Any]) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def _declares_tasks(ctx: ServerRequestContext[Any, Any]) -> bool:
    capabilities = ctx.session.client_capabilities
    extensions = None if capabilities is None else capabilities.extensions
    return extensions is not None and TASKS_EXTENSION in extensions


def _mapping(value: object) -> dict[str, Any]:
    return dict(cast("Mapping[str, Any]", value)) if isinstance(value, Mapping) else {}


def _not_found() -> MCPError:
    return MCPError(code=-32602, message="Failed to retrieve task: Task not found")


class PageTasks:
    """The tasks of one server: the ``tools/call`` middleware and the ``tasks/*`` handlers.

    Args:
        server: The family server.
        gate: Its gate (with the approval page set up).
        asking: The tools that may ask (marked ``taskSupport: "optional"`` on 2025-11-25).
    """

    def __init__(self, server: MCPServer[Any], gate: ApprovalGate, asking: frozenset[str]) -> None:
        if gate.page is None:
            raise ValueError("tasks wait for the approval page, and this gate has none")
        self.server = server
        self.name = server.name
        self.page: ApprovalPage = gate.page
        self.asking = asking
        self.book = TaskBook(gate.store, lambda: self.page.book.now)

    # ------------------------------------------------------------------ tools/call

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """Server middleware: a ``tools/call`` that waits for the page becomes a task where the client asks."""
        params = ctx.params or {}
        if ctx.method != "tools/call":
            return await call_next(ctx)
        modern = _modern(ctx)
        legacy_task = not modern and isinstance(params.get("task"), Mapping) and params.get("name") in self.asking
        if not (legacy_task or (modern and _declares_tasks(ctx))):
            return await call_next(ctx)
        with watching() as waiting:
            answered = await call_next(ctx)
        wire = cast("dict[str, Any]", answered)
        meta = _mapping(wire.get("_meta"))
        outcome = _mapping(meta.get(APPROVAL_META_KEY))
        record = None
        if waiting.pending_id is not None and outcome.get("outcome") == "approval_pending":
            record = await self.page.book.get(waiting.pending_id)
        if record is None and modern:
            return answered  # no wait for the page: the answer as it is (the server decides, SEP-2663)
        call = {key: params[key] for key in _KEPT if key in params}
        url = None if record is None else self.page.url_of(record)
        try:
            task = await self.book.create(call, modern=modern, record=record, url=url)
            if record is None:  # 2025-11-25: a task-augmented call always gets a task; this one is done already
                await self.book.claim(task)
                await self.book.finish(task, Outcome("completed", wire, None, self.book.now))
            fields = task_fields(task, await self.book.outcome(task), self.book.now, modern=modern)
        except StoreUnavailable:
            return answered  # no task without its record: the answer as it is (it holds the page's link)
        self._audit("task_created", task)
        if modern:
            stamp = {key: value for key, value in meta.items() if key != APPROVAL_META_KEY}
            return {"resultType": "task", **fields, **({"_meta": stamp} if stamp else {})}
        said = fields["statusMessage"] + (
            f" The call finishes by itself once they decide (task {task.id})."
            if record is not None
            else f" Its result is the task's result (task {task.id})."
        )
        return {"task": fields, "_meta": {IMMEDIATE_RESPONSE_KEY: said}}

    # ------------------------------------------------------------------ tasks/*

    async def get(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> dict[str, Any]:
        """``tasks/get``: the task's state (settled first when the person has decided or it expired)."""
        task = await self._task(ctx, params)
        outcome = await self.settle(ctx, task)
        fields = task_fields(task, outcome, self.book.now, modern=_modern(ctx))
        return {"resultType": "complete", **fields} if _modern(ctx) else fields

    async def result(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> dict[str, Any]:
        """``tasks/result`` (2025-11-25): blocks until the task is terminal, then what the call returned."""
        if _modern(ctx):
            raise MCPError(code=-32601, message="Method not found", data="tasks/result")
        task = await self._task(ctx, params)
        while True:
            outcome = await self.settle(ctx, task)
            if outcome is not None:
                break
            await anyio.sleep(POLL_SECONDS)
        if outcome.error is not None:
            raise MCPError(code=int(outcome.error.get("code", -32603)), message=str(outcome.error.get("message")))
        meta = {**_mapping((outcome.result or {}).get("_meta")), RELATED_TASK_KEY: {"taskId": task.id}}
        return {**(outcome.result or {}), "_meta": meta}

    async def update(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> dict[str, Any]:
        """``tasks/update`` (2026-07-28): acknowledged; these tasks never request input, so nothing is kept."""
        if not _modern(ctx):
            raise MCPError(code=-32601, message="Method not found", data="tasks/update")
        await self._task(ctx, params)
        return {"resultType": "complete"}

    async def cancel(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> dict[str, Any]:
        """``tasks/cancel``: withdraw the pending approval and end the task, unless it is settled already.

        2026-07-28 acknowledges either way (SEP-2663: cancelling is a request); 2025-11-25 answers the
        cancelled task, or -32602 when the task was terminal (or being settled) already.
        """
        task = await self._task(ctx, params)
        cancelled: Outcome | None = None
        if await self.book.claim(task):
            record = None if task.pending_id is None else await self.page.book.get(task.pending_id)
            used = False
            if record is not None:
                verdict = await self.page.book.decide(record, "deny")  # a tap after this is told it was denied
                # and an approval given before acts for nobody, unless an identical plain call used it already
                used = not await self.page.book.spend(record) and verdict.decided == "approve"
            if used:
                text = (f"{task.tool} was not run by this task, now cancelled: its approval (code {task.code}) was "
                        "used by another identical call, which ran once. This task changed nothing.")  # fmt: skip
                data = {"outcome": "used_elsewhere", "path": "page", "code": task.code, "changed": False}
            else:
                text = f"{task.tool} was not run: its task was cancelled and the approval withdrawn. {NOTHING_CHANGED}"
                data = {"outcome": "cancelled", "path": "page", "code": task.code, "changed": False}
            result = refusal(text, data).model_dump(by_alias=True, exclude_none=True)
            cancelled = await self._finish(ctx, task, Outcome("cancelled", result, None, self.book.now))
            self._audit("task_cancelled", task)
        if _modern(ctx):
            return {"resultType": "complete"}
        if cancelled is None or cancelled.status != "cancelled":
            standing = await self.book.outcome(task)
            status = (
                "working" if standing is None else task_fields(task, standing, self.book.now, modern=False)["status"]
            )
            raise MCPError(code=-32602, message=f"Cannot cancel task: already in status '{status}'")
        return task_fields(task, cancelled, self.book.now, modern=False)

    async def _task(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> TaskRecord:
        if _modern(ctx) and not _declares_tasks(ctx):
            raise MCPError(
                code=-32021,
                message="Missing required client capability",
                data={"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
            )
        task = await self.book.get(params.task_id)
        if task is None or task.modern != _modern(ctx):
            raise _not_found()
        return task

    # ------------------------------------------------------------------ settling

    async def settle(self, ctx: ServerRequestContext[Any, Any], task: TaskRecord) -> Outcome | None:
        """The task's outcome: the standing one, or reached now when the person decided or it expired."""
        if (done := await self.book.outcome(task)) is not None:
            return done
        record = None if task.pending_id is None else await self.page.book.get(task.pending_id)
        decided = None if record is None else await self.page.book.decision(record.id)
        if record is not None and decided is None and record.expires > self.book.now:
            return None
        if not await self.book.claim(task):
            return None  # another request is settling it
        code = task.code or ""
        if await self.book.started(task):  # its own call began under a claim that lapsed: never "used elsewhere"
            if record is not None and record.expires > self.book.now:
                return None  # that call may still be running; it records its own outcome
            text = (
                f"{task.tool} was started by this task (code {code}) but its answer was lost, so whether it "
                "changed anything is not known; read the current state before trying again."
            )
            result = refusal(text, {"outcome": "outcome_unknown", "path": "page", "code": code, "changed": None})
            outcome = Outcome("completed", result.model_dump(by_alias=True, exclude_none=True), None, self.book.now)
        elif record is not None and decided == "deny":
            await self.page.book.spend(record)
            denial = denied(task.tool, code).result
            outcome = Outcome("completed", denial.model_dump(by_alias=True, exclude_none=True), None, self.book.now)
        elif record is None or record.expires <= self.book.now:
            text = (
                f"{task.tool} was not run: its approval on the approval page (code {code}) expired before it was "
                f"used. Make the same call again to ask anew. {NOTHING_CHANGED}"
            )
            data = {"outcome": "expired", "path": "page", "code": code, "changed": False}
            result = refusal(text, data).model_dump(by_alias=True, exclude_none=True)
            outcome = Outcome("completed", result, None, self.book.now)
        elif await self.page.book.spent(record.id):
            text = (
                f"{task.tool} was not run by this task: its approval (code {code}) was used by another identical "
                "call, which ran once. This task changed nothing."
            )
            data = {"outcome": "used_elsewhere", "path": "page", "code": code, "changed": False}
            result = refusal(text, data).model_dump(by_alias=True, exclude_none=True)
            outcome = Outcome("completed", result, None, self.book.now)
        else:
            await self.book.start(task)
            outcome = await self._call_again(ctx, task)
        self._audit(f"task_{outcome.status}", task)
        return await self._finish(ctx, task, outcome)

    async def _call_again(self, ctx: ServerRequestContext[Any, Any], task: TaskRecord) -> Outcome:
        """Make the task's call through the server's ``tools/call`` handler: its gate finds the approval."""
        entry = self.server._lowlevel_server.get_request_handler("tools/call")  # pyright: ignore[reportPrivateUsage]
        if entry is None:
            raise RuntimeError("the server has no tools/call handler")
        try:
            params = entry.params_type.model_validate(task.call, by_name=False)
            with watching():
                answered = await entry.handler(replace(ctx, method="tools/call", params=task.call), params)
        except MCPError as exc:
            error = {"code": exc.error.code, "message": exc.error.message}
            return Outcome("failed", None, error, self.book.now)
        except Exception:  # a fault past the error boundary: the task ends, as the call would have
            _logger.exception("%s: a task's call of %s failed", self.name, task.tool)
            return Outcome("failed", None, {"code": -32603, "message": "Internal error"}, self.book.now)
        if not isinstance(answered, CallToolResult):  # a question this task cannot carry (it asks none)
            _logger.error("%s: a task's call answered %s", self.name, type(answered).__name__)
            return Outcome("failed", None, {"code": -32603, "message": "Internal error"}, self.book.now)
        return Outcome("completed", answered.model_dump(by_alias=True, exclude_none=True), None, self.book.now)

    async def _finish(self, ctx: ServerRequestContext[Any, Any], task: TaskRecord, outcome: Outcome) -> Outcome:
        standing = await self.book.finish(task, outcome)
        if not task.modern:
            fields = task_fields(task, standing, self.book.now, modern=False)
            notice = TaskStatusNotification(params=TaskStatusNotificationParams.model_validate(fields, by_name=False))
            try:  # the SDK's union of notifications leaves this one out, but sends any notification model
                await ctx.session.send_notification(notice)  # pyright: ignore[reportArgumentType]
            except Exception:  # optional (2025-11-25 Tasks); a closed channel must not lose the outcome
                _logger.debug("%s: the task status notification was not sent", self.name, exc_info=True)
        return standing

    def _audit(self, event: str, task: TaskRecord) -> None:
        audit(event, server=self.name, tool=task.tool, path="page", fp="-", reason=task.code)


def install_page_tasks(server: MCPServer[Any], gate: ApprovalGate, tools: Iterable[str]) -> None:
    """Serve a call waiting for the approval page as an MCP task to clients that declare tasks (idempotent).

    Adds :class:`PageTasks` as the innermost server middleware, the ``tasks/*`` methods, the extension to
    the server's capabilities (and, on 2025-11-25, ``tasks.requests.tools.call`` and ``tasks.cancel``), and
    ``execution.taskSupport: "optional"`` to ``tools`` in a 2025-11-25 ``tools/list``.

    Args:
        server: The family server (after :meth:`ApprovalGate.attach`).
        gate: Its gate; the approval page must be set up.
        tools: The tools that may ask.

    Raises:
        ValueError: the gate has no approval page.
    """
    if getattr(server, _MARK, False):
        return
    tasks = PageTasks(server, gate, frozenset(tools))
    low = server._lowlevel_server  # pyright: ignore[reportPrivateUsage]  # the SDK's handler registry
    server.middleware.append(tasks)
    low.add_request_handler("tasks/get", TaskParams, tasks.get)
    low.add_request_handler("tasks/result", TaskParams, tasks.result)
    low.add_request_handler("tasks/update", TaskParams, tasks.update)
    low.add_request_handler("tasks/cancel", TaskParams, tasks.cancel)
    low.extensions[TASKS_EXTENSION] = {}
    derive = low.get_capabilities
    legacy_tasks = ServerTasksCapability(
        cancel=TasksCancelCapability(),
        requests=ServerTasksRequestsCapability(tools=TasksToolsCapability(call=TasksCallCapability())),
    )

    def get_capabilities(
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
        *,
        protocol_version: str | None = None,
    ) -> ServerCapabilities:
        found = derive(notification_options, experimental_capabilities, extensions, protocol_version=protocol_version)
        if protocol_version in MODERN_PROTOCOL_VERSIONS:
            return found
        return found.model_copy(update={"tasks": legacy_tasks})

    low.get_capabilities = get_capabilities  # type: ignore[method-assign]
    listed = low.get_request_handler("tools/list")
    if listed is None:
        raise RuntimeError("the server has no tools/list handler to wrap")
    tools_handler = listed.handler

    async def list_tools(ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None) -> Any:
        result = await tools_handler(ctx, params)
        if not isinstance(result, ListToolsResult) or _modern(ctx):
            return result
        optional = ToolExecution(task_support="optional")
        shown = [t.model_copy(update={"execution": optional}) if t.name in tasks.asking else t for t in result.tools]
        return result.model_copy(update={"tools": shown})

    low.add_request_handler("tools/list", PaginatedRequestParams, list_tools)
    setattr(server, _MARK, True)
