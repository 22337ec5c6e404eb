"""Standing grants on the approval page: made with the passkey, listed, revoked; and the gate's check.

With ``APPROVAL_GRANTS=true``, a person who approved a call on the page may
widen that yes into a grant (:mod:`approval_core.asking.grants` has the
terms, :mod:`approval_core.asking.grant_book` the store). Routes, under
``/approval``:

``GET  /approval/g/<id>``              the grant form of approved approval ``<id>``: its tool(s), its target,
                                       at most N uses, for at most T minutes (T <= 480)
``POST /approval/g/<id>/options``      ``{"tools": [...], "uses": N, "minutes": T}`` -> the exact terms and
                                       WebAuthn request options whose challenge holds them
``POST /approval/g/<id>/make``         ``{"terms": ..., "credential": ...}``: the grant, once the passkey signed
                                       exactly those terms
``GET  /approval/grants``              the grants kept: live ones with their uses and minutes left, ended ones
``POST /approval/grants/<grant>/revoke``  stops a grant; needs no passkey, since it can only stop

Each POST passes the page's checks (Origin, fetch metadata, JSON, CSRF
token). A grant is made only from an approval the person approved, only
for what that call named, and only when the assertion verifies over a
challenge this page issued whose second half is the SHA-256 of the terms
posted back: terms changed after the challenge are refused.

:class:`GrantDesk` is the gate's side: a call inside a live grant acts
without asking (audited as ``grant_used``, its result noted by
:func:`install_grant_notes`); a call outside every grant leaves what it named
for the page and asks as usual. When a grant ends (used up, revoked, or
found expired by the next call or page visit) one push sums its uses: the
server, the grant's id, its tools and the count, never a caller's value or
backend text.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, InputRequiredResult, TextContent
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Route

from approval_core.asking.binding import Binding
from approval_core.asking.decisions import Approved
from approval_core.asking.grant_book import GrantBook, GrantsFull, GrantState, GrantUse, noted_grant_uses
from approval_core.asking.grants import GrantCall, GrantTerms, grant_challenge, signs
from approval_core.page.core import CHALLENGE_TTL, PREFIX, PageCore, Refused, challenge_of
from approval_core.page.grants_markup import grant_form_html, grants_html
from approval_core.page.passkeys import CeremonyFailed, b64url, unb64url
from approval_core.page.pending import KEEP_AFTER_EXPIRY, PendingApproval
from approval_core.records.audit import audit
from approval_core.records.store import StoreUnavailable

__all__ = ["GRANT_META_KEY", "GrantDesk", "GrantRoutes", "install_grant_notes"]

GRANT_META_KEY = "approval-core/grant"
"""The ``_meta`` key of a result a grant allowed: the grant's id, and the uses and whole minutes left."""

_logger = logging.getLogger("approval_core.page")
_WHY = {"used_up": "used up", "revoked": "revoked", "expired": "expired"}


