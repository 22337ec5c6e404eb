# (icalendar types a property lookup as the union of every value type, so ``.dt`` reads as unknown.)
"""iCalendar in and out (RFC 5545): parsing, times, recurrence.

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
import functools
import re
import time
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

import icalendar
import recurring_ical_events

from caldav_mcp.errors import BackendError, InvalidInput
from caldav_mcp.rrule import rule_problem
from caldav_mcp.watch import ExpansionTimeout, call_limit, time_limit

__all__ = [
    "MAX_EXPANSION_SECONDS",
    "MAX_OCCURRENCES_PER_ITEM",
    "ExpansionTimeout",
    "Times",
    "Unreadable",
    "calendar_of",
    "call_limit",
    "count_occurrences",
    "decode_object",
    "drop_known_timezones",
    "master",
    "needs_watch",
    "occurrences",
    "overrides",
    "parse_calendar",
    "parse_when",
    "rid_text",
    "times_of",
    "value_of",
]

MAX_OCCURRENCES_PER_ITEM = 10_000
"""The most occurrences one stored entry is expanded into, per window (and when counting a series)."""
CALL_EXPANSION_SECONDS = 10.0
"""The most time one tool call spends expanding recurrences over all its entries (see :func:`expansion_budget`)."""


@dataclass
class _Budget:
    """What is left of one call's expansion time, in seconds (spent only while expanding)."""

    left: float


_CALL_BUDGET: ContextVar[_Budget | None] = ContextVar("caldav_mcp_expansion_budget", default=None)

MAX_EXPANSION_SECONDS = 2.0
"""The most time spent expanding one stored entry's recurrence (checked each time a Python function is entered)."""
MAX_PLAIN_PERIODS = 20_000
"""The most rule periods (days, weeks, months or years from DTSTART to the window's end) of an entry expanded
without the time watch of :func:`caldav_mcp.watch.time_limit` (see :func:`needs_watch`)."""
MAX_PLAIN_DATES = 1_000
"""The most RDATE and EXDATE values and changed occurrences of an entry expanded without the time watch."""
_PLAIN_PARTS = {"FREQ", "INTERVAL", "COUNT", "UNTIL", "WKST", "BYDAY"}
_PERIOD_DAYS = {"DAILY": 1, "WEEKLY": 7, "MONTHLY": 28, "YEARLY": 365}
T = TypeVar("T")


