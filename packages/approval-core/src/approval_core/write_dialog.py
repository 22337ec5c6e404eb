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
* ``Runs as <account>, with its own permissions.``;
* what the body carries: for a call that edits a stored entry, that the
  caller's fields below change and the rest of the stored entry is sent back
  as it is (the entry's own text is never shown); otherwise its size;
* the caller's values, escaped as in every dialog (:mod:`approval_core.dialog`).

The whole text is cut after :data:`~approval_core.dialog.DEFAULT_VALUE_LIMIT`
(4,000) characters, saying how many more are not shown.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from approval_core.dialog import CALLER_VALUES_HEADING, DEFAULT_VALUE_LIMIT, CallerValue, Dialog, shown_value

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
        """The line as the dialog shows it: method and URL, then where it moves to and on which condition."""
        text = f"{self.method} {shown_value(self.url, identifier=True)}"
        destination = self.header("destination")
        if destination is not None:
            text += f" to {shown_value(destination, identifier=True)}"
            if self.header("overwrite") == "F":
                text += ", never over something already there"
        if self.header("if-match") is not None or self.header("if-schedule-tag-match") is not None:
            text += " (only if it is unchanged since it was read)"
        if self.header("if-none-match") == "*":
            text += " (only if nothing is stored there yet)"
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
        edits: True when the body sends a stored entry back with the caller's fields changed.
        caller_values: Labelled values from the call's arguments.
        limit: Characters shown in all; the rest is counted, not shown.
    """

    origin: str
    operation: str
    effect: str
    requests: Sequence[RequestLine]
    account: str | None
    edits: bool
    caller_values: Sequence[CallerValue] = ()
    limit: int = DEFAULT_VALUE_LIMIT

    def headline(self) -> str:
        """``Confirm a change to <origin>``: the dialog's first line, and a push notification's title."""
        return f"Confirm a change to {shown_value(self.origin, identifier=True)}"

    @property
    def consequence(self) -> str:
        """Everything between the heading and the caller's values: operation, requests, account, body."""
        parts = [self.operation[:1].upper() + self.operation[1:]]
        if self.effect:
            parts.append(self.effect)
        count = len(self.requests)
        lines = [f"This call sends {count} request{'s' if count != 1 else ''} to the server:"]
        lines.extend(f"  {line.shown()}" for line in self.requests)
        parts.append("\n".join(lines))
        who = "the account configured for this server" if self.account is None else self.account
        parts.append(f"Runs as {shown_value(who, identifier=True)}, with its own permissions.")
        sent = sum(line.body_bytes for line in self.requests)
        if self.edits:
            parts.append(
                "Sent with it: the stored entry, with the fields given below changed; the rest of the entry "
                "is sent back as it is stored (it is not shown here)."
            )
        elif sent:
            parts.append(f"Sent with it: {sent:,} bytes built from the values below.")
        return "\n\n".join(parts)

    def shown_values(self) -> tuple[tuple[str, str], ...]:
        """The caller's values as shown: ``(label, value escaped and cut)`` pairs."""
        return tuple((cv.label, shown_value(cv.value, self.limit, cv.identifier)) for cv in self.caller_values)

    def render(self) -> str:
        """The whole text, cut after :attr:`limit` characters with the count of those not shown."""
        parts = [self.headline(), self.consequence]
        if self.caller_values:
            block = [CALLER_VALUES_HEADING]
            block.extend(f"  {label}: {value}" for label, value in self.shown_values())
            parts.append("\n".join(block))
        text = "\n\n".join(parts)
        if len(text) > self.limit:
            hidden = len(text) - self.limit
            text = f"{text[: self.limit]}… ({hidden:,} more characters not shown: decline if you have not seen enough)"
        return f"{text}\n\n{_CLOSING}"

    @staticmethod
    def schema() -> dict[str, Any]:
        """The form's requested schema: the one unticked box of every dialog (:meth:`Dialog.schema`)."""
        return Dialog.schema()
