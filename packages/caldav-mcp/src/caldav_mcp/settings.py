"""caldav-mcp's own settings, read from the environment.

``CALDAV_URL``
    A server root, a principal or a calendar collection (http or https).
    Discovery follows RFC 6764 (``/.well-known/caldav``) and RFC 4791 §6.2
    (``calendar-home-set``). Its scheme, host and port are the one origin
    this server ever sends a request (or a credential) to. It may not carry
    a user name or password (``http://user:pw@host/``): those go in
    ``CALDAV_USERNAME`` / ``CALDAV_PASSWORD``, which are never echoed. Nor
    may it have a query (``?``) or fragment (``#``). A refused value is
    never echoed either (it may hold a secret).
``CALDAV_ALLOW_PLAINTEXT``
    Exactly ``true`` lets ``CALDAV_URL`` be plain ``http://`` to a host that is
    not this machine; unset or ``false``, such a URL stops the server at start,
    so the credentials never travel in clear by accident.
``CALDAV_USERNAME`` / ``CALDAV_PASSWORD``
    HTTP credentials (Basic or Digest, as the server asks).
``CALDAV_CALENDARS``
    Optional comma-separated list of calendar names or collection paths; when
    set, every other calendar is invisible to every tool.
``CALDAV_TIMEOUT``
    Seconds, 1 to 600 (default 30): how long one backend request may take in
    all: connecting, the status line and headers, the whole body, redirects
    and authentication round trips (a server that drips bytes is cut off).
``CALDAV_MAX_RESPONSE_BYTES``
    Bytes, 65536 to 1073741824 (default 33554432, 32 MiB): the largest
    backend answer read (after decompression); a larger one is refused.
``CALDAV_EMBEDDED``
    Exactly ``true``: run the embedded Radicale on 127.0.0.1 instead of
    connecting to a server (:mod:`caldav_mcp.embedded`; the ``embedded`` extra).
    Unset or exactly ``false``: off. ``CALDAV_URL``, ``CALDAV_USERNAME`` and
    ``CALDAV_PASSWORD`` must then be unset, since they would be ignored.
``CALDAV_EMBEDDED_DIR``
    Optional absolute folder for the embedded calendars (default: the user's
    data folder); only with ``CALDAV_EMBEDDED=true``.

The server starts and lists its tools without any of them; a tool that needs
the backend then says what to set. A malformed value is an error at startup.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from approval_core import SettingsError
from approval_core.serving.backend_url import refuse_plaintext

__all__ = ["DEFAULT_MAX_RESPONSE_BYTES", "DEFAULT_TIMEOUT", "CalDAVSettings"]

DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024
_TIMEOUT_RANGE = (1, 600)
_USERINFO = (
    "CALDAV_URL carries a user name or password (user:password@host): remove them from the URL "
    "and set CALDAV_USERNAME and CALDAV_PASSWORD instead"
)
_MAX_BYTES_RANGE = (64 * 1024, 1024 * 1024 * 1024)


def _url_refused(url: str) -> str | None:
    """Why ``CALDAV_URL`` is refused, or None; the reason never quotes the value (it may hold a secret)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (a port that is not a number raises here)
    except ValueError:
        return "CALDAV_URL is not valid: its host or port cannot be read (give an http:// or https:// URL)"
    if "@" in parts.netloc:
        return _USERINFO
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        return "CALDAV_URL is not valid: give an http:// or https:// URL with a host"
    if parts.query or parts.fragment:
        return "CALDAV_URL is not valid: it must not have a query (?) or fragment (#); give the server's address only"
    return None


