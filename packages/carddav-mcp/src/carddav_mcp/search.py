"""Matching contacts: text fields, phone numbers whatever their formatting, upcoming dates.

Phone numbers are compared as digit strings, with a leading ``+`` read as
the international prefix ``00``: ``+49 30 1234-567``, ``0049 30 1234567``
and ``tel:+49-30-1234567`` are all ``0049301234567``. A query matches a
number when its digits appear in the number's digits.

A text query can be narrowed on the server first (:func:`server_needle`):
the server is asked for the cards holding a piece of the query that every
matching card must hold letter for letter, and :func:`match_text` then
decides on each card it sent, so the server's collation never changes the
result.
"""

from __future__ import annotations

import datetime as dt
import re

from carddav_mcp.fields import parse_partial_date
from carddav_mcp.vcard import Card

__all__ = ["TEXT_PROPERTIES", "days_until", "match_date", "match_text", "normalise_phone", "server_needle"]

_MIN_PHONE_DIGITS = 3
_PHONE_QUERY = re.compile(r"(tel:)?\+?[0-9 ()./-]+")
TEXT_PROPERTIES = ["FN", "NICKNAME", "EMAIL", "TEL", "ORG", "X-ABLABEL"]
"""The vCard properties a text query looks in (RFC 6350 §6.2.1, 6.2.3, 6.4.2, 6.4.1, 6.6.4), and the labels a
card gives its values (Apple's ``X-ABLabel``)."""
_STABLE_RUN = re.compile("[0-9bcdegmopqruvxz]+")
"""Characters no other code point folds to: no non-ASCII character's ``casefold()``, ``lower()`` or ``upper()``
holds them (computed over all of Unicode; ``k``, ``s``, ``i``, ``f`` ... are not among them: the Kelvin sign,
long s, dotted capital I and the ligatures fold to those)."""
MIN_NEEDLE = 2
"""The shortest piece of a query worth a server-side query (shorter ones would match most of a book)."""


def is_phone_query(query: str) -> bool:
    """Whether ``query`` is matched against phone numbers by digits (``+49 30 1234``, at least 3 digits)."""
    return bool(_PHONE_QUERY.fullmatch(query.strip())) and len(normalise_phone(query)) >= _MIN_PHONE_DIGITS


def server_needle(query: str) -> str | None:
    """The piece of ``query`` a server-side ``text-match`` may look for without missing a match; None when none is.

    :func:`match_text` compares ``casefold()`` texts, which a server's
    ``i;unicode-casemap`` or ``i;ascii-casemap`` collation (RFC 5051,
    RFC 4790 §9.2) does not reproduce: ``Straße`` holds ``strasse`` for it
    and not for a server. The needle is therefore the longest run of the
    folded query made only of digits and of ASCII letters that no other
    character folds to (:data:`_STABLE_RUN`): any card that matches the whole
    query holds that run in ASCII, in upper or lower case, which every
    case-insensitive collation finds. Phone queries (matched by digits
    whatever the formatting) and queries without a run of :data:`MIN_NEEDLE`
    such characters give None: they are matched on every card.

    Returns:
        Lower-case ASCII text, or None.
    """
    if is_phone_query(query):
        return None
    runs = _STABLE_RUN.findall(query.casefold().strip())
    best = max(runs, key=len, default="")
    return best if len(best) >= MIN_NEEDLE else None


def normalise_phone(value: str) -> str:
    """The digits of a phone number, ``+`` (international prefix) written as ``00``."""
    value = value.strip()
    if value.lower().startswith("tel:"):
        value = value[4:]
    digits = "".join(ch for ch in value if ch.isdigit())
    return "00" + digits if value.lstrip().startswith("+") else digits


def match_text(card: Card, query: str) -> list[str]:
    """Which of fn, nickname, email, tel, org, label match ``query``.

    Case-insensitive substrings; phone numbers by their digits; ``label`` is a value's own label (X-ABLabel).
    """
    needle = query.casefold().strip()
    matched: list[str] = []
    checks = {"fn": ("FN",), "nickname": ("NICKNAME",), "email": ("EMAIL",), "org": ("ORG",), "label": ("X-ABLABEL",)}
    for label, names in checks.items():
        if any(needle in p.text().casefold() for p in card.all(*names)):
            matched.append(label)
    digits = normalise_phone(query)
    if is_phone_query(query):
        if any(digits in normalise_phone(p.text()) for p in card.all("TEL")):
            matched.append("tel")
    elif any(needle in p.text().casefold() for p in card.all("TEL")):
        matched.append("tel")
    return matched


def days_until(month: int, day: int, today: dt.date) -> int:
    """Days from ``today`` to the next ``month``/``day`` (0 = today); 29 February is 28 February in other years."""
    for year in (today.year, today.year + 1):
        try:
            when = dt.date(year, month, day)
        except ValueError:
            when = dt.date(year, month, 28)
        if when >= today:
            return (when - today).days
    raise AssertionError("unreachable")  # pragma: no cover


def match_date(card: Card, within: int, today: dt.date) -> list[tuple[str, int]]:
    """(``birthday`` or ``anniversary``, days until) for dates falling within ``within`` days of ``today``."""
    found: list[tuple[str, int]] = []
    for label, names in (("birthday", ("BDAY",)), ("anniversary", ("ANNIVERSARY", "X-ANNIVERSARY"))):
        date = parse_partial_date(card.first(*names))
        if date is not None:
            days = days_until(date.month, date.day, today)
            if days <= within:
                found.append((label, days))
    return found
