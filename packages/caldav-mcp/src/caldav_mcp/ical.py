"""iCalendar in and out (RFC 5545): recurrence expansion within bounds, over :mod:`caldav_mcp.components`.

Parsing, decoding and times live in :mod:`caldav_mcp.components` and are re-exported here.

Times leave this server as ISO 8601 text:

* a zoned or UTC DATE-TIME as an instant with its offset
  (``2026-12-01T09:00:00+01:00``), with the original ``TZID`` alongside;
* a floating DATE-TIME (no TZID, no ``Z``) without an offset, marked
  ``floating`` — it means the same wall-clock time wherever the reader is;
* a DATE (``VALUE=DATE``, all-day) as ``2026-12-01``, with an exclusive end
  (RFC 5545 §3.6.1): a one-day event on 1 December ends ``2026-12-02``.

Dates are never converted through the host's time zone, so an all-day event
never moves a day.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from caldav_mcp.components import (
    Times,
    _of_kind,
    calendar_of,
    decode_object,
    drop_known_timezones,
    is_recurring,
    master,
    occurrence_start,
    overrides,
    parse_calendar,
    parse_rid,
    parse_when,
    readable,
    rid_text,
    single_zoned,
    times_of,
    utc_bound,
    value_of,
    zone,
)
from caldav_mcp.recurrence_ids import own_recurrence_ids
from caldav_mcp.rid_forms import in_series_forms, stored_forms
from caldav_mcp.rrule import plain_period, read_rule_problem
from caldav_mcp.watch import StepLimitReached, step_limit

if TYPE_CHECKING:  # imported where a call needs it: listing the tools does not (startup time)
    import icalendar

__all__ = [
    "CALL_EXPANSION_STEPS",
    "MAX_EXPANSION_STEPS",
    "MAX_OCCURRENCES_PER_ITEM",
    "StepLimitReached",
    "Times",
    "Unreadable",
    "calendar_of",
    "count_occurrences",
    "decode_object",
    "drop_known_timezones",
    "first_after",
    "is_recurring",
    "master",
    "needs_watch",
    "occurrence_start",
    "occurrences",
    "overrides",
    "parse_calendar",
    "parse_rid",
    "parse_when",
    "rid_text",
    "series_occurrences",
    "times_of",
    "utc_bound",
    "value_of",
    "zone",
]

MAX_OCCURRENCES_PER_ITEM = 10_000
"""The most occurrences one stored entry is expanded into, per window (and when counting a series)."""
MAX_EXPANSION_STEPS = 5_000_000
"""The most work spent expanding one stored entry's recurrence, in steps (Python functions entered, counted by
:func:`caldav_mcp.watch.step_limit`): a count, not a clock, so an entry is readable or not whatever the load.

Measured, one entry each: a never-ending daily series over a 366-day window, 63,000 to 68,000 steps (UTC or
Europe/Berlin with its VTIMEZONE), over a month 7,000; a weekly one 10,000; a daily one from 1900, 218,000;
HOURLY over 366 days (8,784 occurrences) 1.6 million; a series cut off at MAX_OCCURRENCES_PER_ITEM, 2.1
million (210 an occurrence): the largest legitimate entry is under half the bound. ``FREQ=MINUTELY;BYMONTH=2;
BYYEARDAY=1`` matches nothing, so dateutil searches to the year 9999: 6.8 million (stopped); ``FREQ=MINUTELY``
over a year, 90 million (dateutil lists the window's every minute first); ``FREQ=SECONDLY`` far more. A traced
expansion runs 1 to 2 million steps a second on an idle core: the bound is 2.5 to 5 s there, more when busy."""
CALL_EXPANSION_STEPS = 50_000_000
"""The most steps one tool call spends expanding recurrences over all its entries (:func:`expansion_budget`), ten
entries at MAX_EXPANSION_STEPS. Measured: a 366-day window over the benchmark's 20,000 entries (500 never-ending
series, 100 daily, 400 weekly; ``benchmarks/calendar_data.py``) is charged 12 million, a quarter of it."""
PLAIN_STEPS_PER_OCCURRENCE = 200
"""Steps charged for each occurrence of an entry expanded uncounted (:func:`needs_watch`); measured: 170 to 190."""
PLAIN_STEPS_PER_PERIOD = 4
"""... and for each rule period from its DTSTART to the window's end (measured: 3.3 for a daily series from 1900)."""


