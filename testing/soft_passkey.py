"""A software passkey: a test double for an authenticator, where a test must sign WebAuthn assertions by hand.

Test support (on ``sys.path`` through the family's pytest plugin). The key is
a real P-256 key (``cryptography``), its public key COSE-encoded (RFC 9053
§7.1.1, as WebAuthn stores it) and its assertions built as WebAuthn Level 3
§6.1 and §7.2 describe (authenticator data with the rp id hash and the UP/UV
flags, a signature over it and the client data hash), so the page's real
verification (py_webauthn) checks them. It plays what no browser does on
request: a process that writes the passkey file by hand, and a signer of
chain entries arranged for an attack. The browser tests use Chromium's
virtual authenticator instead; :meth:`SoftPasskey.devtools_credential` hands
this key to one.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from dataclasses import dataclass, field
from typing import Any

import cbor2
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

__all__ = ["SoftPasskey", "b64url"]


def b64url(data: bytes) -> str:
    """Base64url without padding (RFC 4648 §5)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


@dataclass
class SoftPasskey:
    """One P-256 passkey held in memory: credential id, private key."""

    credential_id: bytes = field(default_factory=lambda: secrets.token_bytes(16))
    key: ec.EllipticCurvePrivateKey = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))

    def cose(self) -> bytes:
        """The COSE_Key of the public key (kty EC2, alg ES256, crv P-256)."""
        numbers = self.key.public_key().public_numbers()
        return cbor2.dumps({1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")})

    def entry(self, rp_id: str = "localhost", added: str = "2026-12-03T12:00:00Z") -> dict[str, Any]:
        """An entry of the passkey file for this key, as pairing writes one (without a vouch)."""
        return {"id": b64url(self.credential_id), "public_key": b64url(self.cose()), "rp_id": rp_id, "added": added}

    def assertion(
        self, challenge: bytes, origin: str, rp_id: str = "localhost", *, verified: bool = True
    ) -> dict[str, Any]:
        """A WebAuthn assertion (JSON form) over ``challenge`` made at ``origin``; UV set unless ``verified`` False."""
        client = json.dumps(
            {"type": "webauthn.get", "challenge": b64url(challenge), "origin": origin, "crossOrigin": False},
            separators=(",", ":"),
        ).encode()
        flags = 0x01 | (0x04 if verified else 0)
        data = hashlib.sha256(rp_id.encode()).digest() + bytes([flags]) + (0).to_bytes(4, "big")
        signature = self.key.sign(data + hashlib.sha256(client).digest(), ec.ECDSA(hashes.SHA256()))
        return {
            "id": b64url(self.credential_id),
            "rawId": b64url(self.credential_id),
            "type": "public-key",
            "response": {
                "clientDataJSON": b64url(client),
                "authenticatorData": b64url(data),
                "signature": b64url(signature),
            },
        }

    def devtools_credential(self, rp_id: str = "localhost") -> dict[str, Any]:
        """This key as a DevTools ``WebAuthn.Credential``, for a virtual authenticator (``Browser.hold_only``)."""
        private = self.key.private_bytes(
            serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        return {
            "credentialId": base64.b64encode(self.credential_id).decode(),
            "isResidentCredential": True,
            "rpId": rp_id,
            "privateKey": base64.b64encode(private).decode(),
            "userHandle": base64.b64encode(b"someone-else").decode(),
            "signCount": 0,
        }
