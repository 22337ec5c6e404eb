"""The HTML of the page's grant form and grant list: every value escaped, no inline script or style.

The form shows the approved call's operation (the server's own words), the
target it named (a caller value: the calendar, address book or topic, or
under every-write the request shapes) and the choices a grant has: which of
the server's asking tools, at most how many uses, for at most how many
minutes. Its script (``grants.js``) is a file of the page, like ``approval.js``.
"""

from __future__ import annotations

from html import escape

from approval_core.asking.grant_book import GrantState
from approval_core.asking.grants import MAX_GRANT_MINUTES, MAX_GRANT_USES, GrantCall
from approval_core.page.markup import document_html
from approval_core.page.pending import PendingApproval

__all__ = ["DEFAULT_MINUTES", "DEFAULT_USES", "grant_form_html", "grants_html"]

DEFAULT_USES = 2
"""The uses the form proposes."""
DEFAULT_MINUTES = 60
"""The minutes the form proposes."""


def _target(call: GrantCall) -> str:
    if call.shapes:
        rows = "".join(f"<li><code>{escape(m)} {escape(c)}</code></li>" for m, c in call.shapes)
        return f'<p>Only requests of these shapes (method, collection):</p><ul id="target">{rows}</ul>'
    where = ""
    if call.backend:
        shown = " as ".join(p for p in call.backend if p)
        where = f' on <code id="backend">{escape(shown)}</code>'
    return f'<p>Only in <code id="target">{escape(call.collection or "")}</code>{where}.</p>'


def _who(call: GrantCall) -> str:
    if call.principal is None:
        return ""
    shown = " / ".join(p or "-" for p in call.principal)
    return f'<p>Only for calls made as <code id="principal">{escape(shown)}</code>.</p>'


def grant_form_html(record: PendingApproval, call: GrantCall, tools: tuple[str, ...], csrf: str) -> str:
    """The form that widens the approved ``record`` (which named ``call``'s target) into a grant."""
    boxes = "".join(
        f'<li><label><input type="checkbox" class="tool" value="{escape(t)}" id="tool-{escape(t)}"'
        f"{' checked' if t == record.tool else ''}> <code>{escape(t)}</code></label></li>"
        for t in sorted({*tools, record.tool})
    )
    body = (
        f'<main id="grant" data-kind="grant" data-id="{escape(record.id)}" data-csrf="{escape(csrf)}">'
        f"<h1>Let {escape(record.server)} do this again without asking</h1>"
        f'<p>You approved: <strong class="operation">{escape(record.headline)}</strong> '
        f"(code {escape(record.code)}).</p>"
        "<p>A standing grant lets later calls like it run without asking you, within all of these terms. "
        "Any call outside them asks as usual. You can revoke it on the grants page at any time.</p>"
        f'<section class="dialog"><h2>Tools</h2><ul>{boxes}</ul>{_target(call)}{_who(call)}'
        f'<p><label for="uses">At most this many calls (1 to {MAX_GRANT_USES}):</label> '
        f'<input id="uses" type="number" min="1" max="{MAX_GRANT_USES}" value="{DEFAULT_USES}"></p>'
        f'<p><label for="minutes">For at most this many minutes (1 to {MAX_GRANT_MINUTES}, 8 hours):</label> '
        f'<input id="minutes" type="number" min="1" max="{MAX_GRANT_MINUTES}" value="{DEFAULT_MINUTES}"></p>'
        "</section>"
        '<div class="actions"><button id="make-grant" type="button">Grant with passkey</button></div>'
        '<p class="state" id="state"></p>'
        '<p class="help">Granting needs your passkey, which signs these exact terms. '
        'See <a href="/approval/grants">the grants kept</a>.</p></main>'
    )
    return document_html(f"{record.server}: make a standing grant", body, ("approval.js", "grants.js"))


def _row(state: GrantState, now: float) -> str:
    terms = state.terms
    ended = state.ended(now)
    target = ", ".join(f"{m} {c}" for m, c in terms.shapes) if terms.shapes else (terms.collection or "")
    minutes = max(0, int((terms.expires - now) // 60))
    status = (
        f"live: {terms.uses - state.used} use(s) and {minutes} minute(s) left"
        if ended is None
        else f"ended ({ended.replace('_', ' ')})"
    )
    gid = escape(state.id)
    button = (
        f'<button type="button" class="revoke" id="revoke-{gid}" data-grant="{gid}">Revoke</button>'
        if ended is None
        else ""
    )
    return (
        f'<tr id="grant-{escape(state.id)}"><td><code>{escape(state.id)}</code></td>'
        f"<td>{escape(', '.join(terms.tools))}</td><td><code>{escape(target)}</code></td>"
        f'<td>{state.used} of {terms.uses}</td><td class="status">{escape(status)}</td><td>{button}</td></tr>'
    )


def grants_html(server: str, states: list[GrantState], csrf: str, now: float) -> str:
    """The list of grants kept: live ones with a Revoke button (no passkey needed), then ended ones."""
    rows = "".join(_row(s, now) for s in sorted(states, key=lambda s: s.ended(now) is not None))
    table = (
        f"<table><tr><th>Grant</th><th>Tools</th><th>Target</th><th>Used</th><th>State</th><th></th></tr>{rows}</table>"
        if rows
        else "<p>No grants are kept.</p>"
    )
    body = (
        f'<main id="grants" data-kind="grants" data-csrf="{escape(csrf)}">'
        f"<h1>Standing grants of {escape(server)}</h1>{table}"
        '<p class="state" id="state"></p>'
        '<p class="help">Revoking needs no passkey: it only stops a grant.</p></main>'
    )
    return document_html(f"{server}: standing grants", body, ("approval.js", "grants.js"))
