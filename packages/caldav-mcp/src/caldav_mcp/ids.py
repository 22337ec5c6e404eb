"""Where ids become server paths: one origin, known collections, no escapes.

Every calendar id a caller gives and every entry href a server names passes
through :func:`canonical_path` before it is compared or sent. The rules, in
order (RFC 3986):

* at most :data:`MAX_ID_LENGTH` characters;
* an absolute URL is accepted only when its scheme, host and port are those
  of ``CALDAV_URL`` and it has no user information (§3.2.1); its path is
  then used;
* percent-decoding is done exactly once (§2.4). A caller's id that still
  holds a percent-escape after that (``%252F``, ``%2541``) was encoded twice
  and is refused, never decoded again. An href a server returns may name an
  entry with a literal ``%`` (``a%2541.ics`` is the entry ``a%41.ics``); it is
  decoded once too (``from_server=True``), so it names that entry and no
  other;
* the decoded path must start with ``/``, must not contain ``//`` (an empty
  segment, or a network-path reference, §4.2), a backslash, ``?``, ``#`` or
  a control character;
* dot segments are removed (§5.2.4).

The result is a lookup key only: a request is always made to the configured
origin plus the path of a known calendar, or of an entry directly inside one
(:func:`wire_path` re-encodes it, ``%`` as ``%25``, so a server's href comes
back to the same resource), so no id can lead a request, or the credentials
attached to it, anywhere else.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import quote, unquote, urlsplit

from caldav_mcp.errors import InvalidInput

__all__ = [
    "MAX_ID_LENGTH",
    "Origin",
    "canonical_path",
    "name_in",
    "remove_dot_segments",
    "wire_path",
]

MAX_ID_LENGTH = 1024
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_DEFAULT_PORTS = {"http": 80, "https": 443}


class Origin:
    """The scheme, host and port of ``CALDAV_URL`` (RFC 6454 §4), compared case-insensitively.

    Args:
        url: An absolute http(s) URL.
    """

    __slots__ = ("host", "port", "scheme")

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.scheme = parts.scheme.lower()
        self.host = (parts.hostname or "").lower()
        self.port = parts.port or _DEFAULT_PORTS.get(self.scheme, 0)

    def same(self, url: str) -> bool:
        """Whether ``url`` (absolute) has this scheme, host and port and no user information."""
        try:
            parts = urlsplit(url)
            port = parts.port or _DEFAULT_PORTS.get(parts.scheme.lower(), 0)
        except ValueError:
            return False
        return (
            "@" not in parts.netloc
            and parts.scheme.lower() == self.scheme
            and (parts.hostname or "").lower() == self.host
            and port == self.port
        )

    def url(self, path: str) -> str:
        """The absolute URL of an (already encoded) ``path`` on this origin."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = _DEFAULT_PORTS.get(self.scheme)
        netloc = host if self.port == default else f"{host}:{self.port}"
        return f"{self.scheme}://{netloc}{path}"

    def __str__(self) -> str:
        return self.url("")


def remove_dot_segments(path: str) -> str:
    """RFC 3986 §5.2.4 on an absolute path (``/a/b/../c/./d`` → ``/a/c/d``); never rises above ``/``."""
    out: list[str] = []
    segments = path.split("/")[1:]
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "..":
            if out:
                out.pop()
            if last:
                out.append("")
        elif segment == ".":
            if last:
                out.append("")
        else:
            out.append(segment)
    return "/" + "/".join(out)


def _refuse(field: str, rule: str) -> InvalidInput:
    return InvalidInput(f"{field}: {rule}; give the id exactly as list_calendars (or the listing tool) returned it")


def canonical_path(value: str, field: str, origin: Origin, *, from_server: bool = False) -> str:
    """The decoded (exactly once), dot-free absolute path ``value`` names on ``origin``.

    Args:
        value: A path (``/willi/work/``) or an absolute URL on ``origin``.
        field: The argument's name, for the error.
        origin: The configured origin.
        from_server: ``value`` is an href the server returned (RFC 4918
            §8.3): a percent-escape left after decoding once is part of the
            resource's name, not a second encoding.

    Returns:
        The canonical path (decoded; a trailing ``/`` kept as given).

    Raises:
        InvalidInput: the value breaks one of the module's rules (the message
            names the field and the rule).
    """
    if len(value) > MAX_ID_LENGTH:
        raise _refuse(field, f"longer than {MAX_ID_LENGTH} characters")
    text = value
    try:
        scheme = "" if text.startswith("/") else urlsplit(text).scheme
    except ValueError:
        raise _refuse(field, "not a valid path or URL") from None
    if scheme:
        if not origin.same(text):
            raise _refuse(field, f"an absolute URL must be on {origin} (the configured server), without a user name")
        parts = urlsplit(text)
        if parts.query or parts.fragment:
            raise _refuse(field, "a query (?) or fragment (#) is not part of an id")
        text = parts.path or "/"
    try:
        text = unquote(text, errors="strict")
    except UnicodeDecodeError:
        raise _refuse(field, "its percent-encoding is not UTF-8") from None
    if not from_server and _ESCAPE.search(text):
        raise _refuse(field, "percent-encoded twice (a %XX is left after decoding once; it is not decoded again)")
    if not text.startswith("/"):
        raise _refuse(field, "not an absolute path on the configured server (it must start with /)")
    if "//" in text:
        raise _refuse(field, "an empty path segment (//) is not allowed")
    if "\\" in text or "?" in text or "#" in text:
        raise _refuse(field, "a backslash, ? or # is not allowed")
    if any(unicodedata.category(ch) in {"Cc", "Cf", "Cs", "Co", "Zl", "Zp"} for ch in text):
        raise _refuse(field, "a control or invisible character is not allowed")
    return remove_dot_segments(text)


def wire_path(canonical: str) -> str:
    """``canonical`` percent-encoded for a request line (RFC 3986 §3.3 pchar kept as is)."""
    return quote(canonical, safe="/:@!$&'()*+,;=~")


def name_in(path: str, collection: str) -> str | None:
    """The single segment that makes canonical ``path`` a member of canonical ``collection``, or None."""
    prefix = collection if collection.endswith("/") else collection + "/"
    if not path.startswith(prefix):
        return None
    name = path[len(prefix) :]
    if not name or "/" in name or name in {".", ".."}:
        return None
    return name
