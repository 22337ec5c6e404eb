"""caldav-mcp's own settings, read from the environment.

``CALDAV_URL``
    A server root, a principal or a calendar collection (http or https).
    Discovery follows RFC 6764 (``/.well-known/caldav``) and RFC 4791 §6.2
    (``calendar-home-set``).
``CALDAV_USERNAME`` / ``CALDAV_PASSWORD``
    HTTP credentials (Basic or Digest, as the server asks).
``CALDAV_CALENDARS``
    Optional comma-separated list of calendar names or collection paths; when
    set, every other calendar is invisible to every tool.

The server starts and lists its tools without any of them; a tool that needs
the backend then says what to set. A malformed value is an error at startup.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from approval_core import SettingsError

__all__ = ["CalDAVSettings"]


@dataclass(frozen=True, slots=True)
class CalDAVSettings:
    """Where the calendars are and which of them this server may touch.

    Attributes:
        url: ``CALDAV_URL`` or None.
        username: ``CALDAV_USERNAME`` or None.
        password: ``CALDAV_PASSWORD`` or None (never logged or echoed).
        calendars: Names or paths from ``CALDAV_CALENDARS``; empty = all.
    """

    url: str | None = None
    username: str | None = None
    password: str | None = None
    calendars: tuple[str, ...] = ()

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> CalDAVSettings:
        """Read the settings.

        Raises:
            SettingsError: ``CALDAV_URL`` is not an http(s) URL, or
                ``CALDAV_CALENDARS`` lists an empty name.
        """
        env = os.environ if environ is None else environ
        url = env.get("CALDAV_URL") or None
        if url is not None:
            parts = urlsplit(url)
            if parts.scheme not in {"http", "https"} or not parts.hostname:
                raise SettingsError(f"CALDAV_URL={url!r} is not valid: give an http:// or https:// URL with a host")
        calendars: tuple[str, ...] = ()
        raw = env.get("CALDAV_CALENDARS")
        if raw is not None and raw.strip():
            calendars = tuple(part.strip() for part in raw.split(","))
            if any(not part for part in calendars):
                raise SettingsError("CALDAV_CALENDARS has an empty entry: give comma-separated calendar names or paths")
        return cls(url, env.get("CALDAV_USERNAME") or None, env.get("CALDAV_PASSWORD") or None, calendars)

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
