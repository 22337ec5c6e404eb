"""iCalendar text parsed so that each entry's custom TZIDs follow that entry's own VTIMEZONE (RFC 5545 §3.6.5).

icalendar resolves a ``TZID`` parameter while it parses, and keeps for the
whole process the first VTIMEZONE it parsed under each TZID that is not an
IANA zone name (``icalendar.timezone.tzp.cache_timezone_component``): an
Outlook display name (``(UTC+01:00) Amsterdam, Berlin, ...``), a Windows name
(``W. Europe Standard Time``), a made-up ``Custom Zone``. A later entry that
defines the same name with other offsets or other daylight-saving rules would
be read with the first one's, and which one came first would decide the times
of both. :func:`from_ical` parses such a text with icalendar's cache of zones
emptied before and after (``tzp.use``, its public way to start afresh), under
one lock, so that while it parses only that entry's own VTIMEZONEs are
known: each of its TZIDs is its own VTIMEZONE, else a Windows name's IANA zone
(icalendar's table), else none, and the time is read as written (floating):
RFC 5545 §3.2.19 requires the VTIMEZONE in the same object, and another
entry's is never borrowed. A VTIMEZONE after the component that uses it is
found as well (icalendar parses such a text twice). Adding the VTIMEZONEs an
entry lacks before it is written (:func:`caldav_mcp.editing.serialise`) runs
in the same emptied state (:func:`no_other_zones`), so it never copies in
another entry's.

A text whose TZIDs are all IANA names (the common case) is parsed without the
lock or the emptying: icalendar takes those from the zone database and never
from a VTIMEZONE, and nothing another parse keeps changes them.
"""

from __future__ import annotations

import contextlib
import functools
import re
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING
from zoneinfo import available_timezones

if TYPE_CHECKING:
    import icalendar

__all__ = ["UNFOLD", "from_ical", "iana_zones", "names_other_zones", "no_other_zones"]

UNFOLD = re.compile(r"(?:(?<!\n)\r\n|(?<![\r\n])\n)(?:\r?\n)*[ \t]")
"""A fold as icalendar undoes it (``icalendar.parser.content_line.UFOLD``: line breaks, blank lines too, before a
space or tab, RFC 5545 §3.1): removing each match gives the lines icalendar reads."""

_TZID = re.compile(r'TZID(?:=(?:"([^"\r\n]*)"(?=[;:])|([^";:\r\n]*)(?=[;:]))|:([^\r\n]*)(?=\r?\n|\Z))?', re.I)
"""Each ``TZID`` in any case, ``ı`` too (icalendar upper-cases names with :meth:`str.upper`), with its value where
it is a parameter (RFC 5545 §3.2.19: one value, quoted or not) or a property without parameters (§3.8.3.1)."""

_PARSING = threading.Lock()
"""Held while a text naming other zones is parsed: icalendar's cache of zones is one for the process."""


@functools.cache
def iana_zones() -> frozenset[str]:
    """The IANA zone names of the system's zone database (those icalendar takes from it, never from a VTIMEZONE)."""
    return frozenset(available_timezones())


def names_other_zones(data: str) -> bool:
    """Whether the iCalendar text ``data`` names a time zone that is not an IANA name, or might.

    False only where each ``TZID`` in it (in any case, once folds are undone
    as icalendar undoes them) is a parameter or property whose one value is
    exactly an IANA name. Anything else (another name, a list of values, a
    ``TZID`` in a form this does not read, inside a text value) gives True: a
    wrong True costs only the slower parse.
    """
    if "\n " in data or "\n\t" in data:  # a fold may split a TZID: read the lines as icalendar reads them
        data = UNFOLD.sub("", data)
    upper = data.upper()  # each spelling icalendar reads as TZID (``ı`` too) is TZID here
    if "TZID" not in upper:
        return False
    known = iana_zones()
    if len(upper) != len(data):  # a letter that upper() makes two (ß): the places differ, search it all
        matches: Iterator[re.Match[str]] = _TZID.finditer(data)
    else:
        matches = _each_at(data, upper)
    for match in matches:
        quoted, plain, value = match.groups()
        name = quoted if quoted is not None else plain if plain is not None else value
        if name not in known:
            return True
    return False


def _each_at(data: str, upper: str) -> Iterator[re.Match[str]]:
    """:data:`_TZID` at each place of ``TZID`` in ``upper`` (``data`` upper-cased, of the same length)."""
    place = upper.find("TZID")
    while place >= 0:
        match = _TZID.match(data, place)
        assert match is not None  # the four letters match whatever follows them
        yield match
        place = upper.find("TZID", match.end())


@contextlib.contextmanager
def no_other_zones() -> Iterator[None]:
    """A block in which icalendar knows no zone but the database's and what the block itself parses.

    Holds the one lock and empties icalendar's cache of zones on entry and on
    exit (``tzp.use``): what icalendar resolves by name inside (a parse, or
    ``Calendar.add_missing_timezones`` adding the VTIMEZONE of a TZID) never
    finds another entry's VTIMEZONE, and nothing parsed inside is kept.
    """
    from icalendar.timezone import tzp

    with _PARSING:
        tzp.use(tzp.name)
        try:
            yield
        finally:
            tzp.use(tzp.name)


def from_ical(data: str | bytes) -> icalendar.Calendar:
    """The VCALENDAR of the iCalendar text ``data``, its custom TZIDs read from its own VTIMEZONEs (see the module).

    Raises:
        ValueError: ``data`` is not iCalendar (icalendar's error, as it raises it).
    """
    import icalendar

    text = data.decode("utf-8") if isinstance(data, bytes) else data
    if not names_other_zones(text):
        return icalendar.Calendar.from_ical(text)  # pyright: ignore[reportReturnType]
    with no_other_zones():
        return icalendar.Calendar.from_ical(text)  # pyright: ignore[reportReturnType]
