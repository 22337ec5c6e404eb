"""vCard text at the content-line level (RFC 2426 3.0, RFC 6350 4.0, and reading 2.1).

A :class:`Card` keeps every logical line of a vCard as it came from the
server, so a write replaces only the properties it was asked to change and
every other line — X- properties, photos, RELATED, IMPP, Apple's ``itemN.``
labels — goes back exactly as it was. Lines are split into name, parameters
and value by ``vobject``'s content-line parser; structured values are split at
unescaped ``;`` and ``,`` here (two levels, for N and ADR) and each part is
unescaped with vobject's text-value helper. vobject's component layer is not used: it reads vCard 4.0
with 3.0 rules (losing list values and ``data:`` URIs) and re-escapes
unknown properties on output.

Reading also accepts vCard 2.1 (``ENCODING=QUOTED-PRINTABLE`` with soft line
breaks, bare type parameters such as ``TEL;CELL``, ``ENCODING=BASE64``).
"""

from __future__ import annotations

import base64
import binascii
import functools
import quopri
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from approval_core.serving.stored_text import quoted_name

__all__ = ["Card", "Prop", "escape_text", "fold", "make_line", "preload", "split_escaped", "unescape_text"]


@dataclass(frozen=True)
class _Vobject:
    """vobject's content-line parser and text-value helpers, typed here (vobject ships no type information)."""

    parse_error: type[Exception]
    parse_line: Callable[[str], tuple[str, list[list[str]], str, str | None]]
    escape: Callable[[str], str]
    text_values: Callable[..., list[str]]


@functools.cache
def _vobject() -> _Vobject:
    """The helpers of vobject, imported when the first card is read or written (listing the tools needs none)."""
    import vobject.base
    import vobject.vcard

    return _Vobject(
        parse_error=cast(type[Exception], vobject.base.ParseError),  # pyright: ignore[reportUnknownMemberType]
        parse_line=cast(Callable[[str], tuple[str, list[list[str]], str, str | None]], vobject.base.parseLine),  # pyright: ignore[reportUnknownMemberType]
        escape=cast(Callable[[str], str], vobject.vcard.backslashEscape),  # pyright: ignore[reportUnknownMemberType, reportAttributeAccessIssue]
        text_values=cast(Callable[..., list[str]], vobject.vcard.stringToTextValues),  # pyright: ignore[reportUnknownMemberType, reportAttributeAccessIssue]
    )


def preload() -> None:
    """Import vobject in a worker thread now, so that the first card read need not wait for it.

    Called when the server first needs its CardDAV client: the import (about a
    tenth of a second, more without compiled bytecode) then runs while the first
    requests are out, instead of after their answers.
    """
    if _vobject.cache_info().currsize == 0:
        threading.Thread(target=_vobject, name="carddav-mcp: import vobject", daemon=True).start()


_LINE_LIMIT = 75  # octets, RFC 6350 §3.2
# RFC 6350 §3.4 escapes (\\ \, \; \n \N), the \" vobject also reads, and "\:", which is not an RFC escape
# but Google and others write it in URLs.
_ESCAPABLE = '\\;,Nn":'


def split_escaped(raw: str, separator: str) -> list[str]:
    r"""Split a raw (still escaped) value at each ``separator`` not escaped by a backslash.

    The escapes stay in the parts, so a part can be split again (``;`` then
    ``,`` for the components of N and ADR, RFC 6350 §6.2.2, §6.3.1) before
    :func:`unescape_text`. ``"a\,b,c"`` split at ``,`` is ``["a\,b", "c"]``;
    an empty value is ``[""]``.
    """
    parts: list[str] = []
    current: list[str] = []
    index = 0
    while index < len(raw):
        char = raw[index]
        if char == "\\" and index + 1 < len(raw):
            current.append(raw[index : index + 2])
            index += 2
            continue
        if char == separator:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
        index += 1
    parts.append("".join(current))
    return parts


def unescape_text(raw: str) -> str:
    r"""One TEXT value with its backslash escapes undone.

    RFC 6350 §3.4, RFC 2426 §4: ``\\`` ``\,`` ``\;`` and ``\n`` / ``\N`` (a
    newline); also ``\:``, which Google writes in URLs. An unknown escape
    such as ``\x`` is kept as written.
    """
    return "".join(str(v) for v in _vobject().text_values(raw, listSeparator="\x00", charList=_ESCAPABLE))


