r"""The approval dialog: what a person reads before a guarded call runs.

A dialog has exactly three parts, and none of them has room for text read
from a backend (an event summary, a contact's name, a notification body):

* the **operation**, in the server's own words: a literal template that may
  only be filled with integers the server computed (``"delete a recurring
  event and all {occurrences} of its occurrences"``);
* the **consequence**: a literal sentence saying why it cannot be undone;
* the **caller values**: labelled values taken from the call's own
  arguments, shown under the heading :data:`CALLER_VALUES_HEADING`.

``LiteralString`` (PEP 675) makes a type checker reject a template, label or
consequence assembled at run time; the constructor checks the rest at run
time. Caller values are shown on one line each, and every character a person
cannot see is escaped (``\\n``, ``\\u202e``, ``\\u3164``): control and format
characters, private-use, surrogate and unassigned code points, line and
paragraph separators, every space but U+0020, and the letters and symbols
that render blank (:data:`BLANK_FILLERS`); enclosing marks, overlay marks
(:data:`OVERLAY_MARKS`, a strike-through) and every combining mark that
follows another one or starts the value (stacked marks, after Unicode
normalisation NFC) are escaped too, and a value holding right-to-left
letters is isolated (U+2068 ... U+2069, UAX #9) so it cannot reorder the
line. A value marked as an identifier (a path, a topic, a username) shows
every non-ASCII character escaped, so a look-alike stays visible. So a value
cannot draw extra lines or headings into the dialog, reorder what it shows,
pose as another name, or carry text a person reading it cannot see.
A value longer than ``value_limit`` characters is cut, and the dialog says how
many characters were left out (seed 004 shows 4,000). The whole message stays
within :data:`MESSAGE_BOUND` bytes of UTF-8 (:func:`fit_message`): gateways cap
an elicitation message at 4,096 bytes and put the server's name before it, so
long caller values are cut further, each with the count of what is not shown.
"""

from __future__ import annotations

import string
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, LiteralString, Protocol

from approval_core.errors import DialogError

__all__ = [
    "APPROVE_FIELD",
    "APPROVE_TITLE",
    "BLANK_FILLERS",
    "CALLER_VALUES_HEADING",
    "DEFAULT_VALUE_LIMIT",
    "GATEWAY_MESSAGE_BYTES",
    "MESSAGE_BOUND",
    "OVERLAY_MARKS",
    "CallerValue",
    "Dialog",
    "Operation",
    "Question",
    "fit_message",
    "operation",
    "shown_value",
]

CALLER_VALUES_HEADING = "Values below are supplied by the caller, not by this server:"
DEFAULT_VALUE_LIMIT = 4000
GATEWAY_MESSAGE_BYTES = 4096
"""The largest elicitation message, in bytes of UTF-8, that gateways pass whole (mcp-hub cuts at 4,096)."""
MESSAGE_BOUND = GATEWAY_MESSAGE_BYTES - 160
"""The most bytes of UTF-8 a dialog's rendered message takes: :data:`GATEWAY_MESSAGE_BYTES` less room for the
server's name that a gateway puts before it."""
APPROVE_FIELD = "approve"
APPROVE_TITLE = "Make this change"
_APPROVE_DESCRIPTION = "Tick to let this change go ahead. Nothing changes unless it is ticked and confirmed."
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"})
_RIGHT_TO_LEFT = frozenset({"R", "AL", "AN"})
OVERLAY_MARKS: frozenset[str] = frozenset(
    [chr(code) for code in range(0x0334, 0x0339)]  # COMBINING TILDE/STROKE/LONG STROKE/SOLIDUS OVERLAY
    + [chr(code) for code in (0x20D2, 0x20D3, 0x20D8, 0x20D9, 0x20DA, 0x20E5, 0x20E6, 0x20EA, 0x20EB, 0x10A39)]
)
"""Combining marks drawn over the letter before them (Unicode ``ccc=1``, Overlay): a strike-through reads
as a correction; each is escaped."""
_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}

