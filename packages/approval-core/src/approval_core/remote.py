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
import hmac
import ipaddress
import os
import signal
import stat
import sys
import threading
import time
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, cast
from urllib.parse import urlsplit

import anyio
import anyio.to_thread
import jwt
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
from mcp.server.auth.provider import AccessToken
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

from approval_core.errors import SettingsError
from approval_core.page import ApprovalPage
from approval_core.settings import STORE_URL_ENV
from approval_core.startup import exit_on_bad_setting, say

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

TRANSPORTS: Final = ("stdio", "streamable-http")
ASYMMETRIC_ALGORITHMS: Final = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
)
"""The JWS algorithms a JWT may be signed with: public-key ones only (no ``none``, no HMAC with a public key)."""
MIN_STATIC_TOKEN: Final = 32
JWKS_TIMEOUT: Final = 10
"""Seconds one JWKS fetch may take."""
JWKS_LIFESPAN: Final = 300
"""Seconds a fetched JWKS is used before it is fetched again."""
JWKS_COOLDOWN: Final = 30
"""Seconds between two JWKS fetches started by an unknown ``kid`` or after a failed fetch."""
LOOPBACK_NAMES: Final = ("localhost",)
HEADERS_TIMEOUT = 10.0
"""Seconds a connection may take to deliver a request's headers (from connecting, or after the last response)."""


