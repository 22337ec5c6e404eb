"""The every-write profile at work (``APPROVAL_PROFILE=every-write``, seed 004).

Under this profile a server's tool calls run inside a :class:`WriteCall`
scope (:func:`install_every_write`). Every request a server sends passes
:func:`before_send` first, at the one place its client sends (webdav-core's
session, ntfy-mcp's client), before the request's deadline starts. There:

* a request that only reads (:data:`~approval_core.every_write.requests.SAFE_METHODS`)
  goes out;
* the first changing request of a call stops and asks: the dialog
  (:class:`~approval_core.every_write.requests.WriteDialog`) lists it, or every
  request the tool announced with :func:`plan_writes` before it, and the
  approval binds each one's method, URL, deciding headers and body digest,
  the caller's arguments, the principal and, for a guarded tool, the target
  and version its own :meth:`ApprovalGate.check` gave. The person is asked
  on the paths the gate knows (a pushed form on 2025-11-25, ``input_required``
  on 2026-07-28, the approval page); a client that can show none of them is
  refused, and no confirm token is ever issued;
* a yes given while the call waited (a pushed dialog, the approval page) runs
  the tool again from the top: everything it reads and checks "after the
  answer" is read and checked again, and only if it then builds the very
  requests that were approved (same fingerprint) do they go out; otherwise
  the person is asked again (at most :data:`RERUNS` times). On 2026-07-28 the
  retry is that second run already;
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

import hashlib
import hmac
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, LiteralString, Protocol, cast

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, InputRequiredResult

from approval_core.asking.binding import canonical_json, principal
from approval_core.asking.decisions import Decision, NotApproved
from approval_core.asking.dialog import CallerValue
from approval_core.asking.results import refusal
from approval_core.asking.sealing import StateSealer
from approval_core.errors import BindingError
from approval_core.every_write.requests import RequestLine, WriteDialog
from approval_core.every_write.scope import RERUNS, Rerun, WriteCall, WriteStop, enter, leave
from approval_core.page.stored import SentBody, StoredView, unbound_etags
from approval_core.policy import CHANGES, Effect
from approval_core.records.store import RecordStore
from approval_core.settings import ApprovalSettings

__all__ = ["HIDDEN_ARGUMENTS", "Asker", "EveryWrite", "install_every_write"]

HIDDEN_ARGUMENTS: tuple[str, ...] = ("password", "secret", "confirm_token", "token")
"""Argument names (or name endings) never shown in a dialog nor bound as such (a body digest binds them)."""

_IDENTIFIER_ENDINGS = (
    *("id", "ids", "topic", "topics", "username", "calendar", "book", "href", "url", "uri", "path"),
    *("destination", "click", "icon", "attach"),
)


_MEMO_TTL = 3600.0
"""Seconds a waiting call's made-up values are kept for its repeat (an approval page TTL is at most this)."""


class Asker(Protocol):
    """What the profile needs of :class:`~approval_core.ApprovalGate`."""

    settings: ApprovalSettings
    store: RecordStore
    body_key: bytes
    every_write: EveryWrite | None
    sealer: StateSealer

    async def decide_write(
        self,
        ctx: Context[Any, Any],
        tool: str,
        target: Mapping[str, Any],
        dialog: WriteDialog,
        *,
        version: str | None,
        preapproved: str | None = None,
        stored: StoredView | None = None,
    ) -> Decision:
        """Ask for one call's requests (:meth:`ApprovalGate.decide_write`)."""
        ...


def _hidden(name: str) -> bool:
    return any(name == word or name.endswith(f"_{word}") for word in HIDDEN_ARGUMENTS)


def _bound_arguments(call: WriteCall) -> dict[str, Any]:
    """The call's arguments an approval binds: all but the hidden ones (a password is bound by its body digest)."""
    return {k: v for k, v in call.arguments.items() if not _hidden(k)}


def _first_sentence(text: str) -> str:
    """A tool description's first sentence, less its asides in parentheses (they speak to the model)."""
    first = " ".join(text.split()).split(". ")[0].rstrip(".")
    first = " ".join(re.sub(r"\s*\([^()]*\)", "", first).split())
    return first[:200] or "change data"


