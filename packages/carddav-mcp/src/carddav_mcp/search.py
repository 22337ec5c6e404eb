"""Matching contacts: text fields, phone numbers whatever their formatting, upcoming dates.

Phone numbers are compared as digit strings, with a leading ``+`` read as
the international prefix ``00``: ``+49 30 1234-567``, ``0049 30 1234567``
and ``tel:+49-30-1234567`` are all ``0049301234567``. A query matches a
number when its digits appear in the number's digits.
"""

from __future__ import annotations

import datetime as dt
import re

from carddav_mcp.fields import parse_partial_date
from carddav_mcp.vcard import Card

__all__ = ["days_until", "match_date", "match_text", "normalise_phone"]

_MIN_PHONE_DIGITS = 3
_PHONE_QUERY = re.compile(r"(tel:)?\+?[0-9 ()./-]+")


def normalise_phone(value: str) -> str:
    """The digits of a phone number, ``+`` (international prefix) written as ``00``."""
    value = value.strip()
    if value.lower().startswith("tel:"):
        value = value[4:]
    digits = "".join(ch for ch in value if ch.isdigit())
    return "00" + digits if value.lstrip().startswith("+") else digits


def match_text(card: Card, query: str) -> list[str]:
    """Which of fn, nickname, email, tel, org match ``query`` (case-insensitive substring; phones by digits)."""
    needle = query.casefold().strip()
    matched: list[str] = []
    checks = {"fn": ("FN",), "nickname": ("NICKNAME",), "email": ("EMAIL",), "org": ("ORG",)}
    for label, names in checks.items():
        if any(needle in p.text().casefold() for p in card.all(*names)):
            matched.append(label)
    digits = normalise_phone(query)
    if _PHONE_QUERY.fullmatch(query.strip()) and len(digits) >= _MIN_PHONE_DIGITS:
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
