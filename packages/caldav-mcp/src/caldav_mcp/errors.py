"""The exceptions caldav-mcp raises; each becomes an ``isError`` result the model reads.

The tree::

    CalDAVToolError (ToolError)     base: the message is written for the model and a person
    ├── NotConfigured               CALDAV_URL / CALDAV_USERNAME / CALDAV_PASSWORD missing
    ├── InvalidInput                an argument breaks a rule (the message names the field)
    │   └── InvalidId               an id or href breaks a path rule (webdav_core.paths; .field, .rule)
    ├── NotFound                    no such calendar, entry or occurrence
    ├── OutOfScope                  a calendar outside CALDAV_CALENDARS, or not on this server
    ├── PreconditionFailed          412: the entry changed since it was read (never retried)
    ├── Conflict                    the destination already holds this UID, or refuses the entry
    └── BackendError                the CalDAV server failed, could not be reached, or answered
        │                           something refused (too large, too slow, a DTD, another origin)
        ├── BadCredentials          401: the server refused CALDAV_USERNAME / CALDAV_PASSWORD
        ├── NotAllowed              403: this account may not do that there (a read-only calendar)
        ├── OffOrigin               a path or URL off CALDAV_URL's origin (nothing was sent)
        ├── Unreachable             no connection, or no whole answer within CALDAV_TIMEOUT
        ├── TooLarge                an answer larger than CALDAV_MAX_RESPONSE_BYTES
        └── Rejected                the server refused the iCalendar data (400, 415, 422, valid-calendar-data)

The WebDAV layer (:mod:`webdav_core`) raises these, named in caldav-mcp's
``Profile`` (:data:`caldav_mcp.wire.PROFILE`): HTTP statuses become them in
one place, :func:`webdav_core.statuses.raise_for_status`. Messages never
contain a password.
"""

from __future__ import annotations

from mcp.server.mcpserver.exceptions import ToolError

__all__ = [
    "BackendError",
    "BadCredentials",
    "CalDAVToolError",
    "Conflict",
    "InvalidId",
    "InvalidInput",
    "NotAllowed",
    "NotConfigured",
    "NotFound",
    "OffOrigin",
    "OutOfScope",
    "PreconditionFailed",
    "Rejected",
    "TooLarge",
    "Unreachable",
]


class CalDAVToolError(ToolError):
    """Base of every error caldav-mcp reports to the caller.

    Args:
        message: What failed, written for the model and a person.
        status: The HTTP status behind it, or None.
    """

    def __init__(self, message: str, status: int | None = None) -> None:
        self.status = status
        super().__init__(message)


class NotConfigured(CalDAVToolError):
    """The server was started without the settings a backend call needs."""


class InvalidInput(CalDAVToolError):
    """An argument breaks a rule; the message names the field and the rule."""


class InvalidId(InvalidInput):
    """An id or href that breaks a path rule of :func:`webdav_core.paths.resolve_path`.

    Args:
        field: The argument at fault.
        rule: What it must be, and why this one is not.
    """

    def __init__(self, field: str, rule: str) -> None:
        self.field = field
        self.rule = rule
        super().__init__(f"{field}: {rule}; give the id exactly as list_calendars (or the listing tool) returned it")


class NotFound(CalDAVToolError):
    """No such calendar, entry or occurrence."""


class OutOfScope(CalDAVToolError):
    """The calendar is outside ``CALDAV_CALENDARS`` or not one of this account's calendars."""


class PreconditionFailed(CalDAVToolError):
    """HTTP 412: the entry changed since it was read (RFC 9110 §13.1.1); it is never retried."""


class Conflict(CalDAVToolError):
    """The destination refuses the entry (same UID already there, component not supported)."""


class BackendError(CalDAVToolError):
    """The CalDAV server failed, answered something unexpected, or could not be reached."""


class BadCredentials(BackendError):
    """HTTP 401: the server did not accept the account (RFC 9110 §15.5.2)."""


class NotAllowed(BackendError):
    """HTTP 403: the account is known but may not do this here (RFC 9110 §15.5.4), e.g. a read-only calendar."""


class OffOrigin(BackendError):
    """A path or URL (or a redirect) would leave CALDAV_URL's origin; nothing was sent there."""


class Unreachable(BackendError):
    """No connection, a connection closed, or no whole answer within ``CALDAV_TIMEOUT``."""


class TooLarge(BackendError):
    """An answer larger than ``CALDAV_MAX_RESPONSE_BYTES``; it was not read past the limit."""


class Rejected(BackendError):
    """The server refused the iCalendar data itself (400, 415, 422, or RFC 4791 §5.3.2.1 valid-calendar-data)."""
