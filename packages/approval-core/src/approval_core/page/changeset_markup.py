"""The approval page's HTML for a set of pending calls: every item with its own dialog and stored view.

The set page (``GET /approval/s/<id>``) draws each pending call of one caller
as the single page draws it (:func:`~approval_core.page.markup.dialog_html`:
the server's words, its counts, the caller's values; then what the change
touches, as stored, in its own fenced section,
:func:`~approval_core.page.stored_markup.stored_html`), each under its own
code, with a Deny button of its own. One button approves all the listed
calls with the passkey, one denies them all. The ids of the calls drawn are
in the ``main`` element (``data-items``): the script approves exactly those,
never a call that arrived after the page was drawn. Every value is escaped;
there is no inline code (``approval.js`` then ``changeset.js``).
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from approval_core.page.markup import dialog_html, document_html
from approval_core.page.pending import PendingApproval
from approval_core.page.stored_markup import stored_html

__all__ = ["changeset_html", "set_notice_html"]


def set_notice_html(set_url: str, count: int) -> str:
    """The single page's line pointing to the caller's set of ``count`` pending calls (this one included)."""
    return (
        f'<p class="set" id="set">This is one of {count} calls of the same session waiting for you now. '
        f'<a id="set-link" href="{escape(set_url)}">See all {count} together</a>, each with what it changes, '
        "and approve them with one passkey.</p>"
    )


def _item(index: int, record: PendingApproval, seconds_left: float) -> str:
    minutes = f"{int(seconds_left) // 60} min {int(seconds_left) % 60:02d} s"
    return (
        f'<article class="item" id="item-{index}" data-id="{escape(record.id)}">'
        f'<h2 class="item-head">{index}. Code <strong class="item-code">{escape(record.code)}</strong> '
        f'<span class="left">({escape(minutes)} left)</span></h2>'
        f"{dialog_html(record)}{stored_html(record.view(), f'-{index}')}"
        f'<div class="actions"><button class="deny-item" type="button" data-id="{escape(record.id)}">'
        f"Deny only this call ({escape(record.code)})</button></div></article>"
    )


def changeset_html(
    server: str, anchor: str, csrf: str, items: Sequence[tuple[PendingApproval, float]], pair_with: str | None
) -> str:
    """The set page of one caller.

    Args:
        server: The server's name.
        anchor: The id of the pending approval the page was opened from (its URL's last part).
        csrf: The CSRF token the page's POSTs must carry.
        items: Each open pending call of the caller and the seconds it has left, oldest first.
        pair_with: None when a passkey is paired; else the pairing command the page names (it cannot approve).
    """
    count = len(items)
    ids = " ".join(record.id for record, _ in items)
    drawn = "".join(_item(index, record, left) for index, (record, left) in enumerate(items, start=1))
    if count == 0:
        state = '<p class="state" id="state">No call of this session waits any more. Nothing was changed.</p>'
        actions = ""
    elif pair_with is not None:
        state = (
            '<p class="state" id="state">No passkey is paired with this approval page, so it cannot approve. '
            f"On this machine, in a terminal, run <code>{escape(pair_with)}</code>.</p>"
        )
        actions = '<div class="actions"><button id="deny-all" type="button">Deny all</button></div>'
    else:
        state = f'<p class="state" id="state">Waiting for your decision on {count} call(s).</p>'
        actions = (
            f'<div class="actions"><button id="approve-all" type="button">Approve all {count} with passkey</button>'
            '<button id="deny-all" type="button">Deny all</button></div>'
        )
    body = (
        f'<main id="changeset" data-kind="changeset" data-id="{escape(anchor)}" data-csrf="{escape(csrf)}" '
        f'data-items="{escape(ids)}">'
        f"<h1>{escape(server)} asks for your approval of {count} call(s)</h1>"
        '<p class="help">Each call below is shown with what it would change. One passkey approves exactly the '
        "calls listed here, each to run once when your assistant makes it again; a call that is not listed asks "
        "on its own. Deny any call you do not want first, or deny them all.</p>"
        f"{drawn}{state}{actions}"
        '<p class="help">Approving needs your passkey. Denying, or doing nothing, changes nothing.</p>'
        "</main>"
    )
    return document_html(f"{server}: approve or deny {count} call(s)", body, ("approval.js", "changeset.js"))