BLANK_FILLERS: frozenset[str] = frozenset(
    {
        "\u034f",  # COMBINING GRAPHEME JOINER (Mn)
        "\u115f",  # HANGUL CHOSEONG FILLER (Lo)
        "\u1160",  # HANGUL JUNGSEONG FILLER (Lo)
        "\u17b4",  # KHMER VOWEL INHERENT AQ (Mn)
        "\u17b5",  # KHMER VOWEL INHERENT AA (Mn)
        "\u180b",  # MONGOLIAN FREE VARIATION SELECTOR ONE (Mn)
        "\u180c",  # MONGOLIAN FREE VARIATION SELECTOR TWO (Mn)
        "\u180d",  # MONGOLIAN FREE VARIATION SELECTOR THREE (Mn)
        "\u180e",  # MONGOLIAN VOWEL SEPARATOR (Cf since Unicode 6.3, Zs before)
        "\u180f",  # MONGOLIAN FREE VARIATION SELECTOR FOUR (Mn, Unicode 14)
        "\u2800",  # BRAILLE PATTERN BLANK (So)
        "\u3164",  # HANGUL FILLER (Lo)
        "\uffa0",  # HALFWIDTH HANGUL FILLER (Lo)
        "\U0001d159",  # MUSICAL SYMBOL NULL NOTEHEAD (So)
        "\U00016fe4",  # KHITAN SMALL SCRIPT FILLER (Mn)
        *(chr(code) for code in range(0xFE00, 0xFE10)),  # VARIATION SELECTOR-1..16 (Mn)
        *(chr(code) for code in range(0xE0100, 0xE01F0)),  # VARIATION SELECTOR-17..256 (Mn)
    }
)
"""Characters outside the escaped categories that render as nothing or as blank space.

Unicode gives them a letter, mark or symbol category, so a category test
lets them through; each is escaped in caller values like a control character.
The letters and marks are Default_Ignorable_Code_Point in the Unicode
Character Database (``DerivedCoreProperties.txt``); U+2800 and U+1D159 are
symbols whose glyph is empty.
"""


@dataclass(frozen=True, slots=True)
class Operation:
    """What the call does, in the server's words, filled only with its own counts.

    Attributes:
        template: A literal ``str.format`` template whose fields are plain
            names, e.g. ``"delete a group of {members} contact(s)"``.
        counts: The integers for those fields, computed by the server.
    """

    template: LiteralString
    counts: Mapping[str, int] = field(default_factory=lambda: {})

    def __post_init__(self) -> None:
        if not self.template.strip():
            raise DialogError("operation: the template is empty")
        names: set[str] = set()
        for _, name, spec, conversion in string.Formatter().parse(self.template):
            if name is None:
                continue
            if not name.isidentifier() or spec or conversion:
                raise DialogError(f"operation: field {{{name}}} must be a plain name without format spec")
            names.add(name)
        for key, value in self.counts.items():
            if type(value) is not int:
                raise DialogError(f"operation: count {key!r} must be an int the server computed")
        if names != set(self.counts):
            missing = sorted(names - set(self.counts))
            extra = sorted(set(self.counts) - names)
            raise DialogError(f"operation: template fields and counts differ (missing {missing}, unused {extra})")

    def text(self) -> str:
        """The template filled with its counts (thousands separated: ``1,204``)."""
        return self.template.format(**{key: f"{value:,}" for key, value in self.counts.items()})


def operation(template: LiteralString, **counts: int) -> Operation:
    """Shorthand for ``Operation(template, counts)``.

    Raises:
        DialogError: the template's fields and the counts differ, or a count
            is not an ``int``.
    """
    return Operation(template, counts)