class Unreadable(Exception):
    """A stored entry this server will not expand: an invalid RRULE, or over one of the bounds.

    Attributes:
        reason: Why, as a sentence fragment for the caller ("its RRULE is invalid: ...").
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


_RID = re.compile(r"^\d{8}(T\d{6}Z?)?$")


def parse_calendar(data: str) -> icalendar.Calendar:
    """Parse an iCalendar object read from the server.

    Raises:
        BackendError: the server returned text that is not iCalendar.
    """
    try:
        return icalendar.Calendar.from_ical(data)  # pyright: ignore[reportReturnType]
    except ValueError as exc:
        raise BackendError("the calendar server returned an entry that is not valid iCalendar") from exc


_FOLD = re.compile(rb"\r?\n[ \t]")


def decode_object(raw: bytes) -> str:
    """A calendar object's bytes as text: lines unfolded by octets first, then decoded as UTF-8.

    RFC 5545 §3.1 folds a line after at most 75 octets, so a fold may fall
    inside a multi-byte UTF-8 sequence; removing every CRLF (or LF) followed
    by a space or tab before decoding joins such a character again. The text
    returned is unfolded (a parser reads it the same as the folded form).

    Raises:
        UnicodeDecodeError: the bytes are not UTF-8 even after unfolding.
    """
    return _FOLD.sub(b"", raw).decode("utf-8")


def calendar_of(resource: Any, *, times_only: bool = False) -> icalendar.Calendar:
    """The parsed iCalendar of a :class:`caldav_mcp.client.Resource`.

    ``times_only`` (a listing that reads times, never the time zone
    definitions themselves) leaves out the VTIMEZONEs that
    :func:`drop_known_timezones` may drop.

    Raises:
        BackendError: the object could not be decoded (its ``problem``, naming
            it) or is not iCalendar.
    """
    if resource.problem:
        raise BackendError(resource.problem)
    return parse_calendar(drop_known_timezones(resource.data) if times_only else resource.data)


_VTIMEZONE = re.compile(r"^BEGIN:VTIMEZONE[ \t]*\r?\n.*?^END:VTIMEZONE[ \t]*(?:\r?\n|\Z)", re.M | re.S | re.I)
_TZID_LINE = re.compile(r"^TZID:([^\r\n]*)\r?\n(?![ \t])", re.M | re.I)


@functools.cache
def _iana_zones() -> frozenset[str]:
    return frozenset(available_timezones())


def drop_known_timezones(data: str) -> str:
    """The iCalendar text ``data`` without its VTIMEZONE components whose TZID is an IANA zone name.

    icalendar reads a ``TZID`` parameter that names an IANA zone (``Europe/Berlin``)
    from the system's zone database and ignores a VTIMEZONE of that name (its
    ``tzp.cache_timezone_component`` keeps only zones it does not know), so
    such a VTIMEZONE changes no time; it is, though, most of the text of a
    typical entry (RFC 5545 §3.6.5), and parsing it most of the cost of reading
    the entry. A VTIMEZONE with any other TZID (a Windows name, a vendor
    prefix, a folded TZID line) is kept, and with it the times it defines.
    """
    if "VTIMEZONE" not in data.upper():
        return data

    def keep(block: re.Match[str]) -> str:
        tzid = _TZID_LINE.search(block.group(0))
        return "" if tzid is not None and tzid.group(1).strip() in _iana_zones() else block.group(0)

    return _VTIMEZONE.sub(keep, data)


def _of_kind(cal: icalendar.Calendar, kind: str) -> list[icalendar.Component]:
    return [c for c in cal.walk(kind)]


def master(cal: icalendar.Calendar, kind: str) -> icalendar.Component:
    """The component without RECURRENCE-ID (the series, or the only instance)."""
    found = [c for c in _of_kind(cal, kind) if "RECURRENCE-ID" not in c]
    if found:
        return found[0]
    components = _of_kind(cal, kind)
    if not components:
        raise BackendError(f"the entry holds no {kind}")
    return components[0]


def overrides(cal: icalendar.Calendar, kind: str) -> list[icalendar.Component]:
    """The components with a RECURRENCE-ID (changed occurrences, RFC 5545 §3.8.4.4)."""
    return [c for c in _of_kind(cal, kind) if "RECURRENCE-ID" in c]


def value_of(component: icalendar.Component, name: str) -> Any:
    """The Python value (``.dt``) of a date, date-time or duration property of ``component``.

    RFC 5545 §3.3.4, §3.3.5, §3.3.6: a ``date``, a ``datetime`` or a ``timedelta``.
    icalendar types ``component[name]`` as any of its property classes; only
    these three carry ``.dt``, which this reads for the caller.

    Raises:
        KeyError: ``component`` has no such property.
    """
    prop: Any = component[name]
    return prop.dt


def is_recurring(component: icalendar.Component) -> bool:
    """Whether the component has an RRULE or RDATE."""
    return "RRULE" in component or "RDATE" in component


def rid_text(value: dt.date | dt.datetime) -> str:
    """A RECURRENCE-ID as compact iCalendar text: ``20261201``, ``20261201T090000Z`` (UTC) or local."""
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            return value.astimezone(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
        return value.strftime("%Y%m%dT%H%M%S")
    return value.strftime("%Y%m%d")


def parse_rid(text: str, field: str) -> str:
    """Check a RECURRENCE-ID given by the caller (as returned in an occurrence id)."""
    if not _RID.match(text):
        raise InvalidInput(
            f"{field}: {text!r} is not a RECURRENCE-ID as returned by list_events (e.g. 20261201T090000Z)"
        )
    return text


@dataclass(frozen=True, slots=True)
class Times:
    """A component's start and end as this server returns them (see the module docstring)."""

    start: str | None
    end: str | None
    all_day: bool
    tzid: str | None
    floating: bool


