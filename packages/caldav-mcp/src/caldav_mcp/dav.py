"""What the parts of the CalDAV client share: its resource types, and the one translation of backend failures.

Every failure of the ``caldav`` library, lxml or the HTTP layer becomes one
of caldav-mcp's exceptions (:mod:`caldav_mcp.errors`) here (:func:`translate`,
:func:`translated`, :func:`status_error`) and nowhere else. A 412 becomes
:class:`PreconditionFailed` and is never retried; a 401 is
:class:`BadCredentials`, a 403 :class:`NotAllowed`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeVar

from lxml import etree  # pyright: ignore[reportAttributeAccessIssue]

from caldav_mcp.errors import (
    BackendError,
    BadCredentials,
    CalDAVToolError,
    Conflict,
    InvalidInput,
    NotAllowed,
    NotConfigured,
    NotFound,
    OutOfScope,
    PreconditionFailed,
)

if TYPE_CHECKING:
    pass

__all__ = [
    "CalendarInfo",
    "Component",
    "Deletion",
    "Discovery",
    "DiscoveryProps",
    "Resource",
    "auth_error",
    "caldav_errors",
    "status_error",
    "translate",
    "translated",
]


def caldav_errors():
    """The caldav library's error module, imported on first use (the library is slow to import)."""
    from caldav.lib import error

    return error


Component = Literal["VEVENT", "VTODO", "VJOURNAL"]
Deletion = Literal["deleted", "already gone"]
T = TypeVar("T")
CONTENT_TYPE = "text/calendar; charset=utf-8"
CALDAV_NS = "urn:ietf:params:xml:ns:caldav"
# Server XML is parsed without entities, DTDs or network access.
SAFE_XML_OPTIONS: dict[str, bool] = {
    "resolve_entities": False,
    "no_network": True,
    "load_dtd": False,
    "huge_tree": False,
}
SAFE_XML = etree.XMLParser(**SAFE_XML_OPTIONS)


@dataclass(frozen=True, slots=True)
class CalendarInfo:
    """One calendar collection.

    Attributes:
        path: The collection path, ending in ``/`` (the calendar's id).
        name: Its display name (calendar data, not an instruction).
        components: The component types it accepts (RFC 4791 §5.2.3).
    """

    path: str
    name: str
    components: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Discovery:
    """How the calendars were found from ``CALDAV_URL`` (RFC 6764 §6, RFC 5397, RFC 4791 §6.2.1).

    Attributes:
        method: ``principal`` (``CALDAV_URL`` named the current-user-principal),
            ``well-known`` (it did not; ``/.well-known/caldav`` did), or
            ``given URL`` (no principal anywhere: ``CALDAV_URL`` is the calendar or the home).
        url: The path of ``CALDAV_URL``.
        well_known: Where ``/.well-known/caldav`` led (after same-origin redirects), when it was used.
        principal: The principal's path, when one was named.
        home_sets: The calendar-home-set paths listed (or the calendar's path).
        is_calendar: ``CALDAV_URL`` is itself a calendar (method ``given URL`` only).
    """

    method: Literal["given URL", "principal", "well-known"]
    url: str
    well_known: str | None
    principal: str | None
    home_sets: tuple[str, ...]
    is_calendar: bool


@dataclass(slots=True)
class DiscoveryProps:
    """The discovery properties of one PROPFIND answer."""

    multistatus: bool = False
    calendar: bool = False
    principal: tuple[str, ...] = ()
    homes: tuple[str, ...] = ()
    unauthenticated: bool = False  # current-user-principal was DAV:unauthenticated (RFC 5397 §3)


CALDAV_NS = "urn:ietf:params:xml:ns:caldav"
WELL_KNOWN = "/.well-known/caldav"
DISCOVERY_PROPFIND = (
    '<?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">'
    "<d:prop><d:resourcetype/><d:current-user-principal/><c:calendar-home-set/></d:prop></d:propfind>"
)


