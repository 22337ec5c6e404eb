r"""The approval page's section of stored data: every value a cell of its own, escaped, isolated, cut.

What a backend stores was written by whoever wrote the entry, not by this
server, so the page draws it under a heading that says so
(:data:`STORED_HEADING`) and draws each value so that it cannot pass for
anything else:

* escaped (:func:`html.escape`) inside its own table cell, in a ``<bdi>``
  (``dir=auto``), so it can neither close the cell nor reorder the text
  around it (UAX #9 isolates);
* every character a person cannot see (controls, format characters such as
  U+202E, zero-width and blank letters, stacked marks) shown as a ``\\uXXXX``
  escape, by the same rules a form dialog applies to a caller's values
  (:func:`approval_core.asking.dialog.shown_value`);
* a name (a title, a display name) whose letters mix scripts that look
  alike (Latin with Cyrillic or Greek, fullwidth or mathematical letters) is
  marked, naming each odd letter and its code point (:func:`lookalikes`);
* cut at :data:`~approval_core.page.stored.VALUE_LIMIT` characters when the
  view was built, the page saying how many were left out.

A time shows the entry's own zone as stored; the page's script (``approval.js``)
writes the same instant in the browser's zone into the ``time`` element after
it (the Content-Security-Policy allows no inline script). Request bodies
(every-write) are a fenced block each, line by line, escaped the same way.
"""

from __future__ import annotations

import unicodedata
from html import escape

from approval_core.asking.dialog import shown_value
from approval_core.page.stored import Change, Collection, SentBody, StoredEntry, StoredField, StoredView

__all__ = ["BODIES_HEADING", "STORED_HEADING", "lookalikes", "stored_html"]

STORED_HEADING = "As stored on the server (written by whoever wrote it, not by this server)"
BODIES_HEADING = "Sent exactly as below (the body of each request)"
_NO_LIMIT = 10**9
_LATIN_LIKE = frozenset({"LATIN"})
_CONFUSABLE = frozenset({"CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE", "COPTIC", "LISU", "VAI"})


def _script(ch: str) -> str:
    """A letter's script by its Unicode name's first word (LATIN, CYRILLIC, FULLWIDTH, MATHEMATICAL...)."""
    try:
        first = unicodedata.name(ch).split()[0]
    except ValueError:
        return "UNKNOWN"
    return "FULLWIDTH" if first == "HALFWIDTH" else first


def lookalikes(value: str) -> list[str]:
    """The letters of ``value`` that make it a look-alike name: ``["U+043E CYRILLIC SMALL LETTER O", ...]``.

    A name is marked when it holds a letter whose compatibility form differs (fullwidth ``Ａ``,
    mathematical ``𝐀``), or when it mixes Latin letters with letters of a script that has Latin
    look-alikes (Cyrillic, Greek, Armenian, Cherokee, Coptic, Lisu, Vai); the letters of the smaller
    script are named. An empty list: nothing to mark.
    """
    letters = [ch for ch in value if unicodedata.category(ch).startswith("L")]
    odd = [ch for ch in letters if unicodedata.normalize("NFKC", ch) != ch]
    scripts: dict[str, list[str]] = {}
    for ch in letters:
        scripts.setdefault(_script(ch), []).append(ch)
    if "LATIN" in scripts and scripts.keys() & _CONFUSABLE:
        mixed = {name: found for name, found in scripts.items() if name in _LATIN_LIKE | _CONFUSABLE}
        fewest = min(mixed, key=lambda name: len(mixed[name]))
        odd.extend(mixed[fewest])
    seen: list[str] = []
    for ch in odd:
        text = f"U+{ord(ch):04X} {unicodedata.name(ch, 'UNNAMED')}"
        if text not in seen:
            seen.append(text)
    return seen


def _value(value: str | None, cut: int = 0, *, name: bool = False) -> str:
    """One stored value as page markup (see the module docstring)."""
    if value is None:
        return '<span class="none">(not set)</span>'
    shown = shown_value(value, _NO_LIMIT)
    out = f'<bdi dir="auto" class="value">{escape(shown)}</bdi>'
    if cut:
        out += f' <span class="cut">… ({cut:,} more characters not shown)</span>'
    odd = lookalikes(value) if name else []
    if odd:
        letters = "; ".join(escape(shown_value(letter, _NO_LIMIT)) for letter in odd)
        out += f' <span class="lookalike">Look-alike letters: {letters}</span>'
    return out


