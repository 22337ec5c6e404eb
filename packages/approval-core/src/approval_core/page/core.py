"""The approval page's ground floor: where it is served, its keys, its checks on every request.

:class:`PageCore` holds what every route of the page needs (the pending
approvals, the passkey file, the push, the relying party, the CSRF key) and
the checks each request passes (its Host, and for a POST its Origin, fetch
metadata, JSON body and CSRF token). The routes themselves are in
:mod:`approval_core.page.approval_page` (approvals) and :mod:`approval_core.page.pairing_routes`
(pairing).
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

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from approval_core.errors import SettingsError
from approval_core.page.chain import FirstKeyRecord
from approval_core.page.markup import message_html
from approval_core.page.passkeys import PasskeyFile, RelyingParty, b64url, unb64url
from approval_core.page.pending import PendingApproval, PendingBook
from approval_core.page.push import Push
from approval_core.page.settings import PageSettings
from approval_core.page.views import ReadOnlyViews
from approval_core.records.store import RecordStore, StoreUnavailable

__all__ = ["CHALLENGE_TTL", "MAX_POST_BYTES", "PREFIX", "SECURITY_HEADERS", "PageCore", "Refused", "challenge_of"]

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
_ASSETS = {
    "approval.js": "text/javascript; charset=utf-8",
    "approval.css": "text/css; charset=utf-8",
    "grants.js": "text/javascript; charset=utf-8",
}


class Refused(Exception):
    """A request the page refuses: ``status`` (HTTP) and a ``message`` for the person."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def challenge_of(credential: object) -> str:
    """The challenge a WebAuthn response signed (from its clientDataJSON), or raise :class:`Refused`.

    A response made inside a cross-origin frame (``crossOrigin: true`` or a
    ``topOrigin``, WebAuthn Level 3 §5.8.1) is refused: the page is never framed.
    """
    try:
        client_data = credential["response"]["clientDataJSON"]  # type: ignore[index]  # pyright: ignore[reportIndexIssue, reportUnknownVariableType]
        client = json.loads(unb64url(str(client_data)))  # pyright: ignore[reportUnknownArgumentType]
        found = client["challenge"]
    except (TypeError, KeyError, ValueError):
        raise Refused(400, "the passkey answer is not a WebAuthn credential") from None
    if not isinstance(found, str):
        raise Refused(400, "the passkey answer names no challenge")
    if client.get("crossOrigin", False) is not False or "topOrigin" in client:
        raise Refused(403, "the passkey was used inside a frame of another site")
    return found


class PageCore:
    """What every route of one server's approval page shares: its pending approvals, passkeys, push, origin.

    Args:
        server_name: The server whose page this is.
        settings: From ``APPROVAL_PAGE*`` (:class:`~approval_core.page.settings.PageSettings`).
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
        self.views = ReadOnlyViews(store, server_name, clock=clock)
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

    def view_url(self, record: PendingApproval) -> str:
        """The URL of a read-only view (:mod:`approval_core.page.views`); it carries only the view's id."""
        return f"{self._party().origin}{PREFIX}/v/{record.id}"

    def serving(self) -> bool:
        """Whether the page is served already (its origin bound), so a link to it can be given."""
        return self.party is not None

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

    async def announce_passkeys(self) -> None:
        """Push a warning for passkey entries left out of the chain (each once per process), and for a new root.

        The entries were logged on stderr when read. The chain's first
        passkey is compared with the one recorded beside the file
        (:class:`~approval_core.page.chain.FirstKeyRecord`); a different one
        (the file replaced or reordered) is logged and announced once. Runs
        when the page starts and after each of its requests. A file that
        cannot be read is left to the page's own refusals.
        """
        if self.party is None:
            return
        rp_id = self.party.rp_id
        try:
            chain = self.passkeys.chain(rp_id)
            new_root = FirstKeyRecord(self.passkeys.path).changed(rp_id, chain[0] if chain else None)
        except (SettingsError, OSError) as exc:
            _logger.warning("the passkey file could not be checked: %s", exc)
            return
        left_out = self.passkeys.take_unannounced()
        if new_root:
            _logger.warning("the first passkey in %s is new to this machine", self.passkeys.path)
        if self.push is not None and left_out:
            await self.push.left_out(self.server_name, len(left_out), self.passkeys.path)
        if self.push is not None and new_root:
            await self.push.first_changed(self.server_name, self.passkeys.path)

    def _party(self) -> RelyingParty:
        if self.party is None:
            raise SettingsError("the approval page is not served yet (no origin bound)")
        return self.party

    def csrf(self, scope: str) -> str:
        """The CSRF token of a page (``a:<id>`` or ``p:<digest>``): an HMAC under the page key."""
        return b64url(hmac.new(self._key, f"csrf:{scope}".encode(), hashlib.sha256).digest()[:24])

    # ------------------------------------------------------------------ routes

    def _wrap(self, handler: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            try:
                if request.headers.get("host", "") not in self.allowed_hosts:
                    raise Refused(421, "this page answers only under its own host name")
                response = await handler(request)
                await self.announce_passkeys()
            except Refused as refused:
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
        """The JSON body of a POST that came from this page, or raise :class:`Refused` (403/413/400)."""
        party = self._party()
        if request.headers.get("origin") != party.origin:
            raise Refused(403, "this request did not come from the approval page (wrong or missing Origin)")
        if request.headers.get("sec-fetch-site", "same-origin") != "same-origin":
            raise Refused(403, "this request did not come from the approval page (cross-site)")
        if not request.headers.get("content-type", "").startswith("application/json"):
            raise Refused(403, "the approval page takes JSON only")
        token = request.headers.get("x-csrf-token", "")
        if not hmac.compare_digest(token.encode(), self.csrf(scope).encode()):
            raise Refused(403, "the page's CSRF token is missing or wrong; reload the page")
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_POST_BYTES:
                raise Refused(413, "the request is too large")
        try:
            data = json.loads(body or b"{}")
        except (ValueError, RecursionError):  # json raises RecursionError for too deep nesting
            raise Refused(400, "the request is not JSON") from None
        if not isinstance(data, dict):
            raise Refused(400, "the request is not a JSON object")
        return data  # pyright: ignore[reportUnknownVariableType]

    async def _challenge(self, scope: str) -> bytes:
        challenge = secrets.token_bytes(32)
        await self.store.put("challenge", b64url(challenge), scope, CHALLENGE_TTL)
        return challenge

    async def _spend_challenge(self, credential: object, scope: str) -> bytes:
        challenge = challenge_of(credential)
        taken = await self.store.take("challenge", challenge)
        if taken is None or taken[1] or not hmac.compare_digest(taken[0], scope):
            raise Refused(403, "the passkey answered a challenge this page did not issue for it, or a stale one")
        try:
            return unb64url(challenge)
        except ValueError:
            raise Refused(400, "the passkey answer's challenge is not base64url") from None

    async def _nothing(self, request: Request) -> Response:
        raise Refused(404, "not found")

    async def _asset(self, request: Request) -> Response:
        name = request.path_params["asset"]
        if name not in _ASSETS:
            raise Refused(404, "not found")
        body = resources.files("approval_core").joinpath("page", "assets", name).read_bytes()
        return Response(body, media_type=_ASSETS[name])
