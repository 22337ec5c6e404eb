"""What the gate decides for one call: go ahead (:class:`Approved`) or stop (:class:`NotApproved`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mcp_types import CallToolResult, InputRequiredResult

__all__ = ["NOTHING_CHANGED", "Approved", "Decision", "NotApproved", "PathName"]

PathName = Literal["not_guarded", "dialog", "input_required", "token", "strict", "page", "every_write", "grant"]
"""How a decision was reached; ``page`` is the approval page (:mod:`approval_core.page.approval_page`);
``grant``: a standing grant made on the page covers the call (:mod:`approval_core.asking.grants`);
``every_write``: the every-write profile asks at the call's first changing request instead
(:mod:`approval_core.every_write.profile`)."""

NOTHING_CHANGED = "Nothing was changed."


@dataclass(frozen=True, slots=True)
class Approved:
    """Go ahead: a person approved, a valid token came back, or nothing needed asking.

    Attributes:
        path: How approval was reached.
        fingerprint: The binding fingerprint ("" when nothing was asked).
    """

    path: PathName
    fingerprint: str
    approved: Literal[True] = True


@dataclass(frozen=True, slots=True)
class NotApproved:
    """Stop: return ``result`` from the tool; nothing may be changed.

    Attributes:
        path: Which path produced this.
        outcome: ``asked`` (an input_required question is out),
            ``declined``, ``cancelled``, ``unticked``, ``invalid_answer``,
            ``client_error``, ``timed_out``, ``caller_gone`` (the call's request went
            away while a pushed dialog was open), ``token_issued``,
            ``token_refused``, ``refused`` (strict profile),
            ``store_unavailable`` (the record store could not be reached), or
            on the approval page's path ``approval_pending`` (the person has
            not decided yet), ``not_paired`` (no passkey is paired) and
            ``declined`` / ``cancelled`` / ``timed_out``.
        result: An ``isError`` ``CallToolResult``, or the
            ``InputRequiredResult`` carrying the question.
    """

    path: PathName
    outcome: str
    result: CallToolResult | InputRequiredResult
    approved: Literal[False] = False


Decision = Approved | NotApproved
