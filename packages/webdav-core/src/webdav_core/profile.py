"""How a server built on the layer names itself, its settings and its errors (one :class:`Profile` per server)."""

from __future__ import annotations

from dataclasses import dataclass, field

from webdav_core.errors import Errors

__all__ = ["Profile"]


@dataclass(frozen=True)
class Profile:
    """The words and classes the layer speaks in for one server.

    Every message the layer writes names the server and the setting to change
    (``CARDDAV_TIMEOUT``, ``CARDDAV_URL``), never a credential.

    Attributes:
        server: The kind of server, as a message names it (``"CardDAV server"``).
        program: The program's name (``"carddav-mcp"``).
        url_setting: The setting holding the server's URL (``"CARDDAV_URL"``).
        credential_settings: The settings holding the credentials, as a phrase.
        timeout_setting: The setting of the deadline of one exchange, in seconds.
        size_setting: The setting of the largest answer read, in bytes.
        item: What one stored resource is called (``"card"``, ``"entry"``).
        data_name: The format of its data (``"vCard"``, ``"iCalendar data"``).
        data_preconditions: Precondition elements that say the data itself was refused
            (RFC 6352 §6.3.2.1 ``valid-address-data``; RFC 4791 §5.3.2.1 ``valid-calendar-data``).
        collections: What the collections are called, plural (``"address books"``).
        home_name: What the home set is called (``"address-book home"``).
        home_set: The (namespace, name) of the principal's home-set property
            (RFC 6352 §7.1.1 ``addressbook-home-set``, RFC 4791 §6.2.1 ``calendar-home-set``).
        well_known: The RFC 6764 §5 well-known path (``/.well-known/carddav``).
        collection_type: The (namespace, name) of the resource type of one collection
            (RFC 6352 §5.2 ``addressbook``, RFC 4791 §4.2 ``calendar``).
        data_types: The media types a GET of one item may answer with (lower case),
            besides XML (``text/vcard``; ``text/calendar``).
        errors: The exception classes to raise.
    """

    server: str
    program: str
    url_setting: str
    credential_settings: str
    timeout_setting: str
    size_setting: str
    item: str
    data_name: str
    data_preconditions: tuple[str, ...]
    collections: str
    home_name: str
    home_set: tuple[str, str]
    well_known: str
    collection_type: tuple[str, str]
    data_types: frozenset[str]
    errors: Errors = field(default_factory=Errors)
