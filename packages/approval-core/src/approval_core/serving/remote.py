"""Serving a family server over stdio or Streamable HTTP, with bearer authentication: one call, :func:`serve`.

Every server's ``main()`` ends with ``serve(server, SERVER_NAME)``. The
transport and its protection come from the environment, the same variables
for the whole family (docs/deploy.md):

``MCP_TRANSPORT``
    ``stdio`` (default) or ``streamable-http``; anything else is refused.
``MCP_HOST`` / ``MCP_PORT`` / ``MCP_PATH``
    Where HTTP listens: default ``127.0.0.1``, ``8000``, ``/mcp``.
``MCP_PUBLIC_URL``
    The resource's canonical URL as clients reach it (default
    ``http://<host>:<port><path>``): the audience a JWT must name (RFC 8707)
    and the ``resource`` of the protected-resource metadata (RFC 9728).
``MCP_AUTH_TOKEN_FILE``
    A static bearer token in a file (one-person deployment), compared in
    constant time. The file must not be readable by group or others.
``MCP_AUTH_ISSUER`` + ``MCP_AUTH_JWKS_URL`` (+ ``MCP_AUTH_REQUIRED_SCOPES``)
    JWT access tokens signed by the issuer, verified with PyJWT against its
    JWKS: ``iss`` equal, ``aud`` containing ``MCP_PUBLIC_URL``, ``exp``
    required, ``nbf`` honoured, asymmetric algorithms only.
``MCP_ALLOWED_HOSTS`` / ``MCP_ALLOWED_ORIGINS``
    Comma lists for the Host/Origin (DNS rebinding) checks; defaults from the
    bind address and ``MCP_PUBLIC_URL``.
``MCP_WORKERS``
    Worker processes (default 1). More than one needs ``APPROVAL_STORE_URL``
    (shared single-use records) and serves 2025-11-25 without sessions.

Refused at startup (exit code 1, one line on stderr naming the setting): a
bad value, a non-loopback ``MCP_HOST`` without ``MCP_AUTH_*``,
``MCP_WORKERS`` > 1 without ``APPROVAL_STORE_URL``, and with
``APPROVAL_PAGE=true`` an ``MCP_PUBLIC_URL`` whose host is an IP address
(passkeys need a domain name) or an ``APPROVAL_PAGE_PORT`` (stdio only).

On 2025-11-25 a client opens a session (``Mcp-Session-Id``) held by the
process that answered ``initialize``; a pushed dialog runs on that session, so
replicas need session affinity. On 2026-07-28 each request stands alone (the
SDK routes it by its ``MCP-Protocol-Version`` header past the session table),
so any replica can answer.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import anyio
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
from mcp.server.auth.routes import build_resource_metadata_url
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from approval_core.console import exit_on_bad_setting, say
from approval_core.errors import SettingsError
from approval_core.page.approval_page import ApprovalPage
from approval_core.serving.bearer import (
    ASYMMETRIC_ALGORITHMS,
    JwksKeys,
    JwtVerifier,
    StaticTokenVerifier,
    read_token_file,
)
from approval_core.serving.http_settings import HttpSettings
from approval_core.serving.selection import check_tool_selection
from approval_core.serving.static_token import StaticTokenChallenge, static_token_routes
from approval_core.serving.workers import serve_workers

if TYPE_CHECKING:
    import uvicorn

__all__ = [
    "ASYMMETRIC_ALGORITHMS",
    "HttpSettings",
    "JwksKeys",
    "JwtVerifier",
    "StaticTokenVerifier",
    "build_http_app",
    "describe",
    "http_server",
    "serve",
    "verifier_for",
]

HEADERS_TIMEOUT = 10.0
"""Seconds a connection may take to deliver a request's headers (from connecting, or after the last response)."""


