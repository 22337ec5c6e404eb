"""The every-write profile at work (``APPROVAL_PROFILE=every-write``, seed 004).

Under this profile a server's tool calls run inside a :class:`WriteCall`
scope (:func:`install_every_write`). Every request a server sends passes
:func:`before_send` first, at the one place its client sends (webdav-core's
session, ntfy-mcp's client), before the request's deadline starts. There:

* a request that only reads (:data:`~approval_core.write_dialog.SAFE_METHODS`)
  goes out;
* the first changing request of a call stops and asks: the dialog
  (:class:`~approval_core.write_dialog.WriteDialog`) lists it, or every
  request the tool announced with :func:`expect_writes` before it, and the
  approval binds each one's method, URL, deciding headers and body digest,
  the caller's arguments, the principal and, for a guarded tool, the target
  and version its own :meth:`ApprovalGate.check` gave. The person is asked
  on the paths the gate knows (a pushed form on 2025-11-25, ``input_required``
  on 2026-07-28, the approval page); a client that can show none of them is
  refused, and no confirm token is ever issued;
* after a yes, the call sends exactly the listed requests in order; any other
  changing request (another URL, body or version, a redirect) is refused
  before it is sent, and the call ends saying what was and was not sent;
* a tool declared read-only that tries to change something is refused.

A refusal ends the tool call with the gate's result (``isError: true``, or
the ``input_required`` question) however deep in the tool it was raised:
:class:`WriteStop` is a ``BaseException``, so a tool's own error handling
does not swallow it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, LiteralString, Protocol, cast
from urllib.parse import urlsplit

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, InputRequiredResult

from approval_core.decisions import Decision, NotApproved
from approval_core.dialog import CallerValue, Dialog
from approval_core.policy import CHANGES, Effect
from approval_core.results import refusal
from approval_core.sealing import StateSealer
from approval_core.settings import ApprovalSettings
from approval_core.write_dialog import SAFE_METHODS, RequestLine, WriteDialog

__all__ = [
    "HIDDEN_ARGUMENTS",
    "WriteCall",
    "WriteStop",
    "before_send",
    "expect_writes",
    "install_every_write",
    "origin_text",
    "plan_writes",
    "stable",
]

HIDDEN_ARGUMENTS: tuple[str, ...] = ("password", "secret", "confirm_token", "token")
"""Argument names (or name endings) never shown in a dialog nor bound as such (a body digest binds them)."""

_IDENTIFIER_ENDINGS = ("id", "ids", "topic", "topics", "username", "calendar", "book", "href", "url", "path")

_CALL: ContextVar[WriteCall | None] = ContextVar("approval_core_write_call", default=None)


class Asker(Protocol):
    """What the profile needs of :class:`~approval_core.ApprovalGate`."""

    settings: ApprovalSettings
    body_key: bytes
    every_write: EveryWrite | None
    sealer: StateSealer

    async def decide_write(
        self, ctx: Context[Any, Any], tool: str, target: Mapping[str, Any], dialog: WriteDialog, *, version: str | None
    ) -> Decision:
        """Ask for one call's requests (:meth:`ApprovalGate.decide_write`)."""
        ...


class _Planned(BaseException):
    """Ends one attempt of :func:`plan_writes` at its changing request, which was noted and not sent."""


class WriteStop(BaseException):
    """Ends a tool call from inside its client: ``result`` is what the call returns (nothing more is sent)."""

    def __init__(self, result: CallToolResult | InputRequiredResult) -> None:
        super().__init__("the every-write profile stopped this call")
        self.result = result


@dataclass(slots=True)
class WriteCall:
    """One tool call under the every-write profile.

    Attributes:
        owner: The profile's state for this server.
        ctx: The call's MCP context (where the person is asked).
        tool: The tool's name.
        arguments: The call's arguments as the caller sent them.
        guarded: What the tool's own :meth:`ApprovalGate.check` gave: ``(dialog, target, version)``, or None.
        planned: The requests the tool announced (:func:`expect_writes`, :func:`plan_writes`), or None.
        planning: True while :func:`plan_writes` runs an attempt (its changing request is noted, not sent).
        approved: The requests still to be sent under the yes (None until asked).
        sent: The changing requests sent so far.
        memo: Values the call made up (:func:`stable`), sealed into an ``input_required`` state and read back
            on the retry, so the retry builds the same requests.
    """

    owner: EveryWrite
    ctx: Context[Any, Any]
    tool: str
    arguments: Mapping[str, Any]
    guarded: tuple[Dialog, Mapping[str, Any], str | None] | None = None
    planned: list[RequestLine] | None = None
    planning: bool = False
    approved: list[RequestLine] | None = None
    sent: list[RequestLine] = field(default_factory=lambda: [])
    memo: dict[str, str] = field(default_factory=lambda: {})


def current_call() -> WriteCall | None:
    """The every-write scope of the running tool call, or None (profile ``guarded``, or outside a call)."""
    return _CALL.get()


