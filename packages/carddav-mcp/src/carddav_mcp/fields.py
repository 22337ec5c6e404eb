"""Between vCard properties and the tools' fields: reading a card, writing changes.

Reading maps a :class:`~carddav_mcp.vcard.Card` onto :class:`~carddav_mcp.models.Contact`.
Writing turns the fields of a call into content lines in the card's own
version (3.0 or 4.0; a 2.1 card keeps its version line, and new lines are
written in the plain form both understand) and reports which vCard
properties each field replaces.
"""

from __future__ import annotations

import re
from typing import Any

from carddav_mcp.errors import InvalidInput
from carddav_mcp.models import (
    Contact,
    ContactFields,
    ContactSummary,
    Name,
    PartialDate,
    PhotoInfo,
    PostalAddress,
    Typed,
)
from carddav_mcp.vcard import Card, Prop, escape_text, make_line

__all__ = ["FIELD_PROPERTIES", "changed_lines", "parse_partial_date", "photo_info", "summary", "to_contact"]

FIELD_PROPERTIES: dict[str, frozenset[str]] = {
    "fn": frozenset({"FN"}),
    "n": frozenset({"N"}),
    "nickname": frozenset({"NICKNAME"}),
    "emails": frozenset({"EMAIL"}),
    "phones": frozenset({"TEL"}),
    "addresses": frozenset({"ADR", "LABEL"}),
    "urls": frozenset({"URL"}),
    "org": frozenset({"ORG"}),
    "title": frozenset({"TITLE"}),
    "note": frozenset({"NOTE"}),
    "birthday": frozenset({"BDAY"}),
    "anniversary": frozenset({"ANNIVERSARY", "X-ANNIVERSARY"}),
    "categories": frozenset({"CATEGORIES"}),
}
"""Which vCard properties each field of :class:`ContactFields` replaces."""

_MODELLED: frozenset[str] = frozenset[str]().union(*FIELD_PROPERTIES.values()) | {
    "VERSION", "UID", "PHOTO", "IMPP", "RELATED", "PRODID", "REV", "KIND", "X-ADDRESSBOOKSERVER-KIND",
}  # fmt: skip
_DATE = re.compile(r"^(\d{4})-?(\d{2})-?(\d{2})")
_NO_YEAR = re.compile(r"^--(\d{2})-?(\d{2})")
_APPLE_NO_YEAR = "1604"


def parse_partial_date(prop: Prop | None) -> PartialDate | None:
    """BDAY / ANNIVERSARY as year (or None), month, day; None when unreadable or absent.

    Reads ``19850415``, ``1985-04-15`` (with or without a time), ``--0415``
    and ``--04-15`` (RFC 6350 §4.3.1 reduced accuracy), and Apple's
    ``X-APPLE-OMIT-YEAR=1604`` convention for a year that is not known.
    """
    if prop is None:
        return None
    value = prop.text().strip()
    year: int | None
    match = _DATE.match(value)
    if match:
        year_text, month, day = match.groups()
        omitted = prop.param("X-APPLE-OMIT-YEAR")
        year = None if year_text in omitted or year_text == _APPLE_NO_YEAR else int(year_text)
    elif match := _NO_YEAR.match(value):
        year, (month, day) = None, match.groups()
    else:
        return None
    try:
        return PartialDate(year=year, month=int(month), day=int(day))
    except ValueError:
        return None


def _typed(prop: Prop) -> Typed:
    value = prop.text().strip()
    if prop.name == "TEL" and value.lower().startswith("tel:"):
        value = value[4:]
    return Typed.model_construct(value=value, types=prop.types)


def _name(prop: Prop) -> Name:
    parts = [*prop.components(), "", "", "", "", ""][:5]
    return Name.model_construct(family=parts[0], given=parts[1], additional=parts[2], prefix=parts[3], suffix=parts[4])


def _address(prop: Prop) -> PostalAddress:
    p = [*prop.components(), *[""] * 7][:7]
    return PostalAddress.model_construct(
        types=prop.types, po_box=p[0], extended=p[1], street=p[2], locality=p[3], region=p[4], postal_code=p[5],
        country=p[6],
    )  # fmt: skip


def photo_info(card: Card) -> PhotoInfo | None:
    """Where the card's photo is (inline or URI), or None."""
    prop = card.first("PHOTO")
    if prop is None:
        return None
    data = prop.binary()
    if data is not None:
        return PhotoInfo(kind="inline", media_type=prop.media_type(), size_bytes=len(data), uri=None)
    return PhotoInfo(kind="uri", uri=prop.text().strip())


def summary(card_id: str, card: Card) -> ContactSummary:
    """The summary properties a listing shows (partial)."""
    org = card.first("ORG")
    return ContactSummary(
        id=card_id,
        uid=card.uid,
        fn=card.text_of("FN"),
        emails=[p.text().strip() for p in card.all("EMAIL")],
        phones=[_typed(p).value for p in card.all("TEL")],
        org=(org.components() or [""])[0] if org else None,
    )


