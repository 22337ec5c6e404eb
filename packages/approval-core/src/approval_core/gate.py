"""The gate: the one call a guarded tool makes before it acts.

A guarded tool reads what it needs (the entry, its ETag, the counts),
validates everything that can be validated, builds a :class:`~approval_core.Dialog`
and a target, and calls :meth:`ApprovalGate.check` once::

    decision = await gate.check(ctx, tool="delete_event", target=..., dialog=..., confirm_token=confirm_token)
    if isinstance(decision, NotApproved):
        return decision.result          # nothing was changed
    ...act with the same resolved values the dialog described...

The gate picks one path per call (see docs/approval.md):

1. the guard table says this call does not ask → approved at once;
2. protocol 2025-11-25 with a channel back and form elicitation declared →
   ``elicitation/create`` pushed to the client and awaited for at most
   ``ELICITATION_TIMEOUT`` seconds; when the call's request goes away first
   (cancelled, session or HTTP connection closed) the dialog is abandoned and
   no later answer acts (:mod:`approval_core.asking.caller_gone`);
3. protocol 2026-07-28 with form elicitation declared → ``input_required``
   with one form question and a sealed, single-use state; the retry carries
   the answer (SEP-2322);
4. no form dialog can be shown (``ELICITATION=false``, no form elicitation
   declared, or a 2025-11-25 request without a channel back) and the approval
   page is set up (``APPROVAL_PAGE=true``) → the person decides on the page
   with a paired passkey (:mod:`approval_core.page.path`: URL-mode
   elicitation, or a refusal carrying the page's link and code);
5. otherwise → the two-call confirm token, the text saying why nobody was
   asked (or, in the strict profile, a refusal).

The dialog's own text is bound into every fingerprint too, so an approval never serves a call whose
dialog would read differently (another id, another count, another caller value). Over HTTP the principal
(client id, issuer, subject) is bound as well. Under ``APPROVAL_PROFILE=every-write`` a guarded call's
:meth:`check` only notes its dialog; the question is asked at the call's first changing request
(:mod:`approval_core.every_write.profile`).

Only a ticked box on an accepted form approves. Decline, cancel, an unticked
box, content that does not validate, a client error and a timeout all end the
call with ``isError: true`` and nothing changed. On 2026-07-28 a state that
does not open (bad seal, expired, spent, other target, minted before a
restart) or an answer without a state counts as no answer: a fresh question.

Paths 2-4 need the single-use record store (in process, or Redis shared by
replicas, ``APPROVAL_STORE_URL``). When it cannot be reached, the call ends
with outcome ``store_unavailable`` and nothing changed: no token is issued or
accepted and no question is asked or answered without its record.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from approval_core.asking.answers import client_can_show_form
from approval_core.asking.binding import DIALOG_KEY, PRINCIPAL_KEY, VERSION_KEY, Binding, bind
from approval_core.asking.capabilities import install_one_capability_set
from approval_core.asking.decisions import Approved, Decision, NotApproved, PathName
from approval_core.asking.dialog import Dialog, Question
from approval_core.asking.fallback import Fallback, NoAskReason
from approval_core.asking.grant_book import GrantBook
from approval_core.asking.grants import request_shapes
from approval_core.asking.recovery import install_state_recovery, share_sdk_state_keys
from approval_core.asking.sealing import StateSealer
from approval_core.asking.tokens import TokenStore
from approval_core.errors import BindingError, GuardTableError
from approval_core.every_write.profile import EveryWrite
from approval_core.every_write.scope import current_call
from approval_core.forms import INPUT_KEY, FormPaths
from approval_core.page.approval_page import ApprovalPage
from approval_core.page.grants import GrantDesk, install_grant_notes
from approval_core.page.path import PagePath
from approval_core.page.stored import StoredView, unbound_etags
from approval_core.policy import GuardedCall, GuardTable
from approval_core.records.file_store import FileStore
from approval_core.records.journal import open_journal
from approval_core.records.keys import (
    BODY_DIGEST_PURPOSE,
    PAGE_PURPOSE,
    SDK_STATE_PURPOSE,
    STATE_SEAL_PURPOSE,
    record_namespace,
)
from approval_core.records.redis_store import RedisStore
from approval_core.records.store import MemoryStore, RecordStore, StoreUnavailable
from approval_core.settings import ApprovalSettings

__all__ = [
    "DIALOG_KEY",
    "GATE_ATTRIBUTE",
    "INPUT_KEY",
    "PRINCIPAL_KEY",
    "VERSION_KEY",
    "ApprovalGate",
    "Approved",
    "Decision",
    "NotApproved",
    "PathName",
]

GATE_ATTRIBUTE = "approval_gate"
"""The attribute of an ``MCPServer`` under which :meth:`ApprovalGate.attach` leaves its gate (for :func:`serve`)."""


class ApprovalGate:
    """Asks a person before a guarded tool acts, on either protocol revision.

    Args:
        server_name: This server's name (``caldav-mcp``); it is bound into
            every fingerprint and state, and named in fallback texts.
        guards: The server's guard table.
        settings: From :func:`approval_core.load_settings_or_exit`.
        strict: Seed 004's profile: refuse outright, with nothing run, where
            no dialog can be shown, instead of falling back to the token.
        clock: Wall-clock seconds for token and state expiry (tests).
        state_key: HMAC key for input_required state (default: derived from
            ``settings.key_ring`` when a key file is set, else random per
            process, so a restart invalidates earlier states).
        store: Where tokens and state nonces are recorded (default: a
            :class:`~approval_core.records.redis_store.RedisStore` on ``settings.store_url``
            namespaced by ``server_name`` and the key file's deployment id when set, else a
            :class:`~approval_core.records.file_store.FileStore` in ``settings.record_folder`` (stdio),
            else a :class:`~approval_core.records.store.MemoryStore` of this process).

    ``journal`` is the undo journal (:mod:`approval_core.records.journal`), None under ``APPROVAL_UNDO_DAYS=0``.
    """

    def __init__(
        self,
        server_name: str,
        guards: GuardTable,
        settings: ApprovalSettings,
        *,
        strict: bool = False,
        clock: Callable[[], float] = time.time,
        state_key: bytes | None = None,
        store: RecordStore | None = None,
    ) -> None:
        self.server_name = server_name
        self.guards = guards
        self.settings = settings
        self.strict = strict or settings.every_write
        self.every_write: EveryWrite | None = None
        self.body_key = (
            secrets.token_bytes(32) if settings.key_ring is None else settings.key_ring.derive(BODY_DIGEST_PURPOSE)[0]
        )
        if store is None:
            namespace = record_namespace(server_name, settings.key_ring)
            if settings.store_url is not None:
                store = RedisStore(settings.store_url, namespace, clock=clock)
            elif settings.record_folder is not None:
                store = FileStore(settings.record_folder, namespace, clock=clock)
            else:
                store = MemoryStore(clock=clock)
        self.store: RecordStore = store
        self.journal = open_journal(server_name, settings.undo_days, settings.key_ring, store, clock)
        previous: tuple[bytes, ...] = ()
        if state_key is None and settings.key_ring is not None:
            state_key, *rest = settings.key_ring.derive(STATE_SEAL_PURPOSE)
            previous = tuple(rest)
        self.tokens = TokenStore(clock=clock, store=store)
        self.sealer = StateSealer(server_name, key=state_key, previous_keys=previous, clock=clock, store=store)
        self._fallback = Fallback(server_name, self.tokens)
        self.page: ApprovalPage | None = None
        self._page_path: PagePath | None = None
        if settings.page is not None:
            page_key = None if settings.key_ring is None else settings.key_ring.derive(PAGE_PURPOSE)[0]
            self.page = ApprovalPage(server_name, settings.page, store, key=page_key, clock=clock)
            self._page_path = PagePath(server_name, self.page, self.sealer, settings.dialog_timeout)
        self._grants: GrantDesk | None = None
        if settings.grants and self.page is not None:  # APPROVAL_GRANTS=true: asking/grants.py, page/grants.py
            asking = tuple(name for name, guard in guards.items() if guard.may_ask)
            self._grants = self.page.grant_desk = GrantDesk(self.page, GrantBook(store, server_name, clock), asking)
        self._forms = FormPaths(server_name, self.sealer, settings.dialog_timeout, self.page)

    @classmethod
    def attach(
        cls,
        server: MCPServer[Any],
        guards: GuardTable,
        settings: ApprovalSettings,
        *,
        strict: bool = False,
        clock: Callable[[], float] = time.time,
        state_key: bytes | None = None,
        store: RecordStore | None = None,
    ) -> ApprovalGate:
        """A gate named after ``server``, with the SDK's state layer made to recover.

        Installs :func:`approval_core.install_state_recovery` on ``server``
        so that a ``requestState`` the SDK refuses (for example one minted
        before a restart) becomes a fresh question instead of error -32602,
        and :func:`approval_core.install_one_capability_set`, so that both
        protocol revisions are told the same capabilities. With a key file
        (``settings.key_ring``), the SDK's request-state boundary is given the
        shared keys too (:func:`share_sdk_state_keys`), so any replica opens
        the SDK envelope another one sealed. The other arguments are as for
        the constructor.
        """
        if settings.key_ring is not None:
            share_sdk_state_keys(server, settings.key_ring.derive(SDK_STATE_PURPOSE))
        install_state_recovery(server)
        install_one_capability_set(server)
        if settings.grants:
            install_grant_notes(server)
        gate = cls(server.name, guards, settings, strict=strict, clock=clock, state_key=state_key, store=store)
        setattr(server, GATE_ATTRIBUTE, gate)
        return gate

    async def check(
        self,
        ctx: Context[Any, Any],
        *,
        tool: str,
        target: Mapping[str, Any],
        dialog: Dialog,
        arguments: Mapping[str, Any] | None = None,
        facts: Mapping[str, Any] | None = None,
        version: str | None = None,
        confirm_token: str | None = None,
        exclude: Iterable[str] = (),
        stored: StoredView | None = None,
        collection: str | None = None,
    ) -> Decision:
        """Decide whether this call may act now (see the module docstring).

        Args:
            ctx: The tool's MCP context.
            tool: The tool's name; must have a row in the guard table.
            target: What the call would do; its fingerprint binds the approval,
                together with the dialog's text (:data:`DIALOG_KEY`), so a
                caller value the dialog shows is bound even when ``target``
                leaves it out.
            dialog: What a person is shown; built only from the server's own
                words, its own counts and the caller's values.
            arguments: The call's arguments, for a ``when`` guard.
            facts: What the server read before asking, for a ``when`` guard.
            version: The version of what the dialog was built from (an ETag,
                a message's revision). It is bound into the fingerprint, so an
                answer or token given for one version never approves another;
                the write must then carry it (If-Match). Required for every
                guarded tool not listed in the guard table's ``unversioned``.
            confirm_token: The token from a first call (token path only).
            exclude: Names in ``target`` kept out of the fingerprint.
            stored: What the change touches as the backend stores it
                (:class:`~approval_core.page.stored.StoredView`), for the
                approval page and a form dialog's read-only view only: it
                never reaches the dialog, a result, the push or the audit.
                Every ETag it names must be ``version`` or a value in
                ``target``, so the page shows the versions the approval binds.
            collection: The one calendar, address book or topic the call acts in, when it names one: a
                standing grant (``APPROVAL_GRANTS=true``) for that collection may then approve it
                without asking (:mod:`approval_core.asking.grants`). None: no grant ever covers the call.

        Raises:
            GuardTableError: ``tool`` has no guard row, or it asks, gives no
                ``version`` and is not listed as unversioned.
            BindingError: ``target`` has no canonical form, or ``stored``
                names an ETag the approval would not bind.
        """
        guard = self.guards.guard(tool)
        if stored is not None and (loose := unbound_etags(stored, target, version)):
            raise BindingError(f"{tool}: the stored view names ETag(s) {loose} that the approval does not bind")
        call = current_call() if self.every_write is not None else None
        if call is not None and call.tool == tool:
            # The every-write profile asks at the first changing request, with this dialog's words in it.
            call.guarded = (dialog, {**target, DIALOG_KEY: dialog.render()}, version)
            call.stored = stored
            return Approved("every_write", "")
        if not guard.asks(GuardedCall(tool, arguments or {}, facts or {})):
            return Approved("not_guarded", "")
        if version is None and tool not in self.guards.unversioned:
            raise GuardTableError(
                f"{tool} asks but binds no version of what it read; pass version= (an ETag) or list it, "
                "with the reason, in the guard table's unversioned"
            )
        binding = bind(self.server_name, tool, target, shown=dialog.render(), version=version, exclude=exclude)
        if self._grants is not None and (granted := await self._grants.allow(binding, collection)) is not None:
            return granted
        return await self._decide(ctx, binding, dialog, confirm_token, stored)

    async def decide_write(
        self,
        ctx: Context[Any, Any],
        tool: str,
        target: Mapping[str, Any],
        dialog: Question,
        *,
        version: str | None,
        preapproved: str | None = None,
        stored: StoredView | None = None,
    ) -> Decision:
        """As :meth:`check` past the guard, with no token, for :mod:`approval_core.every_write.profile`.

        A ``preapproved`` fingerprint (a yes given to this call's earlier run) equal to this one is the answer.
        ``stored`` (the guarded tool's view and the exact bodies) goes to the page alone.
        """
        binding = bind(self.server_name, tool, target, version=version)
        if preapproved is not None and binding.fingerprint == preapproved:
            return Approved("every_write", binding.fingerprint)
        # Under every-write a grant covers exactly the request shapes it names, one request per use: it counts
        # calls, so a call sending several requests (several cards deleted at once) is never inside one.
        shapes = request_shapes(target) if len(target.get("requests") or ()) == 1 else ()
        if self._grants is not None and (granted := await self._grants.allow(binding, None, shapes)) is not None:
            return granted
        return await self._decide(ctx, binding, dialog, None, stored)

    async def _decide(
        self,
        ctx: Context[Any, Any],
        binding: Binding,
        dialog: Question,
        confirm_token: str | None,
        stored: StoredView | None = None,
    ) -> Decision:
        route = self._route(ctx)
        path: PathName = "token"
        try:
            if route == "dialog" or route == "input_required":
                path = route
                if route == "dialog":
                    return await self._forms.push(ctx, binding, dialog, stored)
                return await self._forms.input_required(ctx, binding, dialog, stored)
            if self._page_path is not None:
                path = "page"
                return await self._page_path.decide(ctx, binding, dialog, route, stored)
            if self.strict:
                return self._fallback.refuse(binding, route)
            return await self._fallback.token(binding, dialog, confirm_token, route)
        except StoreUnavailable as exc:
            return self._fallback.store_unavailable(binding, path, exc)

    def _route(self, ctx: Context[Any, Any]) -> Literal["dialog", "input_required"] | NoAskReason:
        if not self.settings.elicitation:
            return "switched_off"
        if not client_can_show_form(ctx.client_capabilities):
            return "client_cannot_ask"
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return "input_required"
        if not ctx.session.can_send_request:
            return "no_channel"
        return "dialog"
