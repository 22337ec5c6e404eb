"""CardDAV connection settings, read from the environment.

``CARDDAV_URL``, ``CARDDAV_USERNAME`` and ``CARDDAV_PASSWORD`` name the
server and the account (the same names the caldav library uses for CalDAV);
``CARDDAV_ADDRESSBOOKS`` optionally limits the server to some address books.
``CARDDAV_TIMEOUT`` (seconds for one whole request) and
``CARDDAV_MAX_RESPONSE_BYTES`` (the largest answer read) bound each request.
``CARDDAV_URL`` over plain ``http://`` to a host that is not this machine
stops the server at start unless ``CARDDAV_ALLOW_PLAINTEXT=true``, so the
credentials never travel in clear by accident.
All are optional at startup: without them the server starts and lists its
tools, and a tool that needs the backend says which variable to set.

``CARDDAV_EMBEDDED``, exactly ``true``, runs the embedded Radicale on
127.0.0.1 instead (:mod:`carddav_mcp.embedded`, the ``embedded`` extra); unset
or exactly ``false`` leaves it off. With it on, ``CARDDAV_URL``,
``CARDDAV_USERNAME`` and ``CARDDAV_PASSWORD`` must be unset (they would be
ignored). ``CARDDAV_EMBEDDED_DIR`` optionally gives the absolute folder for
its data (default: the user's data folder).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from approval_core import SettingsError
from approval_core.serving.backend_url import refuse_plaintext
from carddav_mcp.errors import NotConfigured

__all__ = [
    "ADDRESSBOOKS_ENV",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "DEFAULT_TIMEOUT",
    "EMBEDDED_DIR_ENV",
    "EMBEDDED_ENV",
    "MAX_RESPONSE_BYTES_ENV",
    "PASSWORD_ENV",
    "TIMEOUT_ENV",
    "URL_ENV",
    "USERNAME_ENV",
    "CardDavSettings",
]

URL_ENV = "CARDDAV_URL"
USERNAME_ENV = "CARDDAV_USERNAME"
PASSWORD_ENV = "CARDDAV_PASSWORD"  # noqa: S105 - the variable's name, not a password
ADDRESSBOOKS_ENV = "CARDDAV_ADDRESSBOOKS"
EMBEDDED_ENV = "CARDDAV_EMBEDDED"
EMBEDDED_DIR_ENV = "CARDDAV_EMBEDDED_DIR"
TIMEOUT_ENV = "CARDDAV_TIMEOUT"
MAX_RESPONSE_BYTES_ENV = "CARDDAV_MAX_RESPONSE_BYTES"
DEFAULT_TIMEOUT = 30.0
"""Seconds one request may take, redirects and the whole body included."""
DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024
"""32 MiB: a multiget of 250 cards with 100 KB photos each fits; a 60 MB answer does not."""


def _url_refused(url: str) -> str | None:
    """Why ``url`` is refused at startup, else None; the reason never quotes the value (it may hold a secret).

    Refused: a URL whose host or port cannot be read, user information
    (``user:password@host``), a query (``?``) or a fragment (``#``).
    """
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (a port that is not a number raises here)
    except ValueError:
        return f"{URL_ENV} is not valid: its host or port cannot be read (give an http:// or https:// URL)"
    if "@" in parts.netloc:
        return (
            f"{URL_ENV} must not contain a user name or password (user:password@host): remove them from the URL "
            f"and set {USERNAME_ENV} and {PASSWORD_ENV} instead"
        )
    if parts.query or parts.fragment:
        return f"{URL_ENV} is not valid: it must not have a query (?) or fragment (#); give the server's address only"
    return None


def _number(env: Mapping[str, str], name: str, default: float, low: float, high: float) -> float:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not low <= value <= high:
        raise SettingsError(f"{name}={raw!r} is not valid: give a number from {low:g} to {high:g}")
    return value


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
        timeout: Seconds for one whole request (``CARDDAV_TIMEOUT``, 1 to 600,
            default 30): connecting, redirects and reading the body; a server
            that sends slowly is cut off after it.
        max_response_bytes: The largest answer read, in bytes
            (``CARDDAV_MAX_RESPONSE_BYTES``, 1024 to 1 GiB, default 32 MiB);
            a larger one is refused as it streams in.
        embedded: ``CARDDAV_EMBEDDED=true``: run the embedded Radicale.
        embedded_dir: ``CARDDAV_EMBEDDED_DIR``; None means the default folder.
    """

    url: str | None = None
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    addressbooks: frozenset[str] = frozenset()
    extra_headers: Mapping[str, str] = field(default_factory=lambda: {}, repr=False)
    timeout: float = DEFAULT_TIMEOUT
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    embedded: bool = False
    embedded_dir: Path | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> CardDavSettings:
        """Read the ``CARDDAV_*`` variables; empty values count as unset.

        Raises:
            SettingsError: ``CARDDAV_EMBEDDED`` is neither ``true`` nor
                ``false``, is ``true`` next to a server setting, or
                ``CARDDAV_EMBEDDED_DIR`` is relative or set without it;
                ``CARDDAV_URL`` cannot be read or carries a user name or
                password, a query or a fragment;
                ``CARDDAV_TIMEOUT`` or ``CARDDAV_MAX_RESPONSE_BYTES`` is out of range;
                ``CARDDAV_URL`` is plain ``http://`` to a host that is not loopback without
                ``CARDDAV_ALLOW_PLAINTEXT=true`` (:func:`approval_core.serving.backend_url.refuse_plaintext`).
                (Incomplete server settings are reported by :meth:`require`.)
        """
        env = os.environ if environ is None else environ
        books = frozenset(entry.strip() for entry in env.get(ADDRESSBOOKS_ENV, "").split(",") if entry.strip())
        settings = cls(
            url=env.get(URL_ENV) or None,
            username=env.get(USERNAME_ENV) or None,
            password=env.get(PASSWORD_ENV) or None,
            addressbooks=books,
            timeout=_number(env, TIMEOUT_ENV, DEFAULT_TIMEOUT, 1, 600),
            max_response_bytes=int(_number(env, MAX_RESPONSE_BYTES_ENV, DEFAULT_MAX_RESPONSE_BYTES, 1024, 2**30)),
        )
        if settings.url and (reason := _url_refused(settings.url)):
            raise SettingsError(reason)
        refuse_plaintext(
            "CARDDAV", "CARDDAV_ALLOW_PLAINTEXT", settings.url, env
        )  # plain http:// only to this machine, or when allowed
        flag, folder = env.get(EMBEDDED_ENV), env.get(EMBEDDED_DIR_ENV)
        if flag not in (None, "true", "false"):
            raise SettingsError(f"{EMBEDDED_ENV}={flag!r} is not valid: set it to exactly true or false")
        if flag != "true":
            if folder is not None:
                raise SettingsError(f"{EMBEDDED_DIR_ENV} is set but {EMBEDDED_ENV} is not true: set both, or neither")
            return settings
        given = [
            name
            for name, value in (
                (URL_ENV, settings.url),
                (USERNAME_ENV, settings.username),
                (PASSWORD_ENV, settings.password),
            )
            if value
        ]
        if given:
            raise SettingsError(
                f"{EMBEDDED_ENV}=true runs its own address-book server, so {', '.join(given)} would be ignored: "
                f"leave {'it' if len(given) == 1 else 'them'} unset, or set {EMBEDDED_ENV}=false to use that server"
            )
        if folder is not None and not Path(folder).is_absolute():
            raise SettingsError(f"{EMBEDDED_DIR_ENV}={folder!r} is not valid: give an absolute folder path")
        return dataclasses.replace(settings, embedded=True, embedded_dir=Path(folder) if folder is not None else None)

    def require(self) -> str:
        """The URL, once the settings are complete enough to connect.

        Raises:
            NotConfigured: ``CARDDAV_URL`` is unset, not http(s) or carries
                user information (``user:password@``), or a
                username is given without a password (or the reverse).
        """
        if not self.url:
            raise NotConfigured(
                f"carddav-mcp has no address-book server configured: set {URL_ENV} (for example "
                f"https://dav.example.org/), {USERNAME_ENV} and {PASSWORD_ENV} in the server's environment, "
                f"then restart it; or, with no CardDAV server, set {EMBEDDED_ENV}=true for address books kept on "
                "this machine."
            )
        if reason := _url_refused(self.url):
            raise NotConfigured(reason + ".")
        if urlsplit(self.url).scheme not in {"http", "https"}:
            raise NotConfigured(f"{URL_ENV} must be an http:// or https:// URL.")
        if bool(self.username) != bool(self.password):
            missing = PASSWORD_ENV if self.username else USERNAME_ENV
            raise NotConfigured(f"{missing} is not set: set both {USERNAME_ENV} and {PASSWORD_ENV}, or neither.")
        return self.url
