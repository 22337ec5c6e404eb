"""A display name for a card stored without FN (RFC 6350 §6.2.1 requires one; some clients write none).

A card without FN may be read, but not stored: servers validate what they are
sent (Radicale answers 400), so writing such a card back unchanged fails. On
read, the name is made from the card's other properties, in this order:

* ``N`` (RFC 6350 §6.2.2): prefix, given, additional, family and suffix names,
  in that order, joined by spaces;
* ``ORG`` (§6.6.4): the organization's name, its first component;
* ``EMAIL`` (§6.4.2): the first address.

The result is marked as derived (``fn_derived``, ``fn_source``) and is address
book data like the rest of the card. A write-back adds it as the card's FN,
and the dialog names the property it came from (a property name, never its
value).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from carddav_mcp.vcard import Card, escape_text, make_line

__all__ = ["AddedName", "DerivedName", "NameSource", "derived_fn", "with_fn"]

NameSource = Literal["N", "ORG", "EMAIL"]


class DerivedName(BaseModel):
    """Fields saying that ``fn`` was made here, because the card has no FN (a base of the contact models)."""

    fn_derived: bool = Field(
        default=False,
        description="true when the card has no FN (which RFC 6350 requires) and fn was made here from "
        "fn_source; a write-back of the card adds it as FN",
    )
    fn_source: NameSource | None = Field(
        default=None, description="the property fn was made from when fn_derived: N, ORG or EMAIL"
    )


class AddedName(BaseModel):
    """The field saying that a write added the FN the card lacked (a base of the write results)."""

    fn_added: NameSource | None = Field(
        default=None,
        description="set when the card had no FN (RFC 6350 requires one) and this write added it, made from this "
        "property: N, ORG or EMAIL",
    )


def derived_fn(card: Card) -> tuple[str, NameSource] | None:
    """A display name for ``card`` made from N, ORG or EMAIL (see the module), and which; None if none gives one.

    Only meaningful for a card without FN; the caller checks that first.
    """
    n = card.first("N")
    if n is not None:
        parts = [*n.component_lists(lists=card.version != "2.1"), *[[]] * 5][:5]
        family, given, additional, prefix, suffix = parts
        words = [item.strip() for part in (prefix, given, additional, family, suffix) for item in part]
        name = " ".join(word for word in words if word)
        if name:
            return name, "N"
    org = card.first("ORG")
    if org is not None:
        name = (org.components() or [""])[0].strip()
        if name:
            return name, "ORG"
    for email in card.all("EMAIL"):
        address = email.text().strip()
        if address:
            return address, "EMAIL"
    return None


def with_fn(card: Card) -> tuple[Card, NameSource | None]:
    """``card`` as it may be stored: with an FN made by :func:`derived_fn` added when it has none.

    Returns:
        (the card to write, the property the added FN was made from; None when the card had an FN).

    Raises:
        ValueError: the card has no FN and nothing to make one from (no N, ORG or EMAIL with text).
    """
    if card.text_of("FN"):
        return card, None
    found = derived_fn(card)
    if found is None:
        raise ValueError("the card has no FN (RFC 6350 §6.2.1) and no N, ORG or EMAIL to make one from")
    name, source = found
    return card.replaced({"FN"}, [make_line("FN", escape_text(name))]), source
