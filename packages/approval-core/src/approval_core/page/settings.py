"""The approval page's settings, read strictly from the environment (docs/approval.md, "The approval page").

``APPROVAL_PAGE``
    Exactly ``true`` to serve the approval page, where a person approves with
    a paired passkey whenever no form dialog can be shown; exactly ``false``
    or unset for no page (the two-call token stays the fallback). Any other
    value stops the server.
``APPROVAL_PAGE_PORT``
    Over stdio, the loopback port of the page (``http://localhost:<port>``);
    ``0`` or unset for a free port, named in the startup line. Over HTTP the
    page is served on the MCP endpoint's own origin and this is refused.
``APPROVAL_PAGE_TTL``
    Seconds a pending approval waits for the person, ``60`` to ``3600``; default 300.
``APPROVAL_PASSKEYS_FILE``
    The passkey file (:mod:`approval_core.page.passkeys`); default
    ``<user data folder>/mcp-approval-family/passkeys.json``.
``APPROVAL_PUSH_URL`` (+ ``APPROVAL_PUSH_TOKEN_FILE``)
    An ntfy topic URL (``https://ntfy.example.org/<topic>``) that gets a push
    for every pending approval: the server's name, the operation in its own
    words and counts, the code and a ``view`` action opening the page; never
    a caller's value or backend text. The token file holds an ntfy access token allowed to publish there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from approval_core.errors import SettingsError
from approval_core.page.pending import DEFAULT_PENDING_TTL
from approval_core.seconds import seconds_in_range

__all__ = [
    "PAGE_ENV",
    "PAGE_PORT_ENV",
    "PAGE_TTL_ENV",
    "PASSKEYS_FILE_ENV",
    "PUSH_TOKEN_FILE_ENV",
    "PUSH_URL_ENV",
    "PageSettings",
]

PAGE_ENV = "APPROVAL_PAGE"
PAGE_PORT_ENV = "APPROVAL_PAGE_PORT"
PAGE_TTL_ENV = "APPROVAL_PAGE_TTL"
PASSKEYS_FILE_ENV = "APPROVAL_PASSKEYS_FILE"
PUSH_URL_ENV = "APPROVAL_PUSH_URL"
PUSH_TOKEN_FILE_ENV = "APPROVAL_PUSH_TOKEN_FILE"  # noqa: S105 - the name of a variable, not a secret
MIN_PAGE_TTL = 60.0
MAX_PAGE_TTL = 3600.0


@dataclass(frozen=True, slots=True)
class PageSettings:
    """How the approval page is served, when ``APPROVAL_PAGE=true``.

    Attributes:
        port: Loopback port over stdio (0: a free one).
        ttl: Seconds a pending approval waits (float).
        passkeys_file: The passkey file.
        push_url: The ntfy topic URL for pushes, or None.
        push_token_file: A file holding the ntfy access token for the push, or None.
    """

    passkeys_file: Path
    port: int = 0
    ttl: float = DEFAULT_PENDING_TTL
    push_url: str | None = None
    push_token_file: Path | None = None

    @property
    def push_topic(self) -> str | None:
        """The ntfy topic the push goes to (the URL's last path segment), or None."""
        if self.push_url is None:
            return None
        return urlsplit(self.push_url).path.rstrip("/").rsplit("/", 1)[-1]

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> PageSettings | None:
        """The page settings in ``env``, or None when ``APPROVAL_PAGE`` is unset or ``false``.

        Raises:
            SettingsError: a value breaks its rule; the message names the variable and the rule.
        """
        raw = env.get(PAGE_ENV)
        if raw is None or raw == "false":
            for name in (PAGE_PORT_ENV, PAGE_TTL_ENV, PUSH_URL_ENV, PUSH_TOKEN_FILE_ENV):
                if name in env:
                    raise SettingsError(f"{name} is set but {PAGE_ENV} is not 'true': set {PAGE_ENV}=true or unset it")
            return None
        if raw != "true":
            raise SettingsError(
                f"{PAGE_ENV}={raw!r} is not a valid value: use exactly 'true' (serve the approval page) "
                "or 'false' (no page, the default)"
            )
        from approval_core.page.passkeys import default_passkeys_path

        named = env.get(PASSKEYS_FILE_ENV)
        if named == "":
            raise SettingsError(f"{PASSKEYS_FILE_ENV} is set but empty: give the passkey file's path, or unset it")
        token_file = env.get(PUSH_TOKEN_FILE_ENV)
        push_url = _push_url(env.get(PUSH_URL_ENV))
        if token_file is not None and push_url is None:
            raise SettingsError(f"{PUSH_TOKEN_FILE_ENV} is set but {PUSH_URL_ENV} is not: name the ntfy topic URL")
        return cls(
            passkeys_file=Path(named) if named else default_passkeys_path(),
            port=_port(env.get(PAGE_PORT_ENV)),
            ttl=_ttl(env.get(PAGE_TTL_ENV)),
            push_url=push_url,
            push_token_file=Path(token_file) if token_file else None,
        )


def _port(raw: str | None) -> int:
    if raw is None:
        return 0
    if not raw.isdigit() or int(raw) > 65535:
        raise SettingsError(f"{PAGE_PORT_ENV}={raw!r} is not valid: give a port from 1 to 65535, or 0 for a free one")
    return int(raw)


def _ttl(raw: str | None) -> float:
    what = "the seconds a pending approval waits"
    return seconds_in_range(PAGE_TTL_ENV, raw, what, MIN_PAGE_TTL, MAX_PAGE_TTL, DEFAULT_PENDING_TTL)


def _push_url(raw: str | None) -> str | None:
    if raw is None:
        return None
    parts = urlsplit(raw)
    topic = parts.path.strip("/")
    if parts.scheme not in ("http", "https") or not parts.hostname or not topic or "/" in topic:
        raise SettingsError(
            f"{PUSH_URL_ENV} must be an ntfy topic URL such as https://ntfy.example.org/my-approvals "
            "(http or https, a host, one path segment naming the topic)"
        )
    if parts.query or parts.fragment or parts.username or parts.password:
        raise SettingsError(
            f"{PUSH_URL_ENV} must carry no query, fragment or credentials (use {PUSH_TOKEN_FILE_ENV} for a token)"
        )
    return raw
