"""A JWT issuer for the tests: an RSA key, its JWKS served over HTTP on 127.0.0.1, and tokens signed with it.

A test double for an authorization server (only the part a resource server
talks to: the JWKS document, RFC 7517), named as such: no real authorization
server is started. Tokens are signed with PyJWT (RS256, RFC 7519) and carry
``iss``, ``aud``, ``exp``, ``iat``, ``sub`` and ``scope`` as an MCP
authorization server issues them.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

__all__ = ["Issuer", "jwt_issuer"]


def _new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@dataclass
class Issuer:
    """The issuer: its identifier, its JWKS URL, and a signer of tokens.

    Attributes:
        issuer: The ``iss`` value (also ``MCP_AUTH_ISSUER``).
        jwks_url: Where its public keys are served (``MCP_AUTH_JWKS_URL``).
        key: The signing key (its public half is in the JWKS, ``kid`` ``test-1``).
    """

    issuer: str
    jwks_url: str
    key: rsa.RSAPrivateKey = field(repr=False)

    def token(
        self,
        *,
        audience: str | list[str],
        expires_in: float = 3600,
        issuer: str | None = None,
        key: rsa.RSAPrivateKey | None = None,
        scope: str = "",
        subject: str = "willi",
    ) -> str:
        """A signed RS256 JWT; ``expires_in`` may be negative (an expired token), ``key`` another key (forged)."""
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": issuer or self.issuer,
            "aud": audience,
            "sub": subject,
            "iat": now,
            "exp": now + int(expires_in),
        }
        if scope:
            claims["scope"] = scope
        return jwt.encode(claims, key or self.key, algorithm="RS256", headers={"kid": "test-1"})

    @staticmethod
    def other_key() -> rsa.RSAPrivateKey:
        """A key this issuer never published: a token signed with it is forged."""
        return _new_key()


@contextlib.contextmanager
def jwt_issuer() -> Iterator[Issuer]:
    """Serve a fresh key's JWKS on a free 127.0.0.1 port (a thread of this process); stop after."""
    key = _new_key()
    public = json.loads(RSAAlgorithm.to_jwk(key.public_key()))
    body = json.dumps({"keys": [{**public, "kid": "test-1", "use": "sig", "alg": "RS256"}]}).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    port = server.server_address[1]
    try:
        yield Issuer(f"http://127.0.0.1:{port}/", f"http://127.0.0.1:{port}/jwks.json", key)
    finally:
        server.shutdown()
        server.server_close()
