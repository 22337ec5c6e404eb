"""Where the undo journal's sealed entries live: a folder of this user (stdio), or Redis shared by replicas.

Both follow :class:`JournalStorage`. An entry reaches a storage already sealed
(:mod:`approval_core.records.journal`): a storage sees ids, times and
ciphertext, never a stored text. Both keep at most ``max_entries`` entries and
``max_bytes`` bytes in all, dropping the oldest first, and none past its
``until`` time.

:class:`FileStorage` keeps one file per entry, ``<kept ms>-<until ms>-<id>.j``,
in a folder of mode ``0700``, each file ``0600``, written to a temporary name
and renamed, so a reader never sees half an entry.

:class:`RedisStorage` keeps each entry under
``approval-core:<namespace>:journal:<id>`` with an expiry (``PX``) and an index
(a sorted set scored by the time kept, with each entry's size in a hash), so
every replica lists, restores and bounds the same entries.
"""

from __future__ import annotations

import math
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from approval_core.records.redis_store import RedisStore

__all__ = ["FileStorage", "JournalStorage", "RedisStorage", "Stored"]

Stored = tuple[str, float, bytes]
"""One entry as stored: ``(id, kept at in epoch seconds, sealed bytes)``."""


class JournalStorage(Protocol):
    """Sealed journal entries by id (see the module docstring)."""

    async def put(self, entry_id: str, blob: bytes, kept_at: float, until: float) -> None:
        """Keep ``blob`` under ``entry_id`` until ``until`` (epoch seconds); drop the oldest over the bounds."""
        ...

    async def get(self, entry_id: str) -> bytes | None:
        """The sealed entry, or None (never kept, expired, dropped, or restored already)."""
        ...

    async def drop(self, entry_id: str) -> None:
        """Forget the entry (nothing happens when there is none)."""
        ...

    async def entries(self) -> list[Stored]:
        """Every live entry, newest first."""
        ...


class FileStorage:
    """Entries as owner-only files in ``folder`` (made ``0700`` on first use).

    Args:
        folder: The journal folder of one server.
        max_entries: Entries kept at most.
        max_bytes: Sealed bytes kept at most, all entries together.
        clock: Wall-clock seconds.
    """

    def __init__(self, folder: Path, *, max_entries: int, max_bytes: int, clock: Callable[[], float]) -> None:
        self.folder = folder
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        self._clock = clock

    def _files(self) -> list[tuple[str, float, float, Path]]:
        """``(id, kept at, until, path)`` of every well-named file, newest first; stale and expired ones removed."""
        if not self.folder.is_dir():
            return []
        now = self._clock()
        found: list[tuple[str, float, float, Path]] = []
        for path in self.folder.iterdir():
            parts = path.name.removesuffix(".j").split("-")
            if not path.name.endswith(".j") or len(parts) != 3 or not all(p.isdigit() for p in parts[:2]):
                continue
            until = int(parts[1]) / 1000
            if until <= now:
                path.unlink(missing_ok=True)
                continue
            found.append((parts[2], int(parts[0]) / 1000, until, path))
        return sorted(found, key=lambda row: row[1], reverse=True)

    def sweep(self) -> None:
        """Remove the entries past their days (every other method does it too, as it reads the folder)."""
        self._files()

    def _find(self, entry_id: str) -> Path | None:
        return next((path for found, _, _, path in self._files() if found == entry_id), None)

    async def put(self, entry_id: str, blob: bytes, kept_at: float, until: float) -> None:
        """See :meth:`JournalStorage.put` (replaces an entry of the same id)."""
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.folder, 0o700)
        old = self._find(entry_id)
        name = f"{math.floor(kept_at * 1000)}-{math.ceil(until * 1000)}-{entry_id}.j"
        temporary = self.folder / f".{secrets.token_hex(6)}.tmp"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(blob)
        os.replace(temporary, self.folder / name)
        if old is not None and old.name != name:
            old.unlink(missing_ok=True)
        total = 0
        for index, (_, _, _, path) in enumerate(self._files()):
            try:
                total += path.stat().st_size
            except FileNotFoundError:  # another process of this server trimmed it meanwhile
                continue
            if index >= self._max_entries or total > self._max_bytes:
                path.unlink(missing_ok=True)

    async def get(self, entry_id: str) -> bytes | None:
        """See :meth:`JournalStorage.get`."""
        path = self._find(entry_id)
        try:
            return None if path is None else path.read_bytes()
        except FileNotFoundError:
            return None

    async def drop(self, entry_id: str) -> None:
        """See :meth:`JournalStorage.drop`."""
        path = self._find(entry_id)
        if path is not None:
            path.unlink(missing_ok=True)

    async def entries(self) -> list[Stored]:
        """See :meth:`JournalStorage.entries`."""
        out: list[Stored] = []
        for entry_id, kept_at, _, path in self._files():
            try:
                out.append((entry_id, kept_at, path.read_bytes()))
            except FileNotFoundError:
                continue
        return out