def _field(stored: StoredField) -> str:
    cell = _value(stored.value, stored.cut, name=stored.name)
    if stored.instant is not None:
        cell += (
            f' <span class="local">(<time datetime="{escape(stored.instant)}">{escape(stored.instant)}</time>'
            " in your time zone)</span>"
        )
    return f'<tr><th scope="row">{escape(stored.label)}</th><td>{cell}</td></tr>'


def _change(change: Change) -> str:
    before = _value(change.before, change.before_cut, name=change.name)
    after = _value(change.after, change.after_cut, name=change.name)
    return (
        f'<tr><th scope="row">{escape(change.label)}</th><td class="before">{before}</td>'
        f'<td class="arrow">→</td><td class="after">{after}</td></tr>'
    )


def _collection(collection: Collection) -> str:
    return f"{_value(collection.name, name=True)} <code>{escape(shown_value(collection.path, identifier=True))}</code>"


def _entry(entry: StoredEntry) -> str:
    rows = [f'<tr><th scope="row">Stored in</th><td>{_collection(entry.collection)}</td></tr>']
    if entry.moved_to is not None:
        rows.append(f'<tr><th scope="row">Moves to</th><td>{_collection(entry.moved_to)}</td></tr>')
    rows.extend(_field(stored) for stored in entry.fields)
    if entry.href is not None:
        href = escape(shown_value(entry.href, identifier=True))
        rows.append(f'<tr><th scope="row">Path</th><td><code>{href}</code></td></tr>')
    if entry.etag is not None:
        etag = escape(shown_value(entry.etag, 200, identifier=True))
        rows.append(f'<tr><th scope="row">Version read (ETag)</th><td><code>{etag}</code></td></tr>')
    out = f'<article class="entry"><h3>{escape(entry.kind)}</h3><table>{"".join(rows)}</table>'
    if entry.changes:
        changed = "".join(_change(change) for change in entry.changes)
        out += (
            '<table class="changes"><caption>What this call changes (stored now → written)</caption>'
            f"{changed}</table>"
            '<p class="rest">Everything else in the entry is written back as it is stored.</p>'
        )
    if entry.not_listed:
        out += f'<p class="cut">… and {entry.not_listed:,} more changed fields, not listed here.</p>'
    return out + "</article>"


def _body(body: SentBody) -> str:
    lines = "\n".join(shown_value(line, _NO_LIMIT) for line in body.text.split("\n"))
    kind = f" ({escape(body.content_type)})" if body.content_type else ""
    more = f'<p class="cut">… and {body.more:,} more characters not shown.</p>' if body.more else ""
    return (
        f'<figure class="body"><figcaption><code>{escape(shown_value(body.request, identifier=True))}</code>'
        f"{kind}</figcaption><pre><code>{escape(lines)}</code></pre>{more}</figure>"
    )


def stored_html(view: StoredView | None, suffix: str = "") -> str:
    """The page's section of stored data for ``view`` ("" without one): the entries, then the bodies.

    ``suffix`` ends the sections' element ids (``stored``, ``bodies``), for a page that draws several views.
    """
    if view is None or not (view.entries or view.bodies):
        return ""
    out = ""
    if view.entries:
        entries = "".join(_entry(entry) for entry in view.entries)
        more = f'<p class="cut">… and {view.not_listed:,} more entries, not listed here.</p>' if view.not_listed else ""
        heading = f"<h2>{escape(STORED_HEADING)}</h2>"
        out += f'<section class="stored" id="stored{escape(suffix)}">{heading}{entries}{more}</section>'
    if view.bodies:
        bodies = "".join(_body(body) for body in view.bodies)
        out += (
            f'<section class="bodies" id="bodies{escape(suffix)}"><h2>{escape(BODIES_HEADING)}</h2>{bodies}</section>'
        )
    return out
