"""The approval page: where a person approves or denies a pending approval with a paired passkey.

Served by approval-core (``APPROVAL_PAGE=true``): over stdio on a loopback
listener, ``http://localhost:<port>`` (a secure context; WebAuthn relying
party ids cannot be IP addresses, so one passkey for ``localhost`` serves every
server of the family on the machine); over Streamable HTTP on the MCP
endpoint's own origin. Routes, all under :data:`PREFIX`:

``GET  /approval/a/<id>``            the dialog as the form dialog would show it, the code, the time left
``POST /approval/a/<id>/options``    WebAuthn request options (a fresh single-use challenge, 2 minutes)
``POST /approval/a/<id>/decide``     ``{"choice": "approve", "credential": ...}`` or ``{"choice": "deny"}``
``GET  /approval/pair/<secret>``     the pairing page of a one-time link from ``python -m approval_core pair``
``POST /approval/pair/<secret>/options``, ``.../vouch``, ``.../finish``   once a passkey is paired, its yes
                                     (``vouch``) first; then the new passkey's registration
``GET  /approval/approval.js``, ``/approval/approval.css``  the page's only script and style sheet

A GET never changes anything. Every POST must come from the page's own
origin (``Origin`` equal, ``Sec-Fetch-Site`` same-origin when sent), as JSON,
with the page's CSRF token (an HMAC of the approval id under the page key) in
``X-CSRF-Token``. Approving needs an assertion, with user verification, from
a paired passkey over a challenge this page issued for that approval;
denying needs none, since it can only stop a change. A decision is final:
the same decision again is answered as before, the opposite one or one after
expiry is refused with the reason. Every answer carries a strict
Content-Security-Policy (no inline code, nothing from elsewhere, no framing),
``X-Frame-Options: DENY``, ``Referrer-Policy: no-referrer`` and
``Cache-Control: no-store``; a request for any Host but the page's own is
refused (DNS rebinding).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Route

from approval_core.errors import SettingsError
from approval_core.page_html import approval_html, message_html, pairing_html
from approval_core.page_settings import PageSettings
from approval_core.passkeys import PAIRING_TTL, CeremonyFailed, PasskeyFile, RelyingParty, b64url, unb64url
from approval_core.pending import PendingApproval, PendingBook
from approval_core.push import Push
from approval_core.store import RecordStore, StoreUnavailable

__all__ = ["CHALLENGE_TTL", "MAX_POST_BYTES", "PREFIX", "SECURITY_HEADERS", "ApprovalPage"]

PREFIX = "/approval"
CHALLENGE_TTL = 120.0
"""Seconds a WebAuthn challenge of the page stays usable (once)."""
MAX_POST_BYTES = 65_536
"""The largest POST body the page reads, in bytes."""

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
        "form-action 'none'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}

_logger = logging.getLogger("approval_core.page")
_VOUCH_COOKIE = "approval_vouch"
_ASSETS = {"approval.js": "text/javascript; charset=utf-8", "approval.css": "text/css; charset=utf-8"}


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _challenge_of(credential: object) -> str:
    """The challenge a WebAuthn response signed (from its clientDataJSON), or raise :class:`_Refused`.

    A response made inside a cross-origin frame (``crossOrigin: true`` or a
    ``topOrigin``, WebAuthn Level 3 §5.8.1) is refused: the page is never framed.
    """
    try:
        client_data = credential["response"]["clientDataJSON"]  # type: ignore[index]  # pyright: ignore[reportIndexIssue, reportUnknownVariableType]
        client = json.loads(unb64url(str(client_data)))  # pyright: ignore[reportUnknownArgumentType]
        found = client["challenge"]
    except (TypeError, KeyError, ValueError):
        raise _Refused(400, "the passkey answer is not a WebAuthn credential") from None
    if not isinstance(found, str):
        raise _Refused(400, "the passkey answer names no challenge")
    if client.get("crossOrigin", False) is not False or "topOrigin" in client:
        raise _Refused(403, "the passkey was used inside a frame of another site")
    return found


class ApprovalPage:
    """The approval page of one server: its pending approvals, passkeys, push and routes.

    Args:
        server_name: The server whose page this is.
        settings: From ``APPROVAL_PAGE*`` (:class:`~approval_core.page_settings.PageSettings`).
        store: The gate's record store (shared through Redis by replicas).
        key: The page key (CSRF tokens); replicas derive it from the key file. Default: random per process.
        clock: Wall-clock seconds (tests).

    The page's origin is known once it is served: :meth:`bind` sets it (the
    loopback listener's port, or the HTTP endpoint's public origin).
    """

    def __init__(
        self,
        server_name: str,
        settings: PageSettings,
        store: RecordStore,
        *,
        key: bytes | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.server_name = server_name
        self.settings = settings
        self.store = store
        self.book = PendingBook(store, server_name, ttl=settings.ttl, clock=clock)
        self.passkeys = PasskeyFile(settings.passkeys_file)
        self.push = Push(settings.push_url, settings.push_token_file) if settings.push_url else None
        self._key = key if key is not None else secrets.token_bytes(32)
        self._clock = clock
        self.party: RelyingParty | None = None
        self.allowed_hosts: frozenset[str] = frozenset()
        self.on_paired: Callable[[], None] | None = None

    # ------------------------------------------------------------------ where it is

    def bind(self, origin: str, *, also_hosts: tuple[str, ...] = ()) -> None:
        """Serve the page at ``origin`` (``scheme://host[:port]``); its host is the WebAuthn rp id.

        The origin is kept as a browser writes it (host in lower case, no
        default port), so ``https://MCP.example.org:443`` is served as
        ``https://mcp.example.org``, under ``Host: mcp.example.org`` (or
        ``mcp.example.org:443``) and the names ``also_hosts`` lists exactly.

        Raises:
            SettingsError: the host is an IP address (WebAuthn rp ids are domains), or the origin has a path.
        """
        parts = urlsplit(origin)
        host = parts.hostname or ""
        if not host or host.replace(".", "").isdigit() or ":" in host or parts.path not in ("", "/"):
            raise SettingsError(
                f"the approval page's origin {origin!r} must be scheme://name[:port] with a domain name, "
                "not an IP address (passkeys are bound to a domain; use localhost on this machine)"
            )
        try:
            port = parts.port  # browsers send no default port and a lower-case host, in Host and in Origin
        except ValueError:
            raise SettingsError(f"the approval page's origin {origin!r} has no valid port") from None
        default = {"http": 80, "https": 443}.get(parts.scheme)
        netloc = host if port is None or port == default else f"{host}:{port}"
        self.party = RelyingParty(rp_id=host, origin=f"{parts.scheme}://{netloc}")
        self.allowed_hosts = frozenset({netloc, f"{host}:{port or default}", *also_hosts})

    def url_of(self, record: PendingApproval) -> str:
        """The page URL of ``record`` (it carries only the opaque id)."""
        return f"{self._party().origin}{PREFIX}/a/{record.id}"

    def pairing_url(self, secret: str) -> str:
        """The URL of the pairing page for a one-time ``secret``."""
        return f"{self._party().origin}{PREFIX}/pair/{secret}"

    def paired(self) -> bool:
        """Whether a passkey is paired for this page's rp id (False before :meth:`bind`).

        Raises:
            SettingsError: the passkey file is open to others or broken.
        """
        return self.party is not None and bool(self.passkeys.passkeys(self.party.rp_id))

    def pairing_command(self) -> str:
        """The command that pairs a passkey for this page's passkey file (``uv run`` before it from a clone)."""
        return f"python -m approval_core pair --file {self.passkeys.path}"

    def status_line(self) -> str:
        """The startup line's words: where the page is and whether a passkey is paired."""
        where = f"{self._party().origin}{PREFIX}/"
        if self.paired():
            return f"approval page at {where} — a passkey is paired"
        return f"approval page at {where} — NO passkey paired yet (run: {self.pairing_command()})"

    def _party(self) -> RelyingParty:
        if self.party is None:
            raise SettingsError("the approval page is not served yet (no origin bound)")
        return self.party

    def csrf(self, scope: str) -> str:
        """The CSRF token of a page (``a:<id>`` or ``p:<digest>``): an HMAC under the page key."""
        return b64url(hmac.new(self._key, f"csrf:{scope}".encode(), hashlib.sha256).digest()[:24])

    # ------------------------------------------------------------------ routes

    def routes(self) -> list[BaseRoute]:
        """The page's routes, to serve beside others (the HTTP endpoint) or alone (:meth:`app`)."""
        return [
            Route(PREFIX + "/a/{pid}", self._wrap(self._show), methods=["GET"]),
            Route(PREFIX + "/a/{pid}/options", self._wrap(self._options), methods=["POST"]),
            Route(PREFIX + "/a/{pid}/decide", self._wrap(self._decide), methods=["POST"]),
            Route(PREFIX + "/pair/{secret}", self._wrap(self._pair_page), methods=["GET"]),
            Route(PREFIX + "/pair/{secret}/options", self._wrap(self._pair_options), methods=["POST"]),
            Route(PREFIX + "/pair/{secret}/vouch", self._wrap(self._pair_vouch), methods=["POST"]),
            Route(PREFIX + "/pair/{secret}/finish", self._wrap(self._pair_finish), methods=["POST"]),
            Route(PREFIX + "/{asset}", self._wrap(self._asset), methods=["GET"]),
            Route(PREFIX + "/{rest:path}", self._wrap(self._nothing), methods=["GET", "POST", "HEAD"]),
        ]

    def app(self) -> Starlette:
        """An ASGI app serving only the page (the loopback listener, the pairing command)."""
        return Starlette(routes=self.routes())

    def _wrap(self, handler: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            try:
                if request.headers.get("host", "") not in self.allowed_hosts:
                    raise _Refused(421, "this page answers only under its own host name")
                response = await handler(request)
            except _Refused as refused:
                response = self._refusal(request, refused.status, refused.message)
            except (StoreUnavailable, SettingsError) as exc:
                _logger.warning("the approval page could not answer: %s", exc)
                response = self._refusal(request, 503, f"the approval page cannot answer now: {exc}")
            response.headers.update(SECURITY_HEADERS)
            return response

        return endpoint

    @staticmethod
    def _refusal(request: Request, status: int, message: str) -> Response:
        if request.method == "GET":
            return HTMLResponse(message_html("Refused", message), status_code=status)
        return JSONResponse({"message": message, "final": status in (404, 409, 410)}, status_code=status)

    async def _posted(self, request: Request, scope: str) -> dict[str, Any]:
        """The JSON body of a POST that came from this page, or raise :class:`_Refused` (403/413/400)."""
        party = self._party()
        if request.headers.get("origin") != party.origin:
            raise _Refused(403, "this request did not come from the approval page (wrong or missing Origin)")
        if request.headers.get("sec-fetch-site", "same-origin") != "same-origin":
            raise _Refused(403, "this request did not come from the approval page (cross-site)")
        if not request.headers.get("content-type", "").startswith("application/json"):
            raise _Refused(403, "the approval page takes JSON only")
        token = request.headers.get("x-csrf-token", "")
        if not hmac.compare_digest(token.encode(), self.csrf(scope).encode()):
            raise _Refused(403, "the page's CSRF token is missing or wrong; reload the page")
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_POST_BYTES:
                raise _Refused(413, "the request is too large")
        try:
            data = json.loads(body or b"{}")
        except ValueError:
            raise _Refused(400, "the request is not JSON") from None
        if not isinstance(data, dict):
            raise _Refused(400, "the request is not a JSON object")
        return data  # pyright: ignore[reportUnknownVariableType]

    async def _challenge(self, scope: str) -> bytes:
        challenge = secrets.token_bytes(32)
        await self.store.put("challenge", b64url(challenge), scope, CHALLENGE_TTL)
        return challenge

    async def _spend_challenge(self, credential: object, scope: str) -> bytes:
        challenge = _challenge_of(credential)
        taken = await self.store.take("challenge", challenge)
        if taken is None or taken[1] or not hmac.compare_digest(taken[0], scope):
            raise _Refused(403, "the passkey answered a challenge this page did not issue for it, or a stale one")
        try:
            return unb64url(challenge)
        except ValueError:
            raise _Refused(400, "the passkey answer's challenge is not base64url") from None

    # ------------------------------------------------------------------ approvals

    async def _record(self, request: Request) -> PendingApproval:
        record = await self.book.get(request.path_params["pid"])
        if record is None:
            raise _Refused(404, "there is no such approval here (it may have been answered long ago)")
        return record

    async def _show(self, request: Request) -> Response:
        record = await self._record(request)
        left = record.seconds_left(self._clock())
        decided = await self.book.decision(record.id)
        paired = self.pairing_command() if not self.paired() else None
        html = approval_html(record, self.csrf(f"a:{record.id}"), left, decided, paired)
        return HTMLResponse(html)

    async def _open_for_decision(self, request: Request) -> tuple[PendingApproval, dict[str, Any]]:
        record = await self._record(request)
        data = await self._posted(request, f"a:{record.id}")
        if record.seconds_left(self._clock()) <= 0:
            raise _Refused(410, "this approval has expired; nothing was changed, and it can no longer be decided")
        return record, data

    async def _options(self, request: Request) -> Response:
        record, _ = await self._open_for_decision(request)
        if not self.paired():
            raise _Refused(409, f"no passkey is paired with this page; run: {self.pairing_command()}")
        challenge = await self._challenge(f"a:{record.id}")
        options = json.loads(self.passkeys.authentication_options(self._party(), challenge))
        return JSONResponse({"publicKey": options})

    async def _decide(self, request: Request) -> Response:
        record, data = await self._open_for_decision(request)
        choice = data.get("choice")
        if choice not in ("approve", "deny"):
            raise _Refused(400, 'choice must be "approve" or "deny"')
        standing = await self.book.decision(record.id)
        if standing is not None:
            return self._verdict_response(record, standing, choice, fresh=False)
        if choice == "approve":
            challenge = await self._spend_challenge(data.get("credential"), f"a:{record.id}")
            try:
                self.passkeys.verify_assertion(self._party(), challenge, data.get("credential"))
            except CeremonyFailed as exc:
                raise _Refused(403, f"not approved: {exc}") from None
        verdict = await self.book.decide(record, choice)
        return self._verdict_response(record, verdict.decided, choice, fresh=verdict.taken)

    def _verdict_response(self, record: PendingApproval, standing: str, choice: str, *, fresh: bool) -> Response:
        word = "approved" if standing == "approve" else "denied"
        if standing != choice:
            message = f"Refused: this request was {word} already, and a decision is final."
            return JSONResponse({"message": message, "decided": standing, "final": True}, status_code=409)
        if fresh:
            tail = (
                "The change runs once, when your assistant makes the same call again."
                if standing == "approve"
                else "Nothing will be changed."
            )
            message = f"{word.capitalize()} (code {record.code}). {tail}"
        else:
            message = f"This request was {word} already (code {record.code})."
        return JSONResponse({"message": message, "decided": standing, "final": True})

    # ------------------------------------------------------------------ pairing

    @staticmethod
    def _pairing_scope(secret: str) -> str:
        return "p:" + hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()

    def _open_pairing(self, secret: str) -> None:
        if not self.passkeys.pairing_open(secret, self._clock()):
            raise _Refused(410, "this pairing link is not valid (used, replaced or expired); start a new one")

    async def _pairing_post(self, request: Request) -> tuple[str, str, dict[str, Any]]:
        """The secret, scope and body of a pairing POST carrying the terminal's code, or raise :class:`_Refused`."""
        secret = request.path_params["secret"]
        self._open_pairing(secret)
        scope = self._pairing_scope(secret)
        data = await self._posted(request, scope)
        if not self.passkeys.pairing_code_ok(secret, data.get("code"), self._clock()):
            raise _Refused(403, "that is not the code the pairing command shows in its terminal")
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
            raise _Refused(403, f"the paired passkey did not agree: {exc}") from None
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
            raise _Refused(403, "a passkey is paired already: it must agree first, in this browser (reload this page)")
        credential = data.get("credential")
        challenge = await self._spend_challenge(credential, scope + ":new")
        try:
            self.passkeys.finish_pairing(secret, self._party(), challenge, credential, self._clock())
        except CeremonyFailed as exc:
            raise _Refused(403, f"no passkey was added: {exc}") from None
        await self.store.write("pairing", scope, "spent", PAIRING_TTL, only_new=False)
        if self.push is not None:
            await self.push.paired(self.server_name)
        if self.on_paired is not None:
            self.on_paired()
        message = "Paired. This passkey now approves what your MCP servers ask about on this machine's page."
        return JSONResponse({"message": message, "final": True})

    async def _nothing(self, request: Request) -> Response:
        raise _Refused(404, "not found")

    async def _asset(self, request: Request) -> Response:
        name = request.path_params["asset"]
        if name not in _ASSETS:
            raise _Refused(404, "not found")
        body = resources.files("approval_core").joinpath("page_assets", name).read_bytes()
        return Response(body, media_type=_ASSETS[name])