def to_contact(card_id: str, book: str, etag: str | None, card: Card) -> Contact:
    """The whole card as a :class:`Contact`."""
    n = card.first("N")
    return Contact(
        id=card_id,
        address_book=book,
        etag=etag,
        uid=card.uid,
        version=card.version,
        fn=card.text_of("FN"),
        n=_name(n) if n else None,
        nickname=[v for p in card.all("NICKNAME") for v in p.values()],
        emails=[_typed(p) for p in card.all("EMAIL")],
        phones=[_typed(p) for p in card.all("TEL")],
        addresses=[_address(p) for p in card.all("ADR")],
        urls=[_typed(p) for p in card.all("URL")],
        impp=[_typed(p) for p in card.all("IMPP")],
        org=card.first("ORG").components() if card.first("ORG") else [],  # type: ignore[union-attr]
        title=card.text_of("TITLE"),
        note=card.text_of("NOTE"),
        birthday=parse_partial_date(card.first("BDAY")),
        anniversary=parse_partial_date(card.first("ANNIVERSARY", "X-ANNIVERSARY")),
        categories=[v for p in card.all("CATEGORIES") for v in p.values()],
        related=[p.text().strip() for p in card.all("RELATED")],
        photo=photo_info(card),
        other_properties=sorted({p.name for p in card.props if p.name not in _MODELLED}),
    )


def _types(types: list[str], version: str) -> dict[str, list[str]]:
    if not types:
        return {}
    return {"TYPE": [",".join(t.lower() if version == "4.0" else t.upper() for t in types)]}


def _date(value: PartialDate, version: str) -> str:
    if value.year is None:
        return f"--{value.month:02d}{value.day:02d}" if version == "4.0" else f"--{value.month:02d}-{value.day:02d}"
    if version == "4.0":
        return f"{value.year:04d}{value.month:02d}{value.day:02d}"
    return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"


def _lines_for(field: str, value: Any, version: str) -> list[str]:
    if value is None:
        return []
    if field == "fn":
        return [make_line("FN", escape_text(value))]
    if field == "n":
        n: Name = value
        parts = [n.family, n.given, n.additional, n.prefix, n.suffix]
        return [make_line("N", ";".join(escape_text(p) for p in parts))]
    if field in {"nickname", "categories"}:
        name = "NICKNAME" if field == "nickname" else "CATEGORIES"
        return [make_line(name, ",".join(escape_text(v) for v in value))] if value else []
    if field in {"emails", "phones", "urls"}:
        name = {"emails": "EMAIL", "phones": "TEL", "urls": "URL"}[field]
        return [make_line(name, escape_text(t.value), _types(t.types, version)) for t in value]
    if field == "addresses":
        lines: list[str] = []
        for a in value:
            parts = [a.po_box, a.extended, a.street, a.locality, a.region, a.postal_code, a.country]
            lines.append(make_line("ADR", ";".join(escape_text(p) for p in parts), _types(a.types, version)))
        return lines
    if field == "org":
        return [make_line("ORG", ";".join(escape_text(v) for v in value))] if value else []
    if field in {"title", "note"}:
        return [make_line(field.upper(), escape_text(value))]
    if field == "birthday":
        return [make_line("BDAY", _date(value, version))]
    # anniversary: a vCard 4 property; 3.0 cards use the common X-ANNIVERSARY extension
    return [make_line("ANNIVERSARY" if version == "4.0" else "X-ANNIVERSARY", _date(value, version))]


def changed_lines(fields: ContactFields, version: str, *, creating: bool) -> tuple[dict[str, str], set[str], list[str]]:
    """What a write of ``fields`` does to a card of ``version``.

    Args:
        fields: Only the fields that were given count (``model_fields_set``);
            a given ``null`` clears.
        version: The card's vCard version.
        creating: True for a new card (nothing to clear).

    Returns:
        (field → ``"set"`` or ``"cleared"``, the vCard property names
        replaced, the new content lines).

    Raises:
        InvalidInput: ``fn`` is cleared (a vCard must have FN, RFC 6350 §6.2.1).
    """
    actions: dict[str, str] = {}
    names: set[str] = set()
    lines: list[str] = []
    for field in sorted(fields.model_fields_set):
        value = getattr(fields, field)
        if field == "fn" and value is None:
            raise InvalidInput(
                "changes.fn", "a vCard must have a formatted name (FN, RFC 6350 §6.2.1); it cannot be cleared"
            )
        if creating and value is None:
            continue
        actions[field] = "cleared" if value is None else "set"
        names |= FIELD_PROPERTIES[field]
        lines.extend(_lines_for(field, value, version))
    if "n" in actions and actions["n"] == "cleared" and version != "4.0":
        lines.append("N:;;;;")  # N is required in vCard 3.0 (RFC 2426 §5)
    return actions, names, lines