class GrantDesk:
    """The grants of one server as the gate and the page use them.

    Args:
        page: The server's approval page (its push, TTL and audit name).
        book: Where the grants are kept.
        tools: The tools a grant may name (the server's tools that may ask).
    """

    def __init__(self, page: PageCore, book: GrantBook, tools: tuple[str, ...]) -> None:
        self.page = page
        self.book = book
        self.tools = tools
        self.backend: Callable[[], tuple[str, str | None]] | None = None
        """``(origin, account)`` of the configured backend (set by :func:`approval_core.equip`): part of a grant's
        target, so a grant never covers the same collection path on another backend."""

    async def allow(
        self, binding: Binding, collection: str | None, shapes: tuple[tuple[str, str], ...] = ()
    ) -> Approved | None:
        """Approve ``binding`` under a live grant (one use spent), or None: then it asks as usual.

        A call the person answered on the page (its pending approval, still unused, holds a decision) takes
        that answer, never the grant: a yes acts without spending a use, and a no is never overruled by a
        grant made after it. A call outside every grant leaves what it named (``collection`` or the request
        ``shapes``) for the page, so the person may widen a yes to it. A record store that cannot be reached
        allows nothing.
        """
        call = GrantCall.of(binding, collection, shapes, None if self.backend is None else self.backend())
        try:
            waiting = await self.page.book.current(binding.fingerprint)
            if waiting is not None and await self.page.book.decision(waiting.id) is not None:
                return None  # the person's own answer to this call comes first: a yes spends no use, a no stands
            states = await self.book.all()
            await self.close_ended(states)
            found = await self.book.use(call, states)
            if found is None:
                if collection is not None or shapes:
                    await self.book.offer(binding.fingerprint, call, self.page.settings.ttl + KEEP_AFTER_EXPIRY)
                return None
        except StoreUnavailable as exc:
            _logger.warning("grants could not be read, so the call asks: %s", exc)
            return None
        use, state = found
        self._audit("grant_used", binding.tool, binding.fingerprint, use.grant)
        noted = noted_grant_uses().get()
        if noted is not None:
            noted.append(use)
        if use.uses_left == 0:
            await self._close(state, "used_up")
        return Approved("grant", binding.fingerprint)

    async def revoke(self, grant_id: str) -> GrantState | None:
        """Stop ``grant_id`` and send its summary; its state, or None when there is no such grant."""
        state = await self.book.revoke(grant_id)
        if state is not None:
            self._audit("grant_revoked", ",".join(state.terms.tools), "", grant_id)
            await self._close(state, "revoked")
        return state

    async def close_ended(self, states: list[GrantState]) -> None:
        """Send the one summary of each grant in ``states`` that has ended (expired ones are found here)."""
        now = self.book.clock()
        for state in states:
            why = state.ended(now)
            if why is not None:
                await self._close(state, why)

    async def _close(self, state: GrantState, why: str) -> None:
        try:
            if not await self.book.close(state):
                return
        except StoreUnavailable as exc:  # the next call or page visit sums it instead
            _logger.warning("an ended grant could not be marked as summed: %s", exc)
            return
        tools = ", ".join(state.terms.tools)
        self._audit("grant_ended", ",".join(state.terms.tools), "", state.id, why)
        if self.page.push is not None:
            await self.page.push.send(
                f"{self.page.server_name}: a standing grant ended",
                f"Grant {state.id} ({tools}) {_WHY.get(why, why)}: it allowed {state.used} of "
                f"{state.terms.uses} call(s) without asking.",
                None,
            )

    def _audit(self, event: str, tool: str, fp: str, grant_id: str, why: str | None = None) -> None:
        reason = grant_id if why is None else f"{grant_id}:{why}"
        audit(event, server=self.page.server_name, tool=tool, path="grant", fp=fp, reason=reason)


def _note(uses: list[GrantUse]) -> tuple[str, dict[str, Any]]:
    use = uses[-1]
    text = (
        f"Allowed without asking by standing grant {use.grant}, made by the person on the approval page: "
        f"{use.uses_left} use(s) and {use.minutes_left} minute(s) left."
    )
    return text, {"grant": use.grant, "uses_left": use.uses_left, "minutes_left": use.minutes_left}


