"""The approval page: where a person approves or denies a pending approval with a paired passkey.

Served by approval-core (``APPROVAL_PAGE=true``): over stdio on a loopback
listener, ``http://localhost:<port>`` (a secure context; WebAuthn relying
party ids cannot be IP addresses, so one passkey for ``localhost`` serves every
server of the family on the machine); over Streamable HTTP on the MCP
endpoint's own origin. Routes, all under :data:`PREFIX`:

``GET  /approval/a/<id>``            the dialog as the form dialog would show it, the code, the time left
``POST /approval/a/<id>/options``    WebAuthn request options (a fresh single-use challenge, 2 minutes)
``POST /approval/a/<id>/decide``     ``{"choice": "approve", "credential": ...}`` or ``{"choice": "deny"}``
``GET  /approval/s/<id>``, ``POST .../options``, ``.../decide``   the caller's pending calls together, approved
                                     with one passkey yes for the exact set (:mod:`approval_core.page.changeset_routes`)
``GET  /approval/v/<id>``            a form dialog's read-only view: the dialog and what it changes, as
                                     stored; no passkey, no buttons; gone once the question is answered
``GET  /approval/pair/<secret>``     the pairing page of a one-time link from ``python -m approval_core pair``
``POST /approval/pair/<secret>/options``, ``.../vouch``, ``.../finish``   once a passkey is paired, its yes
                                     (``vouch``) first; then the new passkey's registration
``GET  /approval/approval.js``, ``/approval/approval.css``  the page's only script and style sheet
``/approval/g/...``, ``/approval/grants...``  standing grants, when ``APPROVAL_GRANTS=true``
                                     (:mod:`approval_core.page.grants`, with its script ``grants.js``)

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

import json
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Route

from approval_core.page.changeset_routes import ChangesetRoutes
from approval_core.page.core import CHALLENGE_TTL, MAX_POST_BYTES, PREFIX, SECURITY_HEADERS, Refused
from approval_core.page.grants import GrantRoutes
from approval_core.page.markup import approval_html, message_html, view_html
from approval_core.page.pairing_routes import PairingRoutes
from approval_core.page.passkeys import CeremonyFailed
from approval_core.page.pending import PendingApproval

__all__ = ["CHALLENGE_TTL", "MAX_POST_BYTES", "PREFIX", "SECURITY_HEADERS", "ApprovalPage"]


class ApprovalPage(ChangesetRoutes, PairingRoutes, GrantRoutes):
    """The approval page of one server: its pending approvals, passkeys, push and routes.

    Built by the gate (:class:`approval_core.ApprovalGate`) when ``APPROVAL_PAGE=true``; see
    :class:`~approval_core.page.core.PageCore` for the arguments.
    """

    def routes(self) -> list[BaseRoute]:
        """The page's routes, to serve beside others (the HTTP endpoint) or alone (:meth:`app`)."""
        return [
            Route(PREFIX + "/a/{pid}", self._wrap(self._show), methods=["GET"]),
            Route(PREFIX + "/a/{pid}/options", self._wrap(self._options), methods=["POST"]),
            Route(PREFIX + "/a/{pid}/decide", self._wrap(self._decide), methods=["POST"]),
            Route(PREFIX + "/v/{vid}", self._wrap(self._view), methods=["GET"]),
            *self.grant_routes(),
            Route(PREFIX + "/pair/{secret}", self._wrap(self._pair_page), methods=["GET"]),
            Route(PREFIX + "/pair/{secret}/options", self._wrap(self._pair_options), methods=["POST"]),
            Route(PREFIX + "/pair/{secret}/vouch", self._wrap(self._pair_vouch), methods=["POST"]),
            Route(PREFIX + "/pair/{secret}/finish", self._wrap(self._pair_finish), methods=["POST"]),
            *self.changeset_routes(),
            Route(PREFIX + "/{asset}", self._wrap(self._asset), methods=["GET"]),
            Route(PREFIX + "/{rest:path}", self._wrap(self._nothing), methods=["GET", "POST", "HEAD"]),
        ]

    def app(self) -> Starlette:
        """An ASGI app serving only the page (the loopback listener, the pairing command)."""
        return Starlette(routes=self.routes())

    async def _record(self, request: Request) -> PendingApproval:
        record = await self.book.get(request.path_params["pid"])
        if record is None:
            raise Refused(404, "there is no such approval here (it may have been answered long ago)")
        return record

    async def _show(self, request: Request) -> Response:
        record = await self._record(request)
        left = record.seconds_left(self._clock())
        decided = await self.book.decision(record.id)
        paired = self.pairing_command() if not self.paired() else None
        also = await self.set_notice(record) if decided is None and left > 0 else ""
        html = approval_html(record, self.csrf(f"a:{record.id}"), left, decided, paired, also)
        return HTMLResponse(html)

    async def _view(self, request: Request) -> Response:
        record = await self.views.get(request.path_params["vid"])
        if record is None:
            text = "This view has closed: its question was answered, asked again or expired. It shows nothing more."
            return HTMLResponse(message_html("Closed", text), status_code=410)
        return HTMLResponse(view_html(record, record.seconds_left(self._clock())))

    async def _open_for_decision(self, request: Request) -> tuple[PendingApproval, dict[str, Any]]:
        record = await self._record(request)
        data = await self._posted(request, f"a:{record.id}")
        if record.seconds_left(self._clock()) <= 0:
            raise Refused(410, "this approval has expired; nothing was changed, and it can no longer be decided")
        return record, data

    async def _options(self, request: Request) -> Response:
        record, _ = await self._open_for_decision(request)
        if not self.paired():
            raise Refused(409, f"no passkey is paired with this page; run: {self.pairing_command()}")
        challenge = await self._challenge(f"a:{record.id}")
        options = json.loads(self.passkeys.authentication_options(self._party(), challenge))
        return JSONResponse({"publicKey": options})

    async def _decide(self, request: Request) -> Response:
        record, data = await self._open_for_decision(request)
        choice = data.get("choice")
        if choice not in ("approve", "deny"):
            raise Refused(400, 'choice must be "approve" or "deny"')
        standing = await self.book.decision(record.id)
        if standing is not None:
            return self._verdict_response(record, standing, choice, fresh=False)
        if choice == "approve":
            challenge = await self._spend_challenge(data.get("credential"), f"a:{record.id}")
            try:
                self.passkeys.verify_assertion(self._party(), challenge, data.get("credential"))
            except CeremonyFailed as exc:
                raise Refused(403, f"not approved: {exc}") from None
        verdict = await self.book.decide(record, choice)
        if verdict.decided is None:  # held by the set page this instant: neither answer stands yet
            raise Refused(
                409,
                "Not recorded: this request is being approved together with other calls on the set page right "
                "now. Reload this page to see how that ended.",
            )
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
        answer: dict[str, object] = {"message": message, "decided": standing, "final": True}
        if standing == "approve" and (grant := self.grant_url(record.id)) is not None:
            answer["grant_url"] = grant
        return JSONResponse(answer)
