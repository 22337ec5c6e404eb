"""The scope of one tool call under the every-write profile, and what a server's code calls inside it.

:func:`before_send` is what a server's client awaits before each request;
:func:`plan_writes` announces several changing requests before the first;
:func:`stable` keeps a value the call makes up (a new UID) the same when the
call runs again. Outside the profile each is a
no-op (or, for :func:`stable`, just makes the value). The profile itself,
which asks and decides, is :mod:`approval_core.every_write.profile`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, InputRequiredResult

from approval_core.asking.dialog import Dialog
from approval_core.every_write.requests import SAFE_METHODS, RequestLine
from approval_core.page.stored import StoredView

__all__ = [
    "MEMO_LIMIT",
    "RERUNS",
    "Owner",
    "Rerun",
    "WriteCall",
    "WriteStop",
    "before_send",
    "chosen_by_server",
    "current_call",
    "enter",
    "leave",
    "origin_text",
    "plan_writes",
    "show_stored",
    "stable",
]

_CALL: ContextVar[WriteCall | None] = ContextVar("approval_core_write_call", default=None)


class Owner(Protocol):
    """What decides on a call's changing requests (:class:`approval_core.every_write.profile.EveryWrite`)."""

    key: bytes

    async def check(self, call: WriteCall, line: RequestLine) -> None:
        """Let ``line`` go out, ask for it, or stop the call."""
        ...


class _Planned(BaseException):
    """Ends one attempt of :func:`plan_writes` at its changing request, which was noted and not sent."""


class Rerun(BaseException):
    """Run the tool again from the top, with ``fingerprint`` approved (:mod:`approval_core.every_write.profile`)."""

    def __init__(self, fingerprint: str) -> None:
        super().__init__("run again after the yes")
        self.fingerprint = fingerprint


RERUNS = 3
"""Runs of one call after a yes whose requests came out different (the entry kept changing): then refused."""


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
        planned: The requests the tool announced (:func:`plan_writes`), or None.
        planning: True while :func:`plan_writes` runs an attempt (its changing request is noted, not sent).
        approved: The requests still to be sent under the yes (None until asked).
        sent: The changing requests sent so far.
        preapproved: The fingerprint a person approved in an earlier run of this call, or None.
        chosen: What the server chose from its settings where the caller gave nothing (:func:`chosen_by_server`).
        memo: Values the call made up (:func:`stable`), sealed into an ``input_required`` state and read back
            on the retry, so the retry builds the same requests.
        stored: What the guarded tool's :meth:`ApprovalGate.check` gave as ``stored=`` (for the page only).
        bodies: The exact body of each changing request, by its digest, for the page only (never bound,
            never in the dialog).
    """

    owner: Owner
    ctx: Context[Any, Any]
    tool: str
    arguments: Mapping[str, Any]
    guarded: tuple[Dialog, Mapping[str, Any], str | None] | None = None
    planned: list[RequestLine] | None = None
    planning: bool = False
    approved: list[RequestLine] | None = None
    sent: list[RequestLine] = field(default_factory=lambda: [])
    memo: dict[str, str] = field(default_factory=lambda: {})
    preapproved: str | None = None
    chosen: list[tuple[str, str]] = field(default_factory=lambda: [])
    stored: StoredView | None = None
    bodies: dict[str, bytes] = field(default_factory=lambda: {})


def chosen_by_server(label: str, value: str) -> None:
    """Show in the every-write dialog a value the server chose from its settings (a default topic).

    For a value the caller left out, so the person still sees where the change goes; a no-op outside the
    profile. ``label`` is the server's own word for it.
    """
    call = _CALL.get()
    if call is not None and (label, value) not in call.chosen:
        call.chosen.append((label, value))


def show_stored(view: StoredView) -> None:
    """Give the approval page what this call's changes touch, as stored, under the every-write profile.

    For a tool that does not ask under ``guarded`` (an edit of one task) but asks under every-write: the page
    then shows ``view`` beside the exact bodies. A guarded tool passes its view to
    :meth:`~approval_core.ApprovalGate.check` (``stored=``) instead. A no-op outside the profile. Every ETag
    the view names must be one of the call's requests' If-Match values (or the guarded ``version``);
    otherwise asking raises :class:`~approval_core.errors.BindingError`.
    """
    call = _CALL.get()
    if call is not None:
        call.stored = view


def enter(call: WriteCall) -> Token[WriteCall | None]:
    """Make ``call`` the running tool call's scope (the profile's wrapper of ``call_tool`` does this)."""
    return _CALL.set(call)


def leave(token: Token[WriteCall | None]) -> None:
    """Undo :func:`enter`."""
    _CALL.reset(token)


def current_call() -> WriteCall | None:
    """The every-write scope of the running tool call, or None (profile ``guarded``, or outside a call)."""
    return _CALL.get()


async def before_send(method: str, url: str, body: bytes | str | None, headers: Mapping[str, str]) -> None:
    """Check one request before it is sent (see the module docstring); a no-op outside the profile.

    Args:
        method: The request's method.
        url: Its absolute URL, as it will be sent.
        body: Its body (bytes, or text sent as UTF-8), or None.
        headers: Its headers (only :data:`~approval_core.every_write.requests.BOUND_HEADERS` are read).

    Raises:
        WriteStop: the person did not approve (yet), or the request is not one that was approved.
    """
    if method.upper() in SAFE_METHODS:
        return
    call = _CALL.get()
    if call is None:
        return
    line = RequestLine.of(method, url, body, headers, call.owner.key)
    if line.body_bytes:
        call.bodies[line.body_digest] = body.encode("utf-8") if isinstance(body, str) else bytes(body or b"")
    if call.planning:
        call.planned = [*(call.planned or []), line]
        raise _Planned
    await call.owner.check(call, line)


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
