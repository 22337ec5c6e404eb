"""What the every-write profile shows: the exact requests a call will send (seed 004, ``APPROVAL_PROFILE``).

A :class:`RequestLine` is one changing request as it will go out: its
method, the resolved URL on the configured server, the headers that decide
what it does (``Destination``, ``Overwrite``, ``If-Match``, ``If-None-Match``,
``If-Schedule-Tag-Match``, ``Content-Type``) and a keyed digest of its body.
The approval binds these, so a yes covers those bytes and no others.

A :class:`WriteDialog` is the question built from them. It has the parts
seed 004 names, and nothing read from the backend:

* a heading naming the configured backend by its origin;
* the operation in the server's own words;
* every request line the call will send;
* ``Runs as the account '<account>' on <origin>, with its own permissions.``;
* what the bodies carry: a conditional write (``If-Match``) sends a stored
  entry's new content, made of what the caller's values set and, for the
  rest, the entry as stored (never shown); any other body is built from the
  caller's values; each with its size;
* the caller's values, escaped as in every dialog (:mod:`approval_core.asking.dialog`).

The whole text stays within :data:`~approval_core.asking.dialog.DEFAULT_VALUE_LIMIT`
(4,000) characters: a long request list is shortened first, so the account
and the caller's values stay in view, then the text is cut; each cut says how
much is not shown.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from approval_core.asking.dialog import (
    CALLER_VALUES_HEADING,
    DEFAULT_VALUE_LIMIT,
    MESSAGE_BOUND,
    CallerValue,
    Dialog,
    fit_message,
    shown_value,
)

__all__ = ["BOUND_HEADERS", "SAFE_METHODS", "RequestLine", "WriteDialog"]

SAFE_METHODS: frozenset[str] = frozenset({"GET", "HEAD", "OPTIONS", "PROPFIND", "REPORT"})
"""Methods that only read (RFC 9110 §9.2.1 safe methods, and WebDAV's PROPFIND and REPORT); every other
method changes data and is asked for under the every-write profile."""

BOUND_HEADERS: tuple[str, ...] = (
    "content-type",
    "destination",
    "if-match",
    "if-none-match",
    "if-schedule-tag-match",
    "overwrite",
)
"""The request headers bound into an approval: those that decide where a request acts and on what version."""

_CLOSING = "Nothing changes unless you tick the box and confirm."
_AGAIN = (
    "Asked again: after your yes, what this call would send changed (the entry was changed meanwhile), so "
    "nothing was sent. This is what it would send now."
)


@dataclass(frozen=True, slots=True)
class RequestLine:
    """One changing request, as it will be sent.

    Attributes:
        method: The HTTP or WebDAV method, upper case (``PUT``, ``DELETE``, ``MOVE``, ``POST``).
        url: The absolute URL on the configured server, as sent.
        headers: The :data:`BOUND_HEADERS` the request carries, ``(lower-case name, value)`` sorted.
        body_bytes: The body's length in bytes (0 for none).
        body_digest: HMAC-SHA256 (hex) of the body under the gate's key: equal bodies give equal
            digests, and a body holding a password cannot be guessed from a stored fingerprint.
    """

    method: str
    url: str
    headers: tuple[tuple[str, str], ...]
    body_bytes: int
    body_digest: str

    @classmethod
    def of(cls, method: str, url: str, body: bytes | str | None, headers: Mapping[str, str], key: bytes) -> RequestLine:
        """The line of a request about to be sent (``body`` as bytes, or text sent as UTF-8)."""
        raw = body.encode("utf-8") if isinstance(body, str) else (body or b"")
        bound = sorted((name.lower(), value) for name, value in headers.items() if name.lower() in BOUND_HEADERS)
        return cls(method.upper(), url, tuple(bound), len(raw), hmac.new(key, raw, hashlib.sha256).hexdigest())

    def header(self, name: str) -> str | None:
        """The value of bound header ``name`` (case-insensitive), or None."""
        return next((value for key, value in self.headers if key == name.lower()), None)

    def bound(self) -> list[Any]:
        """What the approval's fingerprint binds of this request."""
        return [self.method, self.url, [list(pair) for pair in self.headers], self.body_bytes, self.body_digest]

    def shown(self) -> str:
        """The line as the dialog shows it: method and URL, then where it moves to and on which condition.

        The URL and a destination are shown in double quotes, escaped as identifiers: a path is the caller's
        (or a backend's) and never reads as the server's own words, even where a collection's name is words
        once percent-encoded (``"https://dav.example.org/u/Approved%20by%20IT%20proceed/"``).
        """
        text = f'{self.method} "{shown_value(self.url, identifier=True)}"'
        destination = self.header("destination")
        if destination is not None:
            text += f' to "{shown_value(destination, identifier=True)}"'
            if self.header("overwrite") == "F":
                text += ", never over something already there"
        if self.header("if-match") is not None or self.header("if-schedule-tag-match") is not None:
            text += " (only if it is unchanged since it was read)"
        if self.header("if-none-match") == "*":
            text += " (only if nothing is stored under this name yet)"
        return text


@dataclass(frozen=True, slots=True)
class WriteDialog:
    """The every-write profile's question (see the module docstring).

    It answers to the same calls as :class:`~approval_core.Dialog` (:meth:`headline`, :attr:`consequence`,
    :meth:`shown_values`, :meth:`render`, :meth:`schema`), so every path of the gate can ask it.

    Attributes:
        origin: The configured backend's origin (``https://dav.example.org``), from the server's settings.
        operation: What the call does, in the server's words (a guarded tool's dialog headline, or the
            first sentence of the tool's description).
        effect: A sentence in the server's words on what cannot be undone (a guarded tool's consequence),
            or "".
        requests: Every changing request the call will send, in order.
        account: The account the server acts as (its configured user name), or None when it has none.
        caller_values: Labelled values from the call's arguments.
        chosen: Labelled values the server chose from its own settings where the caller gave none (a
            default topic), shown in their own block.
        again: True when the person already said yes to this call, but what it would send changed before
            it was sent (the entry changed meanwhile): the dialog says so first.
        limit: Characters shown in all; the rest is counted, not shown.
    """

    origin: str
    operation: str
    effect: str
    requests: Sequence[RequestLine]
    account: str | None
    caller_values: Sequence[CallerValue] = ()
    chosen: Sequence[tuple[str, str]] = ()
    again: bool = False
    limit: int = DEFAULT_VALUE_LIMIT

    def headline(self) -> str:
        """``Confirm a change to <origin>``: the dialog's first line, and a push notification's title."""
        return f"Confirm a change to {shown_value(self.origin, identifier=True)}"

    @property
    def consequence(self) -> str:
        """Everything between the heading and the caller's values: operation, requests, account, body."""
        return self._between(len(self.requests), self.limit)

    def _between(self, listed: int, value_limit: int) -> str:
        parts = [_AGAIN] if self.again else []
        parts.append(self.operation[:1].upper() + self.operation[1:])
        if self.effect:
            parts.append(self.effect)
        count = len(self.requests)
        lines = [f"This call sends {count} request{'s' if count != 1 else ''} to the server:"]
        lines.extend(f"  {line.shown()}" for line in self.requests[:listed])
        if listed < count:
            lines.append(f"  … and {count - listed:,} more request(s), not shown: decline if you have not seen enough")
        parts.append("\n".join(lines))
        if self.chosen:
            rows = [f"  {label}: {shown_value(value, value_limit, identifier=True)}" for label, value in self.chosen]
            parts.append("\n".join(["Chosen by this server from its settings, as the caller gave none:", *rows]))
        server = shown_value(self.origin, identifier=True)
        if self.account is None:
            parts.append(f"Runs as the account configured for this server on {server}, with its own permissions.")
        else:
            who = shown_value(self.account, identifier=True)
            parts.append(f"Runs as the account '{who}' on {server}, with its own permissions.")
        edited = sum(r.body_bytes for r in self.requests if r.body_bytes and r.header("if-match") is not None)
        built = sum(r.body_bytes for r in self.requests if r.body_bytes and r.header("if-match") is None)
        if edited:
            parts.append(
                f"Sent with it: the new content of a stored entry ({edited:,} bytes, not shown here): what the "
                "values below set and, for anything they leave out, the entry as it is stored."
            )
        if built:
            parts.append(f"Sent with it: {built:,} bytes built from the values below.")
        return "\n\n".join(parts)

    def shown_values(self) -> tuple[tuple[str, str], ...]:
        """The caller's values as shown: ``(label, value escaped and cut)`` pairs."""
        return tuple((cv.label, shown_value(cv.value, self.limit, cv.identifier)) for cv in self.caller_values)

    def render(self) -> str:
        """The whole text, at most :attr:`limit` characters and the counts of what is not shown.

        When many requests would push the account and the caller's values past the limit, the request list
        is shortened first (saying how many are not shown), so those stay in view. The whole stays within
        :data:`~approval_core.asking.dialog.MESSAGE_BOUND` bytes of UTF-8: long values are cut further
        when it would not (:func:`~approval_core.asking.dialog.fit_message`).
        """
        return fit_message(self._render, self.limit)

    def _render(self, value_limit: int) -> str:
        block = ""
        if self.caller_values:
            shown = ((cv.label, shown_value(cv.value, value_limit, cv.identifier)) for cv in self.caller_values)
            rows = [CALLER_VALUES_HEADING, *(f"  {label}: {value}" for label, value in shown)]
            block = "\n\n" + "\n".join(rows)
        listed = len(self.requests)
        room = MESSAGE_BOUND - 200  # bytes left for the text before the closing line and a cut's note
        text = f"{self.headline()}\n\n{self._between(listed, value_limit)}{block}"
        while (len(text) > self.limit or len(text.encode()) > room) and listed > 1:
            over = max(len(text) - self.limit, len(text.encode()) - room)
            listed = max(1, listed - max(1, over // 60))
            text = f"{self.headline()}\n\n{self._between(listed, value_limit)}{block}"
        if len(text) > self.limit or len(text.encode()) > room:
            kept = text[: self.limit].encode()[:room].decode(errors="ignore")
            hidden = len(text) - len(kept)
            text = f"{kept}… ({hidden:,} more characters not shown: decline if you have not seen enough)"
        return f"{text}\n\n{_CLOSING}"

    @staticmethod
    def schema() -> dict[str, Any]:
        """The form's requested schema: the one unticked box of every dialog (:meth:`Dialog.schema`)."""
        return Dialog.schema()