def _metadata_routes(settings: HttpSettings) -> list[BaseRoute]:
    """The RFC 9728 document at ``/.well-known/oauth-protected-resource<path>``, with the URLs exactly as configured.

    (The SDK's ``create_protected_resource_routes`` would turn an issuer
    ``https://idp.example.org`` into ``https://idp.example.org/``, which no
    longer equals the issuer identifier a client compares, RFC 8414 §3.3; and
    it needs an authorization server, which a static token has none of:
    RFC 9728 §2 makes ``authorization_servers`` optional.)

    With JWT authentication it names the issuer in ``authorization_servers``, as the MCP authorization spec
    requires; with a static token it names none and says so in ``resource_name`` (RFC 9728 §2), so a person
    reading the document learns that the token comes from the operator, not from a sign-in.
    """
    body: dict[str, Any] = {"resource": settings.public_url}
    if settings.issuer is not None:
        body["authorization_servers"] = [settings.issuer]
    elif settings.token_file is not None:
        body["resource_name"] = (
            "MCP server with a static bearer token: there is no authorization server; ask the operator for the token"
        )
    if settings.required_scopes:
        body["scopes_supported"] = list(settings.required_scopes)
    body["bearer_methods_supported"] = ["header"]

    async def metadata(_: Request) -> JSONResponse:
        return JSONResponse(body, headers={"Cache-Control": "public, max-age=3600"})

    path = urlsplit(str(build_resource_metadata_url(AnyHttpUrl(settings.public_url)))).path
    return [Route(path, metadata, methods=["GET"])]


class _ScopeChallenge:
    """Adds ``scope="<required scopes>"`` to the SDK's ``WWW-Authenticate`` challenges (401 and 403).

    The MCP authorization spec (2025-11-25, "Scope Challenge Handling") says a
    server SHOULD name the scopes a client must ask for; the SDK's
    ``RequireAuthMiddleware`` names only ``resource_metadata``. Wraps ``send``;
    a response without that header (an Origin refusal, a tool result) passes
    unchanged.
    """

    def __init__(self, app: ASGIApp, scopes: tuple[str, ...]) -> None:
        self.app = app
        self.param = f', scope="{" ".join(scopes)}"'.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_scope(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [
                    (name, value + self.param if name.lower() == b"www-authenticate" else value)
                    for name, value in message.get("headers", [])
                ]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_scope)


def build_http_app(
    server: MCPServer[Any], settings: HttpSettings, verifier: StaticTokenVerifier | JwtVerifier | None
) -> Starlette:
    """The ASGI app serving ``server`` at ``settings.path`` behind bearer authentication.

    Built from the SDK's parts: ``MCPServer.streamable_http_app`` (stateful
    sessions for 2025-11-25, or stateless when ``settings.workers`` > 1;
    2026-07-28 requests are always handled one by one) with the Host/Origin
    checks of ``settings`` (421 for a Host, 403 for an Origin not allowed);
    in front of it ``BearerAuthBackend`` + ``RequireAuthMiddleware`` (401
    ``invalid_token`` with ``WWW-Authenticate: Bearer ...
    resource_metadata="<url>"`` for a missing, unknown, expired or
    foreign-audience token; 403 ``insufficient_scope``) and the RFC 9728
    metadata at ``/.well-known/oauth-protected-resource<path>``.

    Args:
        server: The family server, as ``build_server`` made it.
        settings: HTTP settings with ``transport == "streamable-http"``.
        verifier: The token check; None only for a loopback bind without authentication.

    With the approval page set up (``APPROVAL_PAGE=true``), its routes are
    served beside the endpoint, outside bearer authentication, on the origin
    of ``settings.public_url``.

    Raises:
        SettingsError: naming ``MCP_PUBLIC_URL``, when the page cannot be served on its origin
            (an IP address: passkeys need a domain name).
    """
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=list(settings.allowed_hosts),
        allowed_origins=list(settings.allowed_origins),
    )
    inner = server.streamable_http_app(
        streamable_http_path=settings.path,
        stateless_http=settings.workers > 1,
        transport_security=security,
        host=settings.host,
    )

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncGenerator[None]:
        async with server.session_manager.run():
            yield

    page_routes: list[BaseRoute] = []
    page = _page_of(server)
    if page is not None:
        origin = urlsplit(settings.public_url)
        try:
            page.bind(f"{origin.scheme}://{origin.netloc}", also_hosts=settings.allowed_hosts)
        except SettingsError as exc:
            raise SettingsError(f"MCP_PUBLIC_URL={settings.public_url} cannot serve the approval page: {exc}") from None
        page_routes = page.routes()
    if verifier is None:
        return Starlette(routes=[*page_routes, Mount("/", app=inner)], lifespan=lifespan)
    metadata_url = build_resource_metadata_url(AnyHttpUrl(settings.public_url))
    guarded: ASGIApp = RequireAuthMiddleware(inner, list(settings.required_scopes), metadata_url)
    if settings.required_scopes:
        guarded = _ScopeChallenge(guarded, settings.required_scopes)
    explained: list[BaseRoute] = []
    if settings.token_file is not None:  # no authorization server: say what to send instead
        guarded = StaticTokenChallenge(guarded, server.name)
        explained = static_token_routes(server.name)
    return Starlette(
        routes=[*_metadata_routes(settings), *explained, *page_routes, Mount("/", app=guarded)],
        middleware=[
            Middleware(AuthenticationMiddleware, backend=BearerAuthBackend(verifier)),
            Middleware(AuthContextMiddleware),
        ],
        lifespan=lifespan,
    )


