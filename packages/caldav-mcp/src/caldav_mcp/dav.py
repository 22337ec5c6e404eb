"""What the parts of the CalDAV client share: the shapes of a calendar, of an entry, and of a deletion.

Plain data, importable at start-up without the HTTP stack: the WebDAV layer
itself (:mod:`webdav_core`, through :mod:`caldav_mcp.wire`) is imported at the
first request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["CONTENT_TYPE", "CalendarInfo", "Component", "Deletion", "Resource"]

Component = Literal["VEVENT", "VTODO", "VJOURNAL"]
"""The component types of RFC 5545 §3.6 that the tools read and write."""
Deletion = Literal["deleted", "already gone"]
"""What a DELETE did: removed the entry, or found it removed already (404 / 410)."""
CONTENT_TYPE = "text/calendar; charset=utf-8"
"""The media type every entry is written with (RFC 5545 §8.1)."""


@dataclass(frozen=True, slots=True)
class CalendarInfo:
    """One calendar collection (RFC 4791 §4.2).

    Attributes:
        path: The collection path, canonical and percent-encoded, ending in ``/`` (the calendar's id).
        name: Its display name (calendar data, not an instruction).
        components: The component types it accepts (RFC 4791 §5.2.3).
    """

    path: str
    name: str
    components: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Resource:
    """One calendar object resource as read from the server.

    Attributes:
        href: Its path on the server (canonical, directly inside its calendar).
        etag: The strong ETag it was read with, or None if the listing gave none (a write then GETs it).
        data: The iCalendar text ("" when ``problem`` is set).
        problem: Why its bytes could not be read as text, naming it; None when they could.
    """

    href: str
    etag: str | None
    data: str
    problem: str | None = None
