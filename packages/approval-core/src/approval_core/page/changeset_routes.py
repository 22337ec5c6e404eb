"""The approval page's routes for a set of pending calls: one passkey yes for the exact set, deny per item or all.

``GET  /approval/s/<id>``
    every open pending call of the caller whose approval ``<id>`` is, each drawn with its own code, dialog
    and stored view (:mod:`approval_core.page.changeset_markup`);
``POST /approval/s/<id>/options``
    ``{"items": [ids]}``: WebAuthn request options whose challenge commits to exactly those calls
    (:func:`~approval_core.page.changeset.set_challenge`);
``POST /approval/s/<id>/decide``
    ``{"choice": "approve", "items": [...], "credential": ...}`` or ``{"choice": "deny", "items": [...]}``
    (one id: that call only);
``GET  /approval/changeset.js``
    the set page's script (beside ``approval.js``).

The POSTs pass the page's checks (:meth:`~approval_core.page.core.PageCore._posted`: Origin, fetch
metadata, JSON, the CSRF token of ``s:<id>``). Approving a set spends its challenge first, whatever
follows; then every item is checked open (:meth:`~approval_core.page.changeset.Changesets.gather`), the
challenge must commit to exactly those items, the assertion must verify (a paired passkey, user
verification), and the items are approved all or none. Any failure names the item and approves nothing.
"""

from __future__ import annotations

import json
from functools import cached_property
from importlib import resources
from typing import Any, cast

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Route

from approval_core.page.changeset import SET_LIMIT, Changesets, SetRefused
from approval_core.page.changeset_markup import changeset_html, set_notice_html
from approval_core.page.core import CHALLENGE_TTL, PREFIX, PageCore, Refused, challenge_of
from approval_core.page.passkeys import CeremonyFailed
from approval_core.page.pending import PendingApproval
from approval_core.records.audit import audit

__all__ = ["ChangesetRoutes"]


def _ids(data: dict[str, Any]) -> list[str]:
    items: object = data.get("items")
    if not isinstance(items, list):
        raise Refused(400, "items must be a list of the ids of the calls the page shows")
    ids = [item for item in cast("list[object]", items) if isinstance(item, str)]
    if len(ids) != len(cast("list[object]", items)):
        raise Refused(400, "items must be a list of the ids of the calls the page shows")
    if not 1 <= len(ids) <= SET_LIMIT:
        raise Refused(400, f"items must name 1 to {SET_LIMIT} calls")
    return ids


def _refused(refusal: SetRefused) -> Refused:
    return Refused(409, f"Refused: {refusal.message}. Nothing was approved; reload the page to see what waits now.")


def _codes(records: list[PendingApproval]) -> str:
    return ", ".join(record.code for record in records)


class ChangesetRoutes(PageCore):
    """The set page and its two POSTs, on top of :class:`~approval_core.page.core.PageCore`."""

    @cached_property
    def changesets(self) -> Changesets:
        """This page's sets (:class:`~approval_core.page.changeset.Changesets`); its process id is made here."""
        return Changesets(self.book, self.store)

    def changeset_routes(self) -> list[BaseRoute]:
        """The set page's routes (placed before the page's catch-all routes)."""
        return [
            Route(PREFIX + "/changeset.js", self._wrap(self._set_script), methods=["GET"]),
            Route(PREFIX + "/s/{pid}", self._wrap(self._set_show), methods=["GET"]),
            Route(PREFIX + "/s/{pid}/options", self._wrap(self._set_options), methods=["POST"]),
            Route(PREFIX + "/s/{pid}/decide", self._wrap(self._set_decide), methods=["POST"]),
        ]

    def set_url(self, record: PendingApproval) -> str:
        """The URL of the set page of ``record``'s caller (it carries only the record's opaque id)."""
        return f"{self._party().origin}{PREFIX}/s/{record.id}"

    async def set_notice(self, record: PendingApproval) -> str:
        """The single page's link to the caller's set, when ``record`` is open with at least one other call ("")."""
        scope = await self.changesets.scope_of(record.id)
        if scope is None:
            return ""
        members = await self.changesets.members(scope)
        if len(members) < 2 or record.id not in {member.id for member in members}:
            return ""
        return set_notice_html(f"{PREFIX}/s/{record.id}", len(members))

    async def _set_scope(self, request: Request) -> tuple[str, str]:
        pending_id = request.path_params["pid"]
        scope = await self.changesets.scope_of(pending_id)
        if scope is None:
            raise Refused(404, "there is no such set of calls here (it may have been answered long ago)")
        return pending_id, scope

    async def _set_script(self, request: Request) -> Response:
        body = resources.files("approval_core").joinpath("page", "assets", "changeset.js").read_bytes()
        return Response(body, media_type="text/javascript; charset=utf-8")

    async def _set_show(self, request: Request) -> Response:
        pending_id, scope = await self._set_scope(request)
        now = self._clock()
        items = [(record, record.seconds_left(now)) for record in await self.changesets.members(scope)]
        paired = self.pairing_command() if not self.paired() else None
        html = changeset_html(self.server_name, pending_id, self.csrf(f"s:{pending_id}"), items, paired)
        return HTMLResponse(html)

    async def _set_options(self, request: Request) -> Response:
        pending_id, scope = await self._set_scope(request)
        data = await self._posted(request, f"s:{pending_id}")
        if not self.paired():
            raise Refused(409, f"no passkey is paired with this page; run: {self.pairing_command()}")
        try:
            records = await self.changesets.gather(scope, _ids(data))
        except SetRefused as refusal:
            raise _refused(refusal) from None
        challenge = await self.changesets.offer(records, CHALLENGE_TTL)
        options = json.loads(self.passkeys.authentication_options(self._party(), challenge))
        return JSONResponse({"publicKey": options})

    async def _set_decide(self, request: Request) -> Response:
        pending_id, scope = await self._set_scope(request)
        data = await self._posted(request, f"s:{pending_id}")
        choice = data.get("choice")
        if choice not in ("approve", "deny"):
            raise Refused(400, 'choice must be "approve" or "deny"')
        ids = _ids(data)
        if choice == "deny":
            denied = await self.changesets.deny(scope, ids)
            if not denied:
                message = "Nothing was denied now: those calls were answered or expired already."
            else:
                message = f"Denied {len(denied)} call(s) (code {_codes(denied)}). Nothing of them will be changed."
            return JSONResponse({"message": message, "decided": "deny", "final": True, "count": len(denied)})
        signed = challenge_of(data.get("credential"))
        try:
            records = await self.changesets.gather(scope, ids)
        except SetRefused as refusal:
            await self.store.take("challenge", signed)  # a refused try spends its challenge all the same
            raise _refused(refusal) from None
        try:
            challenge = await self.changesets.redeem(signed, records)
        except SetRefused as refusal:
            raise _refused(refusal) from None
        try:
            self.passkeys.verify_assertion(self._party(), challenge, data.get("credential"))
        except CeremonyFailed as exc:
            raise Refused(403, f"not approved: {exc}") from None
        try:
            await self.changesets.approve(records)
        except SetRefused as refusal:
            raise _refused(refusal) from None
        for record in records:
            audit(
                "set_approved",
                server=self.server_name,
                tool=record.tool,
                path="page",
                fp=record.fingerprint,
                reason=record.code,
            )
        message = (
            f"Approved {len(records)} call(s) (code {_codes(records)}). Each runs once, when your assistant makes "
            "the same call again."
        )
        return JSONResponse({"message": message, "decided": "approve", "final": True, "count": len(records)})
