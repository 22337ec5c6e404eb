"""The exceptions caldav-mcp raises; each becomes an ``isError`` result the model reads.

The tree::

    CalDAVToolError (ToolError)     base: the message is written for the model and a person
    ├── NotConfigured               CALDAV_URL / CALDAV_USERNAME / CALDAV_PASSWORD missing
    ├── InvalidInput                an argument breaks a rule (the message names the field)
    ├── NotFound                    no such calendar, entry or occurrence
    ├── OutOfScope                  a calendar outside CALDAV_CALENDARS, or not on this server
    ├── PreconditionFailed          412: the entry changed since it was read (never retried)
    ├── Conflict                    the destination already holds this UID, or refuses the entry
    └── BackendError                the CalDAV server failed, could not be reached, or answered
        │                           something refused (too large, too slow, a DTD, another origin)
        ├── BadCredentials          401: the server refused CALDAV_USERNAME / CALDAV_PASSWORD
        └── NotAllowed              403: this account may not do that there (a read-only calendar)

Backend errors are translated into these in one place, :mod:`caldav_mcp.client`.
Messages never contain a password.
"""

from __future__ import annotations

from mcp.server.mcpserver.exceptions import ToolError

__all__ = [
    "BackendError",
    "BadCredentials",
    "CalDAVToolError",
    "Conflict",
    "InvalidInput",
    "NotAllowed",
    "NotConfigured",
    "NotFound",
    "OutOfScope",
    "PreconditionFailed",
]


class CalDAVToolError(ToolError):
    """Base of every error caldav-mcp reports to the caller."""


class NotConfigured(CalDAVToolError):
    """The server was started without the settings a backend call needs."""


class InvalidInput(CalDAVToolError):
    """An argument breaks a rule; the message names the field and the rule."""


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