def _stored(call: WriteCall, plan: Sequence[RequestLine]) -> StoredView:
    """What the page shows of ``plan``: the tool's stored view, and the exact body of each request.

    Raises:
        BindingError: the view names an ETag that neither a request (If-Match) nor the guarded version binds.
    """
    if call.stored is not None:
        bound = {"requests": [line.bound() for line in plan], "guarded": call.guarded and call.guarded[1]}
        loose = unbound_etags(call.stored, bound, None if call.guarded is None else call.guarded[2])
        if loose:
            raise BindingError(f"{call.tool}: the stored view names ETag(s) {loose} that the approval does not bind")
    hidden = [value for name, value in call.arguments.items() if _hidden(name) and isinstance(value, str)]
    bodies = [
        SentBody.of(f"{line.method} {line.url}", call.bodies.get(line.body_digest, b""), line.header("content-type"),
                    hidden)
        for line in plan
        if line.body_bytes
    ]  # fmt: skip
    return (call.stored or StoredView()).with_bodies(bodies)


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
        version = None if call.guarded is None else call.guarded[2]
        decision = await self.gate.decide_write(call.ctx, call.tool, self._target(call, plan), self._dialog(call, plan),
                                                version=version, preapproved=call.preapproved,
                                                stored=_stored(call, plan))  # fmt: skip
        if isinstance(decision, NotApproved):
            if decision.path == "page" and call.memo:  # the repeated call must build the same requests
                await self.gate.store.write(
                    "memo", self._memo_key(call), json.dumps(call.memo), _MEMO_TTL, only_new=False
                )
            raise WriteStop(decision.result)
        if decision.path in ("dialog", "page"):  # time passed while asking: read and check everything again
            raise Rerun(decision.fingerprint)
        call.approved = plan[1:]
        call.sent.append(line)

    def _target(self, call: WriteCall, plan: Sequence[RequestLine]) -> dict[str, Any]:
        target: dict[str, Any] = {"requests": [line.bound() for line in plan], "arguments": _bound_arguments(call)}
        if call.guarded is not None:
            target["guarded"] = call.guarded[1]
        return target

    def _memo_key(self, call: WriteCall) -> str:
        """The record of a call's made-up values while its question waits on the approval page.

        Keyed by the tool, the caller's arguments and (over HTTP) the principal, under the body key: the
        same call made again finds them, so it builds the requests the person approves there.
        """
        text = canonical_json({"tool": call.tool, "arguments": _bound_arguments(call), "principal": principal()})
        return hmac.new(self.key, text.encode("ascii"), hashlib.sha256).hexdigest()

    async def _page_memo(self, call: WriteCall) -> dict[str, str]:
        found = await self.gate.store.read("memo", self._memo_key(call))
        loaded: object = json.loads(found) if found else {}
        if not isinstance(loaded, dict):
            return {}
        return {str(k): str(v) for k, v in cast(dict[str, Any], loaded).items()}

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
            # Non-ASCII text as written (the dialog escapes what a person cannot see), not as \u escapes.
            shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            text = "(not shown)" if _hidden(name) else shown
            identifier = name.endswith(_IDENTIFIER_ENDINGS) or "://" in text  # a look-alike host stays visible
            values.append(CallerValue(label, text, identifier=identifier))
        origin, account = self.backend()
        again = call.preapproved is not None
        return WriteDialog(origin, operation, effect, tuple(plan), account, tuple(values), tuple(call.chosen), again)

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
            memo = self.gate.sealer.memo(context.request_state, name) if context.request_state else {}
            if not memo and self.gate.settings.page is not None:
                memo = await self._page_memo(WriteCall(self, context, name, dict(arguments)))
            preapproved: str | None = None
            for _ in range(RERUNS + 1):
                call = WriteCall(self, context, name, dict(arguments), memo=memo, preapproved=preapproved)
                scope = enter(call)
                try:
                    return await original(name, arguments, context)
                except WriteStop as stop:
                    return stop.result
                except Rerun as rerun:
                    preapproved, memo = rerun.fingerprint, call.memo
                except BaseExceptionGroup as group:  # raised inside a tool's task group
                    signal = _signal_in(group)
                    if signal is None:
                        raise
                    if isinstance(signal, WriteStop):
                        return signal.result
                    preapproved, memo = signal.fingerprint, call.memo
                finally:
                    leave(scope)
            text = (
                f"{name} was not run: what it would send kept changing between the question and the answer "
                f"({RERUNS} times), so each yes no longer matched. Nothing was sent."
            )
            return refusal(text, {"outcome": "kept_changing", "path": "every_write", "changed": False})

        server.call_tool = call_tool  # type: ignore[method-assign]


def _signal_in(group: BaseExceptionGroup[BaseException]) -> WriteStop | Rerun | None:
    for exc in group.exceptions:
        if isinstance(exc, WriteStop | Rerun):
            return exc
        if isinstance(exc, BaseExceptionGroup):
            found = _signal_in(cast(BaseExceptionGroup[BaseException], exc))
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
