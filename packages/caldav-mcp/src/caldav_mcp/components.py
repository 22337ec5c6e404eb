"""iCalendar objects as this server reads them (RFC 5545): parsing, decoding, components, times.

Times leave this server as ISO 8601 text (see :mod:`caldav_mcp.ical`); dates
are never converted through the host's time zone.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from approval_core.serving.stored_text import quoted_name
from caldav_mcp.errors import BackendError, InvalidInput
from caldav_mcp.own_zones import UNFOLD, from_ical, iana_zones

if TYPE_CHECKING:  # imported where a call needs it: listing the tools does not (startup time)
    import icalendar

__all__ = [
    "LISTED",
    "Times",
    "calendar_of",
    "decode_object",
    "drop_known_timezones",
    "is_recurring",
    "listed_only",
    "master",
    "occurrence_start",
    "overrides",
    "parse_calendar",
    "parse_rid",
    "parse_when",
    "readable",
    "rid_text",
    "single_zoned",
    "times_of",
    "utc_bound",
    "value_of",
    "zone",
]


_RID = re.compile(r"^\d{8}(T\d{6}Z?)?$")


def parse_calendar(data: str) -> icalendar.Calendar:
    """Parse an iCalendar object read from the server, its custom TZIDs from its own VTIMEZONEs (:mod:`.own_zones`).

    Raises:
        BackendError: the server returned text that is not iCalendar.
    """
    try:
        return from_ical(data)
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


def calendar_of(resource: Any, *, times_only: bool = False, listed: bool = False) -> icalendar.Calendar:
    """The parsed iCalendar of a :class:`caldav_mcp.client.Resource`.

    ``times_only`` (a search that reads times and text, never the time zone
    definitions themselves) leaves out the VTIMEZONEs that
    :func:`drop_known_timezones` may drop; ``listed`` (a listing's occurrences)
    also leaves out what :func:`listed_only` drops.

    Raises:
        BackendError: the object could not be decoded (its ``problem``, naming
            it) or is not iCalendar.
    """
    if resource.problem:
        raise BackendError(resource.problem)
    if listed:
        return parse_calendar(listed_only(resource.data))
    return parse_calendar(drop_known_timezones(resource.data) if times_only else resource.data)


_VTIMEZONE = re.compile(
    r"^BEGIN:VTIMEZONE[ \t]*\r?\n(?:(?!(?:BEGIN|END):VTIMEZONE[ \t]*(?:\r?\n|\Z))[^\r\n]*\r?\n)*"
    r"END:VTIMEZONE[ \t]*(?:\r?\n|\Z)",
    re.M | re.I,
)
"""A VTIMEZONE holding no other: each attempt stops at the next BEGIN or END of one, so text with many unclosed
ones is searched in linear time (a lazy ``.*?`` to the next END searched to the end of the text for each)."""
_TZID_LINE = re.compile(r"^TZID:([^\r\n]*)\r?\n(?![ \t])", re.M | re.I)


def drop_known_timezones(data: str) -> str:
    """The iCalendar text ``data`` without its VTIMEZONE components whose TZID is an IANA zone name.

    icalendar reads a ``TZID`` parameter that names an IANA zone (``Europe/Berlin``)
    from the system's zone database and ignores a VTIMEZONE of that name (its
    ``tzp.cache_timezone_component`` keeps only zones it does not know), so
    such a VTIMEZONE changes no time; it is, though, most of the text of a
    typical entry (RFC 5545 §3.6.5), and parsing it most of the cost of reading
    the entry. A VTIMEZONE with any other TZID (a Windows name, a vendor
    prefix, a folded TZID line, an IANA name with a space before or after it,
    which icalendar does not look up) is kept, and with it the times it defines.
    """
    if "VTIMEZONE" not in data.upper():
        return data

    def keep(block: re.Match[str]) -> str:
        tzid = _TZID_LINE.search(block.group(0))
        return "" if tzid is not None and tzid.group(1) in iana_zones() else block.group(0)

    return _VTIMEZONE.sub(keep, data)


LISTED = frozenset(
    {"BEGIN", "END", "UID", "SUMMARY", "STATUS", "SEQUENCE", "DTSTART", "DTEND", "DURATION", "DUE", "RECURRENCE-ID"}
    | {"RRULE", "RDATE", "EXDATE", "EXRULE", "X-WR-TIMEZONE"}
)
"""The properties a listing reads from an entry's components (an occurrence's UID, SUMMARY, STATUS and times,
and what places its occurrences in time, RFC 5545 §3.8.2, §3.8.4.4, §3.8.5; and the calendar's
``X-WR-TIMEZONE``, in whose zone the recurrence library gives UTC times); :func:`listed_only` keeps these."""

_EVENT = re.compile(
    r"^BEGIN:VEVENT[ \t]*\r?\n(?:(?!(?:BEGIN|END):VEVENT[ \t]*(?:\r?\n|\Z))[^\r\n]*\r?\n)*END:VEVENT[ \t]*(?:\r?\n|\Z)",
    re.M | re.I,
)
"""A closed VEVENT holding no other (searched in linear time, as :data:`_VTIMEZONE`): the only component whose
bad values icalendar reads as broken and goes on (``Event.ignore_exceptions``), so the only place
:func:`listed_only` drops lines. A bad value anywhere else (the VCALENDAR's own properties, a VALARM, a VTODO)
makes it refuse the whole entry: those lines are kept, so such an entry is refused by the listing too."""

_LOGICAL_LINE = re.compile(r"^(?![ \t])([A-Za-z0-9-]+)[^\r\n]*(?:\r?\n[ \t][^\r\n]*)*(?:\r?\n|\Z)", re.M)
_VALARM = re.compile(
    r"^BEGIN:VALARM[ \t]*\r?\n(?:(?!(?:BEGIN|END)[ \t]*[:;])[^\r\n]*\r?\n)*?END:VALARM[ \t]*(?:\r?\n|\Z)", re.M | re.I
)
"""A closed VALARM holding no other component: kept whole inside a VEVENT whose other lines are filtered."""
_BEGIN = re.compile(r"^BEGIN[ \t]*[:;]", re.M | re.I)


_IDENTITY = re.compile(r"\A(BEGIN:VCALENDAR[ \t]*\r?\n)(?:(?:VERSION|PRODID):[^\r\n]*\r?\n)+", re.I)
"""VERSION and PRODID without parameters right after the opening ``BEGIN:VCALENDAR`` (RFC 5545 §3.7.3, §3.7.4):
text icalendar takes as it is (nothing it could refuse), which no listing reads. Only there: such a line before
the VCALENDAR or after it makes icalendar refuse the whole entry, as it still must."""


def listed_only(data: str) -> str:
    """The iCalendar text ``data`` with only what a listing of its occurrences reads: parsed in a fraction of the time.

    Known VTIMEZONEs go (:func:`drop_known_timezones`), and so do VERSION and PRODID (:data:`_IDENTITY`).
    Inside each VEVENT that holds no component but VALARMs, once folds are undone as icalendar undoes them
    (RFC 5545 §3.1), each content line whose property is not in :data:`LISTED` goes: DTSTAMP, DESCRIPTION,
    ATTENDEE, ORGANIZER, vendor ``X-`` properties, most of a typical entry's lines; icalendar's parse costs
    the same for each line. What the listing gives is the same: it reads none of them, and icalendar reads a
    bad value there as broken. Everything else is kept as it is (see :data:`_EVENT`).
    """
    if "\n " in data or "\n\t" in data:  # every fold ends a line before a space or tab: none, nothing to undo
        data = UNFOLD.sub("", data)  # anywhere (in a name, after a blank line): each line is kept or dropped whole
    data = _IDENTITY.sub(r"\1", drop_known_timezones(data), count=1)
    return _EVENT.sub(lambda event: _listed_event(event.group(0)), data)


def _listed_event(event: str) -> str:
    """One VEVENT's lines in :data:`LISTED`, its VALARMs whole; the VEVENT whole where it holds another component."""
    if len(_BEGIN.findall(_VALARM.sub("", event))) != 1:
        return event
    kept: list[str] = []
    place = 0
    for alarm in _VALARM.finditer(event):
        kept.append(_LOGICAL_LINE.sub(_listed_line, event[place : alarm.start()]))
        kept.append(alarm.group(0))
        place = alarm.end()
    kept.append(_LOGICAL_LINE.sub(_listed_line, event[place:]))
    return "".join(kept)


def _listed_line(line: re.Match[str]) -> str:
    return line.group(0) if line.group(1).upper() in LISTED else ""


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
            f"{field}: {quoted_name(text)} is not a RECURRENCE-ID as returned by list_events (e.g. 20261201T090000Z)"
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


def readable(prop: Any) -> Any:
    """``prop``, or None when it is absent or its value does not parse (icalendar's ``vBroken``)."""
    import icalendar

    return None if prop is None or isinstance(prop, icalendar.vBroken) else prop


def times_of(component: icalendar.Component, start_prop: str = "DTSTART", end_prop: str = "DTEND") -> Times:
    """Start and end of an event, task (DTSTART/DUE) or journal, as :class:`Times`.

    A stored time that does not parse (RFC 5545 §3.3) is given as absent; the
    reads say why beside it (:func:`caldav_mcp.ical.stored_rule_problem`).
    """
    start_p: Any = readable(component.get(start_prop))
    end_p: Any = readable(component.get(end_prop))
    start = start_p.dt if start_p is not None else None
    end = end_p.dt if end_p is not None else None
    duration: Any = readable(component.get("DURATION"))
    if end is None and start is not None and duration is not None:
        end = start + duration.dt
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
            f"{field}: {quoted_name(text)} is not ISO 8601; give 2026-12-01 (all-day), 2026-12-01T09:00:00+01:00, "
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
        raise InvalidInput(f"{field}: {quoted_name(name)} is not an IANA time zone name (e.g. Europe/Berlin)") from None


def _aware(value: dt.date | dt.datetime, tz: dt.tzinfo) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=tz)
    return dt.datetime.combine(value, dt.time(), tzinfo=tz)


def occurrence_start(component: icalendar.Component) -> Any:
    """The RECURRENCE-ID of an occurrence produced by :func:`occurrences` (or its DTSTART)."""
    rid = component.get("RECURRENCE-ID") or component.get("DTSTART")
    return rid.dt if rid is not None else None


def utc_bound(value: dt.date | dt.datetime) -> dt.datetime:
    """A window bound as an aware datetime (a date is midnight UTC)."""
    return _aware(value, dt.UTC)


def single_zoned(cal: icalendar.Calendar, kind: str) -> tuple[dt.datetime, dt.datetime] | None:
    """(start, end) of an entry that is one plain occurrence with zoned times; None for anything else.

    The common case of a listing (one VEVENT, no RRULE, RDATE, EXDATE or
    RECURRENCE-ID, DTSTART and DTEND both date-times with a zone or UTC, end
    after start) needs no recurrence library: it overlaps a window when it
    starts before the window's end and ends after its start, as
    recurring-ical-events decides for it too (RFC 4791 §9.9). Dates,
    floating times, DURATION, zero-length entries, everything recurring and an
    entry whose calendar names an ``X-WR-TIMEZONE`` go through the library.
    """
    if "X-WR-TIMEZONE" in cal:
        return None
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
