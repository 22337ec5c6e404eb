"""What search_events asks the server for (RFC 4791 §9.7 text-match), and whether its answers can be trusted.

A search matches the text in an event's summary, description, location and
categories, in its attendees' and organizer's addresses, and in their display
names (the ``CN`` parameter, RFC 5545 §3.2.2). The server is asked for
candidates with one calendar-query REPORT per property; for the names, a
``param-filter`` on ``CN`` (RFC 4791 §9.7.3), since a text-match on ATTENDEE
itself is matched against the address only. Every candidate is matched again
here, so a server that sends too much costs only time.

A server that sends too little would make a search miss events silently (one
that ignores a param-filter it does not support and answers with nothing).
So, as carddav-mcp does with its books, a search is also answered from a
full read of the window until the narrowed answers have been seen complete
for a match by a value and for a match by a display name (two kinds of
filter, checked apart); what they left out decides: nothing, and later
searches are narrowed; something, or a refused query, and every later search
reads the whole window (:class:`Narrowing`, kept for the life of the client).

A ``CN`` may carry RFC 6868 caret escapes (``^'`` for a double quote, ``^n``
for a newline, ``^^`` for a caret). icalendar decodes them before the local
match; a server may match the stored form, so a query holding one of those
characters is asked in both forms (:func:`forms`).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from caldav_mcp.dav import CalendarInfo, Resource
from caldav_mcp.errors import BackendError

if TYPE_CHECKING:  # the HTTP stack and icalendar are imported where a call needs them
    import icalendar

    from caldav_mcp.client import CalDAVClient

__all__ = ["NAMED", "SEARCHED", "Narrowing", "caret_encoded", "forms", "found_in", "matches"]

log = logging.getLogger("caldav_mcp")

SEARCHED = ("SUMMARY", "DESCRIPTION", "LOCATION", "ATTENDEE", "ORGANIZER", "CATEGORIES")
"""The properties whose values a search matches."""
NAMED = ("ATTENDEE", "ORGANIZER")
"""The properties whose display name (``CN``) a search matches too."""


def caret_encoded(text: str) -> str:
    """``text`` as RFC 6868 §3 writes it in a parameter value: ``^`` as ``^^``, newline as ``^n``, ``"`` as ``^'``."""
    return text.replace("^", "^^").replace("\r\n", "\n").replace("\n", "^n").replace('"', "^'")


def forms(needle: str) -> tuple[str, ...]:
    """The texts to ask a server for in a ``CN``: ``needle``, and its caret-encoded form when that differs."""
    encoded = caret_encoded(needle)
    return (needle,) if encoded == needle else (needle, encoded)


def found_in(component: icalendar.Component, needle: str) -> tuple[bool, bool]:
    """Whether ``component`` holds ``needle`` (case-folded) in a searched property's value, and in a display name."""
    in_value = in_name = False
    for prop in SEARCHED:
        value = component.get(prop)
        values = value if isinstance(value, list) else [value] if value is not None else []
        for item in values:  # pyright: ignore[reportUnknownVariableType]
            text = " ".join(str(c) for c in getattr(item, "cats", [item]))  # pyright: ignore[reportUnknownArgumentType]
            params = getattr(item, "params", {})  # pyright: ignore[reportUnknownArgumentType]
            in_value = in_value or needle in text.casefold()
            in_name = in_name or (prop in NAMED and needle in str(params.get("CN", "")).casefold())
    return in_value, in_name


def matches(component: icalendar.Component, needle: str) -> bool:
    """Whether ``component`` holds ``needle`` (case-folded) in a searched property's value or display name."""
    return any(found_in(component, needle))


@dataclass
class Narrowing:
    """Whether the server's text-match answers are trusted to hold every event that matches.

    Values and display names are asked by different filters (a ``param-filter`` for the names, which a server
    may ignore while it honours the rest), so each is trusted on its own evidence.

    Attributes:
        trusted: For the values: None until a search that found an event by a value has been checked against
            a full read; True when that was complete; False when one left an event out or the server refused
            a query (later searches read the whole window).
        names_trusted: The same for the display names (``CN``); searches are narrowed without a check only
            once both are True.
    """

    trusted: bool | None = None
    names_trusted: bool | None = None

    async def candidates(
        self,
        client: CalDAVClient,
        cal: CalendarInfo,
        query: str,
        lo: dt.datetime,
        hi: dt.datetime,
        whole: Callable[[], Awaitable[list[Resource]]],
    ) -> list[Resource]:
        """The events of ``cal`` in ``[lo, hi)`` that may hold ``query``: a superset of the matches.

        The server's default collation folds ASCII case only, so a query with
        other characters reads the whole window, as does a server not trusted.
        ``whole()`` reads the whole window (in parts where the server refuses it as
        too large: :func:`caldav_mcp.tools.window_reads.window_entries`).
        """
        if not query.isascii() or False in (self.trusted, self.names_trusted):
            return await whole()
        values: dict[str, Resource] = {}
        names: dict[str, Resource] = {}
        try:
            for prop in SEARCHED:
                for resource in await client.text_query(cal, prop, query, lo, hi):
                    values[resource.href] = resource
            for prop in NAMED:
                for text in forms(query):
                    for resource in await client.text_query(cal, prop, text, lo, hi, param="CN"):
                        names[resource.href] = resource
        except BackendError as exc:
            log.info("the server refused a text-match search (%s); searches read whole windows", exc)
            self.trusted = False
            return await whole()
        if self.trusted and self.names_trusted:
            return list({**values, **names}.values())
        every = await whole()
        self._check(every, values, names, query.casefold())
        return every

    def _check(
        self, every: list[Resource], values: dict[str, Resource], names: dict[str, Resource], needle: str
    ) -> None:
        """Note what a full read shows of the narrowed answers, for values and names apart: complete, or not.

        A kind that held no match proves nothing: the next search checks it again.
        """
        from caldav_mcp.components import calendar_of
        from caldav_mcp.ical import Unreadable

        by_value: list[str] = []
        by_name: list[str] = []
        for resource in every:
            try:
                events = calendar_of(resource, times_only=True).walk("VEVENT")
            except (Unreadable, BackendError, ValueError):
                continue  # named under unreadable by the search itself
            found = [found_in(event, needle) for event in events]
            if any(in_value for in_value, _ in found):
                by_value.append(resource.href)
            if any(in_name for _, in_name in found):
                by_name.append(resource.href)
        if by_value:
            self.trusted = self._complete(by_value, values, "text-match")
        if by_name:
            self.names_trusted = self._complete(by_name, names, "display-name (CN param-filter)")

    @staticmethod
    def _complete(held: list[str], sent: dict[str, Resource], kind: str) -> bool:
        left_out = [href for href in held if href not in sent]
        if left_out:
            log.info("a server-side %s search left out %d matching events; searches read whole windows",
                     kind, len(left_out))  # fmt: skip
        return not left_out