def undoable(op: Operation, days: int | None, tool: LiteralString) -> Operation:
    """``op`` saying that the change stays recoverable for ``days`` days with ``tool``; ``op`` itself when None.

    A server passes the days only where its undo journal will hold what the change removes
    (:meth:`approval_core.records.journal.Journal.keeps`); the days are a count, the tool's name a literal.

    Raises:
        DialogError: ``op`` already has a count named ``days``.
    """
    if days is None:
        return op
    if "days" in op.counts:
        raise DialogError("undoable: the operation already has a count named days")
    return Operation(op.template + ", recoverable for {days} day(s) with " + tool, {**op.counts, "days": days})


@dataclass(frozen=True, slots=True)
class CallerValue:
    """One value from the call's own arguments, shown on a labelled line.

    Attributes:
        label: A literal label, e.g. ``"Calendar"``.
        value: The caller's value, as given (escaped and cut when rendered).
        identifier: True for a name that selects something (a path, a topic, a
            username): every non-ASCII character is then shown escaped
            (``/willi/w\u043erk/``), so a look-alike (a Cyrillic ``о`` for a
            Latin ``o``) never reads as the name it imitates.
    """

    label: LiteralString
    value: str
    identifier: bool = False

    def __post_init__(self) -> None:
        if not self.label.strip() or any(ch in self.label for ch in "\r\n"):
            raise DialogError("caller value: the label must be one non-empty line")


def _code(ch: str) -> str:
    code = ord(ch)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _hidden_or_drawn_over(ch: str, previous: str) -> bool:
    """Whether ``ch`` must be escaped in any caller value (see the module docstring)."""
    category = unicodedata.category(ch)
    if ch != " " and (category in _ESCAPED_CATEGORIES or ch in BLANK_FILLERS):
        return True
    if category == "Me" or (category == "Mn" and ch in OVERLAY_MARKS):
        return True
    return category == "Mn" and unicodedata.category(previous) == "Mn" if previous else category == "Mn"


def _escape(text: str, identifier: bool = False) -> str:
    out: list[str] = []
    previous = ""
    for ch in text:
        if ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
        elif (identifier and not ch.isascii()) or _hidden_or_drawn_over(ch, previous):
            out.append(_code(ch))
        else:
            out.append(ch)
        previous = ch
    shown = "".join(out)
    if any(unicodedata.bidirectional(ch) in _RIGHT_TO_LEFT for ch in shown):
        return f"\u2068{shown}\u2069"  # FIRST STRONG ISOLATE ... POP DIRECTIONAL ISOLATE (UAX #9 §2.7)
    return shown


def _shown(value: str, limit: int, identifier: bool = False) -> str:
    value = unicodedata.normalize("NFC", value) if not identifier else value
    if len(value) <= limit:
        return _escape(value, identifier)
    hidden = len(value) - limit
    return f"{_escape(value[:limit], identifier)}… ({hidden:,} more characters not shown)"


def _fits(text: str, bound: int) -> bool:
    return len(text.encode("utf-8")) <= bound


def fit_message(render: Callable[[int], str], limit: int, bound: int = MESSAGE_BOUND) -> str:
    """``render(n)`` with the largest per-value limit ``n <= limit`` whose text is at most ``bound`` bytes of UTF-8.

    ``render(n)`` draws the whole message with each caller value cut after ``n`` characters (and the count of
    those left out), so values shorter than ``n`` stay whole and only the long ones are cut further. Should
    even ``render(1)`` be too long (the server's own text alone), its end is cut at a character boundary and
    the number of bytes left out is said.
    """
    text = render(limit)
    if _fits(text, bound):
        return text
    low, high, best = 1, limit - 1, ""
    while low <= high:  # the largest n that fits: render(n) grows with n
        middle = (low + high) // 2
        candidate = render(middle)
        if _fits(candidate, bound):
            best, low = candidate, middle + 1
        else:
            high = middle - 1
    if best:
        return best
    whole = render(1).encode("utf-8")
    kept = whole[: bound - 64].decode("utf-8", errors="ignore")
    return f"{kept}… ({len(whole) - len(kept.encode('utf-8')):,} more bytes not shown)"


