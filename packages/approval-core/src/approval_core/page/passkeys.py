"""Pairing a passkey: the terminal's code, the new passkey's registration and, after the first, a paired one's vouch.

The first passkey of an rp id is kept as made. Every later one is first
made (registered), then kept only with the vouch of a passkey already in the
chain: an assertion over the statement that names the new key, the file and
the chain's last entry (:mod:`approval_core.page.chain`). The file itself is
:mod:`approval_core.page.passkey_file`; the page's routes are
:mod:`approval_core.page.pairing_routes`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from typing import Any, cast

from approval_core.page.chain import FirstKeyRecord, head_digest, new_nonce, vouch_challenge, walk
from approval_core.page.passkey_file import (
    CEREMONY_TIMEOUT_MS,
    CeremonyFailed,
    Passkey,
    RelyingParty,
    StoredPasskeys,
    b64url,
    default_passkeys_path,
    unb64url,
)

__all__ = [
    "PAIRING_TTL",
    "CeremonyFailed",
    "Passkey",
    "PasskeyFile",
    "RelyingParty",
    "b64url",
    "default_passkeys_path",
    "unb64url",
]

PAIRING_TTL = 600.0
"""Seconds a pairing link stays valid (10 minutes)."""
PAIRING_TRIES = 5
"""Wrong terminal codes after which a pairing is closed."""
_PAIRING_ALPHABET = "ACDEFGHJKLMNPQRTUVWXY34679"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class PasskeyFile(StoredPasskeys):
    """The passkey file with its pairing steps (see :class:`~approval_core.page.passkey_file.StoredPasskeys`)."""

    def start_pairing(self, now: float, ttl: float = PAIRING_TTL) -> tuple[str, str]:
        """Begin a pairing; return ``(secret, code)``.

        The secret goes into the pairing page's URL; the code (``XXXX-XXXX``,
        about 36 bits) is shown only in the person's terminal and must be
        typed into the page, so a link seen elsewhere (a browser's tab list,
        a process's command line, a screen the model reads) pairs nothing.
        Both are kept as SHA-256 digests, expiring at ``now + ttl``; a new
        pairing replaces one not yet used.
        """
        secret = secrets.token_urlsafe(24)
        code = "-".join("".join(secrets.choice(_PAIRING_ALPHABET) for _ in range(4)) for _ in range(2))
        with self._locked():
            contents = self._load()
            contents.pairing = {"digest": _sha(secret), "code": _sha(f"{secret}:{code}"), "expires": now + ttl}
            contents.pairing["wrong"] = 0
            self._save(contents)
        return secret, code

    def pairing_open(self, secret: str, now: float) -> bool:
        """Whether ``secret`` is the pairing secret in the file and has not expired."""
        pairing = self._load().pairing
        if not pairing:
            return False
        return secrets.compare_digest(str(pairing.get("digest", "")), _sha(secret)) and float(pairing["expires"]) > now

    def pairing_code_ok(self, secret: str, code: object, now: float) -> bool:
        """Whether ``code`` is the open pairing's terminal code; :data:`PAIRING_TRIES` wrong codes close the pairing."""
        with self._locked():
            contents = self._load()
            pairing = contents.pairing
            if not pairing or not self.pairing_open(secret, now):
                return False
            typed = str(code).strip().upper() if isinstance(code, str) else ""
            if secrets.compare_digest(str(pairing.get("code", "")), _sha(f"{secret}:{typed}")):
                return True
            wrong = int(pairing.get("wrong", 0)) + 1
            contents.pairing = None if wrong >= PAIRING_TRIES else {**pairing, "wrong": wrong}
            self._save(contents)
            return False

    def registration_options(self, party: RelyingParty, challenge: bytes) -> str:
        """The JSON ``PublicKeyCredentialCreationOptions`` for a new passkey (user verification required)."""
        from webauthn import generate_registration_options, options_to_json
        from webauthn.helpers.structs import (
            AuthenticatorSelectionCriteria,
            ResidentKeyRequirement,
            UserVerificationRequirement,
        )

        contents = self._load()
        options = generate_registration_options(
            rp_id=party.rp_id,
            rp_name=party.name,
            user_id=unb64url(contents.user_id),
            user_name="approver",
            user_display_name="The person who approves",
            challenge=challenge,
            timeout=CEREMONY_TIMEOUT_MS,
            authenticator_selection=AuthenticatorSelectionCriteria(
                resident_key=ResidentKeyRequirement.PREFERRED,
                user_verification=UserVerificationRequirement.REQUIRED,
            ),
            exclude_credentials=self._descriptors(party.rp_id),
        )
        return options_to_json(options)

    def new_passkey(
        self, secret: str, party: RelyingParty, challenge: bytes, response: object, now: float
    ) -> dict[str, Any]:
        """Verify a registration response; return the new passkey's entry (not kept yet).

        The entry is ``{"id", "public_key", "rp_id", "added"}``; keep it with
        :meth:`keep_first` (no passkey paired yet) or :meth:`keep_vouched`.

        Raises:
            CeremonyFailed: the secret is not open, or the response does not verify
                (wrong challenge or origin, no user verification).
        """
        from webauthn import verify_registration_response
        from webauthn.helpers.exceptions import InvalidRegistrationResponse

        if not self.pairing_open(secret, now):
            raise CeremonyFailed("this pairing link is not valid any more; start a new one")
        try:
            verified = verify_registration_response(
                credential=response,  # pyright: ignore[reportArgumentType]
                expected_challenge=challenge,
                expected_rp_id=party.rp_id,
                expected_origin=party.origin,
                require_user_verification=True,
            )
        except (InvalidRegistrationResponse, ValueError, TypeError, KeyError) as exc:
            raise CeremonyFailed(f"the new passkey did not verify: {exc}") from None
        return {
            "id": b64url(verified.credential_id),
            "public_key": b64url(verified.credential_public_key),
            "rp_id": party.rp_id,
            "added": dt.datetime.fromtimestamp(now, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }

    def keep_first(self, secret: str, party: RelyingParty, entry: dict[str, Any], now: float) -> None:
        """Keep ``entry`` as the rp id's first passkey (the root of its chain); the pairing is then spent.

        Raises:
            CeremonyFailed: the secret is not open any more, or a passkey is paired already (it must vouch).
        """
        with self._locked():
            if not self.pairing_open(secret, now):
                raise CeremonyFailed("this pairing link is not valid any more; start a new one")
            if self.chain(party.rp_id):
                raise CeremonyFailed("a passkey is paired already: it must agree to the new one")
            contents = self._load()
            contents.credentials.append(entry)
            contents.pairing = None
            self._save(contents)
            FirstKeyRecord(self.path).remember(party.rp_id, entry)

    def vouch_statement(self, party: RelyingParty, entry: dict[str, Any]) -> tuple[str, str, bytes]:
        """What a paired passkey signs to vouch for ``entry``: ``(previous, nonce, challenge)``.

        ``previous`` is the digest of the chain's last entry now and ``nonce``
        a fresh one; both go to :meth:`keep_vouched` with the assertion.
        """
        previous = head_digest(self.chain(party.rp_id))
        nonce = new_nonce()
        return previous, nonce, vouch_challenge(self._load().user_id, previous, entry, nonce)

    def keep_vouched(
        self,
        secret: str,
        party: RelyingParty,
        entry: dict[str, Any],
        statement: tuple[str, str],
        response: object,
        now: float,
    ) -> None:
        """Keep ``entry`` with its vouch: ``response``, a paired passkey's assertion over :meth:`vouch_statement`.

        Args:
            secret: The pairing link's secret (open, else nothing is kept).
            party: The page's relying party (the assertion's rp id and origin).
            entry: The new passkey's entry, from :meth:`new_passkey`.
            statement: ``(previous, nonce)`` as :meth:`vouch_statement` gave them.
            response: The paired passkey's assertion (WebAuthn JSON), with user verification.
            now: Wall-clock seconds.

        Raises:
            CeremonyFailed: the secret is not open any more; the chain changed since the statement
                (another passkey was paired meanwhile); the assertion is not a paired passkey's,
                with user verification, over that statement.
        """
        previous, nonce = statement
        with self._locked():
            if not self.pairing_open(secret, now):
                raise CeremonyFailed("this pairing link is not valid any more; start a new one")
            contents = self._load()
            if head_digest(self.chain(party.rp_id)) != previous:
                raise CeremonyFailed("the passkey file changed meanwhile; start the pairing again")
            challenge = vouch_challenge(contents.user_id, previous, entry, nonce)
            signer = self.verify_assertion(party, challenge, response)
            try:
                answer = cast("dict[str, object]", cast("dict[str, object]", response)["response"])
                vouch = {
                    "by": b64url(signer.credential_id),
                    "nonce": nonce,
                    "client_data": b64url(unb64url(str(answer["clientDataJSON"]))),
                    "authenticator_data": b64url(unb64url(str(answer["authenticatorData"]))),
                    "signature": b64url(unb64url(str(answer["signature"]))),
                }
            except (KeyError, TypeError, ValueError):
                raise CeremonyFailed("the paired passkey's answer is not a WebAuthn assertion") from None
            credentials = [*contents.credentials, {**entry, "vouch": vouch}]
            if entry["id"] not in {kept["id"] for kept in walk(contents.user_id, credentials, party.rp_id)[0]}:
                raise CeremonyFailed("the paired passkey's vouch does not chain the new passkey; nothing was added")
            contents.credentials = credentials
            contents.pairing = None
            self._save(contents)
