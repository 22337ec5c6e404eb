"""The undo journal: what a guarded change removed, kept for a bounded time so it can be put back.

Before a guarded DELETE, overwrite (PUT with If-Match over an existing entry)
or MOVE, a server hands the journal the *pre-image*: the stored bytes exactly
as its backend sent them, where they were (href, collection), the ETag they
were read with, and which approval allowed the change (its fingerprint, the
path it came by, and over HTTP the principal). After the write it may add the
ETag the change left, which a restore then makes its ``If-Match``.

An entry is sealed with AES-256-GCM (RFC 5116, through ``cryptography``)
under a key derived from the key file for this purpose alone
(:data:`~approval_core.records.keys.JOURNAL_PURPOSE`, HKDF as every other
derived key); the associated data is the server's name, the deployment and the
entry's id, so an entry opens only under its own id, for its own server, with
a key of the same key file. Every key of the ring opens (a rotation keeps
entries readable while the previous key is listed); the current key seals.
Without ``APPROVAL_KEY_FILE`` the key is a per-user key file made on first use
in this user's data folder (``<data>/mcp-approval-family/journal.key``, mode
``0600``).

Where it lives (:mod:`approval_core.records.journal_storage`): over stdio, in
``<data>/mcp-approval-family/journal/<server>/`` (``0700``, files ``0600``);
with ``APPROVAL_STORE_URL``, in that Redis, so every replica lists and
restores the same entries. An entry lives ``APPROVAL_UNDO_DAYS`` days (default
7; 0 keeps nothing); a pre-image over :data:`MAX_ENTRY_BYTES` is not kept, and
of the rest at most :data:`MAX_ENTRIES` entries and :data:`MAX_TOTAL_BYTES`
bytes are kept, the oldest dropped first. A server asks :meth:`Journal.keeps`
before it words its dialog, so the dialog says "recoverable" only where the
journal will hold the pre-image.

An entry that cannot be opened (changed on disk, sealed under another key
file, for another server) is never used: it is counted as unreadable in a
listing and refused by a restore. An entry is listed and restored only by a
server configured for the same backend (origin and account: another account,
or another server, of the same user never sees it) and, over HTTP, only for the
principal whose approved call kept it.
"""

from __future__ import annotations

import contextlib
import secrets
import time
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Protocol
from urllib.parse import urlsplit

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from approval_core.errors import ApprovalError, SettingsError
from approval_core.records.journal_entry import JournalEntry, Keeping, Kind
from approval_core.records.journal_storage import FileStorage, JournalStorage, RedisStorage
from approval_core.records.keys import JOURNAL_PURPOSE, KeyRing, read_key_file, write_new_key_file
from approval_core.records.redis_store import RedisStore
from approval_core.records.store import StoreUnavailable

__all__ = [
    "MAX_ENTRIES",
    "MAX_ENTRY_BYTES",
    "MAX_TOTAL_BYTES",
    "Journal",
    "JournalEntry",
    "JournalUnavailable",
    "Keeping",
    "Kind",
    "journal_folder",
    "open_journal",
]

MAX_ENTRY_BYTES = 1 << 20
"""The largest pre-image kept (bytes of the stored entry); a larger one is not kept, and the dialog says so."""
MAX_ENTRIES = 500
"""Entries kept per server at most; the oldest goes first."""
MAX_TOTAL_BYTES = 64 << 20
"""Sealed bytes kept per server at most, all entries together; the oldest go first."""

_VERSION = b"J1"
_ID_BYTES = 8


class JournalUnavailable(ApprovalError):
    """The journal could not keep a pre-image it promised to keep; the change was not made.

    The message names what failed, never a stored text.
    """


class Approval(Protocol):
    """What the journal records of the approval that allowed a change (an :class:`~approval_core.Approved`)."""

    @property
    def path(self) -> str:
        """How it was approved (``dialog``, ``page``, ``token`` ...)."""
        ...

    @property
    def fingerprint(self) -> str:
        """The binding fingerprint."""
        ...


def journal_folder() -> Path:
    """``<user data folder>/mcp-approval-family``, where the journal and its per-user key live over stdio."""
    import platformdirs

    return platformdirs.user_data_path("mcp-approval-family", appauthor=False)


def _own_key_ring(folder: Path) -> KeyRing:
    """The per-user journal key file in ``folder`` (made ``0600`` on first use; read with the key file's checks)."""
    path = folder / "journal.key"
    if not path.exists():
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):  # another process of this user made it first
            write_new_key_file(path)
    return read_key_file(path)


