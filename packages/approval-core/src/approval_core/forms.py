"""The gate's two form-dialog paths: a pushed ``elicitation/create`` (2025-11-25) and ``input_required`` (2026-07-28).

Only a ticked box on an accepted form approves (:func:`~approval_core.asking.answers.judge_answer`). On
2026-07-28 a state that does not open (bad seal, expired, spent, other target, minted before a restart) or an
answer without a state counts as no answer: a fresh question.

When the approval page is set up and served, each form question gets a read-only view of what it changes
(:mod:`approval_core.page.views`): one line ``See what this changes: <link>`` ends the form's message. The
link is never part of the text the approval binds (the dialog's :meth:`render`), and the view is closed
when the question is answered, abandoned or asked afresh.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server.mcpserver import Context
from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult

from approval_core.asking.answers import ANSWER_TEXT, CALLER_GONE_TEXT, ask_form, judge_answer
from approval_core.asking.binding import Binding
from approval_core.asking.caller_gone import CallerWatch
from approval_core.asking.decisions import NOTHING_CHANGED, Approved, Decision, NotApproved, PathName
from approval_core.asking.dialog import Question
from approval_core.asking.results import refusal
from approval_core.asking.sealing import StateSealer
from approval_core.every_write.scope import current_call
from approval_core.page.approval_page import ApprovalPage
from approval_core.page.stored import StoredView
from approval_core.page.views import with_link
from approval_core.records.audit import audit

__all__ = ["INPUT_KEY", "FormPaths"]

INPUT_KEY = "approval"
"""The key of the one question in ``InputRequiredResult.input_requests``."""


class FormPaths:
    """Asks in a form dialog on either protocol revision, for one gate.

    Args:
        server_name: The server's name (texts and the audit).
        sealer: The gate's state sealer (single-use ``input_required`` states).
        dialog_timeout: Seconds a pushed dialog waits for its answer.
        page: The server's approval page, or None; when served, each question links to a read-only view.
    """

    def __init__(self, server_name: str, sealer: StateSealer, dialog_timeout: float, page: ApprovalPage | None) -> None:
        self.server_name = server_name
        self.sealer = sealer
        self.dialog_timeout = dialog_timeout
        self.page = page

    async def _view(
        self, binding: Binding, dialog: Question, stored: StoredView | None, ttl: float, *, alone: bool
    ) -> tuple[str, str] | None:
        """The id and link of a read-only view of this question when the page is served, else None."""
        if self.page is None or not self.page.serving():
            return None
        record = await self.page.views.open(binding, dialog, stored, ttl, alone=alone)
        return record.id, self.page.view_url(record)

    # ------------------------------------------------------------------ 2025-11-25: push

    async def push(
        self, ctx: Context[Any, Any], binding: Binding, dialog: Question, stored: StoredView | None
    ) -> Decision:
        """Push the form and wait for the answer, at most ``dialog_timeout`` seconds (or until the caller is gone).

        Raises:
            StoreUnavailable: the read-only view could not be recorded.
        """
        view = await self._view(binding, dialog, stored, self.dialog_timeout, alone=False)
        link = None if view is None else view[1]
        self._audit("asked", binding, "dialog")
        watch = CallerWatch(ctx)
        outcome = "timed_out"
        try:
            async with anyio.create_task_group() as watching:
                watching.start_soon(watch.until_gone, watching.cancel_scope)
                outcome = await ask_form(ctx, dialog, self.dialog_timeout, link)
                watching.cancel_scope.cancel()
        except anyio.get_cancelled_exc_class():
            # notifications/cancelled, or the session closed: the SDK cancels the call, the dialog with it.
            self._audit("caller_gone", binding, "dialog", "cancelled")
            raise
        finally:
            if view is not None and self.page is not None:
                with anyio.CancelScope(shield=True):
                    await self.page.views.close(binding.fingerprint, view[0])
        if watch.gone or await watch.gone_now():
            outcome = "caller_gone"
        return self.conclude(binding, "dialog", outcome)

    # ------------------------------------------------------------------ 2026-07-28: input_required

    async def input_required(
        self, ctx: Context[Any, Any], binding: Binding, dialog: Question, stored: StoredView | None
    ) -> Decision:
        """Judge the answer a retry carries with a state we sealed, or ask (afresh).

        Raises:
            StoreUnavailable: the record store cannot be asked.
        """
        state = ctx.request_state
        responses = ctx.input_responses or {}
        if state is None:
            if responses:
                self._audit("state_refused", binding, "input_required", "no_state")
            return await self._question(binding, dialog, stored)
        opened = await self.sealer.open(state, binding.tool, binding.fingerprint)
        if not opened.ok:
            self._audit("state_refused", binding, "input_required", opened.reason)
            return await self._question(binding, dialog, stored)
        if INPUT_KEY not in responses:
            self._audit("state_refused", binding, "input_required", "no_answer")
            return await self._question(binding, dialog, stored)
        if self.page is not None:
            await self.page.views.close(binding.fingerprint)
        return self.conclude(binding, "input_required", judge_answer(responses[INPUT_KEY]))

    async def _question(self, binding: Binding, dialog: Question, stored: StoredView | None) -> NotApproved:
        call = current_call()
        state = await self.sealer.seal(binding.tool, binding.fingerprint, None if call is None else call.memo)
        view = await self._view(binding, dialog, stored, self.sealer.ttl, alone=True)
        self._audit("asked", binding, "input_required")
        message = with_link(dialog.render(), None if view is None else view[1])
        question = ElicitRequest(params=ElicitRequestFormParams(message=message, requested_schema=dialog.schema()))
        result = InputRequiredResult(input_requests={INPUT_KEY: question}, request_state=state)
        return NotApproved("input_required", "asked", result)

    def conclude(self, binding: Binding, path: PathName, outcome: str) -> Decision:
        """Approved for ``approved``; else the refusal saying why nothing ran (audited either way)."""
        self._audit(outcome, binding, path)
        if outcome == "approved":
            return Approved(path, binding.fingerprint)
        if outcome == "caller_gone":
            why = CALLER_GONE_TEXT
        elif outcome == "timed_out":
            why = f"no answer came within {self.dialog_timeout:g} seconds, so the change was abandoned."
        else:
            why = ANSWER_TEXT[outcome]
        text = f"{binding.tool} was not run: {why} {NOTHING_CHANGED}"
        return NotApproved(path, outcome, refusal(text, {"outcome": outcome, "path": path, "changed": False}))

    def _audit(self, event: str, binding: Binding, path: PathName, reason: str | None = None) -> None:
        audit(event, server=self.server_name, tool=binding.tool, path=path, fp=binding.fingerprint, reason=reason)
