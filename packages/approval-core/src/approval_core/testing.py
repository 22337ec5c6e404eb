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
import hashlib
import http.client
import http.server
import json
import math
import os
import socket
import threading
import urllib.parse
from collections.abc import Generator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
import httpx2
import mcp_types as types
from jsonschema import Draft202012Validator, ValidationError
from mcp.client import Client, Transport
from mcp.client.session import ClientRequestContext, ClientSession, ElicitationFnT
from mcp.client.stdio import StdioServerParameters
from mcp.server.mcpserver import MCPServer
from mcp.shared.dispatcher import ProgressFnT

from approval_core.dialog import APPROVE_FIELD
from approval_core.gate import INPUT_KEY
from approval_core.policy import Effect
from approval_core.results import approval_outcome

__all__ = [
    "REVISIONS",
    "SAFE_METHODS",
    "Answer",
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
    "check_result",
    "client_error",
    "connect",
    "decline",
    "effects_problems",
    "escape_corpus",
    "http_effects",
    "listening",
    "never_answers",
    "ticked",
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
    ``isError`` result (see :mod:`approval_core.results`).

    Raises:
        AssertionError: ``result`` carries no approval outcome, or carries one
            without being an error.
    """
    approval = approval_outcome(result)
    assert approval is not None, f"no approval outcome in {result!r}"
    assert result.is_error, f"an approval outcome on a result that is not an error: {result!r}"
    return approval


@dataclass
class Listener:
    """A TCP listener on 127.0.0.1 that records whatever reaches it and answers nothing useful.

    Attributes:
        port: The port it listens on.
        received: The first bytes (up to 64 KiB) of each connection, in order.
    """

    port: int
    received: list[bytes] = field(default_factory=lambda: [])


@contextmanager
def listening() -> Generator[Listener]:
    """A :class:`Listener` on a free 127.0.0.1 port, closed on exit.

    For confinement tests: point hostile ids at ``listener.port`` and assert
    ``listener.received == []`` afterwards (no request, no credential, left
    the configured server). Each connection is read for up to 2 seconds and
    answered with ``HTTP/1.1 200 OK`` and an empty body.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    sock.settimeout(0.2)
    listener = Listener(port=sock.getsockname()[1])
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                data = b""
                try:
                    while len(data) < 65536 and b"\r\n\r\n" not in data:
                        chunk = conn.recv(4096)
                        if not chunk:
                            break
                        data += chunk
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                except OSError:
                    pass
                listener.received.append(data)

    thread = threading.Thread(target=serve, name="confinement-listener", daemon=True)
    thread.start()
    try:
        yield listener
    finally:
        stop.set()
        thread.join(timeout=5)
        sock.close()


def escape_corpus(port: int, inside: str = "book") -> list[str]:
    """Ids and paths that try to lead a request off the configured server to 127.0.0.1:``port``.

    Args:
        port: The port of a :class:`Listener` (or any other origin).
        inside: A collection name on the configured server, used where an
            escape needs a plausible path after it.

    Returns:
        Encoded slashes and dots, ``//host``, a UNC-style ``host`` after two
        backslashes, absolute URLs,
        userinfo (``a@host``), IPv6 literals, mixed and double encodings and an
        overlong path. Every one must be refused (or kept on the configured
        origin); none may reach the listener.
    """
    host = f"127.0.0.1:{port}"
    return [
        f"/%2F{host}/{inside}/a.vcf",
        f"/%2f{host}/{inside}/a.ics",
        f"//{host}/{inside}/a",
        f"///{host}/{inside}/a",
        f"\\\\{host}\\{inside}\\a",
        f"/\\{host}/{inside}/a",
        f"http://{host}/{inside}/a",
        f"HTTP://{host}/{inside}/a",
        f"https://{host}/{inside}/a",
        f"http:{host}/{inside}/a",
        f"http://user@{host}/{inside}/a",
        f"a@{host}/{inside}/a",
        f"http://[::ffff:127.0.0.1]:{port}/{inside}/a",
        f"//[::ffff:7f00:1]:{port}/{inside}/a",
        f"%2F%2F{host}%2F{inside}%2Fa",
        f"%252F%252F{host}/{inside}/a",
        f"/{inside}/..%2F..%2F%2F{host}/a",
        f"/{inside}/%2E%2E/%2E%2E//{host}/a",
        f"/{inside}/../../{host}/a",
        f"/{inside}/.%2e/other/a",
        f"{inside}/%2e%2e/%2e%2e/etc",
        f"/{inside}/%00/a",
        f"/{inside}/" + "a" * 10_000,
    ]


# ---------------------------------------------------------------- effects seen at the backend

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PROPFIND", "REPORT", "SEARCH"})
"""HTTP methods that only read (RFC 9110 §9.2.1 safe methods, and WebDAV's PROPFIND / REPORT)."""


@dataclass(frozen=True)
class Change:
    """One change a tool call was seen to make (or, for HTTP, to ask for) at its backend.

    Attributes:
        what: For HTTP: ``"<METHOD> <path>"`` and the answer's status; for a folder: the file's relative path.
        effects: The effects it may be: any one of them explains it (an unconditional HTTP ``PUT`` may create
            or replace; a ``POST`` may do anything a write can; a ``MOVE`` creates and removes); one effect when
            the recorder can tell.
        done: Whether the backend accepted it (HTTP 2xx; always true for a file seen changed).
    """

    what: str
    effects: frozenset[Effect]
    done: bool = True


def http_effects(method: str, headers: Mapping[str, str]) -> frozenset[Effect]:
    """The effects an HTTP request may have, by its method and preconditions.

    ``PUT`` with ``If-None-Match: *`` creates, with ``If-Match`` replaces (RFC 9110 §13.1); ``DELETE`` removes;
    ``MOVE`` creates at the destination and removes the source, ``COPY`` and ``MKCOL`` / ``MKCALENDAR`` create
    (RFC 4918 §9, RFC 4791 §5.3.1); an unconditional ``PUT`` creates or replaces, ``PATCH`` / ``PROPPATCH``
    replace, and a ``POST`` may be any write, a send included (what it does is the resource's business).
    Safe methods (:data:`SAFE_METHODS`) read.
    """
    method = method.upper()
    lowered = {key.lower(): value for key, value in headers.items()}
    if method in SAFE_METHODS:
        return frozenset({Effect.READS})
    if method == "PUT" and lowered.get("if-none-match", "").strip() == "*":
        return frozenset({Effect.CREATES})
    if method == "PUT" and "if-match" in lowered:
        return frozenset({Effect.REPLACES})
    if method == "PUT":
        return frozenset({Effect.CREATES, Effect.REPLACES, Effect.SENDS})
    if method == "DELETE":
        return frozenset({Effect.REMOVES})
    if method == "MOVE":
        return frozenset({Effect.CREATES, Effect.REMOVES})
    if method in {"MKCOL", "MKCALENDAR", "COPY"}:
        return frozenset({Effect.CREATES})
    if method in {"PATCH", "PROPPATCH"}:
        return frozenset({Effect.REPLACES})
    return frozenset({Effect.CREATES, Effect.REPLACES, Effect.REMOVES, Effect.SENDS})


class _HopByHop:
    names = frozenset({"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade"})


class HttpRecorder:
    """A recording reverse proxy on 127.0.0.1 in front of a real HTTP backend (not a double: it forwards all).

    Point the server under test at :attr:`url` instead of the backend's URL; every request is forwarded
    unchanged (the ``Host`` header included, so the backend's links lead back through the proxy) and its
    method, path, preconditions and answer's status are kept. :meth:`mark` and :meth:`changes_since` give
    what one tool call asked the backend to change::

        with HttpRecorder(radicale.url) as recorder:
            server = build_server(settings, CalDAVSettings(recorder.url, "willi", "secret"))
            mark = recorder.mark()
            ...  # one tool call
            changes = recorder.changes_since(mark)  # [] for a call that only read

    A server that takes an httpx2 transport can be watched without a proxy: give it
    ``recorder.transport(inner)`` (no ``upstream`` needed then).

    Args:
        upstream: The backend's base URL (``http://127.0.0.1:<port>``; a path in it is ignored), or None to
            record only through :meth:`transport`.

    Raises:
        ValueError: ``upstream`` is not an ``http://`` URL with a host.
    """

    def __init__(self, upstream: str | None = None) -> None:
        self._upstream: tuple[str, int] | None = None
        if upstream is not None:
            parsed = urllib.parse.urlsplit(upstream)
            if parsed.scheme != "http" or parsed.hostname is None:
                raise ValueError(f"upstream: an http:// URL with a host is needed, not {upstream!r}")
            self._upstream = (parsed.hostname, parsed.port or 80)
        self.seen: list[tuple[str, str, frozenset[Effect], int]] = []
        self._lock = threading.Lock()
        self._httpd: http.server.ThreadingHTTPServer | None = None
        self.url = ""

    def note(self, method: str, path: str, headers: Mapping[str, str], status: int) -> None:
        """Record one request (the proxy and :meth:`transport` call this)."""
        with self._lock:
            self.seen.append((method, path, http_effects(method, headers), status))

    def transport(self, inner: httpx2.AsyncBaseTransport) -> httpx2.AsyncBaseTransport:
        """``inner`` wrapped so that every request through it is recorded here (then forwarded unchanged)."""
        recorder = self

        class Recording(httpx2.AsyncBaseTransport):
            async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
                response = await inner.handle_async_request(request)
                recorder.note(request.method, request.url.path, dict(request.headers.items()), response.status_code)
                return response

            async def aclose(self) -> None:
                await inner.aclose()

        return Recording()

    def __enter__(self) -> HttpRecorder:
        recorder = self
        if self._upstream is None:
            return self
        upstream_address = self._upstream

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: nothing goes to stderr for each request."""

            def forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HopByHop.names}
                upstream = http.client.HTTPConnection(*upstream_address, timeout=30)
                try:
                    upstream.request(self.command, self.path, body=body, headers=headers)
                    answer = upstream.getresponse()
                    content = answer.read()
                    status, reason, answer_headers = answer.status, answer.reason, answer.getheaders()
                finally:
                    upstream.close()
                recorder.note(self.command, urllib.parse.urlsplit(self.path).path, dict(self.headers.items()), status)
                self.send_response(status, reason)
                for key, value in answer_headers:
                    if key.lower() not in _HopByHop.names and key.lower() != "content-length":
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(content)

            def __getattr__(self, name: str) -> Any:
                if name.startswith("do_"):
                    return self.forward
                raise AttributeError(name)

        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        threading.Thread(target=self._httpd.serve_forever, name="http-recorder", daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()

    def mark(self) -> int:
        """A position in the record: pass it to :meth:`changes_since`."""
        with self._lock:
            return len(self.seen)

    def changes_since(self, mark: int) -> list[Change]:
        """Every request since ``mark`` that was not a safe method, as a :class:`Change`."""
        with self._lock:
            seen = self.seen[mark:]
        return [
            Change(f"{method} {path} -> {status}", effects, 200 <= status < 300)
            for method, path, effects, status in seen
            if effects != frozenset({Effect.READS})
        ]


class FolderRecorder:
    """Watches a folder a local backend keeps its data in: each file created, replaced or removed.

    :meth:`mark` takes a snapshot (each file's SHA-256); :meth:`changes_since` compares the folder with it. A
    file written to a temporary name and renamed over the old one counts once, as replaced.

    Args:
        root: The folder (every file under it, at any depth, is watched).
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def __enter__(self) -> FolderRecorder:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def mark(self) -> dict[str, str]:
        """A snapshot: relative path -> SHA-256 of the content."""
        return {
            str(path.relative_to(self.root)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(self.root.rglob("*"))
            if path.is_file()
        }

    def changes_since(self, mark: dict[str, str]) -> list[Change]:
        """The files created, replaced or removed since ``mark`` (a :meth:`mark` snapshot)."""
        now = self.mark()
        changes = [Change(name, frozenset({Effect.CREATES})) for name in sorted(now.keys() - mark.keys())]
        changes += [Change(name, frozenset({Effect.REMOVES})) for name in sorted(mark.keys() - now.keys())]
        changes += [
            Change(name, frozenset({Effect.REPLACES}))
            for name in sorted(now.keys() & mark.keys())
            if now[name] != mark[name]
        ]
        return changes


Recorder = HttpRecorder | FolderRecorder


def effects_problems(declared: frozenset[Effect], changes: Sequence[Change]) -> list[str]:
    """What is wrong with ``changes`` (seen over one or more calls of one tool) for a tool declaring ``declared``.

    A tool that declares only :attr:`Effect.READS` may change nothing; any other tool may make only changes
    one of its declared effects explains, and must be seen making at least one (a declared change that never
    happens is a declaration to correct, or a scenario that does not exercise the tool). What is sent to
    others is out of a backend's view: :attr:`Effect.SENDS` explains a change but is never required.

    Returns:
        One sentence per problem; empty when the declaration and the behaviour agree.
    """
    changing = declared - {Effect.READS}
    if not changing:
        return [f"declared read-only, but asked for {change.what}" for change in changes]
    problems = [
        f"{change.what} may only be {'/'.join(sorted(change.effects))}, and none of these is declared "
        f"({', '.join(sorted(declared))})"
        for change in changes
        if not change.effects & declared
    ]
    if not [change for change in changes if change.done]:
        problems.append(f"declares {', '.join(sorted(changing))}, but changed nothing at the backend")
    return problems