def _loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _comma_list(value: str | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    return tuple(part.strip() for part in value.split(",") if part.strip())


@dataclass(frozen=True, slots=True)
class HttpSettings:
    """The transport settings of one server process, read by :meth:`from_env`.

    Attributes:
        transport: ``stdio`` or ``streamable-http``.
        host, port, path: Where HTTP listens (``path`` starts with ``/``).
        public_url: The canonical resource URL (RFC 8707 audience, RFC 9728 ``resource``).
        token_file: Path of the static bearer token, or None.
        issuer, jwks_url: The JWT issuer and its JWKS URL, or None.
        required_scopes: Scopes every JWT must carry (space list in the environment).
        allowed_hosts, allowed_origins: Host/Origin values accepted (``name:*`` = any port).
        workers: Worker processes (>= 1).
        store_url_set: Whether ``APPROVAL_STORE_URL`` is set (only its presence is read here).
    """

    transport: Literal["stdio", "streamable-http"] = "stdio"
    host: str = "127.0.0.1"
    port: int = 8000
    path: str = "/mcp"
    public_url: str = "http://127.0.0.1:8000/mcp"
    token_file: Path | None = None
    issuer: str | None = None
    jwks_url: str | None = None
    required_scopes: tuple[str, ...] = ()
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    workers: int = 1
    store_url_set: bool = False

    @property
    def auth(self) -> Literal["token-file", "jwt"] | None:
        """Which authentication is configured: ``token-file``, ``jwt`` or None."""
        if self.token_file is not None:
            return "token-file"
        if self.issuer is not None:
            return "jwt"
        return None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> HttpSettings:
        """Read and check the ``MCP_*`` settings (and the presence of ``APPROVAL_STORE_URL``).

        Raises:
            SettingsError: naming the variable and the rule, for a bad value, an
                incomplete or doubled authentication, a non-loopback ``MCP_HOST``
                without authentication, or ``MCP_WORKERS`` > 1 without
                ``APPROVAL_STORE_URL``. Nothing is checked beyond
                ``MCP_TRANSPORT`` when it is ``stdio``.
        """
        env = os.environ if environ is None else environ
        transport = env.get("MCP_TRANSPORT", "stdio")
        if transport not in TRANSPORTS:
            raise SettingsError(f"MCP_TRANSPORT must be 'stdio' or 'streamable-http', not {transport!r}")
        if transport == "stdio":
            return cls()
        host = env.get("MCP_HOST", "127.0.0.1").strip()
        if not host:
            raise SettingsError("MCP_HOST must not be empty (default 127.0.0.1)")
        port_text = env.get("MCP_PORT", "8000")
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise SettingsError(f"MCP_PORT must be a whole number from 1 to 65535, not {port_text!r}")
        port = int(port_text)
        path = env.get("MCP_PATH", "/mcp")
        if not path.startswith("/") or any(c in path for c in "?# "):
            raise SettingsError(f"MCP_PATH must be a path starting with '/' (no query, no spaces), not {path!r}")
        bracketed = f"[{host}]" if ":" in host else host
        public_url = env.get("MCP_PUBLIC_URL", f"http://{bracketed}:{port}{path}")
        parts = urlsplit(public_url)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
            raise SettingsError(
                f"MCP_PUBLIC_URL must be an absolute http(s) URL without query or fragment, not {public_url!r}"
            )
        token_file = env.get("MCP_AUTH_TOKEN_FILE") or None
        issuer = env.get("MCP_AUTH_ISSUER") or None
        jwks_url = env.get("MCP_AUTH_JWKS_URL") or None
        if token_file and (issuer or jwks_url):
            raise SettingsError("MCP_AUTH_TOKEN_FILE and MCP_AUTH_ISSUER/MCP_AUTH_JWKS_URL exclude each other: set one")
        if bool(issuer) != bool(jwks_url):
            raise SettingsError("MCP_AUTH_ISSUER and MCP_AUTH_JWKS_URL go together: set both or neither")
        for name, url in (("MCP_AUTH_ISSUER", issuer), ("MCP_AUTH_JWKS_URL", jwks_url)):
            if url is not None and urlsplit(url).scheme not in ("http", "https"):
                raise SettingsError(f"{name} must be an http(s) URL, not {url!r}")
        scopes = tuple(env.get("MCP_AUTH_REQUIRED_SCOPES", "").split())
        if scopes and not issuer:
            raise SettingsError("MCP_AUTH_REQUIRED_SCOPES applies to JWTs: set MCP_AUTH_ISSUER and MCP_AUTH_JWKS_URL")
        if not _loopback(host) and not (token_file or issuer):
            raise SettingsError(
                f"MCP_HOST={host} listens beyond loopback: set MCP_AUTH_TOKEN_FILE or "
                "MCP_AUTH_ISSUER + MCP_AUTH_JWKS_URL (or bind 127.0.0.1 behind a proxy that authenticates)"
            )
        workers_text = env.get("MCP_WORKERS", "1")
        if not workers_text.isdigit() or int(workers_text) < 1:
            raise SettingsError(f"MCP_WORKERS must be a whole number of at least 1, not {workers_text!r}")
        workers = int(workers_text)
        store_url_set = bool(env.get(STORE_URL_ENV))
        if workers > 1 and not store_url_set:
            raise SettingsError(
                f"MCP_WORKERS={workers} needs {STORE_URL_ENV}: "
                "worker processes must share the single-use approval records"
            )
        public_host = parts.netloc.rsplit("@", 1)[-1]
        default_hosts = (f"{bracketed}:{port}", f"{bracketed}:*", public_host)
        if _loopback(host):
            default_hosts += ("127.0.0.1:*", "localhost:*", "[::1]:*")
        hosts = _comma_list(env.get("MCP_ALLOWED_HOSTS")) or tuple(dict.fromkeys(default_hosts))
        origin = f"{parts.scheme}://{public_host}"
        default_origins: tuple[str, ...] = (origin,)
        if _loopback(host):
            default_origins += ("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*")
        origins = _comma_list(env.get("MCP_ALLOWED_ORIGINS")) or tuple(dict.fromkeys(default_origins))
        return cls(
            transport="streamable-http",
            host=host,
            port=port,
            path=path,
            public_url=public_url,
            token_file=Path(token_file) if token_file else None,
            issuer=issuer,
            jwks_url=jwks_url,
            required_scopes=scopes,
            allowed_hosts=hosts,
            allowed_origins=origins,
            workers=workers,
            store_url_set=store_url_set,
        )


def read_token_file(path: Path) -> str:
    """The static bearer token in ``path`` (surrounding whitespace removed).

    Raises:
        SettingsError: naming ``MCP_AUTH_TOKEN_FILE`` and the file, when it
            cannot be read, is readable by group or others, or holds fewer
            than 32 characters.
    """
    try:
        mode = path.stat().st_mode
        token = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"MCP_AUTH_TOKEN_FILE {path} cannot be read: {exc.__class__.__name__}") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise SettingsError(
            f"MCP_AUTH_TOKEN_FILE {path} has mode {stat.S_IMODE(mode):o}: group and others must have no access "
            "(chmod 600)"
        )
    if len(token) < MIN_STATIC_TOKEN or any(c.isspace() for c in token):
        raise SettingsError(
            f"MCP_AUTH_TOKEN_FILE {path} must hold one token of at least {MIN_STATIC_TOKEN} characters without "
            "spaces (for example: openssl rand -base64 32)"
        )
    return token


