"""What a change touches, as the backend stores it: the model a server hands to the gate for the approval page.

A guarded tool reads the entries it is about to change anyway (for their
ETags and counts). It may describe them in a :class:`StoredView` and pass it
to :meth:`approval_core.ApprovalGate.check` as ``stored=``. The view travels
**only** to the approval page and the read-only view a form dialog links to:
it is kept in the pending approval's record and nowhere else. It never
enters the :class:`~approval_core.Dialog`, the form message, a result, the
push or the audit log, because those are channels the model reads (or an
assistant relays), where text written by whoever wrote the entry could pose
as the server's words. The page draws it as data, in a section of its own
(:mod:`approval_core.page.stored_markup`).

Shapes:

* :class:`StoredEntry`: one entry (an event, a contact, a message): its kind
  in the server's words, its collection (:class:`Collection`, display name as
  stored and path), its href, the ETag it was read at, labelled fields as
  stored (:class:`StoredField`; a time also as an instant the browser shows in
  its own zone), for an edit the changes (:class:`Change`, before -> after;
  the rest is written back as stored), for a move the destination;
* :class:`StoredView`: the entries (at most :data:`ENTRY_LIMIT` listed, the
  number of the others given; each entry at most :data:`ROW_LIMIT` changes), and under the every-write profile the exact
  bodies the call sends (:class:`SentBody`, the first :data:`BODY_LIMIT`
  characters and how many more).

Every stored text is cut at :data:`VALUE_LIMIT` characters when the model is
built, the number of characters left out kept beside it, so a record stays
small whatever a backend holds.

Binding: the ETags named here must be ones the approval's fingerprint holds
(the call's ``version``, or a value of its ``target``); the gate refuses a view
naming any other (:func:`unbound_etags`). So what the page shows is the
version the approval binds, and a write carrying If-Match on it fails with
412 if the entry changed; the next call then reads it again and asks again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "BODY_LIMIT",
    "ENTRY_LIMIT",
    "ROW_LIMIT",
    "VALUE_LIMIT",
    "Change",
    "Collection",
    "SentBody",
    "StoredEntry",
    "StoredField",
    "StoredView",
    "clip",
    "unbound_etags",
]

ENTRY_LIMIT = 50
"""Entries a view lists; beyond it the page gives the number of those not shown."""
ROW_LIMIT = 50
"""Changes one entry lists (a whole-card replacement may drop thousands of properties); the rest are counted."""
VALUE_LIMIT = 1000
"""Characters of one stored value kept for the page; the rest is counted, not kept."""
BODY_LIMIT = 4000
"""Characters of one request body the page shows (seed 004); the rest is counted."""

_FROZEN = ConfigDict(frozen=True, extra="forbid")


def _mapping(data: Any) -> dict[str, Any] | None:
    """``data`` as a dict when a model is built from keywords or JSON, else None (a model instance)."""
    return cast(dict[str, Any], data) if isinstance(data, dict) else None


def clip(text: str | None, limit: int = VALUE_LIMIT) -> tuple[str | None, int]:
    """``text`` cut to ``limit`` characters, and how many were left out (0 when none)."""
    if text is None or len(text) <= limit:
        return text, 0
    return text[:limit], len(text) - limit


class StoredField(BaseModel):
    """One labelled value of an entry, as stored.

    Attributes:
        label: The server's own word for the field (``Title``, ``Starts``); never stored text.
        value: The value as stored (cut to :data:`VALUE_LIMIT`), or None when the entry has none.
        cut: Characters of the stored value left out.
        name: True for a name a person recognises the entry by (a title, a contact's FN, a display name):
            the page marks look-alike letters in it.
        instant: For a time, the same moment in UTC (ISO 8601, ``2026-12-03T09:00:00Z``); the page's
            script shows it in the browser's zone beside ``value`` (the entry's own zone).
    """

    model_config = _FROZEN
    label: str
    value: str | None
    cut: int = 0
    name: bool = False
    instant: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _clip(cls, data: Any) -> Any:
        raw = _mapping(data)
        if raw is None or raw.get("cut"):
            return data
        value, cut = clip(raw.get("value"))
        return {**raw, "value": value, "cut": cut}


class Change(BaseModel):
    """One field an edit changes: what is stored now, and what the call writes.

    Attributes:
        label: The server's own word for the field.
        before: The value as stored now (None: not set); cut to :data:`VALUE_LIMIT`.
        after: The value the call writes (None: removed); cut likewise.
        before_cut, after_cut: Characters left out of each.
        name: As for :class:`StoredField`.
    """

    model_config = _FROZEN
    label: str
    before: str | None
    after: str | None
    before_cut: int = 0
    after_cut: int = 0
    name: bool = False

    @model_validator(mode="before")
    @classmethod
    def _clip(cls, data: Any) -> Any:
        raw = _mapping(data)
        if raw is None or raw.get("before_cut") or raw.get("after_cut"):
            return data
        before, before_cut = clip(raw.get("before"))
        after, after_cut = clip(raw.get("after"))
        return {**raw, "before": before, "after": after, "before_cut": before_cut, "after_cut": after_cut}


class Collection(BaseModel):
    """A calendar, address book or topic: its path (the server resolved it) and its display name as stored."""

    model_config = _FROZEN
    path: str
    name: str | None = None


class StoredEntry(BaseModel):
    """One entry the call touches, as the backend stores it (see the module docstring).

    Attributes:
        kind: What it is, in the server's words (``Event``, ``Occurrence``, ``Task``, ``Contact``).
        collection: Where it is stored.
        href: Its path on the server, or None.
        etag: The ETag it was read at (bound by the approval), or None for an entry without one.
        fields: Labelled values as stored.
        changes: For an edit, each field it changes (before -> after); the rest is written back as stored.
        moved_to: For a move, the destination collection.
        not_listed: Changes the call makes that are not listed (beyond :data:`ROW_LIMIT`).
    """

    model_config = _FROZEN
    kind: str
    collection: Collection
    href: str | None = None
    etag: str | None = None
    fields: tuple[StoredField, ...] = ()
    changes: tuple[Change, ...] = ()
    moved_to: Collection | None = None
    not_listed: int = Field(default=0, ge=0)

    @model_validator(mode="before")
    @classmethod
    def _bound(cls, data: Any) -> Any:
        raw = _mapping(data)
        changes: tuple[Any, ...] = tuple(raw.get("changes") or ()) if raw is not None else ()
        if raw is None or len(changes) <= ROW_LIMIT:
            return data
        extra = len(changes) - ROW_LIMIT
        return {**raw, "changes": changes[:ROW_LIMIT], "not_listed": int(raw.get("not_listed") or 0) + extra}


class SentBody(BaseModel):
    """The exact body of one request the call sends (every-write profile).

    Attributes:
        request: The request line in the server's words (``PUT https://dav.example.org/...``).
        content_type: Its Content-Type, or None.
        text: The body's first :data:`BODY_LIMIT` characters (UTF-8; undecodable bytes replaced).
        more: Characters not shown.
    """

    model_config = _FROZEN
    request: str
    content_type: str | None = None
    text: str
    more: int = 0

    @classmethod
    def of(cls, request: str, body: bytes, content_type: str | None, hidden: Iterable[str] = ()) -> SentBody:
        """The shown part of ``body``; each non-empty string of ``hidden`` (a password) replaced by a note."""
        text = body.decode("utf-8", errors="replace")
        for secret in hidden:
            if secret:
                text = text.replace(secret, "(not shown)")
        shown, more = clip(text, BODY_LIMIT)
        return cls(request=request, content_type=content_type, text=shown or "", more=more)


class StoredView(BaseModel):
    """What a change touches, as stored: the entries and, under every-write, the bodies sent.

    Attributes:
        entries: At most :data:`ENTRY_LIMIT` entries (more given are counted into ``not_listed``).
        not_listed: Entries the call touches that are not listed.
        bodies: The exact request bodies (every-write profile), filled in by approval-core.
    """

    model_config = _FROZEN
    entries: tuple[StoredEntry, ...] = ()
    not_listed: int = Field(default=0, ge=0)
    bodies: tuple[SentBody, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _bound(cls, data: Any) -> Any:
        raw = _mapping(data)
        entries: tuple[Any, ...] = tuple(raw.get("entries") or ()) if raw is not None else ()
        if raw is None or len(entries) <= ENTRY_LIMIT:
            return data
        extra = len(entries) - ENTRY_LIMIT
        return {**raw, "entries": entries[:ENTRY_LIMIT], "not_listed": int(raw.get("not_listed") or 0) + extra}

    def etags(self) -> frozenset[str]:
        """The ETags the listed entries were read at."""
        return frozenset(entry.etag for entry in self.entries if entry.etag is not None)

    def with_bodies(self, bodies: Iterable[SentBody]) -> StoredView:
        """This view with ``bodies`` as the request bodies it shows."""
        return self.model_copy(update={"bodies": tuple(bodies)})

    def to_json(self) -> str:
        """Compact JSON (what the pending record keeps)."""
        return self.model_dump_json()

    @classmethod
    def from_json(cls, raw: str) -> StoredView | None:
        """The view ``raw`` holds, or None when it is not one."""
        try:
            return cls.model_validate_json(raw)
        except ValueError:
            return None


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():  # pyright: ignore[reportUnknownVariableType]
            yield from _strings(item)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:  # pyright: ignore[reportUnknownVariableType]
            yield from _strings(item)


def unbound_etags(view: StoredView, target: Mapping[str, Any], version: str | None) -> list[str]:
    """The ETags ``view`` names that the approval would not bind: neither ``version`` nor a string in ``target``.

    A bulk call binds every entry's ETag in its target (a list of ``[href, etag]``, say); a one-entry call
    binds it as ``version``. An empty list means the page shows only versions the fingerprint holds.
    """
    bound = set(_strings(target))
    if version is not None:
        bound.add(version)
    return sorted(etag for etag in view.etags() if etag not in bound)
