r"""Who may call a server over HTTP: a static bearer token, or JWT access tokens checked against a JWKS.

The token checks of :func:`approval_core.serving.remote.serve` (``MCP_AUTH_TOKEN_FILE``,
``MCP_AUTH_ISSUER`` + ``MCP_AUTH_JWKS_URL``): SDK ``TokenVerifier``\ s that
give an ``AccessToken`` for a valid token and None otherwise (401).
PyJWT is imported on first use, so a server without JWTs does not pay for it.
"""

from __future__ import annotations

import hmac
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

import anyio.to_thread
from mcp.server.auth.provider import AccessToken

from approval_core.errors import SettingsError

if TYPE_CHECKING:
    import jwt

__all__ = [
    "ASYMMETRIC_ALGORITHMS",
    "JWKS_COOLDOWN",
    "JWKS_LIFESPAN",
    "JWKS_TIMEOUT",
    "MIN_STATIC_TOKEN",
    "JwksKeys",
    "JwtVerifier",
    "StaticTokenVerifier",
    "read_token_file",
]

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
        import jwt  # here, so that a server without JWT authentication does not pay for it

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
            import jwt

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
        import jwt

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