class RedisStorage:
    """Entries in the shared Redis of ``store`` (its URL, namespace, timeouts and errors).

    Args:
        store: The gate's :class:`~approval_core.records.redis_store.RedisStore`.
        max_entries: Entries kept at most.
        max_bytes: Sealed bytes kept at most, all entries together.
        clock: Wall-clock seconds.

    Raises (every method):
        StoreUnavailable: Redis cannot be reached, refuses, or does not answer in time.
    """

    def __init__(self, store: RedisStore, *, max_entries: int, max_bytes: int, clock: Callable[[], float]) -> None:
        self._store = store
        self._index = f"approval-core:{store.namespace}:journal-index"
        self._sizes = f"approval-core:{store.namespace}:journal-sizes"
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        self._clock = clock

    def _key(self, entry_id: str) -> str:
        return f"approval-core:{self._store.namespace}:journal:{entry_id}"

    async def put(self, entry_id: str, blob: bytes, kept_at: float, until: float) -> None:
        """See :meth:`JournalStorage.put` (``SET ... PX``, then the index and sizes, then the bounds)."""
        import base64

        lifetime_ms = max(1, math.ceil((until - self._clock()) * 1000))
        text = base64.b64encode(blob).decode("ascii")

        async def keep(r: Any) -> Any:
            async with r.pipeline(transaction=True) as pipe:
                pipe.set(self._key(entry_id), text, px=lifetime_ms)
                pipe.zadd(self._index, {entry_id: kept_at})
                pipe.hset(self._sizes, entry_id, len(text))
                await pipe.execute()
            await self._trim(r)

        await self._store.run("keep a journal entry", keep)

    async def _trim(self, r: Any) -> None:
        ids: list[str] = await r.zrevrange(self._index, 0, -1)
        sizes: list[Any] = await r.hmget(self._sizes, ids) if ids else []
        live: list[Any] = await r.mget([self._key(i) for i in ids]) if ids else []
        total, gone = 0, list[str]()
        for index, (entry_id, size, body) in enumerate(zip(ids, sizes, live, strict=True)):
            total += int(size or 0)
            if body is None or index >= self._max_entries or total > self._max_bytes:
                gone.append(entry_id)
        if gone:
            async with r.pipeline(transaction=True) as pipe:
                pipe.delete(*[self._key(i) for i in gone])
                pipe.zrem(self._index, *gone)
                pipe.hdel(self._sizes, *gone)
                await pipe.execute()

    async def get(self, entry_id: str) -> bytes | None:
        """See :meth:`JournalStorage.get`."""
        import base64

        text = await self._store.run("read a journal entry", lambda r: r.get(self._key(entry_id)))
        return None if not isinstance(text, str) else base64.b64decode(text)

    async def drop(self, entry_id: str) -> None:
        """See :meth:`JournalStorage.drop`."""

        async def forget(r: Any) -> Any:
            async with r.pipeline(transaction=True) as pipe:
                pipe.delete(self._key(entry_id))
                pipe.zrem(self._index, entry_id)
                pipe.hdel(self._sizes, entry_id)
                return await pipe.execute()

        await self._store.run("drop a journal entry", forget)

    async def entries(self) -> list[Stored]:
        """See :meth:`JournalStorage.entries`."""
        import base64

        async def everything(r: Any) -> list[Stored]:
            await self._trim(r)
            rows: list[tuple[str, float]] = await r.zrevrange(self._index, 0, -1, withscores=True)
            bodies: list[Any] = await r.mget([self._key(i) for i, _ in rows]) if rows else []
            return [
                (entry_id, float(at), base64.b64decode(body))
                for (entry_id, at), body in zip(rows, bodies, strict=True)
                if isinstance(body, str)
            ]

        return await self._store.run("list the journal", everything)
