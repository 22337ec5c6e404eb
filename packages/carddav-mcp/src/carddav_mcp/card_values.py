"""The structured values of a card: N, ADR and typed values (EMAIL, TEL, URL, IMPP), as given and as stored.

Each comes twice. The model a caller's values are checked with (:class:`Name`, :class:`PostalAddress`,
:class:`Typed`) carries this server's limits: at most 500 characters a value, :data:`MAX_ITEMS` values a
component, ten TYPE parameters of letters, digits and hyphens. The model a card is read into
(:class:`StoredName`, :class:`StoredAddress`, :class:`StoredTyped`, which the first ones extend) carries
none: a card written by another client may hold any value, and ``get_contact`` returns it as it is
(its outputSchema says no more than the card can hold), never failing on it.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

__all__ = [
    "MAX_ITEMS",
    "Name",
    "PostalAddress",
    "Short",
    "StoredAddress",
    "StoredName",
    "StoredTyped",
    "StrictModel",
    "Typed",
]

Short = Annotated[str, Field(min_length=1, max_length=500)]
"""A caller's one-line value: 1 to 500 characters."""


class StrictModel(BaseModel):
    """A model that refuses a field it does not name (``extra="forbid"``)."""

    model_config = ConfigDict(extra="forbid")


MAX_ITEMS = 20
"""The most values one N or ADR component may hold."""


def _one_or_many(value: object) -> object:
    """A string given for a list-valued component is a list of that one value ("" is the empty list).

    Raises:
        ValueError: a list of more than MAX_ITEMS values (checked here, not by a
            ``maxItems`` beside the ``anyOf``, which strict JSON Schema
            validators refuse: the keyword must sit with ``"type": "array"``).
    """
    if isinstance(value, str):
        return [value] if value else []
    if isinstance(value, list) and len(value) > MAX_ITEMS:  # pyright: ignore[reportUnknownArgumentType]
        raise ValueError(f"at most {MAX_ITEMS} values in one component")
    return value


LIST_NOTE = (
    "a list: each item is one value of this component, exactly as stored (on the card the items are separated "
    "by commas, RFC 6350 §3.4/§6.2.2/§6.3.1; a comma inside an item is text, never a separator). Empty: []. "
    "Writing accepts a single string as a list of one item"
)
_Value = Annotated[str, Field(max_length=500)]
Items = Annotated[
    list[_Value],
    BeforeValidator(_one_or_many, json_schema_input_type=_Value | Annotated[list[_Value], Field(max_length=MAX_ITEMS)]),
    Field(description=LIST_NOTE),
]
"""One component of N or ADR as a caller gives it: a list of values.

RFC 6350 §6.2.2, §6.3.1; RFC 2426 §3.1.2, §3.2.1.
"""
_Type = Annotated[str, Field(pattern=r"^[A-Za-z0-9-]{1,40}$")]
TYPES_NOTE = 'e.g. ["work"], ["cell", "voice"], ["home"]'
LABEL_NOTE = (
    "The card's own name for this value, as read (Apple's X-ABLabel of its item group, e.g. 'Volunteer desk'; "
    "'_$!<Assistant>!$_' reads as 'Assistant'). Written back only unchanged, on a value the card already has: "
    "labels are not written"
)


def _items(description: str) -> Any:
    return Field(default_factory=lambda: [], description=f"{description}; {LIST_NOTE}")


class StoredName(StrictModel):
    """Structured N (RFC 6350 §6.2.2) as a card holds it: family; given; additional; prefixes; suffixes.

    Each component is a list of values (``"additional": ["Augusta", "Ada"]``,
    ``"suffix": ["PhD", "MBA"]``); vCard 2.1 cards hold one value per component.
    """

    family: list[str] = _items("family names (surnames)")
    given: list[str] = _items("given names")
    additional: list[str] = _items("additional (middle) names")
    prefix: list[str] = _items("honorific prefixes")
    suffix: list[str] = _items("honorific suffixes")


class Name(StoredName):
    """Structured N as a caller gives it (:class:`StoredName`, within this server's limits)."""

    family: Items = _items("family names (surnames)")
    given: Items = _items("given names")
    additional: Items = _items("additional (middle) names")
    prefix: Items = _items("honorific prefixes")
    suffix: Items = _items("honorific suffixes")


class StoredTyped(StrictModel):
    """A typed value (EMAIL, TEL, URL, IMPP) as a card holds it: the value and its TYPE parameters."""

    value: str
    types: list[str] = Field(default_factory=lambda: [], description=TYPES_NOTE)
    label: str | None = Field(default=None, description=LABEL_NOTE)

    @model_serializer(mode="wrap")
    def _label_only_when_given(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("label") is None:
            data.pop("label", None)  # most values have none: the key is left out, as its default says
        return data


class Typed(StoredTyped):
    """A typed value as a caller gives it (:class:`StoredTyped`, within this server's limits)."""

    value: Short
    types: list[_Type] = Field(default_factory=lambda: [], max_length=10, description=TYPES_NOTE)
    label: Short | None = Field(default=None, description=LABEL_NOTE)


class StoredAddress(StrictModel):
    r"""Structured ADR (RFC 6350 §6.3.1) as a card holds it: each component is a list of values.

    Several street lines are several items (``"street": ["Flat 3", "12 Example Road"]``,
    stored as ``Flat 3,12 Example Road``); a line break inside one item is kept as one (``\n`` on the card).
    """

    types: list[str] = Field(default_factory=lambda: [])
    po_box: list[str] = _items("post office box")
    extended: list[str] = _items("extended address (apartment, suite)")
    street: list[str] = _items("street address lines")
    locality: list[str] = _items("city")
    region: list[str] = _items("region, state or province")
    postal_code: list[str] = _items("postal code")
    country: list[str] = _items("country name")


class PostalAddress(StoredAddress):
    """Structured ADR as a caller gives it (:class:`StoredAddress`, within this server's limits)."""

    types: list[_Type] = Field(default_factory=lambda: [], max_length=10)
    po_box: Items = _items("post office box")
    extended: Items = _items("extended address (apartment, suite)")
    street: Items = _items("street address lines")
    locality: Items = _items("city")
    region: Items = _items("region, state or province")
    postal_code: Items = _items("postal code")
    country: Items = _items("country name")