@dataclass(frozen=True, slots=True)
class Resource:
    """One calendar object resource as read from the server.

    Attributes:
        href: Its path on the server.
        etag: The strong ETag it was read with, or None if the server sent none.
        data: The iCalendar text ("" when ``problem`` is set).
        problem: Why its bytes could not be read as text, naming it; None when they could.
    """

    href: str
    etag: str | None
    data: str
    problem: str | None = None


def auth_error(what: str, status: int | None) -> BackendError:
    """The error of a 403 (:class:`NotAllowed`) or of a 401 (:class:`BadCredentials`, RFC 9110 §15.5.2)."""
    if status == 403:
        return NotAllowed(
            f"{what}: the CalDAV server answered 403 Forbidden: this account may not do that there "
            "(for example, a calendar shared with it read-only). Nothing was changed"
        )
    return BadCredentials(
        f"{what}: the CalDAV server refused these credentials (401); check CALDAV_USERNAME and CALDAV_PASSWORD"
    )


def translate(exc: Exception, what: str = "a request to the CalDAV server") -> CalDAVToolError | None:
    """The caldav-mcp error for a failure of the ``caldav`` library, lxml or the HTTP layer; None if unknown.

    The one mapping of backend failures (also given to ``install_error_boundary``
    as ``translate=``). Messages name what was being done and never carry a
    password or the server's text.
    """
    if isinstance(exc, CalDAVToolError):
        return exc
    from lxml import etree as lxml_etree  # pyright: ignore[reportAttributeAccessIssue]

    caldav_error = caldav_errors()
    status = getattr(exc, "status", None)
    if isinstance(exc, caldav_error.AuthorizationError):
        return auth_error(what, status if isinstance(status, int) else None)
    if isinstance(exc, caldav_error.NotFoundError):
        return NotFound(f"{what}: the CalDAV server answered 404 Not Found")
    if isinstance(exc, caldav_error.RateLimitError):
        return BackendError(f"{what}: the CalDAV server is busy (429/503 with Retry-After); try again later")
    if isinstance(exc, caldav_error.DAVError):
        code = f" HTTP {status}" if isinstance(status, int) else ""
        return BackendError(f"{what}: the CalDAV server answered with an error ({type(exc).__name__}{code})")
    if isinstance(exc, lxml_etree.XMLSyntaxError):
        return BackendError(f"{what}: the CalDAV server's answer is malformed XML")
    if isinstance(exc, OSError):
        return BackendError(f"{what}: the CalDAV server could not be reached ({type(exc).__name__})")
    return None


@contextlib.contextmanager
def translated(what: str) -> Iterator[None]:
    """Turn library and network failures into this server's errors, prefixed with ``what``."""
    try:
        yield
    except (InvalidInput, NotFound, OutOfScope, PreconditionFailed, Conflict, NotConfigured, NotAllowed):
        raise
    except BackendError as exc:
        # Raised below the library (transport): say what was being done.
        text = str(exc)
        raise type(exc)(text if text.startswith(what) else f"{what}: {text}") from exc
    except Exception as exc:
        mapped = translate(exc, what)
        if mapped is None:
            raise
        raise mapped from exc


def status_error(what: str, status: int) -> Exception:
    """The error of an HTTP error status (RFC 9110 §15): 412, 404/410, 401/403, 409, or any other."""
    if status == 412:
        return PreconditionFailed(
            f"{what}: the entry changed on the server since it was read (412 Precondition Failed). "
            "Nothing was written. Read it again and decide on the current version."
        )
    if status in {404, 410}:
        return NotFound(f"{what}: the CalDAV server answered {status}: it is not there (any more)")
    if status in {401, 403}:
        return auth_error(what, status)
    if status == 409:
        return Conflict(f"{what}: the CalDAV server reported a conflict (409)")
    return BackendError(f"{what}: the CalDAV server answered HTTP {status}")
