"""One entry of the undo journal (:mod:`approval_core.records.journal`), and the handle a change holds."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["JournalEntry", "Keeping", "Kind"]

Kind = Literal["deleted", "overwritten", "moved"]
"""What the guarded change did to the entry: removed it, wrote over it, or moved it elsewhere."""


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """One kept pre-image and what the change did to it.

    Attributes:
        id: 16 hex digits, random; the restore tool's argument.
        server: The server that kept it.
        tool: The tool whose change it undoes.
        kind: ``deleted``, ``overwritten`` or ``moved``.
        collection: The calendar or address book it was in.
        href: Its path there (where a restore puts it back).
        etag: The ETag it was read with before the change.
        data: The stored bytes as the backend sent them.
        content_type: The media type to write them back with.
        after_href: Where the change left it (the destination of a move; else ``href``).
        after_etag: The ETag the change left, when the backend said (None after a delete, or unknown).
        kept_at: Epoch seconds when it was kept.
        until: Epoch seconds after which it is gone.
        fingerprint: The fingerprint of the approval that allowed the change.
        path: How that approval was given.
        principal: ``[client id, issuer, subject]`` over HTTP, else None.
        backend: ``[origin, account]`` of the backend the server was configured with (None when not told).
        made: ``[href, id]`` of an entry the change created beside this one (update_event's split: the new
            series, under its own UID), which a restore of this entry would leave in place; None for most changes.
    """

    id: str
    server: str
    tool: str
    kind: Kind
    collection: str
    href: str
    etag: str | None
    data: bytes = field(repr=False)
    content_type: str
    after_href: str
    after_etag: str | None
    kept_at: float
    until: float
    fingerprint: str
    path: str
    principal: list[str | None] | None = None
    backend: list[str | None] | None = None
    made: list[str] | None = None

    def to_json(self) -> bytes:
        """The entry as JSON bytes (``data`` in base64)."""
        body: dict[str, Any] = {name: getattr(self, name) for name in self.__slots__}  # pyright: ignore[reportGeneralTypeIssues]
        body["data"] = base64.b64encode(self.data).decode("ascii")
        return json.dumps(body, separators=(",", ":")).encode()

    @classmethod
    def from_json(cls, raw: bytes) -> JournalEntry:
        """The entry :meth:`to_json` wrote.

        Raises:
            ValueError: it is not one.
        """
        body = json.loads(raw)
        body["data"] = base64.b64decode(body["data"])
        return cls(**body)


@dataclass(slots=True)
class Keeping:
    """The handle of one pre-image while its change is made (:meth:`Journal.keeping`).

    Attributes:
        entry_id: The journal id, or None when nothing is kept (journal off, over the bound, not guarded).
        after_etag: Set with :meth:`left` after the write.
    """

    entry_id: str | None
    after_etag: str | None = None

    def left(self, etag: str | None) -> None:
        """Note the ETag the change left (a PUT's answer), for the restore's ``If-Match``."""
        self.after_etag = etag
