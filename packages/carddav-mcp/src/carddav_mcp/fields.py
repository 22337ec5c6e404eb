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

from carddav_mcp.display_names import NameSource, derived_fn, with_fn
from carddav_mcp.errors import InvalidInput
from carddav_mcp.models import (
    Contact,
    ContactFields,
    ContactSummary,
    Name,
    PartialDate,
    PhotoInfo,
    PostalAddress,
    StoredAddress,
    StoredName,
    StoredTyped,
)
from carddav_mcp.vcard import Card, Prop, escape_text, make_line

__all__ = [
    "FIELD_PROPERTIES",
    "changed_lines",
    "label_of",
    "parse_partial_date",
    "photo_info",
    "replacement",
    "stored_form",
    "summary",
    "to_contact",
]

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


def _typed(prop: Prop, card: Card | None = None) -> StoredTyped:
    value = prop.text().strip()
    if prop.name == "TEL" and value.lower().startswith("tel:"):
        value = value[4:]
    return StoredTyped.model_construct(value=value, types=prop.types, label=label_of(card, prop) if card else None)


def label_of(card: Card, prop: Prop) -> str | None:
    """The card's own label for ``prop``, or None.

    The ``X-ABLabel`` of its item group (``item1.EMAIL`` with ``item1.X-ABLabel:Volunteer desk``); Apple's
    ``_$!<Assistant>!$_`` form is given as ``Assistant``.
    """
    if prop.group is None:
        return None
    found = next((p for p in card.all("X-ABLABEL") if p.group and p.group.lower() == prop.group.lower()), None)
    if found is None:
        return None
    text = found.text().strip()
    return text[4:-4] if text.startswith("_$!<") and text.endswith(">!$_") else text


def _name(prop: Prop, version: str) -> StoredName:
    parts = [*prop.component_lists(lists=version != "2.1"), *[[]] * 5][:5]
    return StoredName.model_construct(
        family=parts[0], given=parts[1], additional=parts[2], prefix=parts[3], suffix=parts[4]
    )