@dataclass(frozen=True, slots=True)
class CalDAVSettings:
    """Where the calendars are and which of them this server may touch.

    Attributes:
        url: ``CALDAV_URL`` or None.
        username: ``CALDAV_USERNAME`` or None.
        password: ``CALDAV_PASSWORD`` or None (never logged or echoed).
        calendars: Names or paths from ``CALDAV_CALENDARS``; empty = all.
        embedded: ``CALDAV_EMBEDDED=true``: start the embedded Radicale.
        embedded_dir: ``CALDAV_EMBEDDED_DIR`` or None (the default folder).
        timeout: ``CALDAV_TIMEOUT`` in seconds.
        max_response_bytes: ``CALDAV_MAX_RESPONSE_BYTES``.
    """

    url: str | None = None
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    calendars: tuple[str, ...] = ()
    embedded: bool = False
    embedded_dir: Path | None = None
    timeout: float = DEFAULT_TIMEOUT
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> CalDAVSettings:
        """Read the settings.

        Raises:
            SettingsError: ``CALDAV_URL`` is not an http(s) URL, carries
                a user name or password, a query or a fragment, ``CALDAV_TIMEOUT`` or
                ``CALDAV_MAX_RESPONSE_BYTES`` is not a whole number in range,
                ``CALDAV_CALENDARS`` lists an empty name, ``CALDAV_EMBEDDED``
                is neither ``true`` nor ``false``, it is ``true`` alongside a
                server setting, or ``CALDAV_EMBEDDED_DIR`` is relative or set
                without it; ``CALDAV_URL`` is plain ``http://`` to a host that
                is not loopback without ``CALDAV_ALLOW_PLAINTEXT=true``
                (:func:`approval_core.serving.backend_url.refuse_plaintext`).
        """
        env = os.environ if environ is None else environ
        url = env.get("CALDAV_URL") or None
        if url is not None and (reason := _url_refused(url)):
            raise SettingsError(reason)
        refuse_plaintext(
            "CALDAV", "CALDAV_ALLOW_PLAINTEXT", url, env
        )  # plain http:// only to this machine, or CALDAV_ALLOW_PLAINTEXT=true
        calendars: tuple[str, ...] = ()
        raw = env.get("CALDAV_CALENDARS")
        if raw is not None and raw.strip():
            calendars = tuple(part.strip() for part in raw.split(","))
            if any(not part for part in calendars):
                raise SettingsError("CALDAV_CALENDARS has an empty entry: give comma-separated calendar names or paths")
        username, password = env.get("CALDAV_USERNAME") or None, env.get("CALDAV_PASSWORD") or None
        server = {"CALDAV_URL": url, "CALDAV_USERNAME": username, "CALDAV_PASSWORD": password}
        embedded, embedded_dir = _embedded(env, server)
        timeout = _whole(env, "CALDAV_TIMEOUT", DEFAULT_TIMEOUT, _TIMEOUT_RANGE, "seconds")
        max_bytes = _whole(env, "CALDAV_MAX_RESPONSE_BYTES", DEFAULT_MAX_RESPONSE_BYTES, _MAX_BYTES_RANGE, "bytes")
        return cls(url, username, password, calendars, embedded, embedded_dir, float(timeout), int(max_bytes))

    def __post_init__(self) -> None:
        if self.url is not None and (reason := _url_refused(self.url)):
            raise SettingsError(reason)

    def missing(self) -> list[str]:
        """The names of the variables a backend call still needs."""
        return [
            name
            for name, value in (
                ("CALDAV_URL", self.url),
                ("CALDAV_USERNAME", self.username),
                ("CALDAV_PASSWORD", self.password),
            )
            if not value
        ]


def _whole(env: Mapping[str, str], name: str, default: float, bounds: tuple[int, int], unit: str) -> float:
    """A whole-number setting within ``bounds`` (inclusive), or ``default`` when unset."""
    raw = env.get(name)
    if raw is None:
        return default
    low, high = bounds
    if not raw.strip().isdigit() or not low <= int(raw) <= high:
        raise SettingsError(f"{name}={raw!r} is not valid: give a whole number of {unit} from {low} to {high}")
    return int(raw)


def _embedded(env: Mapping[str, str], server: Mapping[str, str | None]) -> tuple[bool, Path | None]:
    """``CALDAV_EMBEDDED`` and ``CALDAV_EMBEDDED_DIR``, checked against each other and the server settings."""
    raw = env.get("CALDAV_EMBEDDED")
    if raw not in (None, "true", "false"):
        raise SettingsError(f"CALDAV_EMBEDDED={raw!r} is not valid: set it to exactly true or false")
    embedded = raw == "true"
    raw_dir = env.get("CALDAV_EMBEDDED_DIR")
    if raw_dir is not None and not embedded:
        raise SettingsError("CALDAV_EMBEDDED_DIR is set but CALDAV_EMBEDDED is not true: set both, or neither")
    if embedded:
        clashing = [name for name, value in server.items() if value]
        if clashing:
            raise SettingsError(
                f"CALDAV_EMBEDDED=true runs its own calendar server, so {', '.join(clashing)} would be ignored: "
                f"leave {'it' if len(clashing) == 1 else 'them'} unset, or set CALDAV_EMBEDDED=false to use that server"
            )
    if raw_dir is None:
        return embedded, None
    folder = Path(raw_dir)
    if not folder.is_absolute():
        raise SettingsError(f"CALDAV_EMBEDDED_DIR={raw_dir!r} is not valid: give an absolute folder path")
    return embedded, folder