@dataclass
class _Budget:
    """What is left of one call's expansion work, in steps (spent only while expanding)."""

    left: int


_CALL_BUDGET: ContextVar[_Budget | None] = ContextVar("caldav_mcp_expansion_budget", default=None)

MAX_PLAIN_PERIODS = 20_000
"""The most rule periods (days, weeks, months or years from DTSTART to the window's end) of an entry expanded
without the step count of :func:`caldav_mcp.watch.step_limit` (see :func:`needs_watch`)."""
MAX_PLAIN_DATES = 1_000
"""The most RDATE and EXDATE values and changed occurrences of an entry expanded without the step count."""
T = TypeVar("T")


class Unreadable(Exception):
    """A stored entry this server will not expand: an invalid RRULE, or over one of the bounds.

    Attributes:
        reason: Why, as a sentence fragment for the caller ("its RRULE is invalid: ...").
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


_TIMES = ("DTSTART", "DTEND", "DUE", "DURATION", "RECURRENCE-ID", "EXDATE", "RDATE")


def stored_rule_problem(cal: icalendar.Calendar, kind: str) -> str | None:
    """Why a stored entry cannot be expanded safely, or None; never a value of words (:func:`read_rule_problem`).

    Used before expanding data another client stored: a rule such as ``INTERVAL=0`` (RFC 5545 §3.3.10) would
    loop for ever, and one of :data:`_TIMES` whose value is no date, date-time, duration or period
    (§3.3.4-§3.3.9) cannot be placed in time at all.
    """
    for component in cal.walk(kind):
        for name in _TIMES:
            if any(readable(value) is None for value in _values(component, name)):
                return f"its {name} is not a value RFC 5545 §3.3 can read"
        raw: Any = component.get("RRULE")
        for rule in raw if isinstance(raw, list) else [raw] if raw is not None else []:
            text = rule.to_ical().decode() if hasattr(rule, "to_ical") else str(rule)
            problem = read_rule_problem(text)
            if problem is not None:
                return f"its RRULE is invalid: {problem}"
    return None


def _values(component: icalendar.Component, name: str) -> list[Any]:
    raw: Any = component.get(name)
    return raw if isinstance(raw, list) else [raw] if raw is not None else []


def needs_watch(cal: icalendar.Calendar, kind: str, end: dt.datetime | None) -> bool:
    """Whether expanding ``cal``'s ``kind`` components up to ``end`` needs its steps counted (:func:`step_limit`).

    The count is a trace function: it slows the expansion it guards about
    threefold, so it is left off where the work is bounded by the entry itself.
    That is an entry whose every RRULE (RFC 5545 §3.3.10) has only FREQ
    (DAILY, WEEKLY, MONTHLY or YEARLY), INTERVAL, COUNT, UNTIL, WKST and BYDAY
    with plain weekdays (no ordinal), whose DTSTART is at most
    MAX_PLAIN_PERIODS periods of its FREQ before ``end``, and which has at
    most MAX_PLAIN_DATES RDATE and EXDATE values and changed occurrences in
    all. Every period of such a rule is one step of the recurrence library
    with at most seven candidates, so the expansion ends within a bounded
    number of steps; anything else (HOURLY and finer rules, BYxxx parts
    that may exclude whole periods, a start centuries before ``end``) is
    watched. ``end`` None (the whole series) is always watched.
    """
    return _plain_periods(cal, kind, end) is None


def _plain_periods(cal: icalendar.Calendar, kind: str, end: dt.datetime | None) -> int | None:
    """The rule periods up to ``end`` of an entry that bounds its own work (see :func:`needs_watch`); else None."""
    if end is None:
        return None
    dates = 0
    total = 0
    for component in cal.walk(kind):
        dates += 1 if "RECURRENCE-ID" in component else 0
        for name in ("RDATE", "EXDATE"):
            dates += sum(len(getattr(item, "dts", [item])) for item in _values(component, name))
        rules = _values(component, "RRULE")
        start: Any = component.get("DTSTART")
        if rules and start is None:
            return None
        for rule in rules:
            days = plain_period(rule)
            if days is None:
                return None
            try:
                interval = int(rule.get("INTERVAL", [1])[0])  # pyright: ignore[reportUnknownArgumentType,reportUnknownMemberType]
                periods = (end - utc_bound(start.dt)).days / (max(interval, 1) * days)
            except (TypeError, ValueError, OverflowError):
                return None
            if periods > MAX_PLAIN_PERIODS:
                return None
            total += max(int(periods), 0) + 1
    return None if dates > MAX_PLAIN_DATES else total


@contextlib.contextmanager
def expansion_budget(steps: int | None = None) -> Iterator[None]:
    """Bound the recurrence expansion done inside the block to ``steps`` in all (CALL_EXPANSION_STEPS).

    The per-entry bound keeps one stored rule from wedging a read; this one
    keeps many of them (a listing of thousands of entries that each run to the
    per-entry bound) from stretching one call: only the work of expanding
    counts (a slow backend spends none of it), and once it is spent every
    further entry is reported unreadable at once. An entry is charged its
    counted steps, or, expanded without the count (see :func:`needs_watch`),
    PLAIN_STEPS_PER_OCCURRENCE an occurrence given and PLAIN_STEPS_PER_PERIOD
    a rule period up to the window's end: work, never time, so a busy machine
    gives the same answer as an idle one. A context variable, the budget
    follows the call into worker threads (anyio copies the context).
    """
    token = _CALL_BUDGET.set(_Budget(CALL_EXPANSION_STEPS if steps is None else steps))
    try:
        yield
    finally:
        _CALL_BUDGET.reset(token)


def _bounded(produce: Callable[[], Iterable[T]], limit: int, what: str, *, plain: int | None = None) -> list[T]:
    """Everything ``produce`` yields, within MAX_EXPANSION_STEPS, the call's budget, and at most ``limit`` items.

    ``plain`` None counts the steps of the expansion (:func:`step_limit`); a
    number (the rule periods of an entry :func:`needs_watch` found bounded by
    itself) leaves the count out, and the call's budget is charged from that
    number and the occurrences given (see :func:`expansion_budget`).

    Raises:
        Unreadable: over a bound, or the expansion failed.
    """
    found: list[T] = []
    steps = MAX_EXPANSION_STEPS
    budget = _CALL_BUDGET.get()
    if budget is not None:
        if budget.left <= 0:
            raise Unreadable(
                f"this call had already spent its {CALL_EXPANSION_STEPS:,} steps of recurrence expansion on other "
                "entries, so this one was not expanded; ask for a shorter window or fewer entries"
            )
        steps = min(steps, budget.left)
    counted = step_limit(steps) if plain is None else None
    try:
        with counted if counted is not None else contextlib.nullcontext():
            for item in produce():
                found.append(item)
                if len(found) > limit:
                    raise Unreadable(f"it has more than {limit} {what}, the most this server expands for one entry")
    except StepLimitReached:
        raise Unreadable(
            f"its recurrence needs more work than the most this server spends on one entry ({steps:,} steps)"
            if steps == MAX_EXPANSION_STEPS
            else f"this call's {CALL_EXPANSION_STEPS:,} steps of recurrence expansion, mostly spent on other "
            "entries, ran out while expanding this one; ask for a shorter window or fewer entries"
        ) from None
    except Unreadable:
        raise
    except Exception as exc:
        raise Unreadable(f"its recurrence could not be expanded ({type(exc).__name__})") from None
    finally:
        charge = PLAIN_STEPS_PER_OCCURRENCE * len(found) + PLAIN_STEPS_PER_PERIOD * (plain or 0)
        if budget is not None:
            budget.left -= counted.taken if counted is not None else charge
    return found


def occurrences(cal: icalendar.Calendar, kind: str, start: dt.datetime, end: dt.datetime) -> list[icalendar.Component]:
    """Occurrences of ``kind`` overlapping ``[start, end)``, overrides and EXDATEs applied.

    Each occurrence's RECURRENCE-ID is its own original start, also for the
    later occurrences of a ``RANGE=THISANDFUTURE`` override (see
    :mod:`caldav_mcp.recurrence_ids`), so no two occurrences share one.

    Bounded per entry: at most MAX_OCCURRENCES_PER_ITEM occurrences and
    MAX_EXPANSION_STEPS steps of work (counted unless the entry bounds it by
    itself, see :func:`needs_watch`); a stored RRULE that breaks RFC 5545
    §3.3.10 is not expanded at all.

    Raises:
        Unreadable: the entry breaks one of these bounds (the message says which).
    """
    problem = stored_rule_problem(cal, kind)
    if problem is not None:
        raise Unreadable(problem)
    single = single_zoned(cal, kind)
    if single is not None:
        began, ended = single
        return [_of_kind(cal, kind)[0]] if began < end and ended > start else []
    import recurring_ical_events

    formed, stored = in_series_forms(cal, kind)
    found = _bounded(
        lambda: recurring_ical_events.of(formed, components=[kind]).between(start, end),
        MAX_OCCURRENCES_PER_ITEM,
        "occurrences in this window",
        plain=_plain_periods(cal, kind, end),
    )
    own_recurrence_ids(formed, kind, found)
    stored_forms(stored, found)
    return found


def count_occurrences(cal: icalendar.Calendar, kind: str) -> int | None:
    """How many occurrences a series has in all; None if it never ends.

    The occurrences a client shows (RFC 5545 §3.8.5): the rule's, plus each
    RDATE, plus each override whose RECURRENCE-ID is outside that set
    (§3.8.4.4), less each EXDATE. That is the number of instances a delete or
    move of the whole entry reaches.

    Raises:
        Unreadable: the stored RRULE is invalid, or counting would pass
            MAX_OCCURRENCES_PER_ITEM occurrences or MAX_EXPANSION_STEPS.
    """
    first = master(cal, kind)
    changed = overrides(cal, kind)
    if not is_recurring(first) and not changed:
        return 1
    problem = stored_rule_problem(cal, kind)
    if problem is not None:
        raise Unreadable(problem)
    raw: Any = first.get("RRULE")
    rules: list[Any] = raw if isinstance(raw, list) else [raw] if raw is not None else []
    if any("COUNT" not in rule and "UNTIL" not in rule for rule in rules):
        return None
    if len(rules) == 1 and "COUNT" in rules[0] and not changed and not {"RDATE", "EXDATE"} & set(first):
        return int(rules[0]["COUNT"][0])
    return len(series_occurrences(cal, kind))


def first_after(
    cal: icalendar.Calendar, kind: str, start: dt.datetime, take: Callable[[icalendar.Component], bool | None]
) -> icalendar.Component | None:
    """The first occurrence (in start order, from ``start`` on) that ``take`` answers True for.

    ``take`` sees each occurrence with its own RECURRENCE-ID (as
    :func:`occurrences` gives them); None from it ends the search with no
    answer, False goes on to the next. Bounded like :func:`occurrences`: at
    most MAX_OCCURRENCES_PER_ITEM occurrences looked at, MAX_EXPANSION_STEPS.

    Raises:
        Unreadable: the stored RRULE is invalid, or the search passes a bound.
    """
    problem = stored_rule_problem(cal, kind)
    if problem is not None:
        raise Unreadable(problem)
    import recurring_ical_events

    formed, stored = in_series_forms(cal, kind)

    def search() -> Iterator[icalendar.Component]:
        for seen, component in enumerate(recurring_ical_events.of(formed, components=[kind]).after(start)):
            if seen >= MAX_OCCURRENCES_PER_ITEM:
                raise Unreadable(f"no occurrence was found among the first {MAX_OCCURRENCES_PER_ITEM} looked at")
            own_recurrence_ids(formed, kind, [component])
            stored_forms(stored, [component])
            verdict = take(component)
            if verdict is None:
                return
            if verdict:
                yield component
                return

    found = _bounded(search, 1, "occurrences")
    return found[0] if found else None


def series_occurrences(cal: icalendar.Calendar, kind: str) -> list[icalendar.Component]:
    """Every occurrence of a series that ends, in start order, each with its own RECURRENCE-ID (as :func:`occurrences`).

    Raises:
        Unreadable: the stored RRULE is invalid, or the series passes
            MAX_OCCURRENCES_PER_ITEM occurrences or MAX_EXPANSION_STEPS (as one that never ends does).
    """
    problem = stored_rule_problem(cal, kind)
    if problem is not None:
        raise Unreadable(problem)
    import recurring_ical_events

    formed, stored = in_series_forms(cal, kind)
    found = _bounded(
        lambda: recurring_ical_events.of(formed, components=[kind]).all(), MAX_OCCURRENCES_PER_ITEM, "occurrences"
    )
    own_recurrence_ids(formed, kind, found)
    stored_forms(stored, found)
    return found