class StaticTokenVerifier:
    """An SDK ``TokenVerifier`` for one static token, compared in constant time (``hmac.compare_digest``).

    The accepted token stands for the one person of the deployment: its
    ``AccessToken`` carries ``client_id="static-token"`` and ``resource`` =
    the public URL.
    """

    def __init__(self, token: str, resource: str) -> None:
        self._token = token.encode()
        self._resource = resource

    async def verify_token(self, token: str) -> AccessToken | None:
        """The access record for ``token`` if it is the configured one, else None."""
        if not hmac.compare_digest(token.encode(), self._token):
            return None
        return AccessToken(token=token, client_id="static-token", scopes=[], resource=self._resource)


def _declared_algorithms(data: object) -> dict[str, str]:
    """``kid`` → ``alg`` of every JWKS entry that declares both (RFC 7517 §4.4, §4.5)."""
    declared: dict[str, str] = {}
    entries = cast("dict[str, object]", data).get("keys") if isinstance(data, dict) else None
    for entry in cast("list[object]", entries) if isinstance(entries, list) else []:
        if isinstance(entry, dict):
            fields = cast("dict[str, object]", entry)
            kid, alg = fields.get("kid"), fields.get("alg")
            if isinstance(kid, str) and isinstance(alg, str):
                declared[kid] = alg
    return declared