def verifier_for(settings: HttpSettings) -> StaticTokenVerifier | JwtVerifier | None:
    """The token check ``settings`` configure (reads the token file), or None without authentication.

    Raises:
        SettingsError: from :func:`read_token_file`.
    """
    if settings.token_file is not None:
        return StaticTokenVerifier(read_token_file(settings.token_file), settings.public_url)
    if settings.issuer is not None and settings.jwks_url is not None:
        return JwtVerifier(settings.issuer, settings.jwks_url, settings.public_url)
    return None


def serve(server: MCPServer[Any], server_name: str, environ: Mapping[str, str] | None = None) -> None:
    """Serve ``server`` on the transport the environment names; returns when it stops.

    ``MCP_TRANSPORT`` unset or ``stdio``: ``server.run("stdio")``, as before.
    ``streamable-http``: uvicorn on ``MCP_HOST:MCP_PORT`` (``MCP_WORKERS``
    processes sharing one socket), app from :func:`build_http_app`; one line
    on stderr says where and with which authentication.

    Raises:
        SystemExit: code 1 after ``<server-name>: <problem>`` on stderr, for a
            setting :meth:`HttpSettings.from_env` or :func:`read_token_file`
            refuses, or that the approval page cannot be served with over HTTP
            (an IP address in ``MCP_PUBLIC_URL``, an ``APPROVAL_PAGE_PORT``),
            over stdio when the page's port is taken on either loopback
            (``127.0.0.1``, ``::1``), or a ``TOOLS`` entry that names no tool
            of the server (:func:`~approval_core.serving.selection.check_tool_selection`).
            Nothing is served then.
    """
    try:
        check_tool_selection(server)
        settings = HttpSettings.from_env(environ)
        verifier = verifier_for(settings) if settings.transport == "streamable-http" else None
    except SettingsError as exc:
        exit_on_bad_setting(server_name, exc)
    page = _page_of(server)
    if settings.transport == "stdio":
        if page is None:
            server.run("stdio")
        else:
            from approval_core.page.loopback import LoopbackTaken, serve_stdio_with_page

            try:
                anyio.run(serve_stdio_with_page, server, server_name, page, page.settings.port)
            except LoopbackTaken as exc:
                exit_on_bad_setting(server_name, exc.strerror)
        return
    try:
        if page is not None and page.settings.port:
            raise SettingsError(
                "APPROVAL_PAGE_PORT applies to stdio only: over Streamable HTTP the approval page is served on "
                "the MCP endpoint's own origin (MCP_PUBLIC_URL); unset it"
            )
        http = http_server(server, settings, verifier)
    except SettingsError as exc:
        exit_on_bad_setting(server_name, exc)
    say(server_name, describe(settings))
    if page is not None and page.party is not None:
        say(server_name, page.status_line())
        anyio.run(page.announce_passkeys)
    if settings.workers == 1:
        http.run()
    else:
        serve_workers(http, settings.workers)