class Question(Protocol):
    """What every path of the gate asks.

    A :class:`Dialog`, or the every-write profile's :class:`~approval_core.every_write.requests.WriteDialog`.
    """

    @property
    def consequence(self) -> str:
        """The text between the headline and the caller's values."""
        ...

    def headline(self) -> str:
        """The first line (a push notification's title, the page's heading)."""
        ...

    def shown_values(self) -> tuple[tuple[str, str], ...]:
        """The caller's values as shown: ``(label, value)`` pairs."""
        ...

    def render(self) -> str:
        """The whole text of the form dialog."""
        ...

    @staticmethod
    def schema() -> dict[str, Any]:
        """The form's requested schema."""
        ...


def shown_value(value: str, limit: int = DEFAULT_VALUE_LIMIT, identifier: bool = False) -> str:
    """``value`` as a dialog shows a caller value.

    Escaped as the module docstring says, cut after ``limit`` characters with the count of those not shown;
    ``identifier`` escapes every non-ASCII character too.
    """
    return _shown(value, limit, identifier)


@dataclass(frozen=True, slots=True)
class Dialog:
    """The question put to a person before a guarded call runs.

    Attributes:
        operation: What the call does (see :class:`Operation`).
        consequence: A literal sentence: why it cannot be undone.
        caller_values: Labelled values from the call's arguments.
        value_limit: Characters of one caller value that are shown (default
            :data:`DEFAULT_VALUE_LIMIT`); the rest is counted, not shown.
    """

    operation: Operation
    consequence: LiteralString
    caller_values: Sequence[CallerValue] = ()
    value_limit: int = DEFAULT_VALUE_LIMIT

    def __post_init__(self) -> None:
        if not self.consequence.strip():
            raise DialogError("dialog: the consequence is empty")
        if self.value_limit < 1:
            raise DialogError("dialog: value_limit must be at least 1")
        object.__setattr__(self, "caller_values", tuple(self.caller_values))

    def headline(self) -> str:
        """The operation's text with its first letter capitalised (the dialog's first paragraph)."""
        head = self.operation.text()
        return head[:1].upper() + head[1:]

    def shown_values(self) -> tuple[tuple[str, str], ...]:
        """The caller's values as the dialog shows them: ``(label, value escaped and cut)`` pairs."""
        return self._values(self.value_limit)

    def _values(self, limit: int) -> tuple[tuple[str, str], ...]:
        return tuple((cv.label, _shown(cv.value, limit, cv.identifier)) for cv in self.caller_values)

    def render(self) -> str:
        """The dialog's text: operation, consequence, then the caller's values.

        The operation's first letter is capitalised; the caller-values block
        is present only when there are values. The whole stays within
        :data:`MESSAGE_BOUND` bytes of UTF-8: long values are cut further when it would not
        (:func:`fit_message`).
        """
        return fit_message(self._render, self.value_limit)

    def _render(self, limit: int) -> str:
        parts = [self.headline(), self.consequence]
        if self.caller_values:
            lines = [CALLER_VALUES_HEADING]
            lines.extend(f"  {label}: {shown}" for label, shown in self._values(limit))
            parts.append("\n".join(lines))
        return "\n\n".join(parts)

    @staticmethod
    def schema() -> dict[str, Any]:
        """The form's requested schema: one boolean box, unticked by default.

        MCP 2025-11-25 ``elicitation/create`` form mode, restricted schema:
        a flat object whose only property is :data:`APPROVE_FIELD`.
        """
        return {
            "type": "object",
            "properties": {
                APPROVE_FIELD: {
                    "type": "boolean",
                    "title": APPROVE_TITLE,
                    "description": _APPROVE_DESCRIPTION,
                    "default": False,
                },
            },
            "required": [APPROVE_FIELD],
        }