async def before_send(method: str, url: str, body: bytes | str | None, headers: Mapping[str, str]) -> None:
    """Check one request before it is sent (see the module docstring); a no-op outside the profile.

    Args:
        method: The request's method.
        url: Its absolute URL, as it will be sent.
        body: Its body (bytes, or text sent as UTF-8), or None.
        headers: Its headers (only :data:`~approval_core.write_dialog.BOUND_HEADERS` are read).

    Raises:
        WriteStop: the person did not approve (yet), or the request is not one that was approved.
    """
    if method.upper() in SAFE_METHODS:
        return
    call = _CALL.get()
    if call is None:
        return
    line = RequestLine.of(method, url, body, headers, call.owner.key)
    if call.planning:
        call.planned = [*(call.planned or []), line]
        raise _Planned
    await call.owner.check(call, line)


def expect_writes(requests: Sequence[tuple[str, str, bytes | str | None, Mapping[str, str]]]) -> None:
    """Announce every changing request a call will send, before the first of them.

    Each is ``(method, url, body, headers)`` as :func:`before_send` will see it, so that one question lists
    them all. A no-op outside the every-write profile. A tool that sends more than one changing request must
    call it; otherwise the second request is refused as one the dialog did not show.
    """
    call = _CALL.get()
    if call is not None and call.approved is None:
        key = call.owner.key
        call.planned = [RequestLine.of(m, u, b, h, key) for m, u, b, h in requests]


MEMO_LIMIT = 8
"""Values one call may make up with :func:`stable` (each cut to 200 characters)."""


def stable(name: str, make: Callable[[], str]) -> str:
    """A value the call makes up (a new UID, a timestamp), the same on an ``input_required`` retry.

    Under the every-write profile the approval binds the exact request, so a create whose body holds a fresh
    UID would build another request on the 2026-07-28 retry and be asked again without end. The value made
    on the first round is sealed into the question's state and given back here on the retry. Outside the
    profile, or beyond :data:`MEMO_LIMIT` names, it is ``make()``.
    """
    call = _CALL.get()
    if call is None:
        return make()
    if name not in call.memo:
        if len(call.memo) >= MEMO_LIMIT:
            return make()
        call.memo[name] = make()[:200]
    return call.memo[name]


