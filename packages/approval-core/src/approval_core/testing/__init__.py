"""Test helpers for servers built on approval-core.

Clients on either protocol revision that answer the approval dialog in every
way a person (or a broken client) can, and clients that declare form-only,
url-only or no elicitation at all::

    async with connect(server, revision="2026-07-28", answer=decline) as client:
        result = await client.call_tool("delete_event", {...})

Every client :func:`connect` returns is as strict as the strictest client
the family has met: each ``tools/call`` result is checked against the tool's
listed ``outputSchema`` with a JSON Schema Draft 2020-12 validator, formats
included (:func:`check_result`), so a result a strict client would refuse
fails the test that produced it.

:class:`DialogLog` records every dialog a client was shown, so a test can
assert that backend text never reaches one. :func:`call_once` drives one
round of a 2026-07-28 call by hand, for tampering and replay tests.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import mcp_types as types
from jsonschema import Draft202012Validator, ValidationError
from mcp.client import Client, Transport
from mcp.client.session import ClientRequestContext, ClientSession, ElicitationFnT
from mcp.client.stdio import StdioServerParameters
from mcp.server.mcpserver import MCPServer
from mcp.shared.dispatcher import ProgressFnT

from approval_core.asking.dialog import APPROVE_FIELD
from approval_core.asking.results import approval_outcome
from approval_core.gate import INPUT_KEY
from approval_core.testing.fences import outside_fences, unnumbered
from approval_core.testing.listeners import Listener, escape_corpus, listening
from approval_core.testing.recorders import (
    SAFE_METHODS,
    AuditRecorder,
    Change,
    FolderRecorder,
    HttpRecorder,
    Recorder,
    effects_problems,
    http_effects,
)

__all__ = [
    "REVISIONS",
    "SAFE_METHODS",
    "Answer",
    "AuditRecorder",
    "Change",
    "DialogLog",
    "ElicitationSupport",
    "FolderRecorder",
    "HttpRecorder",
    "Listener",
    "Recorder",
    "Revision",
    "accept",
    "answer_with",
    "approval_of",
    "asked_here_approved_there",
    "bad_content",
    "call_once",
    "cancel",
    "changes_then_approves",
    "check_result",
    "client_error",
    "connect",
    "decline",
    "effects_problems",
    "escape_corpus",
    "http_effects",
    "listening",
    "never_answers",
    "outside_fences",
    "ticked",
    "unnumbered",
    "unticked",
]

Revision = Literal["2025-11-25", "2026-07-28"]
REVISIONS: tuple[Revision, ...] = ("2025-11-25", "2026-07-28")
ElicitationSupport = Literal["form+url", "form", "url", "none"]
Answer = ElicitationFnT


def answer_with(result: types.ElicitResult | types.ErrorData) -> Answer:
    """An elicitation callback that always answers ``result``."""

    async def callback(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        return result

    return callback


ticked = types.ElicitResult(action="accept", content={APPROVE_FIELD: True})
"""The answer that approves: accepted with the box ticked."""

accept = answer_with(ticked)
"""Accept with the box ticked."""
decline = answer_with(types.ElicitResult(action="decline"))
"""Decline."""
cancel = answer_with(types.ElicitResult(action="cancel"))
"""Dismiss the dialog."""
unticked = answer_with(types.ElicitResult(action="accept", content={APPROVE_FIELD: False}))
"""Accept with the box left unticked."""
client_error = answer_with(types.ErrorData(code=types.INVALID_REQUEST, message="dialog unavailable"))
"""A client that answers the request with an error."""


def bad_content(content: dict[str, Any] | None = None) -> Answer:
    """Accept with content that is not one ticked box (default: ``{"approve": "yes"}``)."""
    return answer_with(types.ElicitResult(action="accept", content=content or {APPROVE_FIELD: "yes"}))


def changes_then_approves(change: Callable[[], object]) -> Answer:
    """A person who ticks the box while someone else makes ``change`` during the dialog.

    Any later question (the call asked again after the change) is declined.
    """
    asked: list[int] = []

    async def answer(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        asked.append(1)
        if len(asked) > 1:
            return types.ElicitResult(action="decline")
        change()
        return ticked

    return answer


async def never_answers(
    context: ClientRequestContext, params: types.ElicitRequestParams
) -> types.ElicitResult | types.ErrorData:
    """A person who never answers: waits until cancelled."""
    await anyio.sleep(math.inf)
    raise AssertionError("unreachable")  # pragma: no cover


@dataclass
class DialogLog:
    """Records the dialogs a client was shown, then answers with ``answer``.

    Attributes:
        answer: The callback that gives the answer (default: :data:`accept`).
        messages: Every dialog text shown, in order.
        schemas: The requested schema of each.
    """

    answer: Answer = accept
    messages: list[str] = field(default_factory=lambda: [])
    schemas: list[dict[str, Any]] = field(default_factory=lambda: [])

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        """Record the dialog, then answer it."""
        self.messages.append(params.message)
        if isinstance(params, types.ElicitRequestFormParams):
            self.schemas.append(dict(params.requested_schema))
        return await self.answer(context, params)


_DECLARED: dict[ElicitationSupport, types.ElicitationCapability | None] = {
    "form+url": types.ElicitationCapability(
        form=types.FormElicitationCapability(), url=types.UrlElicitationCapability()
    ),
    "form": types.ElicitationCapability(form=types.FormElicitationCapability()),
    "url": types.ElicitationCapability(url=types.UrlElicitationCapability()),
    "none": None,
}


class _DeclaringSession(ClientSession):
    """A client session that declares exactly the elicitation modes it was given."""

    declared: types.ElicitationCapability | None = None

    def _build_capabilities(self, version: str) -> types.ClientCapabilities:  # pyright: ignore[reportIncompatibleMethodOverride]
        capabilities = super()._build_capabilities(version)  # pyright: ignore[reportPrivateUsage]
        return capabilities.model_copy(update={"elicitation": self.declared})


def check_result(tool: types.Tool, result: types.CallToolResult) -> None:
    """Fail when a strict client would refuse ``result`` of ``tool``.

    The rules of the strictest client met (the TypeScript SDK client 1.x,
    ``Client.callTool``), checked with JSON Schema Draft 2020-12 (MCP
    2025-11-25, Basic, "JSON Schema Usage": the default dialect) and its
    format checks (that client validates formats too):

    * the tool's ``outputSchema`` is itself a valid 2020-12 schema;
    * a result that is not an error carries ``structuredContent`` that
      validates against it;
    * an error result carries no ``structuredContent``, or one that
      validates (that client validates whatever is present, error or not);

    and the family's own rule for errors: an error's text is the server's
    message, never the SDK's bare ``Error executing tool <name>`` (see
    :func:`approval_core.install_error_boundary`).

    Raises:
        AssertionError: naming the tool and the first failure.
    """
    if result.is_error:
        texts = [block.text for block in result.content if isinstance(block, types.TextContent)]
        bare = [text for text in texts if text.startswith("Error executing tool")]
        assert not bare, f"{tool.name}: {bare[0]!r} carries the SDK's prefix, not only the server's own message"
    schema = tool.output_schema
    if schema is None:
        return
    validator = _validator(json.dumps(schema, sort_keys=True))
    data = result.structured_content
    if data is None:
        assert result.is_error, f"{tool.name}: a result that is not an error has no structuredContent"
        return
    found: list[ValidationError] = list(validator.iter_errors(data))  # pyright: ignore[reportUnknownMemberType]
    errors = sorted(found, key=lambda error: [str(part) for part in error.path])
    assert not errors, (
        f"{tool.name}: {'error ' if result.is_error else ''}structuredContent does not match the outputSchema: "
        f"{errors[0].message} (at {list(errors[0].path)})"
    )


@functools.lru_cache(maxsize=512)
def _validator(schema_text: str) -> Draft202012Validator:
    """A checked, compiled validator for one schema (given as JSON text, so it can be cached)."""
    schema = json.loads(schema_text)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


@dataclass
class _DeclaringClient(Client):
    """A client that declares exactly the given elicitation modes and checks every tool result it receives."""

    declared: types.ElicitationCapability | None = None
    checked: bool = True
    _listed: dict[str, types.Tool] = field(default_factory=lambda: {}, init=False, repr=False)

    async def _build_session(self, exit_stack: Any) -> ClientSession:
        session = await super()._build_session(exit_stack)
        session.__class__ = _DeclaringSession
        session.declared = self.declared  # pyright: ignore[reportAttributeAccessIssue]
        return session

    async def listed_tool(self, name: str) -> types.Tool:
        """The tool ``name`` as the server lists it now (listed once per client, again when unknown)."""
        if name not in self._listed:
            cursor: str | None = None
            while True:
                page = await self.session.list_tools(params=types.PaginatedRequestParams(cursor=cursor))
                self._listed.update((tool.name, tool) for tool in page.tools)
                cursor = page.next_cursor
                if cursor is None:
                    break
        assert name in self._listed, f"{name} is not a tool the server lists"
        return self._listed[name]

    async def check(self, name: str, result: types.CallToolResult | types.InputRequiredResult) -> None:
        """Apply :func:`check_result` to a final result of tool ``name`` (an input_required round passes)."""
        if self.checked and isinstance(result, types.CallToolResult):
            check_result(await self.listed_tool(name), result)

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        read_timeout_seconds: float | None = None,
        progress_callback: ProgressFnT | None = None,
        *,
        input_responses: types.InputResponses | None = None,
        request_state: str | None = None,
        meta: types.RequestParamsMeta | None = None,
    ) -> types.CallToolResult:
        """``Client.call_tool``, then :func:`check_result` on what came back."""
        result = await super().call_tool(
            name,
            arguments,
            read_timeout_seconds,
            progress_callback,
            input_responses=input_responses,
            request_state=request_state,
            meta=meta,
        )
        await self.check(name, result)
        return result


def connect(
    server: MCPServer[Any] | Transport | StdioServerParameters,
    *,
    revision: Revision,
    answer: Answer | None = None,
    elicitation: ElicitationSupport | None = None,
    check: bool = True,
) -> AbstractAsyncContextManager[Client]:
    """A client for ``server`` on one protocol revision that checks every tool result it receives.

    Each ``call_tool`` result (and each final round :func:`call_once` drives)
    goes through :func:`check_result` against the tool's listed
    ``outputSchema``; a failure raises ``AssertionError``.

    Args:
        server: The server under test: in process, or a transport such as
            ``stdio_client(params, errlog=...)``, or stdio parameters.
        revision: ``2025-11-25`` (initialize handshake, pushed dialogs) or
            ``2026-07-28`` (per-request, input_required).
        answer: How the client answers a dialog; None for a client with no
            elicitation callback.
        elicitation: What the client declares: ``form+url`` (the SDK
            default), ``form``, ``url`` or ``none``. Default: ``form+url``
            with an ``answer``, ``none`` without one.
        check: False only for a benchmark that must not time the check.
    """
    mode = "legacy" if revision == "2025-11-25" else revision
    declared = elicitation or ("form+url" if answer is not None else "none")
    return _DeclaringClient(server, mode=mode, elicitation_callback=answer, declared=_DECLARED[declared], checked=check)


async def call_once(
    client: Client,
    tool: str,
    arguments: dict[str, Any],
    *,
    answer: types.ElicitResult | None = None,
    request_state: str | None = None,
) -> types.CallToolResult | types.InputRequiredResult:
    """One round of a 2026-07-28 ``tools/call``, driven by hand.

    Args:
        client: A client connected on 2026-07-28.
        tool: The tool's name.
        arguments: Its arguments.
        answer: The answer to send for the approval question, if any.
        request_state: The state to echo, if any (tamper with it freely).
    """
    responses: types.InputResponses | None = {INPUT_KEY: answer} if answer is not None else None
    result = await client.session.call_tool(
        tool, arguments, input_responses=responses, request_state=request_state, allow_input_required=True
    )
    if isinstance(client, _DeclaringClient):
        await client.check(tool, result)
    return result


async def asked_here_approved_there(asker: Client, answerer: Client, tool: str, arguments: dict[str, Any]) -> str:
    """Ask ``tool`` through ``asker`` and approve it (box ticked) through ``answerer``, both on 2026-07-28.

    The two clients stand for two replicas sharing a key file and a record
    store: the question minted by one must be answered through the other.
    Returns the ``requestState`` that was spent, for a replay.

    Raises:
        AssertionError: the first call was not a question, or the answer did
            not run the tool.
    """
    asked = await call_once(asker, tool, arguments)
    assert isinstance(asked, types.InputRequiredResult), asked
    assert asked.request_state is not None
    done = await call_once(answerer, tool, arguments, answer=ticked, request_state=asked.request_state)
    assert isinstance(done, types.CallToolResult), done
    assert not done.is_error, done.content
    return asked.request_state


def approval_of(result: types.CallToolResult) -> dict[str, Any]:
    """The machine-readable approval outcome of a refused call (``outcome``, ``path``, ``confirm_token``...).

    Tests read the outcome through this one function, so the place a result
    carries it is decided in one spot: ``_meta[APPROVAL_META_KEY]`` of an
    ``isError`` result (see :mod:`approval_core.asking.results`).

    Raises:
        AssertionError: ``result`` carries no approval outcome, or carries one
            without being an error.
    """
    approval = approval_outcome(result)
    assert approval is not None, f"no approval outcome in {result!r}"
    assert result.is_error, f"an approval outcome on a result that is not an error: {result!r}"
    return approval