def install_grant_notes(server: MCPServer[Any]) -> None:
    """Make each result a grant allowed say so: a text line and ``_meta[GRANT_META_KEY]`` (never a secret)."""
    original = server.call_tool

    async def call_tool(
        name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        uses: list[GrantUse] = []
        token = noted_grant_uses().set(uses)
        try:
            result = await original(name, arguments, context)
        finally:
            noted_grant_uses().reset(token)
        if uses and isinstance(result, CallToolResult):
            text, data = _note(uses)
            meta = {**(result.meta or {}), GRANT_META_KEY: data}
            content = [*result.content, TextContent(type="text", text=text)]
            result = result.model_copy(update={"content": content, "meta": meta})
        return result

    server.call_tool = call_tool  # type: ignore[method-assign]


class GrantRoutes(PageCore):
    """The page's grant routes (see the module docstring); active once the gate gives it a :class:`GrantDesk`."""

    grant_desk: GrantDesk | None = None

    def grant_routes(self) -> list[BaseRoute]:
        """The grant routes, to serve before the page's catch-all routes."""
        return [
            Route(PREFIX + "/g/{pid}", self._wrap(self._grant_form), methods=["GET"]),
            Route(PREFIX + "/g/{pid}/options", self._wrap(self._grant_options), methods=["POST"]),
            Route(PREFIX + "/g/{pid}/make", self._wrap(self._grant_make), methods=["POST"]),
            Route(PREFIX + "/grants", self._wrap(self._grant_list), methods=["GET"]),
            Route(PREFIX + "/grants/{grant}/revoke", self._wrap(self._grant_revoke), methods=["POST"]),
        ]

    def grant_url(self, pending_id: str) -> str | None:
        """The grant form of approval ``pending_id``, or None when grants are off."""
        return None if self.grant_desk is None else f"{self._party().origin}{PREFIX}/g/{pending_id}"

    def _desk(self) -> GrantDesk:
        if self.grant_desk is None:
            raise Refused(404, "standing grants are off on this server (APPROVAL_GRANTS is not true)")
        return self.grant_desk

    async def _approved_offer(self, pending_id: str) -> tuple[PendingApproval, GrantCall]:
        desk = self._desk()
        record = await self.book.get(pending_id)
        if record is None:
            raise Refused(404, "there is no such approval here (it may have been answered long ago)")
        if await self.book.decision(record.id) != "approve":
            raise Refused(409, "only a request you approved can be widened into a grant")
        offer = await desk.book.offered(record.fingerprint)
        if offer is None:
            raise Refused(409, "this request names no single calendar, address book or topic, so no grant fits it")
        return record, offer

    async def _grant_form(self, request: Request) -> Response:
        record, offer = await self._approved_offer(request.path_params["pid"])
        tools = self._desk().tools
        html = grant_form_html(record, offer, tools, self.csrf(f"g:{record.id}"))
        return HTMLResponse(html)

    async def _grant_options(self, request: Request) -> Response:
        record, offer = await self._approved_offer(request.path_params["pid"])
        data = await self._posted(request, f"g:{record.id}")
        tools, uses, minutes = data.get("tools"), data.get("uses"), data.get("minutes")
        if not isinstance(tools, list) or not tools or not all(t in self._desk().tools for t in tools):  # pyright: ignore[reportUnknownVariableType]
            raise Refused(400, "tools: name one or more of this server's tools that ask")
        if type(uses) is not int or type(minutes) is not int:
            raise Refused(400, "uses and minutes must be whole numbers")
        try:
            terms = GrantTerms.widen(offer, [str(t) for t in tools], uses, minutes, self._clock())  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        except ValueError as exc:
            raise Refused(400, str(exc)) from None
        if not self.paired():
            raise Refused(409, f"no passkey is paired with this page; run: {self.pairing_command()}")
        challenge = grant_challenge(terms)
        await self.store.put("challenge", b64url(challenge), f"g:{record.id}:{terms.to_json()}", CHALLENGE_TTL)
        options = json.loads(self.passkeys.authentication_options(self._party(), challenge))
        return JSONResponse({"publicKey": options, "terms": terms.as_dict()})

    async def _grant_make(self, request: Request) -> Response:
        record, _ = await self._approved_offer(request.path_params["pid"])
        data = await self._posted(request, f"g:{record.id}")
        credential = data.get("credential")
        signed = challenge_of(credential)
        taken = await self.store.take("challenge", signed)
        prefix = f"g:{record.id}:"
        if taken is None or taken[1] or not taken[0].startswith(prefix):
            raise Refused(403, "the passkey answered a challenge not issued for this grant, or a stale one")
        kept = GrantTerms.from_json(taken[0][len(prefix) :])
        posted = GrantTerms.from_dict(data.get("terms"))
        try:
            challenge = unb64url(signed)
        except ValueError:
            raise Refused(400, "the passkey answer's challenge is not base64url") from None
        if kept is None or posted is None or posted != kept or not signs(challenge, posted):
            raise Refused(403, "nothing was granted: the terms sent are not the terms your passkey signed")
        try:
            self.passkeys.verify_assertion(self._party(), challenge, credential)
        except CeremonyFailed as exc:
            raise Refused(403, f"nothing was granted: {exc}") from None
        try:
            grant_id = await self._desk().book.make(kept)
        except GrantsFull as exc:
            raise Refused(409, str(exc)) from None
        audit("grant_made", server=self.server_name, tool=",".join(kept.tools), path="grant",
              fp=record.fingerprint, reason=grant_id)  # fmt: skip
        minutes = max(0, int((kept.expires - self._clock()) // 60))
        message = (
            f"Granted ({grant_id}): {', '.join(kept.tools)} may run {kept.uses} time(s) without asking, "
            f"for {minutes} minute(s). Revoke it any time at {PREFIX}/grants."
        )
        return JSONResponse({"message": message, "grant": grant_id, "final": True})

    async def _grant_list(self, request: Request) -> Response:
        desk = self._desk()
        states = await desk.book.all()
        await desk.close_ended(states)
        return HTMLResponse(grants_html(self.server_name, states, self.csrf("grants"), self._clock()))

    async def _grant_revoke(self, request: Request) -> Response:
        desk = self._desk()
        await self._posted(request, "grants")
        grant_id = str(request.path_params["grant"])
        if await desk.revoke(grant_id) is None:
            raise Refused(404, "there is no such grant here")
        return JSONResponse({"message": f"Revoked {grant_id}: it allows nothing more.", "final": True})
