"""The approval page's pairing routes: a new passkey, with the terminal's code and, once one exists, its yes.

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

from approval_core.page.core import PREFIX, PageCore, Refused
from approval_core.page.markup import pairing_html
from approval_core.page.passkeys import PAIRING_TTL, CeremonyFailed

__all__ = ["PairingRoutes"]

_VOUCH_COOKIE = "approval_vouch"


class PairingRoutes(PageCore):
    """The pairing page and its three POSTs (options, vouch, finish), on top of :class:`PageCore`."""

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

    async def _vouched(self, scope: str, request: Request) -> bool:
        if not self.paired():
            return True
        cookie = request.cookies.get(_VOUCH_COOKIE, "")
        note = await self.store.read("pairing", scope)
        return bool(cookie) and note == "vouched:" + hashlib.sha256(cookie.encode()).hexdigest()

    async def _pair_options(self, request: Request) -> Response:
        _, scope, _ = await self._pairing_post(request)
        party = self._party()
        if not await self._vouched(scope, request):
            vouch = json.loads(self.passkeys.authentication_options(party, await self._challenge(scope + ":vouch")))
            return JSONResponse({"authentication": vouch})
        registration = json.loads(self.passkeys.registration_options(party, await self._challenge(scope + ":new")))
        return JSONResponse({"registration": registration})

    async def _pair_vouch(self, request: Request) -> Response:
        _, scope, data = await self._pairing_post(request)
        vouch = data.get("credential")
        challenge = await self._spend_challenge(vouch, scope + ":vouch")
        try:
            self.passkeys.verify_assertion(self._party(), challenge, vouch)
        except CeremonyFailed as exc:
            raise Refused(403, f"the paired passkey did not agree: {exc}") from None
        nonce = secrets.token_urlsafe(24)
        note = "vouched:" + hashlib.sha256(nonce.encode()).hexdigest()
        await self.store.write("pairing", scope, note, PAIRING_TTL, only_new=False)
        message = "Your paired passkey agreed. Now press the button again to make the new passkey."
        response = JSONResponse({"message": message, "final": False})
        response.set_cookie(
            _VOUCH_COOKIE,
            nonce,
            max_age=int(PAIRING_TTL),
            path=f"{PREFIX}/pair/",
            secure=self._party().origin.startswith("https:"),
            httponly=True,
            samesite="strict",
        )
        return response

    async def _pair_finish(self, request: Request) -> Response:
        secret, scope, data = await self._pairing_post(request)
        if not await self._vouched(scope, request):
            raise Refused(403, "a passkey is paired already: it must agree first, in this browser (reload this page)")
        credential = data.get("credential")
        challenge = await self._spend_challenge(credential, scope + ":new")
        try:
            self.passkeys.finish_pairing(secret, self._party(), challenge, credential, self._clock())
        except CeremonyFailed as exc:
            raise Refused(403, f"no passkey was added: {exc}") from None
        await self.store.write("pairing", scope, "spent", PAIRING_TTL, only_new=False)
        if self.push is not None:
            await self.push.paired(self.server_name)
        if self.on_paired is not None:
            self.on_paired()
        message = "Paired. This passkey now approves what your MCP servers ask about on this machine's page."
        return JSONResponse({"message": message, "final": True})