def _iso(value: dt.date | dt.datetime) -> str:
    if isinstance(value, dt.datetime):
        return value.isoformat()
    return value.isoformat()


def times_of(component: icalendar.Component, start_prop: str = "DTSTART", end_prop: str = "DTEND") -> Times:
    """Start and end of an event, task (DTSTART/DUE) or journal, as :class:`Times`."""
    start_p: Any = component.get(start_prop)
    end_p: Any = component.get(end_prop)
    start = start_p.dt if start_p is not None else None
    end = end_p.dt if end_p is not None else None
    if end is None and start is not None and "DURATION" in component:
        end = start + value_of(component, "DURATION")
    if end is None and isinstance(start, dt.date) and not isinstance(start, dt.datetime) and start_prop == "DTSTART":
        end = start + dt.timedelta(days=1)
    anchor = start if start is not None else end
    all_day = isinstance(anchor, dt.date) and not isinstance(anchor, dt.datetime)
    floating = isinstance(anchor, dt.datetime) and anchor.tzinfo is None
    source: Any = start_p if start_p is not None else end_p
    param = source.params.get("TZID") if anchor is not None and source is not None else None
    tzid = str(param) if param else ("UTC" if isinstance(anchor, dt.datetime) and anchor.tzinfo is not None else None)
    return Times(
        _iso(start) if start is not None else None,
        _iso(end) if end is not None else None,
        all_day,
        tzid,
        floating,
    )


def parse_when(text: str, field: str, tzid: str | None = None) -> dt.date | dt.datetime:
    """A time given by the caller.

    Accepts ``YYYY-MM-DD`` (a date, all-day), an ISO 8601 date-time with an
    offset or ``Z`` (an instant), or a date-time without offset: zoned by
    ``tzid`` (an IANA name) when given, otherwise floating.

    An offset names an instant, not a zone (RFC 5545 §3.3.5 has no form for
    a bare offset): with ``tzid`` the instant is placed in that zone,
    otherwise it is kept in UTC. Both keep the moment the caller meant; a
    fixed offset is never written as if it were a zone.

    Raises:
        InvalidInput: the text is none of these, or ``tzid`` is unknown.
    """
    try:
        if len(text) == 10:
            return dt.date.fromisoformat(text)
        value = dt.datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    except ValueError:
        raise InvalidInput(
            f"{field}: {text!r} is not ISO 8601; give 2026-12-01 (all-day), 2026-12-01T09:00:00+01:00, "
            "or 2026-12-01T09:00:00 with a tzid"
        ) from None
    if value.tzinfo is None:
        return value.replace(tzinfo=zone(tzid, "tzid")) if tzid else value
    return value.astimezone(zone(tzid, "tzid") if tzid else dt.UTC)


def zone(name: str, field: str) -> ZoneInfo:
    """An IANA time zone by name.

    Raises:
        InvalidInput: no such zone.
    """
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidInput(f"{field}: {name!r} is not an IANA time zone name (e.g. Europe/Berlin)") from None


def _aware(value: dt.date | dt.datetime, tz: dt.tzinfo) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=tz)
    return dt.datetime.combine(value, dt.time(), tzinfo=tz)


def stored_rule_problem(cal: icalendar.Calendar, kind: str) -> str | None:
    """Why a stored entry's RRULE cannot be expanded safely (RFC 5545 §3.3.10), or None.

    Used before expanding data another client stored: a rule such as
    ``INTERVAL=0`` would make the expansion loop for ever.
    """
    for component in cal.walk(kind):
        raw: Any = component.get("RRULE")
        for rule in raw if isinstance(raw, list) else [raw] if raw is not None else []:
            text = rule.to_ical().decode() if hasattr(rule, "to_ical") else str(rule)
            problem = rule_problem(text)
            if problem is not None:
                return f"its RRULE is invalid: {problem}"
    return None


def _values(component: icalendar.Component, name: str) -> list[Any]:
    raw: Any = component.get(name)
    return raw if isinstance(raw, list) else [raw] if raw is not None else []