class JwksKeys:
    """The signing keys an issuer publishes at its JWKS URL, fetched with PyJWT and kept for a while.

    The key set is fetched (PyJWT's ``PyJWKClient.fetch_data``: ``timeout``
    seconds, no redirects) when first needed, again once it is ``lifespan``
    seconds old, and early when a token names a ``kid`` the set lacks (a
    rotation), but never more than once per ``cooldown`` seconds, counting
    failed fetches too: tokens with made-up ``kid`` values, or tokens sent
    while the issuer is down, cannot turn into a request to the issuer each.
    A key the issuer withdraws stops verifying tokens once the set is
    refetched (at most ``lifespan`` seconds later); a set older than that is
    not used, so during an outage longer than ``lifespan`` every JWT is refused.
    A failed fetch keeps the set already held (until its ``lifespan`` ends), so
    a token with a made-up ``kid`` sent while the issuer is unreachable cannot
    make valid tokens fail.
    A token whose key is in the current set never waits for a fetch that
    another request started, and only one fetch runs at a time.

    Args:
        url: The JWKS URL (http or https).
        lifespan: Seconds a fetched set is used (default 300).
        cooldown: Seconds between two fetches started by an unknown ``kid``
            or following a failed fetch (default 30).
        timeout: Seconds one fetch may take (default :data:`JWKS_TIMEOUT`).
        clock: Monotonic seconds (``time.monotonic``); injectable for tests.
    """

    def __init__(
        self,
        url: str,
        *,
        lifespan: float = JWKS_LIFESPAN,
        cooldown: float = JWKS_COOLDOWN,
        timeout: float = JWKS_TIMEOUT,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = jwt.PyJWKClient(url, cache_jwk_set=False, cache_keys=False, timeout=timeout)
        self._lifespan = lifespan
        self._cooldown = cooldown
        self._clock = clock
        self._keys: dict[str, jwt.PyJWK] = {}
        self._declared: dict[str, str] = {}
        self._fetched_at: float | None = None
        self._tried_at: float | None = None
        self._fetching = threading.Lock()
        self.fetches = 0
        """How many fetches were started (for tests and diagnostics)."""

    def _fresh(self, now: float) -> bool:
        return self._fetched_at is not None and now - self._fetched_at < self._lifespan

    def algorithms(self, kid: str) -> list[str]:
        """The algorithms a token signed with key ``kid`` may use: the key's own ``alg`` when the JWKS declares one.

        RFC 7517 §4.4: ``alg`` names the algorithm intended for use with the
        key; a token whose header names another (PS256 against an RS256 key)
        is refused. Without a declared ``alg``, every algorithm of
        :data:`ASYMMETRIC_ALGORITHMS` that fits the key type.
        """
        declared = self._declared.get(kid)
        if declared is None:
            return list(ASYMMETRIC_ALGORITHMS)
        return [declared] if declared in ASYMMETRIC_ALGORITHMS else []

    def key(self, kid: object) -> jwt.PyJWK | None:
        """The published signing key named ``kid``, or None (not published, or the set cannot be fetched now).

        Blocks (in the caller's worker thread) only to fetch a set that is
        missing or older than ``lifespan``, or behind such a fetch already
        running; an unknown ``kid`` while the set is fresh never waits.
        """
        if not isinstance(kid, str):
            return None
        if self._fresh(self._clock()) and kid in self._keys:
            return self._keys[kid]
        if self._fresh(self._clock()):
            # Unknown kid with a fresh set: refetch only if nobody is fetching and the cooldown allows.
            if not self._fetching.acquire(blocking=False):
                return None
        else:
            self._fetching.acquire()
        try:
            now = self._clock()
            if self._fresh(now) and kid in self._keys:
                return self._keys[kid]
            if self._tried_at is not None and now - self._tried_at < self._cooldown:
                return None
            self._tried_at = now
            self.fetches += 1
            try:
                data = self._client.fetch_data()
                found = jwt.PyJWKSet.from_dict(data)
            except (jwt.PyJWTError, ValueError, TypeError):
                # Keep the set we have: a failed fetch (perhaps provoked by a made-up kid) must not empty it.
                return None
            declared = _declared_algorithms(data)
            self._keys = {k.key_id: k for k in found.keys if k.key_id and k.public_key_use in ("sig", None)}
            self._declared = declared
            self._fetched_at = self._clock()
            return self._keys.get(kid)
        finally:
            self._fetching.release()


class JwtVerifier:
    """An SDK ``TokenVerifier`` for JWT access tokens (RFC 9068) signed by one issuer.

    The signing key is the JWKS entry named by the token's ``kid``, looked up
    in a worker thread through :class:`JwksKeys` (the key set used for at
    most 300 s, so a withdrawn key stops working; refetched for an unknown
    ``kid`` or after a failed fetch at most once per 30 s).
    A token is accepted only when its signature verifies with an algorithm
    of :data:`ASYMMETRIC_ALGORITHMS`, ``iss`` equals ``issuer``, ``aud``
    contains ``audience`` (RFC 8707; the ``MCP_PUBLIC_URL``), ``exp`` is
    present and not past, ``nbf`` (if present) is not in the future, ``sub``
    is a non-empty string (RFC 9068 §2.2: the principal a 2025-11-25 session
    and every approval is bound to), and, where the JWKS entry declares an
    ``alg``, the token uses exactly that algorithm (RFC 7517 §4.4). Header
    parameters that point elsewhere for a key (``jku``, ``x5u``, ``jwk``) are
    ignored.
    Scopes come from the ``scope`` claim (space list) or ``scp`` (list); the
    SDK's ``RequireAuthMiddleware`` compares them with
    ``MCP_AUTH_REQUIRED_SCOPES`` and answers 403 ``insufficient_scope`` when
    one is missing. Any other failure returns None (401 ``invalid_token``).
    """

    def __init__(
        self, issuer: str, jwks_url: str, audience: str, leeway: float = 0, keys: JwksKeys | None = None
    ) -> None:
        self.issuer = issuer
        self.audience = audience
        self.leeway = leeway
        self.keys = JwksKeys(jwks_url) if keys is None else keys

    def _claims(self, token: str) -> dict[str, Any] | None:
        try:
            kid = jwt.get_unverified_header(token).get("kid")
            key = self.keys.key(kid)
            if key is None:
                return None
            claims = jwt.decode(
                token,
                key.key,
                algorithms=self.keys.algorithms(str(kid)),
                audience=self.audience,
                issuer=self.issuer,
                leeway=self.leeway,
                options={"require": ["exp", "iss", "aud", "sub"], "verify_signature": True},
            )
        except (jwt.PyJWTError, ValueError, TypeError):
            return None
        subject = claims.get("sub")
        if not isinstance(subject, str) or not subject.strip():
            return None  # RFC 9068 §2.2: sub names the principal; an empty one names nobody
        return claims

    async def verify_token(self, token: str) -> AccessToken | None:
        """The access record for a valid ``token``, or None (see the class)."""
        claims = await anyio.to_thread.run_sync(self._claims, token)
        if claims is None:
            return None
        scope = claims.get("scope")
        scopes = scope.split() if isinstance(scope, str) else [s for s in claims.get("scp", []) if isinstance(s, str)]
        client = claims.get("client_id") or claims.get("azp") or claims.get("sub") or "unknown"
        return AccessToken(
            token=token,
            client_id=str(client),
            scopes=scopes,
            expires_at=int(claims["exp"]),
            resource=self.audience,
            subject=str(claims["sub"]),
            claims={"iss": claims["iss"]},
        )


def _metadata_routes(settings: HttpSettings) -> list[BaseRoute]:
    """The RFC 9728 document at ``/.well-known/oauth-protected-resource<path>``, with the URLs exactly as configured.

    (The SDK's ``create_protected_resource_routes`` would turn an issuer
    ``https://idp.example.org`` into ``https://idp.example.org/``, which no
    longer equals the issuer identifier a client compares, RFC 8414 §3.3; and
    it needs an authorization server, which a static token has none of:
    RFC 9728 §2 makes ``authorization_servers`` optional.)
    """
    body: dict[str, Any] = {"resource": settings.public_url}
    if settings.issuer is not None:
        body["authorization_servers"] = [settings.issuer]
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
    return Starlette(
        routes=[*_metadata_routes(settings), *page_routes, Mount("/", app=guarded)],
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
            (an IP address in ``MCP_PUBLIC_URL``, an ``APPROVAL_PAGE_PORT``).
            Nothing is served then.
    """
    try:
        settings = HttpSettings.from_env(environ)
        verifier = verifier_for(settings) if settings.transport == "streamable-http" else None
    except SettingsError as exc:
        exit_on_bad_setting(server_name, exc)
    page = _page_of(server)
    if settings.transport == "stdio":
        if page is None:
            server.run("stdio")
        else:
            from approval_core.page_server import serve_stdio_with_page

            port = page.settings.port
            anyio.run(serve_stdio_with_page, server, server_name, page, port)
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
    if settings.workers == 1:
        http.run()
    else:
        _serve_workers(http, settings.workers)


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


def _serve_workers(http: uvicorn.Server, count: int) -> None:  # pragma: no cover - forks; not measurable in-process
    """Bind once, fork ``count`` children serving the one socket, forward SIGTERM/SIGINT, exit 1 if a child failed.

    Forked rather than spawned: the children inherit the built server
    (uvicorn's own ``workers=`` needs an import string to rebuild it).
    """
    sock = http.config.bind_socket()
    children: list[int] = []
    for _ in range(count):
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                http.run(sockets=[sock])
            except BaseException:
                code = 1
            os._exit(code)
        children.append(pid)
    sock.close()

    def stop(_signum: int, _frame: object) -> None:
        for child in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    failed = False
    for child in children:
        try:
            _, status = os.waitpid(child, 0)
        except ChildProcessError:
            continue
        failed = failed or os.waitstatus_to_exitcode(status) != 0
    if failed:
        sys.exit(1)
