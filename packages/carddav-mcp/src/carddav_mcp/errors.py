"""The exceptions of carddav-mcp.

Every error a tool raises derives from :class:`CardDavError`, itself an MCP
``ToolError``, so its text reaches the model as an ``isError`` result::

    ToolError (mcp SDK)
    └── CardDavError
        ├── NotConfigured          CARDDAV_URL / CARDDAV_USERNAME / CARDDAV_PASSWORD missing
        ├── InvalidInput           a field of the call breaks a rule (names the field)
        ├── NotAllowed             outside CARDDAV_ADDRESSBOOKS / the account's home, or a contact tool on a group
        │   └── OffOrigin          a path or URL that leads off CARDDAV_URL's scheme, host and port (nothing sent)
        └── BackendError           the CardDAV server answered badly (translated in client.py)
            ├── Unreachable        no connection, or no whole answer within CARDDAV_TIMEOUT
            ├── ResponseTooLarge   an answer larger than CARDDAV_MAX_RESPONSE_BYTES (not read past it)
            ├── AuthenticationFailed   401: bad credentials
            ├── Forbidden          403: the credentials are good, the action is not allowed there
            ├── NotFound           404 / 410
            ├── PreconditionFailed 412: the card changed since it was read (never retried)
            ├── Conflict           409 / a card with that UID exists already
            └── CardRejected       400 / 415 / Xandikos' valid-address-data: the server refused the vCard

Error texts are written for a model and a person: what failed, which field,
what to do. They never carry a password or a header value.
"""

from __future__ import annotations

from mcp.server.mcpserver.exceptions import ToolError

__all__ = [
    "AuthenticationFailed",
    "BackendError",
    "CardDavError",
    "CardRejected",
    "Conflict",
    "Forbidden",
    "InvalidInput",
    "NotAllowed",
    "NotConfigured",
    "NotFound",
    "OffOrigin",
    "PreconditionFailed",
    "ResponseTooLarge",
    "Unreachable",
]


class CardDavError(ToolError):
    """Base of every carddav-mcp error; its text is shown to the model."""


class NotConfigured(CardDavError):
    """The server was started without the CardDAV settings a tool needs."""


class InvalidInput(CardDavError):
    """A field of the call breaks a rule.

    Args:
        field: The argument (or ``argument.sub_field``) at fault.
        rule: What the rule is, in a sentence.
    """

    def __init__(self, field: str, rule: str) -> None:
        self.field = field
        self.rule = rule
        super().__init__(f"{field}: {rule}")


class NotAllowed(CardDavError):
    """The call names something this server may not touch."""


class OffOrigin(NotAllowed):
    """A path or URL would lead a request off the configured server; nothing was sent."""


class BackendError(CardDavError):
    """The CardDAV server refused or failed a request.

    Attributes:
        status: The HTTP status, or None when there was no answer.
    """

    def __init__(self, message: str, status: int | None = None) -> None:
        self.status = status
        super().__init__(message)


class Unreachable(BackendError):
    """No answer from the CardDAV server (connection refused, DNS, timeout)."""


class ResponseTooLarge(BackendError):
    """The server's answer is larger than ``CARDDAV_MAX_RESPONSE_BYTES``; reading stopped there."""


class AuthenticationFailed(BackendError):
    """401: the username or password was not accepted."""


class Forbidden(BackendError):
    """403: the account may not read or write there."""


class NotFound(BackendError):
    """404 or 410: no such address book or card (any more)."""


class PreconditionFailed(BackendError):
    """412: the card changed on the server since it was read; nothing was written."""


class Conflict(BackendError):
    """409, or a card with the same UID already exists at the destination."""


class CardRejected(BackendError):
    """The server refused the vCard itself (400, 415, or a CardDAV precondition)."""
