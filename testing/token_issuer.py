"""A test double of an OAuth authorization server: it signs JWT access tokens and serves its JWKS on 127.0.0.1.

A real authorization server (Keycloak, Authentik, ...) would need a person to
log in; the family's servers only ever see its tokens and its key set, so a
double that mints tokens with chosen claims is enough to test the resource
side of the MCP authorization spec: issuer, audience (RFC 8707), expiry,
not-before, scopes, foreign keys and algorithm confusion.

Usage::

    with token_issuer() as issuer:
        env = {"MCP_AUTH_ISSUER": issuer.issuer, "MCP_AUTH_JWKS_URL": issuer.jwks_url}
        good = issuer.token(audience="http://127.0.0.1:8000/mcp")
        stale = issuer.token(audience=..., expires_in=-60)
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

__all__ = ["KID", "IssuerDouble", "new_key", "token_issuer"]

KID = "test-key-1"


def new_key() -> rsa.RSAPrivateKey:
    """A fresh 2048-bit RSA key: a signing key this issuer does not publish (for forged tokens)."""
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@dataclass
class IssuerDouble:
    """A running issuer double (see the module docstring).

    Attributes:
        issuer: The issuer identifier, ``http://127.0.0.1:<port>`` (the ``iss`` of its tokens).
        jwks_url: ``<issuer>/jwks.json``: the JWKS with its one public RSA key (``kid`` :data:`KID`).
        key: The private signing key.
        jwks_requests: When the JWKS was fetched (one time stamp per request, failed ones too).
        published: The JWKS entries served, by ``kid`` (:meth:`withdraw` and :meth:`publish` change it).
        failing: When True, the JWKS URL answers 503 (an issuer outage).
    """

    issuer: str
    jwks_url: str
    key: rsa.RSAPrivateKey
    jwks_requests: list[float] = field(default_factory=list)
    published: dict[str, dict[str, Any]] = field(default_factory=dict)
    failing: bool = False

    def withdraw(self, kid: str = KID) -> None:
        """Stop publishing the key ``kid`` (a key the issuer revoked or rotated out)."""
        del self.published[kid]

    def publish(self, key: rsa.RSAPrivateKey, kid: str) -> None:
        """Publish the public half of ``key`` under ``kid`` (a rotation)."""
        self.published[kid] = _jwk(key, kid)

    def token(
        self,
        audience: str | Sequence[str] | None,
        *,
        scope: str | None = None,
        expires_in: float | None = 300,
        not_before_in: float | None = None,
        issuer: str | None = None,
        subject: str | None = "willi",
        signing_key: rsa.RSAPrivateKey | None = None,
        kid: str = KID,
        algorithm: str = "RS256",
        **claims: Any,
    ) -> str:
        """A signed JWT access token (RS256 unless ``algorithm`` says otherwise).

        Args:
            audience: The ``aud`` claim (None leaves it out).
            scope: The ``scope`` claim, a space list (None leaves it out).
            expires_in: Seconds from now to ``exp`` (negative: already expired; None: no ``exp``).
            not_before_in: Seconds from now to ``nbf`` (None: no ``nbf``).
            issuer: The ``iss`` claim; default this double's :attr:`issuer`.
            subject: The ``sub`` claim (None leaves it out).
            signing_key: Sign with another key (a forgery) instead of :attr:`key`.
            kid: The header's ``kid``.
            algorithm: The JWS algorithm (an RSA one: RS256, PS256, ...).
            claims: More claims, as given.
        """
        now = time.time()
        body: dict[str, Any] = {"iss": issuer or self.issuer, "iat": int(now), "client_id": "test"}
        if subject is not None:
            body["sub"] = subject
        if audience is not None:
            body["aud"] = audience if isinstance(audience, str) else list(audience)
        if scope is not None:
            body["scope"] = scope
        if expires_in is not None:
            body["exp"] = int(now + expires_in)
        if not_before_in is not None:
            body["nbf"] = int(now + not_before_in)
        body.update(claims)
        return jwt.encode(body, signing_key or self.key, algorithm=algorithm, headers={"kid": kid})

    def hmac_token_with_public_key(self, audience: str) -> str:
        """An HS256 token whose HMAC secret is the issuer's public key in PEM (the algorithm-confusion attack).

        Built by hand: PyJWT itself refuses to use a PEM public key as an HMAC secret.
        """
        pem = self.key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        now = int(time.time())
        header = {"alg": "HS256", "typ": "JWT", "kid": KID}
        body = {"iss": self.issuer, "sub": "willi", "aud": audience, "exp": now + 300}

        def b64(data: bytes) -> str:
            return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

        signing_input = f"{b64(json.dumps(header).encode())}.{b64(json.dumps(body).encode())}"
        signature = hmac.new(pem, signing_input.encode(), hashlib.sha256).digest()
        return f"{signing_input}.{b64(signature)}"

    def unsigned_token(self, audience: str) -> str:
        """A token with ``alg: none`` and no signature."""
        return jwt.encode(
            {"iss": self.issuer, "sub": "willi", "aud": audience, "exp": int(time.time()) + 300},
            None,
            algorithm="none",
            headers={"kid": KID},
        )


def _jwk(key: rsa.RSAPrivateKey, kid: str) -> dict[str, Any]:
    public = jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key(), as_dict=True)
    return {**public, "kid": kid, "use": "sig", "alg": "RS256"}


@contextlib.contextmanager
def token_issuer() -> Iterator[IssuerDouble]:
    """Run an :class:`IssuerDouble` on a free 127.0.0.1 port; stopped when the block ends."""
    key = new_key()
    double: IssuerDouble | None = None

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path != "/jwks.json" or double is None:
                self.send_error(404)
                return
            double.jwks_requests.append(time.time())
            if double.failing:
                self.send_error(503)
                return
            jwks = json.dumps({"keys": list(double.published.values())}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(jwks)))
            self.end_headers()
            self.wfile.write(jwks)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, name="token-issuer", daemon=True)
    thread.start()
    issuer = f"http://127.0.0.1:{server.server_address[1]}"
    double = IssuerDouble(issuer, f"{issuer}/jwks.json", key, published={KID: _jwk(key, KID)})
    try:
        yield double
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