def _address(prop: Prop, version: str) -> StoredAddress:
    p = [*prop.component_lists(lists=version != "2.1"), *[[]] * 7][:7]
    return StoredAddress.model_construct(
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


def _fn_fields(card: Card) -> dict[str, Any]:
    """``fn`` as stored; for a card without FN, the name :func:`derived_fn` makes, marked as derived."""
    stored = card.text_of("FN")
    if stored or card.is_group:
        return {"fn": stored}
    found = derived_fn(card)
    if found is None:
        return {"fn": None}
    return {"fn": found[0], "fn_derived": True, "fn_source": found[1]}


def summary(card_id: str, card: Card) -> ContactSummary:
    """The summary properties a listing shows (partial)."""
    org = card.first("ORG")
    return ContactSummary(
        id=card_id,
        uid=card.uid,
        **_fn_fields(card),
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
        **_fn_fields(card),
        n=_name(n, card.version) if n else None,
        nickname=[v for p in card.all("NICKNAME") for v in p.values()],
        emails=[_typed(p, card) for p in card.all("EMAIL")],
        phones=[_typed(p, card) for p in card.all("TEL")],
        addresses=[_address(p, card.version) for p in card.all("ADR")],
        urls=[_typed(p, card) for p in card.all("URL")],
        impp=[_typed(p, card) for p in card.all("IMPP")],
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


def _structured(field: str, components: dict[str, list[str]], version: str) -> str:
    """N / ADR components as a raw value: ``;`` between components, ``,`` between a component's items.

    Every item is escaped (RFC 6350 §3.4), so a comma or semicolon inside an
    item stays text. vCard 2.1 has no lists there: several items are refused.
    """
    if version == "2.1":
        for name, items in components.items():
            if len(items) > 1:
                raise InvalidInput(
                    f"{field}.{name}",
                    f"this card is vCard 2.1, whose {name} holds one value, not a list of {len(items)}; give one",
                )
    return ";".join(",".join(escape_text(item) for item in items) for items in components.values())


def _address_line(a: PostalAddress, field: str, version: str) -> str:
    parts = {"po_box": a.po_box, "extended": a.extended, "street": a.street, "locality": a.locality,
             "region": a.region, "postal_code": a.postal_code, "country": a.country}  # fmt: skip
    return make_line("ADR", _structured(field, parts, version), _types(a.types, version))


def _lines_for(field: str, value: Any, version: str) -> list[str]:
    if value is None:
        return []
    if field == "fn":
        return [make_line("FN", escape_text(value))]
    if field == "n":
        n: Name = value
        parts = {"family": n.family, "given": n.given, "additional": n.additional, "prefix": n.prefix,
                 "suffix": n.suffix}  # fmt: skip
        return [make_line("N", _structured("n", parts, version))]
    if field == "nickname":
        # One NICKNAME line per name (RFC 6350 §6.2.3 allows several): Radicale keeps only the first item of a
        # NICKNAME list on one line and drops the rest.
        return [make_line("NICKNAME", escape_text(v)) for v in value]
    if field == "categories":
        return [make_line("CATEGORIES", ",".join(escape_text(v) for v in value))] if value else []
    if field in {"emails", "phones", "urls"}:
        name = {"emails": "EMAIL", "phones": "TEL", "urls": "URL"}[field]
        for index, t in enumerate(value):
            if t.label is not None:
                raise InvalidInput(f"{field}[{index}].label", _NO_NEW_LABELS)
        return [make_line(name, escape_text(t.value), _types(t.types, version)) for t in value]
    if field == "addresses":
        return [_address_line(a, f"addresses[{i}]", version) for i, a in enumerate(value)]
    if field == "org":
        return [make_line("ORG", ";".join(escape_text(v) for v in value))] if value else []
    if field in {"title", "note"}:
        return [make_line(field.upper(), escape_text(value))]
    if field == "birthday":
        return [make_line("BDAY", _date(value, version))]
    # anniversary: a vCard 4 property; 3.0 cards use the common X-ANNIVERSARY extension
    return [make_line("ANNIVERSARY" if version == "4.0" else "X-ANNIVERSARY", _date(value, version))]


_NO_NEW_LABELS = "labels are not written: give a label only on a value the card already has, as read"
_ITEM_PROPERTY = {"emails": "EMAIL", "phones": "TEL", "urls": "URL", "addresses": "ADR"}


def _as_read(card: Card) -> dict[str, Any]:
    """What get_contact returns for each writable field of ``card``, as JSON."""
    read = to_contact("", "", None, card).model_dump(mode="json", include=set(FIELD_PROPERTIES))
    return {**read, "fn": card.text_of("FN")}  # a derived name is not on the card: giving it sets FN


def _item_as_read(card: Card, prop: Prop, field: str, version: str) -> Any:
    item = _address(prop, version) if field == "addresses" else _typed(prop, card)
    return item.model_dump(mode="json")


def changed_lines(
    fields: ContactFields, version: str, *, creating: bool, current: Card | None = None
) -> tuple[dict[str, str], set[str], list[str]]:
    """What a write of ``fields`` does to a card of ``version``.

    A value that reads back as it is does not touch the card: a field given
    exactly as get_contact returned it keeps its lines as they are (their
    parameters, groups, encodings and order), and in a list of EMAIL, TEL,
    URL or ADR values each item equal to one already on the card keeps that
    line. So reading a card and writing the result back leaves it unchanged.

    Args:
        fields: Only the fields that were given count (``model_fields_set``);
            a given ``null`` clears.
        version: The card's vCard version.
        creating: True for a new card (nothing to clear).
        current: The card being updated (None when creating).

    Returns:
        (field → ``"set"`` or ``"cleared"``, the vCard property names
        replaced, the new content lines).

    Raises:
        InvalidInput: ``fn`` is cleared (a vCard must have FN, RFC 6350 §6.2.1),
            or several values are given for an N or ADR component of a vCard
            2.1 card.
    """
    actions: dict[str, str] = {}
    names: set[str] = set()
    lines: list[str] = []
    as_read = _as_read(current) if current is not None else {}
    given = fields.model_dump(mode="json")
    for field in sorted(fields.model_fields_set):
        value = getattr(fields, field)
        if field == "fn" and value is None:
            raise InvalidInput(
                "changes.fn", "a vCard must have a formatted name (FN, RFC 6350 §6.2.1); it cannot be cleared"
            )
        if creating and value is None:
            continue
        actions[field] = "cleared" if value is None else "set"
        if current is not None and value is not None and given[field] == as_read[field]:
            continue  # reads back as it is: the card's own lines stay
        names |= FIELD_PROPERTIES[field]
        if current is not None and value is not None and field in _ITEM_PROPERTY:
            lines.extend(_reusing(current, field, value, given[field], version))
        else:
            lines.extend(_lines_for(field, value, version))
    if "n" in actions and actions["n"] == "cleared" and version != "4.0":
        lines.append("N:;;;;")  # N is required in vCard 3.0 (RFC 2426 §5)
    return actions, names, lines


def _reusing(current: Card, field: str, value: list[Any], given: list[Any], version: str) -> list[str]:
    """Lines for a list of EMAIL/TEL/URL/ADR values, keeping the card's own line for each item it already has."""
    unused = list(current.all(_ITEM_PROPERTY[field]))
    lines: list[str] = []
    for index, (item, dumped) in enumerate(zip(value, given, strict=True)):
        same = next((p for p in unused if _item_as_read(current, p, field, version) == dumped), None)
        if same is not None:
            unused.remove(same)
            lines.append(same.line)
        elif field == "addresses":
            lines.append(_address_line(item, f"addresses[{index}]", version))
        elif item.label is not None:
            raise InvalidInput(f"{field}[{index}].label", _NO_NEW_LABELS)
        else:
            lines.extend(_lines_for(field, [item], version))
    return lines


def stored_form(card: Card, field: str) -> tuple[Card, NameSource | None]:
    """``card`` with the FN RFC 6350 §6.2.1 requires added where it has none (:func:`with_fn`), and from what.

    Raises:
        InvalidInput: naming ``field``: the card has no FN and nothing to make one from.
    """
    try:
        return with_fn(card)
    except ValueError as exc:
        raise InvalidInput(field, f"{exc}; give a formatted name (fn)") from None


def replacement(current: Card, vcard: str) -> Card:
    """The card a whole-vCard update writes, checked against the card it replaces.

    Raises:
        InvalidInput: naming ``vcard`` and the rule it breaks.
    """
    try:
        new = Card.parse(vcard)
    except ValueError as exc:
        raise InvalidInput("vcard", f"is not a vCard: {exc}") from None
    if new.is_group:
        raise InvalidInput("vcard", "is a group card; the contact tools write contact cards only")
    if new.version != current.version:
        raise InvalidInput("vcard", f"must be vCard {current.version}, the version of the card it replaces")
    if new.uid is None and current.uid:
        new = new.replaced(set(), [make_line("UID", escape_text(current.uid))])
    elif new.uid != current.uid:
        raise InvalidInput("vcard", "must keep the UID of the card it replaces (or leave UID out)")
    if new.version != "4.0" and not new.all("N"):
        raise InvalidInput("vcard", f"must have N: it is required in vCard {new.version} (RFC 2426 §5)")
    return new
