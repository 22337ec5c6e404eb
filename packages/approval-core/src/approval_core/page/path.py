"""The gate's path through the approval page, where no form dialog can be shown.

Taken instead of the confirm token when the page is set up
(``APPROVAL_PAGE=true``). The call's binding fingerprint finds its pending
approval (:mod:`approval_core.page.pending`); how the call learns the decision
depends on the client (MCP 2025-11-25 and 2026-07-28, Elicitation, URL mode):

* 2025-11-25 with ``elicitation.url`` and a channel back: ``elicitation/create``
  in URL mode with the page's URL, then the call waits for the decision,
  bounded by ``ELICITATION_TIMEOUT``, and acts on it (or ends with nothing
  changed; also when the call's request goes away meanwhile, outcome
  ``caller_gone``, the decision then left for the next identical call);
* 2026-07-28 with ``elicitation.url``: ``input_required`` carrying a URL-mode
  request and a sealed, single-use state; on the retry the decision is read
  from the record store (the client's answer only says whether the person
  went to the page). A retry while the decision is still pending ends in the
  refusal below, so a client's automatic retries cannot loop;
* any other client, and every client under ``ELICITATION=false``: a refusal
  (``isError``, nothing changed) whose text and ``_meta`` give the page URL
  and the code, asking to repeat the same call once the person has decided.

A decision is used once: an approval makes exactly one identical call act,
a denial ends exactly one call, and the next identical call asks anew. No
secret passes through the model: the decision lives on the server, keyed by
the call's fingerprint, which includes the authenticated principal over HTTP.
"""

from __future__ import annotations

import contextlib
from typing import Any, Literal

import anyio
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from mcp_types import ElicitRequest, ElicitRequestURLParams, ElicitResult, InputRequiredResult
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from approval_core.asking.binding import Binding
from approval_core.asking.caller_gone import CallerWatch
from approval_core.asking.decisions import NOTHING_CHANGED, Approved, Decision, NotApproved
from approval_core.asking.dialog import Question
from approval_core.asking.results import refusal
from approval_core.asking.sealing import StateSealer
from approval_core.asking.waiting import note_waiting
from approval_core.page.approval_page import ApprovalPage
from approval_core.page.pending import PendingApproval
from approval_core.page.stored import StoredView
from approval_core.records.audit import audit

__all__ = ["POLL_SECONDS", "URL_INPUT_KEY", "PagePath", "denied"]

POLL_SECONDS = 0.5
"""Seconds between two looks at the record store while a pushed URL elicitation waits for the decision."""
URL_INPUT_KEY = "approval-page"
"""The key of the URL-mode request in ``InputRequiredResult.input_requests``."""

Reason = Literal["switched_off", "client_cannot_ask", "no_channel"]


def denied(tool: str, code: str) -> NotApproved:
    """The refusal of a call whose pending approval (``code``) the person denied on the page."""
    text = f"{tool} was not run: the person denied it on the approval page (code {code}). "
    data = {"outcome": "declined", "path": "page", "code": code, "changed": False}
    return NotApproved("page", "declined", refusal(text + NOTHING_CHANGED, data))


def _declares_url(ctx: Context[Any, Any]) -> bool:
    capabilities = ctx.client_capabilities
    declared = None if capabilities is None else capabilities.elicitation
    return declared is not None and declared.url is not None


