"""Ids and server hrefs resolved into canonical paths, and confined to the collections they belong to.

Every id a caller gives goes through :func:`resolve_path`; every href a
server names for a member of a collection goes through :func:`member_in`.
Both decode once, refuse what could move a request elsewhere (another host, a
dot segment, an encoded slash, a second layer of encoding), and give back one
percent-encoded path form (:data:`webdav_core.xml.HREF_SAFE`).
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Callable
from urllib.parse import quote, unquote, urlsplit

from webdav_core.errors import Errors
from webdav_core.origin import shown
from webdav_core.xml import HREF_SAFE

__all__ = ["MAX_ID_LENGTH", "folder", "member_in", "resolve_path", "resolved_member"]

log = logging.getLogger("webdav_core")

MAX_ID_LENGTH = 1000
"""Characters in an id or a member href."""
_ENCODED = re.compile("%[0-9A-Fa-f]{2}")
_FORBIDDEN = re.compile(r"[\x00-\x1f\x7f\\]")
_PLAIN_SEGMENT = re.compile(r"[A-Za-z0-9._~-]+")
"""One path segment of unreserved characters (RFC 3986 §2.3): nothing to decode, re-encode or refuse."""
_DEFAULT_ERRORS = Errors()


def folder(path: str) -> str:
    """``path`` ending in ``/`` (a collection's form)."""
    return path if path.endswith("/") else path + "/"


_INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Co", "Zl", "Zp"})
"""Unicode categories refused in a path: controls, format (bidi, zero-width), surrogates, private use, separators."""


def resolve_path(
    field: str, value: str, rule: str, errors: Errors = _DEFAULT_ERRORS, *, from_server: bool = False
) -> str:
    """An id decoded into the one canonical, percent-encoded server path it names.

    The value must be an absolute path (``/user/book/card.vcf``) as the server
    hands ids out. It is percent-decoded (RFC 3986 §2.1) and refused when it
    has a ``?`` or ``#`` (a query or fragment), when the decoded path starts
    with ``//`` or has an empty segment, a ``.`` or ``..`` segment (so there
    is nothing for dot-segment removal, RFC 3986 §5.2.4, to change), a
    backslash, a control or invisible character (Unicode Cc, Cf, Cs, Co, Zl,
    Zp: bidi overrides, zero-width marks), when a ``%2F`` encodes a slash (it
    would move a segment boundary), or, for a caller's id, when it still holds
    a percent-escape after decoding (a double encoding). An encoded ``%3F`` or
    ``%23`` is kept, re-encoded, as part of a name.

    An href a server names (``from_server``, RFC 4918 §8.3) is decoded exactly
    once too, but a ``%`` left after that is part of the resource's name
    (Radicale stores ``a%41.ics`` as the href ``a%2541.ics``): it is re-encoded
    as ``%25``, so the path names that resource and never the one a second
    decoding would (``aA.ics``).

    Args:
        field: The argument's name, for the error.
        value: The id as given.
        rule: What the field must be, for the error (``"a contact id ..."``).
        errors: The server's exception classes (``errors.invalid_id(field, rule)`` is raised).
        from_server: ``value`` is an href from a server's answer, not a caller's id.

    Raises:
        errors.invalid_id: any of the above, naming ``field``.
    """

    def refuse(why: str) -> Exception:
        return errors.invalid_id(field, f"must be {rule}; {why}")

    if len(value) > MAX_ID_LENGTH:
        raise refuse(f"this one is longer than {MAX_ID_LENGTH} characters")
    if not value.startswith("/") or value.startswith("//"):
        raise refuse("ids are paths on the configured server starting with a single '/', never a URL or a host")
    try:
        decoded = unquote(value, errors="strict")
    except UnicodeDecodeError:
        raise refuse("its percent-escapes do not decode to UTF-8") from None
    if decoded.count("/") != value.count("/"):
        raise refuse("an encoded slash (%2F) is not allowed")
    if "?" in value or "#" in value:
        raise refuse("a query ('?') or fragment ('#') is not allowed")
    if _FORBIDDEN.search(decoded) or any(unicodedata.category(c) in _INVISIBLE for c in decoded if ord(c) > 127):
        raise refuse("backslashes, control and invisible characters are not allowed")
    if not from_server and _ENCODED.search(decoded):
        raise refuse("it is percent-encoded twice")
    segments = decoded.split("/")[1:]
    if any(s in {".", ".."} for s in segments):
        raise refuse("'.' and '..' segments are not allowed")
    if any(s == "" for s in segments[:-1]):
        raise refuse("empty segments ('//') are not allowed")
    return quote(decoded, safe=HREF_SAFE)


def member_in(
    collection: str,
    raw: str,
    on_origin: Callable[[str], object],
    errors: Errors = _DEFAULT_ERRORS,
    *,
    describe: str = "a member of the collection that was asked",
) -> str | None:
    """The canonical path of a member href a server listed for ``collection``, or None (logged) when it is not one.

    A server's answer names resources by ``DAV:href`` (RFC 4918 §14.7), which
    may be a path or an absolute URL. It is taken only when it is on the
    configured origin (``on_origin`` raises otherwise) and resolves, by the
    rules of ids (:func:`resolve_path`), to ``collection`` followed by exactly
    one segment. Anything else (another collection, a dot segment, another
    host, a nested collection) is left out of the answer and logged, so
    nothing is ever read or written there.

    The common case, ``collection`` followed by one segment of unreserved
    characters (RFC 3986 §2.3), is taken as it stands: the rules give it back
    unchanged, and a listing of 20,000 members would spend seconds applying them.

    Args:
        collection: The collection that was asked, canonical, ending in ``/``.
        raw: The href as the server wrote it.
        on_origin: Raises ``errors.off_origin`` when ``raw`` is not on the configured origin.
        errors: The server's exception classes.
        describe: What the member must be, for the log line.
    """
    segment = raw[len(collection) :] if collection.startswith("/") and raw.startswith(collection) else ""
    if _PLAIN_SEGMENT.fullmatch(segment) and segment not in {".", ".."} and len(raw) <= MAX_ID_LENGTH:
        return raw
    return resolved_member(collection, raw, on_origin, errors, describe=describe)


def resolved_member(
    collection: str,
    raw: str,
    on_origin: Callable[[str], object],
    errors: Errors = _DEFAULT_ERRORS,
    *,
    describe: str = "a member of the collection that was asked",
) -> str | None:
    """:func:`member_in` by the full rules of ids, for any href (without its quick path for plain ones)."""
    path: str | None = None
    try:
        on_origin(raw)
        parts = urlsplit(raw)
        if not parts.query and not parts.fragment:
            path = resolve_path("href", parts.path, describe, errors, from_server=True)
    except (errors.off_origin, errors.invalid_id, ValueError):
        path = None
    if path is None or not path.startswith(collection) or "/" in path[len(collection) :] or path == collection:
        log.warning("left out an href %s in the answer for %s: not %s", shown(raw), collection, describe)
        return None
    return path