def _unfold(text: str) -> list[str]:
    """Logical lines: folded continuations joined (§3.2), 2.1 quoted-printable soft breaks joined.

    Linear in the size of ``text``: the pieces of each logical line are
    collected and joined once, and whether it is quoted-printable is decided
    from its name and parameters (the text before the first ``:``) as they
    arrive, so a card of many short continuation lines costs no more than
    one long line.
    """
    lines: list[str] = []
    parts: list[str] = []  # the non-empty pieces of the logical line being read
    head = ""  # the last characters of the text before its first ':' (enough to find QUOTED-PRINTABLE)
    named = False  # whether its first ':' has been seen
    qp = False

    def add(piece: str) -> None:
        nonlocal head, named, qp
        if piece:
            parts.append(piece)
        if not named:
            before, colon, _ = piece.partition(":")
            window = head + before
            qp = qp or "QUOTED-PRINTABLE" in window.upper()
            head, named = window[-len("QUOTED-PRINTABLE") :], bool(colon)

    def end() -> None:
        nonlocal head, named, qp
        if parts:
            lines.append("".join(parts))
        parts.clear()
        head, named, qp = "", False, False

    for physical in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if physical[:1] in {" ", "\t"} and parts:
            add(physical[1:])
        elif parts and parts[-1].endswith("=") and qp:
            parts[-1] = parts[-1][:-1]
            if not parts[-1]:
                parts.pop()
            add(physical)
        elif physical.strip():
            end()
            add(physical)
    end()
    return lines


def fold(line: str) -> str:
    """One logical line folded at 75 octets without splitting a UTF-8 sequence, ending in CRLF."""
    out: list[str] = []
    current, size = "", 0
    for ch in line:
        width = len(ch.encode())
        if size + width > _LINE_LIMIT:
            out.append(current)
            current, size = " ", 1
        current += ch
        size += width
    out.append(current)
    return "\r\n".join(out) + "\r\n"


def escape_text(value: str) -> str:
    """A TEXT value escaped for a content line (RFC 6350 §3.4: backslash, comma, semicolon, newline)."""
    return str(_vobject().escape(value))


def make_line(name: str, value: str, params: dict[str, list[str]] | None = None) -> str:
    """A logical content line ``NAME;PARAM=a,b:value``; ``value`` must already be escaped."""
    rendered = "".join(f";{key}={','.join(values)}" for key, values in (params or {}).items() if values)
    return f"{name}{rendered}:{value}"


@dataclass(frozen=True)
class Prop:
    """One property line of a card.

    Attributes:
        line: The logical (unfolded) line exactly as read.
        name: Property name, upper case, without group (``EMAIL``).
        group: The ``itemN`` group prefix, or None.
        params: Parameters, upper-case names; a 2.1 bare parameter
            (``TEL;CELL``) is kept as ``TYPE``.
        raw: The value as written on the line (still escaped / encoded).
    """

    line: str
    name: str
    group: str | None
    params: dict[str, list[str]] = field(default_factory=lambda: {})
    raw: str = ""

    @classmethod
    def parse(cls, line: str) -> Prop:
        """Split one logical line; raises ValueError when it is not a content line."""
        helpers = _vobject()
        try:
            name, params, value, group = helpers.parse_line(line)
        except helpers.parse_error as exc:
            raise ValueError(f"not a vCard content line: {quoted_name(line[:60])}") from exc
        parsed: dict[str, list[str]] = {}
        for param in params:
            key = str(param[0]).upper()
            if len(param) == 1:
                parsed.setdefault("TYPE", []).append(key.lower())
            else:
                parsed.setdefault(key, []).extend(str(v) for v in param[1:])
        return cls(line, str(name).upper(), str(group) if group else None, parsed, str(value))

    def param(self, key: str) -> list[str]:
        """The values of a parameter (empty when absent)."""
        return self.params.get(key.upper(), [])

    @property
    def types(self) -> list[str]:
        """TYPE values, lower case, split on commas (``["work", "voice"]``); ``pref`` left in."""
        return [t.strip().lower() for value in self.param("TYPE") for t in value.split(",") if t.strip()]

    def _decoded(self) -> str:
        encoding = {e.upper() for e in self.param("ENCODING")}
        if "QUOTED-PRINTABLE" in encoding:
            charset = (self.param("CHARSET") or ["utf-8"])[0]
            try:
                return quopri.decodestring(self.raw.encode("latin-1", "replace")).decode(charset, "replace")
            except LookupError:
                return quopri.decodestring(self.raw.encode("latin-1", "replace")).decode("utf-8", "replace")
        return self.raw

    def text(self) -> str:
        """The value as text: quoted-printable decoded, backslash escapes undone."""
        return unescape_text(self._decoded())

    def values(self) -> list[str]:
        """A comma-separated list value (CATEGORIES, NICKNAME), each item unescaped, empties dropped."""
        items = (unescape_text(part) for part in split_escaped(self._decoded(), ","))
        return [item for item in items if item.strip()]

    def components(self) -> list[str]:
        r"""A semicolon-structured value (ORG), each component unescaped (``\,`` is a comma in it)."""
        return [unescape_text(part) for part in split_escaped(self._decoded(), ";")]

    def component_lists(self, *, lists: bool = True) -> list[list[str]]:
        """A structured value whose components are lists (N, ADR): each component's items, unescaped.

        RFC 6350 §6.2.2 / §6.3.1 (and RFC 2426 §3.1.2, §3.2.1 for 3.0): the
        components are separated by ``;`` and each is a ``,``-separated list,
        so ``;;Flat 3,12 Example Road;Springfield`` has the street lines
        ``["Flat 3", "12 Example Road"]``. An empty component is ``[]``; empty
        items between commas are kept (``a,,b`` is ``["a", "", "b"]``).

        Args:
            lists: False for vCard 2.1, whose components are single values (a
                comma is part of the text there).
        """
        out: list[list[str]] = []
        for component in split_escaped(self._decoded(), ";"):
            if not component:
                out.append([])
            elif lists:
                out.append([unescape_text(item) for item in split_escaped(component, ",")])
            else:
                out.append([unescape_text(component)])
        return out

    def binary(self) -> bytes | None:
        """Inline binary content (3.0 ``ENCODING=b``, 2.1 ``BASE64``, 4.0 ``data:`` URI), or None."""
        raw = self.raw.strip()
        try:
            if raw.startswith("data:") and ";base64," in raw[:100]:
                return base64.b64decode(raw.split(",", 1)[1] + "==", validate=False)
            if {e.upper() for e in self.param("ENCODING")} & {"B", "BASE64"}:
                return base64.b64decode("".join(raw.split()) + "==", validate=False)
        except (binascii.Error, ValueError):
            return None
        return None

    def media_type(self) -> str | None:
        """The media type of inline content: from a ``data:`` URI, MEDIATYPE, or TYPE=JPEG."""
        raw = self.raw.strip()
        if raw.startswith("data:"):
            head = raw[5:].split(",", 1)[0].split(";", 1)[0]
            return head or None
        if self.param("MEDIATYPE"):
            return self.param("MEDIATYPE")[0]
        for kind in self.types:
            if kind in {"jpeg", "jpg", "png", "gif", "webp", "bmp", "tiff"}:
                return "image/jpeg" if kind in {"jpeg", "jpg"} else f"image/{kind}"
        return None


