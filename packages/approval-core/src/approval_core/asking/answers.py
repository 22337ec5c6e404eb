"""What a client can show, and what its answer to the approval form means (MCP 2025-11-25, Elicitation)."""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from mcp_types import ClientCapabilities, ElicitResult
from pydantic import ValidationError

from approval_core.asking.dialog import APPROVE_FIELD, APPROVE_TITLE, Question

LINK_LABEL = "See what this changes:"
"""The words before the link to a read-only view of a form question (:mod:`approval_core.page.views`)."""

__all__ = ["ANSWER_TEXT", "CALLER_GONE_TEXT", "LINK_LABEL", "ask_form", "client_can_show_form", "judge_answer"]

ANSWER_TEXT = {
    "declined": "the person declined.",
    "cancelled": "the dialog was dismissed without an answer.",
    "unticked": f'the dialog was submitted with "{APPROVE_TITLE}" unticked, which counts as declined.',
    "invalid_answer": "the answer to the dialog was not one ticked box, so it counts as no approval.",
    "client_error": "the client could not show the dialog (it answered with an error).",
}
"""Why a call did not run, for each answer that is not a ticked box (ends a sentence)."""

CALLER_GONE_TEXT = (
    "the caller's request went away (its connection closed) while the dialog was open, so the change was "
    "abandoned and no later answer is acted on."
)
"""Why a pushed dialog's call did not run when its request was gone before the answer (ends a sentence)."""


def client_can_show_form(capabilities: ClientCapabilities | None) -> bool:
    """Whether a client declared form-mode elicitation.

    MCP 2025-11-25 §Elicitation: ``{"elicitation": {}}`` means form only;
    a client that declared only ``url`` cannot take a form.
    """
    if capabilities is None or capabilities.elicitation is None:
        return False
    declared = capabilities.elicitation
    return declared.form is not None or declared.url is None


def judge_answer(answer: object) -> str:
    """``approved`` for an accepted form with the box ticked; else why not.

    Returns one of ``approved``, ``declined``, ``cancelled``, ``unticked``,
    ``invalid_answer``.
    """
    if not isinstance(answer, ElicitResult):
        return "invalid_answer"
    if answer.action == "decline":
        return "declined"
    if answer.action == "cancel":
        return "cancelled"
    content = answer.content
    if not isinstance(content, dict) or set(content) != {APPROVE_FIELD}:
        return "invalid_answer"
    ticked = content[APPROVE_FIELD]
    if ticked is True:
        return "approved"
    if ticked is False:
        return "unticked"
    return "invalid_answer"


async def ask_form(ctx: Context[Any, Any], dialog: Question, wait: float, link: str | None = None) -> str:
    """Push ``dialog`` as a form elicitation (MCP 2025-11-25) and judge the answer (:func:`judge_answer`).

    ``link`` (a read-only view of what the change touches, on the approval page) ends the message as its own
    line, after the dialog's text; it is not part of what the approval binds.

    Returns the outcome: ``approved``, one of the refusals of :data:`ANSWER_TEXT`, ``client_error`` (the
    client answered with an error), ``invalid_answer``, or ``timed_out`` after ``wait`` seconds.
    """
    with anyio.move_on_after(wait):
        try:
            message = dialog.render() if link is None else f"{dialog.render()}\n\n{LINK_LABEL} {link}"
            answer = await ctx.session.elicit_form(message, dialog.schema(), related_request_id=ctx.request_id)
        except MCPError:
            return "client_error"
        except (ValidationError, ValueError):
            return "invalid_answer"
        return judge_answer(answer)
    return "timed_out"