class Journal:
    """The undo journal of one server (see the module docstring).

    Args:
        server_name: This server's name; bound into every entry's associated data.
        namespace: The deployment (the record namespace); bound too.
        days: How long an entry lives (``APPROVAL_UNDO_DAYS``, at least 1).
        key_ring: The key file's keys, or None for the per-user key in the data folder.
        storage: Where sealed entries go (default: a folder of this user under ``folder``).
        folder: The data folder (default :func:`journal_folder`).
        clock: Wall-clock seconds.
    """

    def __init__(
        self,
        server_name: str,
        namespace: str,
        days: int,
        *,
        key_ring: KeyRing | None = None,
        storage: JournalStorage | None = None,
        folder: Path | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if days < 1:
            raise ValueError("a journal keeps entries for at least one day")
        self.server_name = server_name
        self.namespace = namespace
        self.days = days
        self._ring = key_ring
        self._folder = folder
        self._clock = clock
        self._keys: tuple[bytes, ...] | None = None
        self._storage = storage
        self.backend: Callable[[], tuple[str, str | None]] | None = None
        """``(origin, account)`` of the configured backend (set by :func:`approval_core.equip`)."""

    @classmethod
    def shared(
        cls, server_name: str, days: int, store: RedisStore, key_ring: KeyRing, clock: Callable[[], float]
    ) -> Journal:
        """A journal in the Redis of ``store``, sealed with ``key_ring``: what replicas share."""
        storage = RedisStorage(store, max_entries=MAX_ENTRIES, max_bytes=MAX_TOTAL_BYTES, clock=clock)
        return cls(server_name, store.namespace, days, key_ring=key_ring, storage=storage, clock=clock)

    def _where(self) -> Path:
        return self._folder or journal_folder()

    def _keyring(self) -> tuple[bytes, ...]:
        if self._keys is None:
            ring = self._ring or _own_key_ring(self._where())
            self._keys = ring.derive(JOURNAL_PURPOSE)
        return self._keys

    def _store(self) -> JournalStorage:
        if self._storage is None:
            folder = self._where() / "journal" / self.server_name
            self._storage = FileStorage(folder, max_entries=MAX_ENTRIES, max_bytes=MAX_TOTAL_BYTES, clock=self._clock)
        return self._storage

    def _aad(self, entry_id: str) -> bytes:
        return f"{self.server_name}\n{self.namespace}\n{entry_id}".encode()

    def _seal(self, entry: JournalEntry) -> bytes:
        nonce = secrets.token_bytes(12)
        return _VERSION + nonce + AESGCM(self._keyring()[0]).encrypt(nonce, entry.to_json(), self._aad(entry.id))

    def _open(self, entry_id: str, blob: bytes) -> JournalEntry | None:
        if not blob.startswith(_VERSION) or len(blob) < len(_VERSION) + 12 + 16:
            return None
        nonce, sealed = blob[2:14], blob[14:]
        for key in self._keyring():
            try:
                entry = JournalEntry.from_json(AESGCM(key).decrypt(nonce, sealed, self._aad(entry_id)))
            except (InvalidTag, ValueError, TypeError, KeyError):
                continue
            ok = entry.id == entry_id and entry.server == self.server_name and entry.until > self._clock()
            return entry if ok else None
        return None

    def keeps(self, size: int) -> bool:
        """Whether a pre-image of ``size`` bytes would be kept (so the dialog may say it is recoverable)."""
        return 0 <= size <= MAX_ENTRY_BYTES

    @asynccontextmanager
    async def keeping(
        self,
        approval: Approval,
        *,
        tool: str,
        kind: Kind,
        collection: str,
        href: str,
        etag: str | None,
        data: bytes | str,
        content_type: str,
        after_href: str | None = None,
        lost: tuple[type[BaseException], ...] = (),
        made: tuple[str, str] | None = None,
    ) -> AsyncGenerator[Keeping]:
        """Keep the pre-image of ``href`` for the change made inside the ``async with`` block.

        Nothing is kept for a call that did not ask (``approval.path == "not_guarded"``) or a pre-image
        over :data:`MAX_ENTRY_BYTES`. The entry is written before the block runs; when the block raises
        (the change was refused or failed) it is dropped again, unless the exception is one of ``lost``
        (the answer was lost, so the change may have been made: the pre-image stays); when the block set
        :meth:`Keeping.left`, the entry is written again with that ETag. ``made`` is ``(href, id)`` of an
        entry the same change created beside this one (a split series' new part), noted so a restore can
        refuse while it is still there.

        Raises:
            JournalUnavailable: the entry could not be written; the block did not run, nothing changed.
        """
        raw = data.encode("utf-8") if isinstance(data, str) else data
        if approval.path == "not_guarded" or not self.keeps(len(raw)):
            yield Keeping(None)
            return
        now = self._clock()
        entry = JournalEntry(
            id=secrets.token_hex(_ID_BYTES),
            server=self.server_name,
            tool=tool,
            kind=kind,
            collection=collection,
            href=href,
            etag=etag,
            data=raw,
            content_type=content_type,
            after_href=after_href or href,
            after_etag=None,
            kept_at=now,
            until=now + self.days * 86400,
            fingerprint=approval.fingerprint,
            path=approval.path,
            principal=_principal(),
            backend=self._backend(),
            made=None if made is None else list(made),
        )
        try:
            await self._store().put(entry.id, self._seal(entry), entry.kept_at, entry.until)
        except (StoreUnavailable, SettingsError, OSError) as exc:  # Redis, the per-user key file, the disk
            why = str(exc) if not isinstance(exc, OSError) else (exc.strerror or type(exc).__name__)
            raise JournalUnavailable(
                f"{tool} was not run: the undo journal could not keep what the change would remove ({why}). "
                "Nothing was changed."
            ) from None
        handle = Keeping(entry.id)
        try:
            yield handle
        except BaseException as exc:
            if not isinstance(exc, lost):
                await self._forget(entry.id)
            raise
        if handle.after_etag is not None:
            settled = replace(entry, after_etag=handle.after_etag)
            # Not written: the pre-image is kept all the same; a restore over the entry then refuses to guess.
            with contextlib.suppress(StoreUnavailable, OSError):
                await self._store().put(entry.id, self._seal(settled), entry.kept_at, entry.until)

    async def _forget(self, entry_id: str) -> None:
        with contextlib.suppress(StoreUnavailable, OSError):
            await self._store().drop(entry_id)

    async def entries(self) -> tuple[list[JournalEntry], int]:
        """Every live entry of this caller that opens, newest first, and how many did not open (any caller's).

        Raises:
            StoreUnavailable: the shared store cannot be asked.
        """
        opened: list[JournalEntry] = []
        unreadable = 0
        for entry_id, _, blob in await self._store().entries():
            entry = self._open(entry_id, blob)
            if entry is None:
                unreadable += 1
            elif self._ours(entry):
                opened.append(entry)
        return opened, unreadable

    async def entry(self, entry_id: str) -> JournalEntry | None:
        """The live entry ``entry_id``, or None (never kept, expired, dropped, restored, or it does not open).

        Raises:
            StoreUnavailable: the shared store cannot be asked.
        """
        blob = await self._store().get(entry_id)
        entry = None if blob is None else self._open(entry_id, blob)
        return entry if entry is not None and self._ours(entry) else None

    def _backend(self) -> list[str | None] | None:
        """``[origin, account]`` of the configured backend, the port left out on a loopback host.

        The embedded backends take a new port at every start, and their entries must survive it.
        """
        if self.backend is None:
            return None
        origin, account = self.backend()
        parts = urlsplit(origin)
        if parts.hostname in {"127.0.0.1", "::1", "localhost"}:
            origin = f"{parts.scheme}://{parts.hostname}"
        return [origin, account]

    def _ours(self, entry: JournalEntry) -> bool:
        return entry.principal == _principal() and entry.backend == self._backend()

    async def spend(self, entry_id: str) -> None:
        """Drop an entry once it was restored, so the same restore cannot run twice."""
        await self._forget(entry_id)


def _principal() -> list[str | None] | None:
    from mcp.server.auth.middleware.auth_context import get_access_token
    from mcp.server.auth.provider import principal_components

    token = get_access_token()
    return None if token is None else list(principal_components(token))


def _sweep(server_name: str, clock: Callable[[], float]) -> None:
    """Remove this server's expired entries from the data folder, where a journal turned off leaves them.

    Entries kept before ``APPROVAL_UNDO_DAYS=0`` still go after their days (in Redis they expire by
    themselves); live ones stay, since another configuration of the same server may still use them.
    """
    folder = journal_folder() / "journal" / server_name
    with contextlib.suppress(OSError):
        FileStorage(folder, max_entries=MAX_ENTRIES, max_bytes=MAX_TOTAL_BYTES, clock=clock).sweep()


def open_journal(
    server_name: str, days: int, key_ring: KeyRing | None, store: object, clock: Callable[[], float] = time.time
) -> Journal | None:
    """The journal a gate uses: None when ``days`` is 0, else in Redis or in this user's data folder.

    With ``days`` 0, entries an earlier setting kept in the data folder and now past their days are removed.
    In Redis when ``store`` is a :class:`RedisStore` (which the settings allow only with a key file); else in
    :func:`journal_folder` (``XDG_DATA_HOME`` moves it).
    """
    if days == 0:
        _sweep(server_name, clock)
        return None
    if isinstance(store, RedisStore) and key_ring is not None:
        return Journal.shared(server_name, days, store, key_ring, clock)
    return Journal(server_name, server_name, days, key_ring=key_ring, clock=clock)
