"""The errors of the WebDAV layer, and the one translation of HTTP statuses into a server's errors.

The layer raises the exception classes a server names in its
:class:`~webdav_core.profile.Profile` (``Profile.errors``), so a tool sees its
own server's errors and nothing from httpx. Used alone (tests, a new server
before it has its own tree), it raises these defaults::

    DavError                    .status: the HTTP status, or None when there was no answer
    ├── InvalidId               an id or href breaks a path rule (.field, .rule)
    ├── OffOrigin               a path, URL or redirect leads off the configured origin (nothing sent)
    └── BackendError            the server answered badly, or not at all
        ├── Unreachable         no connection, or no whole answer within the deadline
        ├── TooLarge            an answer larger than the size limit (not read past it)
        ├── Unauthenticated     401
        ├── Forbidden           403
        ├── NotFound            404 / 410
        ├── PreconditionFailed  412 without a precondition element naming the data
        ├── Conflict            409, or a UID conflict
        └── Rejected            400 / 415 / 422, or 412 naming a data precondition

:func:`webdav_core.statuses.raise_for_status` is the one mapping of an error
status (RFC 9110 §15) to one of these kinds.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "BackendError",
    "Conflict",
    "DavError",
    "Errors",
    "Forbidden",
    "InvalidId",
    "NotFound",
    "OffOrigin",
    "PreconditionFailed",
    "Rejected",
    "TooLarge",
    "Unauthenticated",
    "Unreachable",
    "errors_of",
]

ERROR_BODY_BYTES = 65_536
"""How much of an error answer is read (for its precondition element); the rest is dropped."""


class DavError(Exception):
    """Base of the layer's default errors.

    Args:
        message: What failed, written for a model and a person.
        status: The HTTP status, or None when there was no answer.
    """

    def __init__(self, message: str, status: int | None = None) -> None:
        self.status = status
        super().__init__(message)


class InvalidId(DavError):
    """An id or href that breaks a path rule.

    Args:
        field: The argument at fault.
        rule: What the argument must be, and why this one is not.
    """

    def __init__(self, field: str, rule: str) -> None:
        self.field = field
        self.rule = rule
        super().__init__(f"{field}: {rule}")


class OffOrigin(DavError):
    """A path or URL would lead a request off the configured origin; nothing was sent."""


class BackendError(DavError):
    """The server refused or failed a request."""


class Unreachable(BackendError):
    """No answer (connection refused, DNS, deadline passed)."""


class TooLarge(BackendError):
    """The answer is larger than the size limit; reading stopped there."""


class Unauthenticated(BackendError):
    """401: the credentials were not accepted."""


class Forbidden(BackendError):
    """403: the credentials are good; the action is not allowed there."""


class NotFound(BackendError):
    """404 or 410."""


class PreconditionFailed(BackendError):
    """412: the resource changed since it was read (never retried)."""


class Conflict(BackendError):
    """409, or a UID conflict."""


class Rejected(BackendError):
    """The server refused the data itself (400, 415, 422, or a data precondition)."""


@dataclass(frozen=True)
class Errors:
    """The exception classes the layer raises, one per kind; a server gives its own.

    Each class is called as ``cls(message, status)`` (``status`` an int or
    None), except ``off_origin`` (``cls(message)``) and ``invalid_id``
    (``cls(field, rule)``).
    """

    invalid_id: type[Exception] = InvalidId
    off_origin: type[Exception] = OffOrigin
    backend: type[Exception] = BackendError
    unreachable: type[Exception] = Unreachable
    too_large: type[Exception] = TooLarge
    unauthenticated: type[Exception] = Unauthenticated
    forbidden: type[Exception] = Forbidden
    not_found: type[Exception] = NotFound
    precondition_failed: type[Exception] = PreconditionFailed
    conflict: type[Exception] = Conflict
    rejected: type[Exception] = Rejected


_DEFAULT_NAMES = {
    "invalid_id": "InvalidId",
    "off_origin": "OffOrigin",
    "backend": "BackendError",
    "unreachable": "Unreachable",
    "too_large": "TooLarge",
    "unauthenticated": "Unauthenticated",
    "forbidden": "Forbidden",
    "not_found": "NotFound",
    "precondition_failed": "PreconditionFailed",
    "conflict": "Conflict",
    "rejected": "Rejected",
}


def errors_of(module: object, **renamed: type[Exception]) -> Errors:
    """A server's :class:`Errors`: each kind the class of ``module`` with the layer's name, unless ``renamed``.

    ``errors_of(caldav_mcp.errors, unauthenticated=BadCredentials, forbidden=NotAllowed)`` takes
    ``caldav_mcp.errors.InvalidId``, ``.OffOrigin``, ``.BackendError`` ... and the two named.

    Raises:
        AttributeError: ``module`` has no class of a kind's name, and it was not given.
    """
    chosen = {kind: renamed.get(kind) or getattr(module, name) for kind, name in _DEFAULT_NAMES.items()}
    return Errors(**chosen)