@dataclass
class Card:
    """A parsed vCard whose untouched lines are written back as read.

    Attributes:
        props: Every property line between BEGIN and END, in order.
    """

    props: list[Prop]

    @classmethod
    def parse(cls, text: str) -> Card:
        """Parse one vCard.

        Raises:
            ValueError: no ``BEGIN:VCARD`` ... ``END:VCARD``, or a line that is
                not a content line.
        """
        lines = _unfold(text)
        upper = [line.strip().upper() for line in lines]
        if "BEGIN:VCARD" not in upper or "END:VCARD" not in upper:
            raise ValueError("not a vCard (no BEGIN:VCARD ... END:VCARD)")
        start, end = upper.index("BEGIN:VCARD"), upper.index("END:VCARD")
        return cls([Prop.parse(line) for line in lines[start + 1 : end]])

    def all(self, *names: str) -> list[Prop]:
        """The properties with any of these names (upper case), in order."""
        return [p for p in self.props if p.name in names]

    def first(self, *names: str) -> Prop | None:
        """The first property with any of these names."""
        found = self.all(*names)
        return found[0] if found else None

    def text_of(self, *names: str) -> str | None:
        """The text of the first such property, or None."""
        prop = self.first(*names)
        return prop.text() if prop else None

    @property
    def version(self) -> str:
        """``2.1``, ``3.0`` or ``4.0`` (``3.0`` when the card does not say)."""
        return (self.text_of("VERSION") or "3.0").strip()

    @property
    def uid(self) -> str | None:
        """The UID, or None."""
        value = self.text_of("UID")
        return value.strip() if value else None

    @property
    def is_group(self) -> bool:
        """A group card: vCard 4 ``KIND:group`` or Apple ``X-ADDRESSBOOKSERVER-KIND:group``."""
        kind = self.text_of("KIND", "X-ADDRESSBOOKSERVER-KIND")
        return bool(kind) and kind.strip().lower() == "group"

    def replaced(self, names: set[str], new_lines: list[str]) -> Card:
        """A copy with every property named in ``names`` removed and ``new_lines`` added.

        New lines go where the first removed property was (else at the end).
        Apple ``itemN.X-AB*`` labels that belonged only to removed lines go too.
        """
        added = [Prop.parse(line) for line in new_lines]
        dropped_groups = {p.group for p in self.props if p.name in names and p.group}
        kept_groups = {p.group for p in self.props if p.name not in names and not p.name.startswith("X-AB") and p.group}
        orphans = dropped_groups - kept_groups - {p.group for p in added if p.group}
        out: list[Prop] = []
        inserted = False
        for prop in self.props:
            if prop.name in names or (prop.group in orphans and prop.name.startswith("X-AB")):
                if not inserted:
                    out.extend(added)
                    inserted = True
                continue
            out.append(prop)
        if not inserted:
            out.extend(added)
        return Card(out)

    def serialize(self) -> str:
        """The card as text: CRLF line ends, lines folded at 75 octets."""
        body = "".join(fold(p.line) for p in self.props)
        return f"BEGIN:VCARD\r\n{body}END:VCARD\r\n"

    def signature(self) -> dict[str, Any]:
        """Each property line keyed by name, for comparing two cards property by property."""
        result: dict[str, list[str]] = {}
        for prop in self.props:
            result.setdefault(prop.name, []).append(prop.line)
        return {key: sorted(value) for key, value in result.items()}
