"""The approval page's HTML: every value escaped, no inline script or style.

Each page is built from a :class:`~approval_core.page.pending.PendingApproval`
(the server's own words, its counts, and the caller's values as the form
dialog shows them, under the caller heading) or from fixed text. The
dialog's words keep their lines: the operation is the heading, each paragraph
of the consequence a paragraph, each of its lines a line. Every value goes
through :func:`html.escape` in its own element, so a caller's value cannot
pose as another row, a heading or a button. What the change touches as the
backend stores it comes last, in its own section headed as stored data
(:mod:`approval_core.page.stored_markup`); the same record also makes the
read-only view a form dialog links to (:func:`view_html`: no code, no
buttons). The script and the style sheet are separate files of the page
(``approval.js``, ``approval.css``), so the Content-Security-Policy allows no
inline code at all.
"""

from __future__ import annotations

from html import escape

from approval_core.asking.dialog import CALLER_VALUES_HEADING
from approval_core.page.pending import PendingApproval
from approval_core.page.stored_markup import stored_html

__all__ = ["approval_html", "dialog_html", "document_html", "message_html", "pairing_html", "view_html"]


def document_html(title: str, body: str, scripts: tuple[str, ...] = ("approval.js",)) -> str:
    """A whole page of the approval page, as HTML text.

    ``title`` is escaped; ``scripts`` are file names under ``/approval/``, loaded deferred; ``body`` is markup.
    """
    tags = "".join(f'<script src="/approval/{name}" defer></script>' for name in scripts)
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title>"
        '<link rel="stylesheet" href="/approval/approval.css">'
        f"{tags}</head><body>{body}</body></html>\n"
    )


def _minutes(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 60} min {whole % 60:02d} s"


def _dialog(record: PendingApproval) -> str:
    """The dialog's words as the form dialog has them, line by line, then the caller's values."""
    rows = "".join(
        f'<tr><th scope="row">{escape(label)}</th><td><code>{escape(value)}</code></td></tr>'
        for label, value in record.caller_values
    )
    values = (
        f'<section class="caller"><h2>{escape(CALLER_VALUES_HEADING)}</h2><table>{rows}</table></section>'
        if rows
        else ""
    )
    paragraphs = "".join(
        '<p class="consequence">' + "<br>".join(escape(line) for line in paragraph.split("\n")) + "</p>"
        for paragraph in record.consequence.split("\n\n")
        if paragraph.strip()
    )
    return f'<section class="dialog"><h2 class="operation">{escape(record.headline)}</h2>{paragraphs}{values}</section>'


def approval_html(
    record: PendingApproval,
    csrf: str,
    seconds_left: float,
    decided: str | None,
    pair_with: str | None,
    also: str = "",
) -> str:
    """The page of one pending approval.

    Args:
        record: The pending approval.
        csrf: The CSRF token the page's POSTs must carry.
        seconds_left: Seconds until it expires (0: expired; the buttons are then absent).
        decided: ``approve`` / ``deny`` once decided (the buttons are then absent), else None.
        pair_with: None when a passkey is paired; else the pairing command the page names (it cannot approve).
        also: Markup of the page's own drawn after the code (the link to the caller's set), or "".
    """
    if decided is not None:
        state = f'<p class="state" id="state">Decided: {"approved" if decided == "approve" else "denied"}.</p>'
        actions = ""
    elif seconds_left <= 0:
        state = '<p class="state" id="state">This approval has expired. Nothing was changed.</p>'
        actions = ""
    elif pair_with is not None:
        state = (
            '<p class="state" id="state">No passkey is paired with this approval page, so it cannot approve. '
            f"On this machine, in a terminal, run <code>{escape(pair_with)}</code> (with <code>uv run</code> "
            "before it from a clone) and follow the link it gives; then open this page again.</p>"
        )
        actions = '<div class="actions"><button id="deny" type="button">Deny</button></div>'
    else:
        state = f'<p class="state" id="state">Waiting for your decision: {escape(_minutes(seconds_left))} left.</p>'
        actions = (
            '<div class="actions"><button id="approve" type="button">Approve with passkey</button>'
            '<button id="deny" type="button">Deny</button></div>'
        )
    body = (
        f'<main id="approval" data-kind="approval" data-id="{escape(record.id)}" data-csrf="{escape(csrf)}">'
        f"<h1>{escape(record.server)} asks for your approval</h1>"
        f'<p class="code">Code <strong id="code">{escape(record.code)}</strong>: check that it matches the code '
        "your assistant or your phone shows.</p>"
        f"{also}{_dialog(record)}{stored_html(record.view()) if actions else ''}"
        f"{state}{actions}"
        '<p class="help">Approving needs your passkey. Denying, or doing nothing, changes nothing.</p>'
        "</main>"
    )
    return document_html(f"{record.server}: approve or deny", body)


def dialog_html(record: PendingApproval) -> str:
    """The dialog's words of ``record`` as the page draws them (each value escaped in its own element)."""
    return _dialog(record)


def view_html(record: PendingApproval, seconds_left: float) -> str:
    """The read-only view a form dialog links to: the dialog's words and what the change touches, no buttons."""
    body = (
        f'<main id="view" data-kind="view"><h1>{escape(record.server)} asks in your assistant\'s dialog</h1>'
        '<p class="help">This page only shows what the question in the dialog would change. It needs no '
        "passkey and changes nothing: answer in the dialog.</p>"
        f"{_dialog(record)}{stored_html(record.view())}"
        f'<p class="state" id="state">This view closes when the question is answered, or in '
        f"{escape(_minutes(seconds_left))}.</p></main>"
    )
    return document_html(f"{record.server}: what this changes", body)


def pairing_html(csrf: str, secret: str, vouch: bool) -> str:
    """The pairing page: adds a passkey; ``vouch`` says an already paired passkey must then agree."""
    step = (
        "<p>A passkey is paired already: press the button once to make the new passkey, then again to have "
        "the paired one agree to it.</p>"
        if vouch
        else ""
    )
    body = (
        f'<main id="pairing" data-kind="pairing" data-secret="{escape(secret)}" data-csrf="{escape(csrf)}">'
        "<h1>Pair a passkey with the approval page</h1>"
        "<p>The passkey you make here approves the changes your MCP servers ask about. "
        "Your device will ask for your PIN, fingerprint or face.</p>"
        '<p><label for="code">The code the pairing command shows in your terminal:</label> '
        '<input id="code" name="code" autocomplete="off" spellcheck="false" size="10"></p>'
        f'{step}<div class="actions"><button id="pair" type="button">Make a passkey</button></div>'
        '<p class="state" id="state"></p></main>'
    )
    return document_html("Pair a passkey", body)


def message_html(title: str, text: str) -> str:
    """A page that only says something (not found, expired, refused)."""
    return document_html(title, f'<main><h1>{escape(title)}</h1><p class="state" id="state">{escape(text)}</p></main>')