def _page_of(server: MCPServer[Any]) -> ApprovalPage | None:
    """The approval page of the gate attached to ``server`` (``APPROVAL_PAGE=true``), or None."""
    from approval_core.gate import GATE_ATTRIBUTE

    gate = getattr(server, GATE_ATTRIBUTE, None)
    page: object = getattr(gate, "page", None)
    return page if isinstance(page, ApprovalPage) else None


def describe(settings: HttpSettings) -> str:
    """The start-up line of an HTTP server: where, the resource, the authentication, the workers, the store."""
    auth = {"token-file": "static token", "jwt": f"JWTs from {settings.issuer}", None: "NO authentication"}
    store = (
        "approval records shared through APPROVAL_STORE_URL"
        if settings.store_url_set
        else "approval records in this process"
    )
    return (
        f"Streamable HTTP on {settings.host}:{settings.port}{settings.path} (resource {settings.public_url}), "
        f"{auth[settings.auth]}, {settings.workers} worker(s), {store}"
    )


def _headers_deadline_protocol() -> type[asyncio.Protocol]:
    """The h11 protocol of uvicorn with a deadline for request headers (:data:`HEADERS_TIMEOUT`).

    uvicorn has no such deadline: a client that opens connections and sends
    a header line now and then (slowloris) holds each one forever, before
    any token is checked, until the process runs out of file descriptors.
    Here a connection waiting for a request (just opened, or its last
    response complete) is closed when the headers are not complete
    :data:`HEADERS_TIMEOUT` seconds later; bytes trickling in do not extend
    it. A request in progress (a tool call, a pushed dialog, an SSE stream)
    has no deadline of this kind.
    """
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeadersDeadline(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # pyright: ignore[reportIncompatibleMethodOverride]
            super().connection_made(transport)
            self._settle()

        def handle_events(self) -> None:
            super().handle_events()
            self._settle()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._settle()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _settle(self) -> None:
            waiting = self.cycle is None or self.cycle.response_complete  # pyright: ignore[reportUnnecessaryComparison]
            if not waiting:
                self._disarm()
            elif self._deadline is None and not self.transport.is_closing():
                self._deadline = self.loop.call_later(HEADERS_TIMEOUT, self._expire)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expire(self) -> None:
            self._deadline = None
            if not self.transport.is_closing():
                self.transport.close()

    return HeadersDeadline


def http_server(
    server: MCPServer[Any], settings: HttpSettings, verifier: StaticTokenVerifier | JwtVerifier | None
) -> uvicorn.Server:
    """A uvicorn server (not started) for :func:`build_http_app` on ``settings.host:settings.port``.

    uvicorn logs at WARNING only, trusts no ``X-Forwarded-*`` headers (the
    Host check needs the real ``Host``), sends no ``Server`` header, and
    closes a connection that does not complete a request's headers within
    :data:`HEADERS_TIMEOUT` seconds.
    ``.run()`` blocks until SIGINT/SIGTERM; ``await .serve()`` runs it in an
    event loop of one's own (tests).
    """
    import uvicorn  # here, so that a stdio start does not pay for it

    config = uvicorn.Config(
        build_http_app(server, settings, verifier),
        host=settings.host,
        port=settings.port,
        log_level="warning",
        proxy_headers=False,
        server_header=False,
        lifespan="on",
        http=_headers_deadline_protocol(),
    )
    return uvicorn.Server(config)
