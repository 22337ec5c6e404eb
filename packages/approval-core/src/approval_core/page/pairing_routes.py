"""The approval page's pairing routes: a new passkey, with the terminal's code and, once one exists, its vouch.

Every POST carries the code the pairing command shows in its terminal. The
first passkey is kept when made. Any later one is made first (``finish``)
and held, for this browser only (an http-only cookie), until a passkey in
the chain signs the statement that names it (``options`` then ``vouch``):
the signature is kept in the file with the new entry
(:mod:`approval_core.page.chain`).

See :mod:`approval_core.page.pairing` for the command that opens a pairing and
:mod:`approval_core.page.approval_page` for the routes' place in the page.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from approval_core.page.core import CHALLENGE_TTL, PREFIX, PageCore, Refused
from approval_core.page.markup import pairing_html
from approval_core.page.passkeys import PAIRING_TTL, CeremonyFailed, b64url

__all__ = ["PairingRoutes"]

_VOUCH_COOKIE = "approval_vouch"


class PairingRoutes(PageCore):
    """The pairing page and its three POSTs (options, finish, vouch), on top of :class:`PageCore`."""

    @staticmethod
    def _pairing_scope(secret: str) -> str:
        return "p:" + hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()

    def _open_pairing(self, secret: str) -> None:
        if not self.passkeys.pairing_open(secret, self._clock()):
            raise Refused(410, "this pairing link is not valid (used, replaced or expired); start a new one")

    async def _pairing_post(self, request: Request) -> tuple[str, str, dict[str, Any]]:
        """The secret, scope and body of a pairing POST carrying the terminal's code, or raise :class:`Refused`."""
        secret = request.path_params["secret"]
        self._open_pairing(secret)
        scope = self._pairing_scope(secret)
        data = await self._posted(request, scope)
        if not self.passkeys.pairing_code_ok(secret, data.get("code"), self._clock()):
            raise Refused(403, "that is not the code the pairing command shows in its terminal")
        return secret, scope, data

    async def _pair_page(self, request: Request) -> Response:
        secret = request.path_params["secret"]
        self._open_pairing(secret)
        html = pairing_html(self.csrf(self._pairing_scope(secret)), secret, vouch=self.paired())
        return HTMLResponse(html)

    async def _candidate(self, scope: str, request: Request) -> dict[str, Any] | None:
        """The new passkey this browser made on this pairing and that awaits a paired one's vouch, or None."""
        cookie = request.cookies.get(_VOUCH_COOKIE, "")
        note = await self.store.read("pairing", scope)
        if not cookie or not note or not note.startswith("candidate:"):
            return None
        held = json.loads(note.removeprefix("candidate:"))
        if not secrets.compare_digest(str(held.get("cookie", "")), hashlib.sha256(cookie.encode()).hexdigest()):
            return None
        return held

    async def _pair_options(self, request: Request) -> Response:
        _, scope, _ = await self._pairing_post(request)
        party = self._party()
        held = await self._candidate(scope, request) if self.paired() else None
        if held is not None:  # a fresh statement (nonce, chain head) for each ask of the paired passkey
            previous, nonce, challenge = self.passkeys.vouch_statement(party, dict(held["entry"]))
            held = {**held, "previous": previous, "nonce": nonce}
            await self.store.write("pairing", scope, "candidate:" + json.dumps(held), PAIRING_TTL, only_new=False)
            await self.store.put("challenge", b64url(challenge), scope + ":vouch", CHALLENGE_TTL)
            vouch = json.loads(self.passkeys.authentication_options(party, challenge))
            return JSONResponse({"authentication": vouch})
        registration = json.loads(self.passkeys.registration_options(party, await self._challenge(scope + ":new")))
        return JSONResponse({"registration": registration})

    async def _pair_finish(self, request: Request) -> Response:
        """The new passkey: kept at once if it is the first, else held for a paired passkey's vouch."""
        secret, scope, data = await self._pairing_post(request)
        credential = data.get("credential")
        challenge = await self._spend_challenge(credential, scope + ":new")
        try:
            entry = self.passkeys.new_passkey(secret, self._party(), challenge, credential, self._clock())
            if not self.paired():
                self.passkeys.keep_first(secret, self._party(), entry, self._clock())
                return await self._paired(scope)
        except CeremonyFailed as exc:
            raise Refused(403, f"no passkey was added: {exc}") from None
        cookie = secrets.token_urlsafe(24)
        held = {"cookie": hashlib.sha256(cookie.encode()).hexdigest(), "entry": entry}
        await self.store.write("pairing", scope, "candidate:" + json.dumps(held), PAIRING_TTL, only_new=False)
        message = (
            "The new passkey is made, and approves nothing yet. Press the button again: "
            "a passkey paired before must agree to it."
        )
        response = JSONResponse({"message": message, "final": False})
        response.set_cookie(
            _VOUCH_COOKIE,
            cookie,
            max_age=int(PAIRING_TTL),
            path=f"{PREFIX}/pair/",
            secure=self._party().origin.startswith("https:"),
            httponly=True,
            samesite="strict",
        )
        return response

    async def _pair_vouch(self, request: Request) -> Response:
        """A paired passkey's assertion over the statement naming the held new passkey: keep both, chained."""
        secret, scope, data = await self._pairing_post(request)
        held = await self._candidate(scope, request)
        if held is None or "nonce" not in held:
            raise Refused(403, "no new passkey of this browser awaits agreement; press the button to make one")
        vouch = data.get("credential")
        await self._spend_challenge(vouch, scope + ":vouch")
        statement = (str(held["previous"]), str(held["nonce"]))
        try:
            self.passkeys.keep_vouched(secret, self._party(), dict(held["entry"]), statement, vouch, self._clock())
        except CeremonyFailed as exc:
            raise Refused(403, f"the paired passkey did not agree: {exc}") from None
        return await self._paired(scope)

    async def _paired(self, scope: str) -> Response:
        await self.store.write("pairing", scope, "spent", PAIRING_TTL, only_new=False)
        if self.push is not None:
            await self.push.paired(self.server_name)
        if self.on_paired is not None:
            self.on_paired()
        message = "Paired. This passkey now approves what your MCP servers ask about on this machine's page."
        return JSONResponse({"message": message, "final": True})
