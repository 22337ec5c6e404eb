"""How a server built on the layer names itself, its settings and its errors (one :class:`Profile` per server)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, fields

from webdav_core.errors import Errors
from webdav_core.xml import CALDAV, CARDDAV

__all__ = ["CALDAV_DIALECT", "CARDDAV_DIALECT", "BeforeSend", "Dialect", "Profile"]

BeforeSend = Callable[[str, str, "bytes | str | None", Mapping[str, str]], Awaitable[None]]
"""``(method, url, body, headers)`` of a request about to be sent; may raise to stop it (the family's
``approval_core.before_send``: APPROVAL_PROFILE=every-write asks before a changing request)."""


@dataclass(frozen=True)
class Dialect:
    """What the RFC of one kind of DAV server says, and how a message names its things.

    Attributes:
        server: The kind of server, as a message names it (``"CardDAV server"``).
        item: What one stored resource is called (``"card"``, ``"entry"``).
        data_name: The format of its data (``"vCard"``, ``"iCalendar data"``).
        data_preconditions: Precondition elements that say the data itself was refused.
        collections: What the collections are called, plural (``"address books"``).
        home_name: What the home set is called (``"address-book home"``).
        home_set: The (namespace, name) of the principal's home-set property.
        well_known: The RFC 6764 §5 well-known path.
        collection_type: The (namespace, name) of the resource type of one collection.
        data_types: The media types a GET of one item may answer with (lower case).
    """

    server: str
    item: str
    data_name: str
    data_preconditions: tuple[str, ...]
    collections: str
    home_name: str
    home_set: tuple[str, str]
    well_known: str
    collection_type: tuple[str, str]
    data_types: frozenset[str]


CALDAV_DIALECT = Dialect(
    "CalDAV server",
    "entry",
    "iCalendar data",
    ("valid-calendar-data", "supported-calendar-data", "valid-calendar-object-resource"),  # RFC 4791 §5.3.2.1
    "calendars",
    "calendar-home",
    (CALDAV, "calendar-home-set"),  # RFC 4791 §6.2.1
    "/.well-known/caldav",  # RFC 6764 §5
    (CALDAV, "calendar"),  # RFC 4791 §4.2
    frozenset({"text/calendar", "text/plain", "application/octet-stream"}),  # RFC 5545 §8.1, and as servers label it
)
"""CalDAV (RFC 4791)."""

CARDDAV_DIALECT = Dialect(
    "CardDAV server",
    "card",
    "vCard",
    ("valid-address-data", "supported-address-data"),  # RFC 6352 §6.3.2.1
    "address books",
    "address-book home",
    (CARDDAV, "addressbook-home-set"),  # RFC 6352 §7.1.1
    "/.well-known/carddav",  # RFC 6764 §5
    (CARDDAV, "addressbook"),  # RFC 6352 §5.2
    frozenset({"text/vcard", "text/x-vcard", "text/directory"}),  # RFC 6350 §10.1, vCard 3 and 2.1 names
)
"""CardDAV (RFC 6352)."""


@dataclass(frozen=True)
class Profile(Dialect):
    """The words and classes the layer speaks in for one server: its :class:`Dialect`, and its own names.

    Every message the layer writes names the server and the setting to change
    (``CARDDAV_TIMEOUT``, ``CARDDAV_URL``), never a credential. Built with
    :meth:`of` from a dialect; the dialect's attributes are inherited.

    Attributes:
        program: The program's name (``"carddav-mcp"``).
        url_setting: The setting holding the server's URL (``"CARDDAV_URL"``).
        credential_settings: The settings holding the credentials, as a phrase.
        timeout_setting: The setting of the deadline of one exchange, in seconds.
        size_setting: The setting of the largest answer read, in bytes.
        errors: The exception classes to raise.
        before_send: Awaited with each request before it is sent, before its deadline starts, and again
            for each redirect it follows; None for none.
        quote: Quotes a caller's or the server's value (a path, a media type) in an error's text: ``repr``
            by default; the family's ``approval_core.serving.stored_text.quoted_name`` fences one that is
            not of a plain name's shape.
        name: Shows a server's value (a media type) unquoted in an error's text: as it is by default; the
            family's ``approval_core.serving.stored_text.name_in_text`` fences one not of a plain name's shape.
    """

    program: str
    url_setting: str
    credential_settings: str
    timeout_setting: str
    size_setting: str
    errors: Errors = field(default_factory=Errors)
    before_send: BeforeSend | None = None
    quote: Callable[[str], str] = repr
    name: Callable[[str], str] = str

    @classmethod
    def of(
        cls,
        dialect: Dialect,
        *,
        program: str,
        prefix: str,
        errors: Errors,
        before_send: BeforeSend | None = None,
        quote: Callable[[str], str] = repr,
        name: Callable[[str], str] = str,
    ) -> Profile:
        """A server's profile: its dialect, program name, settings' prefix, errors, request hook and quoting.

        The hook is awaited with every request before it is sent (``approval_core.before_send``).

        The settings are the family's: ``<prefix>_URL``, ``<prefix>_USERNAME`` and
        ``<prefix>_PASSWORD``, ``<prefix>_TIMEOUT`` (seconds), ``<prefix>_MAX_RESPONSE_BYTES``.
        """
        inherited = {f.name: getattr(dialect, f.name) for f in fields(Dialect)}
        return cls(
            **inherited,
            program=program,
            url_setting=f"{prefix}_URL",
            credential_settings=f"{prefix}_USERNAME and {prefix}_PASSWORD",
            timeout_setting=f"{prefix}_TIMEOUT",
            size_setting=f"{prefix}_MAX_RESPONSE_BYTES",
            errors=errors,
            before_send=before_send,
            quote=quote,
            name=name,
        )
