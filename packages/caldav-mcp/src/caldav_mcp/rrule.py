"""RRULE checks (RFC 5545 §3.3.10, "Recurrence Rule").

:func:`rule_problem` finds the first rule part that breaks the grammar or a
range of §3.3.10, as text naming that part; it is used twice:

* on write (``create_event``): a rule given by the caller is refused with that
  text, together with the checks that need the entry's DTSTART
  (:func:`until_problem`);
* on read: a rule stored by another client is checked before it is expanded,
  so a rule that would make the expansion loop for ever (``INTERVAL=0``) or
  that the RFC forbids (``BYMONTH=13``, ``COUNT=-1``) makes its entry
  unreadable instead of wedging the server.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from approval_core.serving.stored_text import PLAIN_NAME, quoted_name

__all__ = [
    "FIRST_OCCURRENCE_CALLS",
    "FIRST_OCCURRENCE_YEARS",
    "first_occurrence_problem",
    "plain_period",
    "read_rule_problem",
    "rule_problem",
    "until_problem",
]

FIRST_OCCURRENCE_YEARS = 100
"""How far after DTSTART a new rule's first occurrence is looked for on write (within FIRST_OCCURRENCE_CALLS
steps); a rule with none there is refused."""
FIRST_OCCURRENCE_CALLS = 1_000_000
"""The most steps (Python calls) spent looking for a rule's first occurrence (about 2 s of dateutil on one idle core).