def origin_text(url: str) -> str:
    """The origin of a configured URL as a dialog's heading shows it: ``scheme://host[:port]`` (RFC 6454)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}{'' if parts.port is None else f':{parts.port}'}"


async def plan_writes(attempts: Sequence[Callable[[], Awaitable[object]]]) -> None:
    """Announce the changing requests of a call that sends several, by building each without sending it.

    Each attempt is one step of the call's loop (``lambda: client.delete(topic, sid)``): it runs until its
    first changing request, which is noted and not sent (:func:`before_send` ends the attempt there; reads
    before it are sent). Then the first real request asks once for all of them, and the call may send
    exactly those, in that order. A no-op under the ``guarded`` profile (nothing is run).

    Raises:
        Whatever an attempt raises before its changing request (a bad argument, a failed read).
    """
    call = _CALL.get()
    if call is None or call.approved is not None:
        return
    call.planned = []
    for attempt in attempts:
        call.planning = True
        try:
            await attempt()
        except _Planned:
            pass
        finally:
            call.planning = False


def _hidden(name: str) -> bool:
    return any(name == word or name.endswith(f"_{word}") for word in HIDDEN_ARGUMENTS)


def _first_sentence(text: str) -> str:
    first = " ".join(text.split()).split(". ")[0].rstrip(".")
    return first[:200] or "change data"


class EveryWrite:
    """The every-write profile of one server (see the module docstring).

    Args:
        gate: The server's gate (asks, seals, audits).
        backend: Gives ``(origin, account)`` from the server's settings when a dialog is built: the
            configured backend's origin (the dialog's heading) and the user name the server acts as (or
            None when it has none, e.g. an access token).
        effects: The server's declared effects per tool (``guards.EFFECTS``).
        key: The key of body digests (32 bytes or more).
    """

    def __init__(
        self,
        gate: Asker,
        backend: Callable[[], tuple[str, str | None]],
        effects: Mapping[str, frozenset[Effect]],
        key: bytes,
    ) -> None:
        self.gate = gate
        self.backend = backend
        self.effects = dict(effects)
        self.key = key
        self._tools: dict[str, tuple[str, frozenset[str]]] = {}

    async def check(self, call: WriteCall, line: RequestLine) -> None:
        """Let ``line`` go out, ask for it, or stop the call (:func:`before_send`)."""
        if call.approved is not None:
            if call.approved and call.approved[0] == line:
                call.sent.append(call.approved.pop(0))
                return
            raise WriteStop(self._unlisted(call, line))
        if not (self.effects.get(call.tool, frozenset()) & CHANGES):
            raise WriteStop(self._unlisted(call, line, read_only=True))
        plan = call.planned or [line]
        if plan[0] != line:
            raise WriteStop(self._unlisted(call, line))
        decision = await self.gate.decide_write(call.ctx, call.tool, self._target(call, plan), self._dialog(call, plan),
                                                version=None if call.guarded is None else call.guarded[2])  # fmt: skip
        if isinstance(decision, NotApproved):
            raise WriteStop(decision.result)
        call.approved = plan[1:]
        call.sent.append(line)

    def _target(self, call: WriteCall, plan: Sequence[RequestLine]) -> dict[str, Any]:
        shown = {k: v for k, v in call.arguments.items() if not _hidden(k)}
        target: dict[str, Any] = {"requests": [line.bound() for line in plan], "arguments": shown}
        if call.guarded is not None:
            target["guarded"] = call.guarded[1]
        return target

    def _dialog(self, call: WriteCall, plan: Sequence[RequestLine]) -> WriteDialog:
        description, known = self._tools.get(call.tool, ("", frozenset[str]()))
        if call.guarded is not None:
            operation, effect = call.guarded[0].headline(), call.guarded[0].consequence
        else:
            operation, effect = _first_sentence(description), ""
        values: list[CallerValue] = []
        for name, value in call.arguments.items():
            if name not in known or value is None:
                continue
            label = cast(LiteralString, name)  # a name from the tool's own input schema
            text = "(not shown)" if _hidden(name) else value if isinstance(value, str) else json.dumps(value)
            values.append(CallerValue(label, text, identifier=name.endswith(_IDENTIFIER_ENDINGS)))
        edits = Effect.REPLACES in self.effects.get(call.tool, frozenset())
        origin, account = self.backend()
        return WriteDialog(origin, operation, effect, tuple(plan), account, edits, tuple(values))

    def _unlisted(self, call: WriteCall, line: RequestLine, read_only: bool = False) -> CallToolResult:
        changed = bool(call.sent)
        why = (
            f"{call.tool} is declared read-only, yet it would have sent {line.method} {line.url}"
            if read_only
            else f"{call.tool} would have sent {line.method} {line.url}, a request the approval did not list "
            "(another URL, body or version than the one shown)"
        )
        done = (
            "Already sent in this call: " + "; ".join(f"{s.method} {s.url}" for s in call.sent) + "."
            if changed
            else "Nothing was sent."
        )
        text = f"{call.tool} was stopped: {why}; it was not sent. {done} Call the tool again to be asked afresh."
        return refusal(text, {"outcome": "unlisted_request", "path": "every_write", "changed": changed})

    def install(self, server: MCPServer[Any]) -> None:
        """Run every tool call of ``server`` inside its :class:`WriteCall` scope; a stop becomes its result."""
        original = server.call_tool

        async def call_tool(
            name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
        ) -> CallToolResult | InputRequiredResult:
            if context is None:
                return await original(name, arguments, context)
            if not self._tools:
                for tool in await server.list_tools():
                    properties = cast(dict[str, Any], tool.input_schema.get("properties") or {})
                    self._tools[tool.name] = (tool.description or "", frozenset(properties))
            call = WriteCall(self, context, name, dict(arguments))
            if context.request_state:
                call.memo = self.gate.sealer.memo(context.request_state, name)
            scope = _CALL.set(call)
            try:
                return await original(name, arguments, context)
            except WriteStop as stop:
                return stop.result
            except BaseExceptionGroup as group:  # raised inside a tool's task group
                stop = _stop_in(group)
                if stop is None:
                    raise
                return stop.result
            finally:
                _CALL.reset(scope)

        server.call_tool = call_tool  # type: ignore[method-assign]


def _stop_in(group: BaseExceptionGroup[BaseException]) -> WriteStop | None:
    for exc in group.exceptions:
        if isinstance(exc, WriteStop):
            return exc
        if isinstance(exc, BaseExceptionGroup):
            found = _stop_in(cast(BaseExceptionGroup[BaseException], exc))
            if found is not None:
                return found
    return None


def install_every_write(
    server: MCPServer[Any],
    gate: Asker,
    *,
    backend: Callable[[], tuple[str, str | None]],
    effects: Mapping[str, frozenset[Effect]],
) -> EveryWrite | None:
    """Put ``server`` under the every-write profile when its settings choose it; else do nothing.

    Every server of the family calls this once, after :meth:`ApprovalGate.attach`, and passes
    :func:`before_send` to its client. Returns the profile's state, or None under ``guarded``.

    Args:
        server: The server whose tool calls are scoped.
        gate: Its gate.
        backend: Gives ``(origin, account)`` when a dialog is built (see :class:`EveryWrite`).
        effects: Its declared effects per tool (``guards.EFFECTS``); every tool declaring a change asks.
    """
    if not gate.settings.every_write:
        return None
    profile = EveryWrite(gate, backend, effects, gate.body_key)
    profile.install(server)
    gate.every_write = profile
    return profile