class PagePath:
    """Runs the approval page's path for one gate.

    Args:
        server_name: The server's name (in texts and the audit).
        page: The server's approval page.
        sealer: The gate's state sealer (single-use states for ``input_required``).
        dialog_timeout: Seconds a pushed URL elicitation waits for the decision.
    """

    def __init__(self, server_name: str, page: ApprovalPage, sealer: StateSealer, dialog_timeout: float) -> None:
        self.server_name = server_name
        self.page = page
        self.sealer = sealer
        self.dialog_timeout = dialog_timeout

    async def decide(
        self,
        ctx: Context[Any, Any],
        binding: Binding,
        dialog: Question,
        reason: Reason,
        stored: StoredView | None = None,
    ) -> Decision:
        """Approve from a standing decision, or ask through the page; see the module docstring.

        ``stored`` (what the change touches, as stored) is kept with a newly opened approval for the page.

        Raises:
            StoreUnavailable: the record store cannot be asked (the gate refuses then).
        """
        if not self.page.paired():
            return self._not_paired(binding)
        book = self.page.book
        record = await book.current(binding.fingerprint)
        if record is not None:
            settled = await self._use(binding, record)
            if settled is not None:
                return settled
        fresh = record is None
        if record is None:
            record = await self._open(binding, dialog, stored)
        url_ok = reason != "switched_off" and _declares_url(ctx)
        if url_ok and ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return await self._input_required(ctx, binding, record, fresh)
        if url_ok and ctx.session.can_send_request:
            return await self._push_url(ctx, binding, record)
        return self._pending(binding, record, fresh)

    async def _open(self, binding: Binding, dialog: Question, stored: StoredView | None) -> PendingApproval:
        record = await self.page.book.open(binding, dialog, stored)
        await self.page.changesets.enlist(record, binding)
        self._audit("page_opened", binding, record.code)
        if self.page.push is not None:
            await self.page.push.pending(self.server_name, record.headline, record.code, self.page.url_of(record))
        return record

    async def _use(self, binding: Binding, record: PendingApproval) -> Decision | None:
        """The call's decision when the person decided (spent now, once); None while it is pending or raced."""
        book = self.page.book
        decided = await book.decision(record.id)
        if decided is None:
            return None
        if not await book.spend(record):
            return None
        if decided == "approve":
            self._audit("approved", binding, record.code)
            return Approved("page", binding.fingerprint)
        self._audit("declined", binding, record.code)
        return denied(binding.tool, record.code)

    # ------------------------------------------------------------------ the paths

    async def _push_url(self, ctx: Context[Any, Any], binding: Binding, record: PendingApproval) -> Decision:
        url = self.page.url_of(record)
        message = self._url_message(record)
        outcome = "timed_out"
        settled: Decision | None = None
        watch = CallerWatch(ctx)
        async with anyio.create_task_group() as watching:
            watching.start_soon(watch.until_gone, watching.cancel_scope)
            with anyio.move_on_after(self.dialog_timeout):
                try:
                    answer = await ctx.session.elicit_url(message, url, record.id, related_request_id=ctx.request_id)
                except MCPError:
                    answer = None
                if not isinstance(answer, ElicitResult):
                    outcome = "client_error"
                elif answer.action != "accept":
                    outcome = "declined" if answer.action == "decline" else "cancelled"
                else:
                    settled = await self._wait(binding, record)
            watching.cancel_scope.cancel()
        if watch.gone or await watch.gone_now():
            # Nobody would be told what a decision did: it stays for the next identical call (or was spent
            # just now and acts on nothing).
            return self._not_decided(binding, record, "caller_gone")
        if settled is not None:
            with contextlib.suppress(Exception):
                await ctx.session.send_elicit_complete(record.id, related_request_id=ctx.request_id)
            return settled
        return self._not_decided(binding, record, outcome)

    async def _wait(self, binding: Binding, record: PendingApproval) -> Decision | None:
        while record.seconds_left(self.page.book.now) > 0:
            settled = await self._use(binding, record)
            if settled is not None:
                return settled
            await anyio.sleep(POLL_SECONDS)
        return None

    async def _input_required(
        self, ctx: Context[Any, Any], binding: Binding, record: PendingApproval, fresh: bool
    ) -> Decision:
        state = ctx.request_state
        responses = ctx.input_responses or {}
        # An answer speaks of the record it was asked for, never of one opened just now (fresh: the old
        # one's approval was spent, or it expired): that state and answer get a fresh question.
        if state is not None and URL_INPUT_KEY in responses and not fresh:
            opened = await self.sealer.open(state, binding.tool, binding.fingerprint)
            if opened.ok:
                answer = responses[URL_INPUT_KEY]
                action = answer.action if isinstance(answer, ElicitResult) else "cancel"
                if action == "accept":
                    return self._pending(binding, record, fresh=False)
                return self._not_decided(binding, record, "declined" if action == "decline" else "cancelled")
        sealed = await self.sealer.seal(binding.tool, binding.fingerprint)
        self._audit("asked", binding, record.code)
        message = self._url_message(record)
        question = ElicitRequest(params=ElicitRequestURLParams(message=message, url=self.page.url_of(record)))
        result = InputRequiredResult(input_requests={URL_INPUT_KEY: question}, request_state=sealed)
        return NotApproved("page", "asked", result)

    def _url_message(self, record: PendingApproval) -> str:
        return f"{self.server_name} asks for your approval on its approval page. Check that it shows {record.code}."

    # ------------------------------------------------------------------ refusals

    def _pending(self, binding: Binding, record: PendingApproval, fresh: bool) -> NotApproved:
        url = self.page.url_of(record)
        left = record.seconds_left(self.page.book.now)
        self._audit("page_pending", binding, record.code)
        note_waiting(record.id)  # a task layer around the call may wait for it instead (serving/tasks.py)
        again = "" if fresh else "The person has not decided yet. "
        text = (
            f"{binding.tool} was not run yet: it needs the person's approval, which this client cannot ask for "
            f"in a dialog. {again}Ask the person to open {url} , check that the page shows the code "
            f"{record.code}, and approve or deny it there with their passkey. Then make exactly the same call "
            f"again: if approved, it runs once. The approval expires in {left / 60:.0f} minute(s). {NOTHING_CHANGED}"
        )
        data = {
            "outcome": "approval_pending",
            "path": "page",
            "approval_url": url,
            "code": record.code,
            "operation": record.headline,
            "expires_in_seconds": round(left),
            "changed": False,
        }
        return NotApproved("page", "approval_pending", refusal(text, data))

    def _not_decided(self, binding: Binding, record: PendingApproval, outcome: str) -> NotApproved:
        self._audit(outcome, binding, record.code)
        why = {
            "timed_out": f"no decision came within {self.dialog_timeout:g} seconds",
            "declined": "the person declined to open the approval page",
            "cancelled": "the request to open the approval page was dismissed",
            "client_error": "the client could not show the approval page's link",
            "caller_gone": "the call's connection closed while it waited for the decision",
        }[outcome]
        text = (
            f"{binding.tool} was not run: {why}. The approval is still open at {self.page.url_of(record)} "
            f"(code {record.code}) until it expires; once the person approves there, the same call runs once. "
            f"{NOTHING_CHANGED}"
        )
        data = {
            "outcome": outcome,
            "path": "page",
            "approval_url": self.page.url_of(record),
            "code": record.code,
            "operation": record.headline,
            "changed": False,
        }
        return NotApproved("page", outcome, refusal(text, data))

    def _not_paired(self, binding: Binding) -> NotApproved:
        self._audit("not_paired", binding, None)
        text = (
            f"{binding.tool} was not run: {self.server_name} asks a person on its approval page, and no passkey "
            "is paired with that page yet, so nobody can approve. The person pairs one by running "
            f"`{self.page.pairing_command()}` (with `uv run` before it from a clone) in a terminal on this machine, "
            "not through this assistant. "
            f"{NOTHING_CHANGED}"
        )
        data = {"outcome": "not_paired", "path": "page", "changed": False}
        return NotApproved("page", "not_paired", refusal(text, data))

    def _audit(self, event: str, binding: Binding, code: str | None) -> None:
        audit(event, server=self.server_name, tool=binding.tool, path="page", fp=binding.fingerprint, reason=code)
