"""CardDAV connection settings, read from the environment.

``CARDDAV_URL``, ``CARDDAV_USERNAME`` and ``CARDDAV_PASSWORD`` name the
server and the account (the same names the caldav library uses for CalDAV);
``CARDDAV_ADDRESSBOOKS`` optionally limits the server to some address books.
All are optional at startup: without them the server starts and lists its
tools, and a tool that needs the backend says which variable to set.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from carddav_mcp.errors import NotConfigured

__all__ = ["ADDRESSBOOKS_ENV", "PASSWORD_ENV", "URL_ENV", "USERNAME_ENV", "CardDavSettings"]

URL_ENV = "CARDDAV_URL"
USERNAME_ENV = "CARDDAV_USERNAME"
PASSWORD_ENV = "CARDDAV_PASSWORD"  # noqa: S105 - the variable's name, not a password
ADDRESSBOOKS_ENV = "CARDDAV_ADDRESSBOOKS"


@dataclass(frozen=True)
class CardDavSettings:
    """Where the address books are, and which of them this server may use.

    Attributes:
        url: The CardDAV server, a principal, an address-book home or one
            address book (``https://dav.example.org/``); None when unset.
        username: Account name for HTTP basic auth; None when unset.
        password: Its password; never shown in any text.
        addressbooks: From ``CARDDAV_ADDRESSBOOKS``, comma separated: each
            entry is a book's path (``/willi/work/``) or the last segment of
            it (``work``). Empty: every book the account can see.
        extra_headers: Headers sent with every request, for deployments that
            authenticate at a reverse proxy by header (and the tests' Xandikos).
            Not read from the environment.
        timeout: Seconds for one HTTP request.
    """

    url: str | None = None
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    addressbooks: frozenset[str] = frozenset()
    extra_headers: Mapping[str, str] = field(default_factory=lambda: {}, repr=False)
    timeout: float = 30.0

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> CardDavSettings:
        """Read the ``CARDDAV_*`` variables; empty values count as unset. Never raises."""
        env = os.environ if environ is None else environ
        books = frozenset(entry.strip() for entry in env.get(ADDRESSBOOKS_ENV, "").split(",") if entry.strip())
        return cls(
            url=env.get(URL_ENV) or None,
            username=env.get(USERNAME_ENV) or None,
            password=env.get(PASSWORD_ENV) or None,
            addressbooks=books,
        )

    def require(self) -> str:
        """The URL, once the settings are complete enough to connect.

        Raises:
            NotConfigured: ``CARDDAV_URL`` is unset or not http(s), or a
                username is given without a password (or the reverse).
        """
        if not self.url:
            raise NotConfigured(
                f"carddav-mcp has no address-book server configured: set {URL_ENV} (for example "
                f"https://dav.example.org/), {USERNAME_ENV} and {PASSWORD_ENV} in the server's environment, "
                "then restart it."
            )
        if urlsplit(self.url).scheme not in {"http", "https"}:
            raise NotConfigured(f"{URL_ENV} must be an http:// or https:// URL.")
        if bool(self.username) != bool(self.password):
            missing = PASSWORD_ENV if self.username else USERNAME_ENV
            raise NotConfigured(f"{missing} is not set: set both {USERNAME_ENV} and {PASSWORD_ENV}, or neither.")
        return self.url