def needs_watch(cal: icalendar.Calendar, kind: str, end: dt.datetime | None) -> bool:
    """Whether expanding ``cal``'s ``kind`` components up to ``end`` needs the time watch (:func:`time_limit`).

    The watch is a trace function: it slows the expansion it guards about
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
    if end is None:
        return True
    dates = 0
    for component in cal.walk(kind):
        dates += 1 if "RECURRENCE-ID" in component else 0
        for name in ("RDATE", "EXDATE"):
            dates += sum(len(getattr(item, "dts", [item])) for item in _values(component, name))
        rules = _values(component, "RRULE")
        start: Any = component.get("DTSTART")
        if rules and start is None:
            return True
        for rule in rules:
            if not isinstance(rule, dict) or set(rule) - _PLAIN_PARTS:  # pyright: ignore[reportUnknownArgumentType]
                return True
            freq = str(rule.get("FREQ", [""])[0])  # pyright: ignore[reportUnknownArgumentType,reportUnknownMemberType]
            days = _PERIOD_DAYS.get(freq)
            weekdays: list[Any] = list(rule.get("BYDAY", []))  # pyright: ignore[reportUnknownArgumentType,reportUnknownMemberType]
            if days is None or (
                weekdays and (freq not in {"DAILY", "WEEKLY"} or any(len(str(d)) != 2 for d in weekdays))
            ):
                return True
            try:
                interval = int(rule.get("INTERVAL", [1])[0])  # pyright: ignore[reportUnknownArgumentType,reportUnknownMemberType]
                periods = (end - utc_bound(start.dt)).days / (max(interval, 1) * days)
            except (TypeError, ValueError, OverflowError):
                return True
            if periods > MAX_PLAIN_PERIODS:
                return True
    return dates > MAX_PLAIN_DATES


@contextlib.contextmanager
def expansion_budget(seconds: float | None = None) -> Iterator[None]:
    """Bound the recurrence expansion done inside the block to ``seconds`` in all (CALL_EXPANSION_SECONDS).

    The per-entry bound keeps one stored rule from wedging a read; this one
    keeps many of them (a listing of thousands of entries that each run to the
    per-entry bound) from stretching one call: only time spent expanding
    counts (a slow backend spends none of it), and once it is spent every
    further entry is reported unreadable at once. The budget is a context
    variable, so it follows the call into worker threads (anyio copies the
    context).
    """
    token = _CALL_BUDGET.set(_Budget(CALL_EXPANSION_SECONDS if seconds is None else seconds))
    try:
        yield
    finally:
        _CALL_BUDGET.reset(token)


def _bounded(produce: Callable[[], Iterable[T]], limit: int, what: str, *, watch: bool = True) -> list[T]:
    """Everything ``produce`` yields, within MAX_EXPANSION_SECONDS, the call's budget, and at most ``limit`` items.

    ``watch`` False (an entry :func:`needs_watch` found bounded by itself) leaves
    out the trace function that enforces MAX_EXPANSION_SECONDS; the time is
    still charged to the call's budget.

    Raises:
        Unreadable: over either bound, or the expansion failed.
    """
    found: list[T] = []
    seconds = MAX_EXPANSION_SECONDS
    budget = _CALL_BUDGET.get()
    if budget is not None:
        if budget.left <= 0:
            raise Unreadable(
                f"this call had already spent its {CALL_EXPANSION_SECONDS:g} s of recurrence expansion on other "
                "entries, so this one was not expanded; ask for a shorter window or fewer entries"
            )
        seconds = min(seconds, budget.left)
    began = time.monotonic()
    try:
        with time_limit(seconds) if watch else contextlib.nullcontext():
            for item in produce():
                found.append(item)
                if len(found) > limit:
                    raise Unreadable(f"it has more than {limit} {what}, the most this server expands for one entry")
    except ExpansionTimeout:
        raise Unreadable(
            f"expanding its recurrence took longer than {MAX_EXPANSION_SECONDS:g} s, "
            "the most this server spends on one entry"
        ) from None
    except Unreadable:
        raise
    except Exception as exc:
        raise Unreadable(f"its recurrence could not be expanded ({type(exc).__name__})") from None
    finally:
        if budget is not None:
            budget.left -= time.monotonic() - began
    return found


def _single_zoned(cal: icalendar.Calendar, kind: str) -> tuple[dt.datetime, dt.datetime] | None:
    """(start, end) of an entry that is one plain occurrence with zoned times; None for anything else.

    The common case of a listing (one VEVENT, no RRULE, RDATE, EXDATE or
    RECURRENCE-ID, DTSTART and DTEND both date-times with a zone or UTC, end
    after start) needs no recurrence library: it overlaps a window when it
    starts before the window's end and ends after its start, as
    recurring-ical-events decides for it too (RFC 4791 §9.9). Dates,
    floating times, DURATION, zero-length entries and everything recurring go
    through the library.
    """
    components = _of_kind(cal, kind)
    if len(components) != 1:
        return None
    only = components[0]
    if any(name in only for name in ("RRULE", "RDATE", "EXDATE", "RECURRENCE-ID")):
        return None
    begin, finish = only.get("DTSTART"), only.get("DTEND")
    if begin is None or finish is None:
        return None
    began, ended = getattr(begin, "dt", None), getattr(finish, "dt", None)
    if not (isinstance(began, dt.datetime) and isinstance(ended, dt.datetime)):
        return None
    if began.tzinfo is None or ended.tzinfo is None or ended <= began:
        return None
    return began, ended


def occurrences(cal: icalendar.Calendar, kind: str, start: dt.datetime, end: dt.datetime) -> list[icalendar.Component]:
    """Occurrences of ``kind`` overlapping ``[start, end)``, overrides and EXDATEs applied.

    Bounded per entry: at most MAX_OCCURRENCES_PER_ITEM occurrences and
    MAX_EXPANSION_SECONDS of work (watched unless the entry bounds it by
    itself, see :func:`needs_watch`); a stored RRULE that breaks RFC 5545
    §3.3.10 is not expanded at all.

    Raises:
        Unreadable: the entry breaks one of these bounds (the message says which).
    """
    single = _single_zoned(cal, kind)
    if single is not None:
        began, ended = single
        return [_of_kind(cal, kind)[0]] if began < end and ended > start else []
    problem = stored_rule_problem(cal, kind)
    if problem is not None:
        raise Unreadable(problem)
    return _bounded(
        lambda: recurring_ical_events.of(cal, components=[kind]).between(start, end),
        MAX_OCCURRENCES_PER_ITEM,
        "occurrences in this window",
        watch=needs_watch(cal, kind, end),
    )


def count_occurrences(cal: icalendar.Calendar, kind: str) -> int | None:
    """How many occurrences a series has in all (EXDATEs and overrides applied); None if it never ends.

    Raises:
        Unreadable: the stored RRULE is invalid, or counting would pass
            MAX_OCCURRENCES_PER_ITEM occurrences or MAX_EXPANSION_SECONDS.
    """
    first = master(cal, kind)
    if not is_recurring(first):
        return 1
    problem = stored_rule_problem(cal, kind)
    if problem is not None:
        raise Unreadable(problem)
    raw: Any = first.get("RRULE")
    rules: list[Any] = raw if isinstance(raw, list) else [raw] if raw is not None else []
    if any("COUNT" not in rule and "UNTIL" not in rule for rule in rules):
        return None
    if len(rules) == 1 and "COUNT" in rules[0] and "RDATE" not in first and "EXDATE" not in first:
        return int(rules[0]["COUNT"][0])
    return len(
        _bounded(
            lambda: recurring_ical_events.of(cal, components=[kind]).all(), MAX_OCCURRENCES_PER_ITEM, "occurrences"
        )
    )


def occurrence_start(component: icalendar.Component) -> Any:
    """The RECURRENCE-ID of an occurrence produced by :func:`occurrences` (or its DTSTART)."""
    rid = component.get("RECURRENCE-ID") or component.get("DTSTART")
    return rid.dt if rid is not None else None


def utc_bound(value: dt.date | dt.datetime) -> dt.datetime:
    """A window bound as an aware datetime (a date is midnight UTC)."""
    return _aware(value, dt.UTC)