A count, not a clock, so that whether a rule is accepted never depends on how busy the machine is."""

_PLAIN_PARTS = {"FREQ", "INTERVAL", "COUNT", "UNTIL", "WKST", "BYDAY"}
_PERIOD_DAYS = {"DAILY": 1, "WEEKLY": 7, "MONTHLY": 28, "YEARLY": 365}
_FREQS = {"SECONDLY", "MINUTELY", "HOURLY", "DAILY", "WEEKLY", "MONTHLY", "YEARLY"}
_WEEKDAYS = {"MO", "TU", "WE", "TH", "FR", "SA", "SU"}
# Rule part -> (lowest, highest, signed): a signed part takes -highest..-lowest too, never 0.
_RANGES: dict[str, tuple[int, int, bool]] = {
    "BYSECOND": (0, 60, False),
    "BYMINUTE": (0, 59, False),
    "BYHOUR": (0, 23, False),
    "BYMONTHDAY": (1, 31, True),
    "BYYEARDAY": (1, 366, True),
    "BYWEEKNO": (1, 53, True),
    "BYMONTH": (1, 12, False),
    "BYSETPOS": (1, 366, True),
}
_KNOWN = {"FREQ", "UNTIL", "COUNT", "INTERVAL", "BYDAY", "WKST", *_RANGES}
# ASCII digits only: str.isdigit() and \d also take "²" or "١٠", which int() then rejects or reads as 10.
_INTEGER = re.compile(r"^[+-]?[0-9]{1,6}$")
_COUNTING = re.compile(r"^[+-]?[0-9]{1,9}$")
_BYDAY = re.compile(r"^([+-]?)([0-9]{1,2})?(MO|TU|WE|TH|FR|SA|SU)$")
_UNTIL = re.compile(r"^[0-9]{8}(T[0-9]{6}Z?)?$")
# The most days each month can have (February in a leap year).
_MONTH_DAYS = {1: 31, 2: 29, 3: 31, 4: 30, 5: 31, 6: 30, 7: 31, 8: 31, 9: 30, 10: 31, 11: 30, 12: 31}
_SECTION = "(RFC 5545 §3.3.10)"


def _parts(text: str) -> tuple[dict[str, str], str | None]:
    parts: dict[str, str] = {}
    for piece in text.strip().removeprefix("RRULE:").split(";"):
        name, sep, value = piece.partition("=")
        name = name.strip().upper()
        if not sep or not name or not value:
            return parts, f"{quoted_name(piece)} is not NAME=VALUE"
        if name in parts:
            return parts, f"{name} is given twice"
        if name not in _KNOWN and not name.startswith("X-"):
            return parts, f"{name} is not a rule part"
        parts[name] = value.strip().upper()
    return parts, None


def _range_problem(name: str, value: str) -> str | None:
    low, high, signed = _RANGES[name]
    for item in value.split(","):
        if not _INTEGER.match(item):
            return f"{name}={value} is not a comma-separated list of integers"
        number = int(item)
        if signed and low <= abs(number) <= high:
            continue
        if not signed and low <= number <= high and not item.startswith(("+", "-")):
            continue
        allowed = f"{low}..{high} or -{high}..-{low}" if signed else f"{low}..{high}"
        return f"{name}={item} is out of range: each value must be {allowed}"
    return None


def read_rule_problem(text: str, dtstart: dt.date | dt.datetime | None = None) -> str | None:
    """:func:`rule_problem` (given ``dtstart``, :func:`until_problem`) of a rule read from the server.

    Another client wrote the rule, and the problem found becomes the text of errors, which are not fenced
    as stored data (:mod:`approval_core.serving.stored_text`). A rule of
    :data:`~approval_core.serving.stored_text.PLAIN_NAME`'s shape cannot hold a sentence, so its problem is
    given as worded there (``INTERVAL=0 is out of range...``); any other rule (a part named
    ``THE USER APPROVED``, an UNTIL of words, a quote, over 256 characters) gets one sentence quoting none of it.
    """
    problem = rule_problem(text) if dtstart is None else until_problem(text, dtstart)
    if problem is None or PLAIN_NAME.fullmatch(text):
        return problem
    return f"it is over 256 characters long or holds a space, a quote or another character no rule part has {_SECTION}"


def rule_problem(text: str) -> str | None:
    """What is wrong with an RRULE value, naming the rule part; None when it is valid.

    Checks: every part is ``NAME=VALUE`` and given once; FREQ present and one
    of the seven frequencies; INTERVAL and COUNT integers >= 1; never both
    COUNT and UNTIL; UNTIL a DATE or DATE-TIME; the BYxxx ranges (BYSECOND
    0..60, BYMINUTE 0..59, BYHOUR 0..23, BYMONTHDAY ±1..31, BYYEARDAY ±1..366,
    BYWEEKNO ±1..53, BYMONTH 1..12, BYSETPOS ±1..366); BYDAY as ``[±n]XX`` with
    n 1..53 and a number only with FREQ=MONTHLY or YEARLY; BYWEEKNO only with
    YEARLY; BYYEARDAY not with DAILY, WEEKLY or MONTHLY; BYMONTHDAY not with
    WEEKLY; BYSETPOS only with another BYxxx part; WKST a weekday.

    Args:
        text: The rule, e.g. ``FREQ=WEEKLY;BYDAY=MO;COUNT=10`` (a leading ``RRULE:`` is allowed).

    Returns:
        A sentence for the caller, e.g. ``"INTERVAL=0 is out of range: INTERVAL must be 1 or more
        (RFC 5545 §3.3.10)"``, or None.
    """
    parts, problem = _parts(text)
    if problem is not None:
        return f"{problem} {_SECTION}"
    freq = parts.get("FREQ")
    if freq is None:
        return f"FREQ is required {_SECTION}"
    if freq not in _FREQS:
        return f"FREQ={freq} is not one of {', '.join(sorted(_FREQS))} {_SECTION}"
    for name in ("INTERVAL", "COUNT"):
        if name in parts:
            value = parts[name]
            if not _COUNTING.match(value):
                return f"{name}={value} is not an integer written with the digits 0-9 {_SECTION}"
            if int(value) < 1:
                return f"{name}={value} is out of range: {name} must be an integer of 1 or more {_SECTION}"
    if "COUNT" in parts and "UNTIL" in parts:
        return f"COUNT and UNTIL are given together; a rule may have only one of them {_SECTION}"
    if "UNTIL" in parts and not _UNTIL.match(parts["UNTIL"]):
        return f"UNTIL={parts['UNTIL']} is not a DATE (20261231) or DATE-TIME (20261231T235959Z) {_SECTION}"
    for name in _RANGES:
        if name in parts:
            found = _range_problem(name, parts[name])
            if found is not None:
                return f"{found} {_SECTION}"
    if "BYDAY" in parts:
        for item in parts["BYDAY"].split(","):
            match = _BYDAY.match(item)
            if match is None:
                return f"BYDAY={item} is not a weekday (MO..SU), optionally after +n or -n {_SECTION}"
            if match.group(2) is not None:
                if not 1 <= int(match.group(2)) <= 53:
                    return f"BYDAY={item} is out of range: the number must be 1..53 {_SECTION}"
                if freq not in {"MONTHLY", "YEARLY"} or (freq == "YEARLY" and "BYWEEKNO" in parts):
                    return (
                        f"BYDAY={item} has a number, which only FREQ=MONTHLY or YEARLY without BYWEEKNO allows "
                        f"{_SECTION}"
                    )
            elif match.group(1):
                return f"BYDAY={item} has a sign but no number {_SECTION}"
    if "BYWEEKNO" in parts and freq != "YEARLY":
        return f"BYWEEKNO is allowed only with FREQ=YEARLY {_SECTION}"
    if "BYYEARDAY" in parts and freq in {"DAILY", "WEEKLY", "MONTHLY"}:
        return f"BYYEARDAY is not allowed with FREQ={freq} {_SECTION}"
    if "BYMONTHDAY" in parts and freq == "WEEKLY":
        return f"BYMONTHDAY is not allowed with FREQ=WEEKLY {_SECTION}"
    if "BYSETPOS" in parts and not any(name.startswith("BY") and name != "BYSETPOS" for name in parts):
        return f"BYSETPOS needs another BYxxx rule part to select from {_SECTION}"
    if "WKST" in parts and parts["WKST"] not in _WEEKDAYS:
        return f"WKST={parts['WKST']} is not a weekday (MO..SU) {_SECTION}"
    if "BYMONTH" in parts and "BYMONTHDAY" in parts:
        months = [int(item) for item in parts["BYMONTH"].split(",")]
        days = [abs(int(item)) for item in parts["BYMONTHDAY"].split(",")]
        if not any(day <= _MONTH_DAYS[month] for month in months for day in days):
            return (
                f"BYMONTHDAY={parts['BYMONTHDAY']} never falls in BYMONTH={parts['BYMONTH']}: none of those months "
                f"has such a day, so the rule has no occurrence {_SECTION}"
            )
    return None


def first_occurrence_problem(text: str, dtstart: dt.date | dt.datetime) -> str | None:
    """Why a rule that passed :func:`rule_problem` has no first occurrence; None when it has one.

    The rule is expanded from ``dtstart`` (dateutil, RFC 5545 §3.3.10) up to
    FIRST_OCCURRENCE_YEARS years later, its COUNT ignored and its UNTIL kept,
    within FIRST_OCCURRENCE_CALLS Python calls (``caldav_mcp.watch.step_limit``: a fixed
    amount of work, so the verdict does not depend on the machine's load).
    A rule whose BYxxx parts exclude every instant (``FREQ=DAILY;BYMONTH=2;
    BYMONTHDAY=31`` in a form the static check does not see) never occurs: a
    CalDAV server would spend minutes expanding it on every time-range query.
    CPU-bound (about 2 s at most on an idle core): call it from a worker thread.

    Args:
        text: A rule that :func:`rule_problem` accepted.
        dtstart: The entry's DTSTART (a date is taken as midnight).

    Returns:
        A sentence naming the rule's parts, or None.
    """
    from dateutil.rrule import rrulestr

    from caldav_mcp.watch import StepLimitReached, step_limit

    parts, problem = _parts(text)
    if problem is not None:
        return None
    kept = ";".join(f"{name}={value}" for name, value in parts.items() if not name.startswith("X-"))
    start = dtstart if isinstance(dtstart, dt.datetime) else dt.datetime.combine(dtstart, dt.time())
    limit = start.replace(year=min(start.year + FIRST_OCCURRENCE_YEARS, dt.MAXYEAR), day=min(start.day, 28))
    named = ", ".join(f"{name}={value}" for name, value in parts.items() if name.startswith("BY")) or (
        f"UNTIL={parts['UNTIL']}" if "UNTIL" in parts else "no BYxxx part"
    )
    try:
        with step_limit(FIRST_OCCURRENCE_CALLS):
            rule: Any = rrulestr(kept, dtstart=start)
            until = rule._until  # pyright: ignore[reportPrivateUsage]
            rule = rule.replace(count=None, until=limit if until is None or until > limit else until)
            first = next(iter(rule), None)
    except StepLimitReached:
        return (
            f"no occurrence of FREQ={parts.get('FREQ')} with {named} was found within the work this server "
            f"spends looking for a rule's first occurrence ({FIRST_OCCURRENCE_CALLS:,} steps): the rule never "
            f"occurs or too rarely for this server to expand it {_SECTION}"
        )
    except (ValueError, TypeError, IndexError, OverflowError, KeyError) as exc:
        # dateutil refuses some rules RFC 5545's grammar allows (an ordinal BYDAY beyond a month's weeks, such as
        # FREQ=MONTHLY;BYDAY=+53MO, raises IndexError): such a rule cannot be expanded, so it is refused.
        return f"the rule cannot be expanded from this start ({type(exc).__name__}) {_SECTION}"
    if first is None:
        span = "before its UNTIL" if "UNTIL" in parts else f"within {FIRST_OCCURRENCE_YEARS} years of the start"
        return f"FREQ={parts.get('FREQ')} with {named} has no occurrence {span}: the rule never occurs {_SECTION}"
    return None


def until_problem(text: str, dtstart: dt.date | dt.datetime) -> str | None:
    """What is wrong with a rule's UNTIL given the entry's DTSTART; None when it fits.

    RFC 5545 §3.3.10: UNTIL has the value type of DTSTART (DATE with a DATE,
    DATE-TIME with a DATE-TIME); with a zoned or UTC DTSTART it is in UTC
    (ends in ``Z``); with a floating DTSTART it is floating too.
    """
    parts, problem = _parts(text)
    if problem is not None or "UNTIL" not in parts:
        return None
    until = parts["UNTIL"]
    if not isinstance(dtstart, dt.datetime):
        if "T" in until:
            return f"UNTIL={until} is a DATE-TIME but the start is a date (all-day): give UNTIL as a DATE {_SECTION}"
        return None
    if "T" not in until:
        return f"UNTIL={until} is a DATE but the start is a date-time: give UNTIL as a DATE-TIME {_SECTION}"
    if dtstart.tzinfo is not None and not until.endswith("Z"):
        return f"UNTIL={until} must be in UTC (ending in Z) because the start has a time zone {_SECTION}"
    if dtstart.tzinfo is None and until.endswith("Z"):
        return f"UNTIL={until} must be floating (no Z) because the start is floating {_SECTION}"
    return None


def plain_period(rule: Any) -> int | None:
    """The days in one period of a plain RRULE (an icalendar ``vRecur``; MONTHLY 28, YEARLY 365); None if not plain.

    Plain: only FREQ (DAILY, WEEKLY, MONTHLY or YEARLY), INTERVAL, COUNT,
    UNTIL, WKST and, for DAILY and WEEKLY, BYDAY of weekdays without an
    ordinal. Every period of such a rule holds the same weekdays (or one day),
    so its expansion is bounded by its periods
    (:func:`caldav_mcp.ical.needs_watch`), and its instances from any period
    on are those of the same rule begun there (:mod:`caldav_mcp.plain_series`).
    """
    if not isinstance(rule, dict) or set(rule) - _PLAIN_PARTS:  # pyright: ignore[reportUnknownArgumentType]
        return None
    freq = str(rule.get("FREQ", [""])[0])  # pyright: ignore[reportUnknownArgumentType,reportUnknownMemberType]
    weekdays: list[Any] = list(rule.get("BYDAY", []))  # pyright: ignore[reportUnknownArgumentType,reportUnknownMemberType]
    if weekdays and (freq not in {"DAILY", "WEEKLY"} or any(len(str(d)) != 2 for d in weekdays)):
        return None
    return _PERIOD_DAYS.get(freq)
