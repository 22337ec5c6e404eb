"""ntfy-mcp's own settings, read strictly from the environment at startup.

``NTFY_URL``
    Base URL of the ntfy server, ``http://`` or ``https://``. Required: there
    is no default, so nothing is sent to a public server by accident.
``NTFY_TOKEN``
    An ntfy access token (``tk_...``), sent as ``Authorization: Bearer``.
``NTFY_USERNAME`` / ``NTFY_PASSWORD``
    Basic auth instead of a token; both or neither, and never together with
    ``NTFY_TOKEN``. Without any of them the server works anonymously.
``NTFY_TOPICS``
    Comma-separated topic names; the first is the default topic. When set,
    this server publishes and reads only these topics, and refuses to grant
    access rules for any other topic or for a wildcard pattern.
``NTFY_TIMEOUT``
    Seconds one HTTP request to ntfy may take, 1 to 120 (default 15).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from ntfy_mcp.errors import ConfigError

__all__ = ["TOPIC_PATTERN", "NtfySettings"]

TOPIC_PATTERN = re.compile(r"^[-_A-Za-z0-9]{1,64}$")
"""A topic name (ntfy docs, "Publishing": letters, digits, ``-`` and ``_``, 1 to 64)."""

DEFAULT_TIMEOUT = 15.0


@dataclass(frozen=True, slots=True)
class NtfySettings:
    """Where the ntfy server is and how to authenticate to it.

    Attributes:
        url: Base URL without a trailing slash.
        token: Access token, or None.
        username: Basic-auth user, or None.
        password: Basic-auth password, or None (never logged or shown).
        topics: The allowed topics, first is the default; empty = unbounded.
        timeout: Seconds per HTTP request.
    """

    url: str
    token: str | None = None
    username: str | None = None
    password: str | None = None
    topics: tuple[str, ...] = ()
    timeout: float = DEFAULT_TIMEOUT

    def __repr__(self) -> str:
        auth = "token" if self.token else "basic" if self.username else "anonymous"
        return f"NtfySettings(url={self.url!r}, auth={auth}, topics={self.topics!r}, timeout={self.timeout:g})"

    @property
    def default_topic(self) -> str | None:
        """The first of ``NTFY_TOPICS``, or None when it is not set."""
        return self.topics[0] if self.topics else None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> NtfySettings:
        """Read and check the ``NTFY_*`` variables (see the module docstring).

        Raises:
            ConfigError: ``NTFY_URL`` is missing or not an http(s) URL, a token
                is given together with a username/password, only one of
                username and password is given, a topic in ``NTFY_TOPICS`` is
                not a valid name, or ``NTFY_TIMEOUT`` is out of range.
        """
        env = os.environ if environ is None else environ
        url = _url(env.get("NTFY_URL"))
        token = env.get("NTFY_TOKEN") or None
        username = env.get("NTFY_USERNAME") or None
        password = env.get("NTFY_PASSWORD") or None
        if token and (username or password):
            raise ConfigError("set either NTFY_TOKEN or NTFY_USERNAME/NTFY_PASSWORD, not both")
        if bool(username) != bool(password):
            raise ConfigError("NTFY_USERNAME and NTFY_PASSWORD go together: set both or neither")
        return cls(
            url=url,
            token=token,
            username=username,
            password=password,
            topics=_topics(env.get("NTFY_TOPICS")),
            timeout=_timeout(env.get("NTFY_TIMEOUT")),
        )


def _url(raw: str | None) -> str:
    if not raw:
        raise ConfigError(
            "NTFY_URL is not set: give the base URL of your ntfy server, e.g. https://ntfy.example.org "
            "(there is no default, so nothing is sent to a public server by accident)"
        )
    parts = urlsplit(raw)
    if parts.scheme not in {"http", "https"} or not parts.netloc:
        raise ConfigError(f"NTFY_URL={raw!r} is not an http:// or https:// URL")
    if parts.query or parts.fragment:
        raise ConfigError("NTFY_URL must not have a query or fragment")
    return raw.rstrip("/")


def _topics(raw: str | None) -> tuple[str, ...]:
    if raw is None or not raw.strip():
        return ()
    topics = tuple(name.strip() for name in raw.split(","))
    for name in topics:
        if not TOPIC_PATTERN.match(name):
            raise ConfigError(
                f"NTFY_TOPICS: {name!r} is not a topic name (1-64 letters, digits, '-' or '_'; no wildcards)"
            )
    if len(set(topics)) != len(topics):
        raise ConfigError("NTFY_TOPICS lists a topic twice")
    return topics


def _timeout(raw: str | None) -> float:
    if raw is None:
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not 1 <= value <= 120:
        raise ConfigError(f"NTFY_TIMEOUT={raw!r} is not valid: seconds per request, from 1 to 120")
    return value
