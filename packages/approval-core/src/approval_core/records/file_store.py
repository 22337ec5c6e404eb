"""Single-use records in an owner-only file, shared by the stdio processes of one user.

Some MCP clients start a server process for every tool call (langchain-mcp-adapters'
default ``get_tools()``, the Inspector CLI). A confirm token kept in the memory of the
process that issued it is then refused by the next one. Over stdio, without
``APPROVAL_STORE_URL``, the records live instead in one SQLite file per server and
deployment (:func:`~approval_core.records.keys.record_namespace`: the server's name, and
the key file's deployment id when ``APPROVAL_KEY_FILE`` is set), in the user's data folder
(:func:`default_record_folder`)::

    $XDG_DATA_HOME/approval-core/records/<server>[-<deployment id>].sqlite3

The folder is made ``0700`` and the file ``0600``; one that already exists and is open to
group or others, or is owned by another user, is refused (:class:`StoreUnavailable`, so the
guarded call is refused and nothing runs), as a key file would be. Keys are the SHA-256 of
the secret (:func:`~approval_core.records.store.digest`), never the secret itself.

The contract is :class:`~approval_core.records.store.RecordStore`'s. Each operation is one
SQLite transaction opened with ``BEGIN IMMEDIATE`` (the file's write lock), so of two
processes taking one secret at once exactly one gets it, and an ``only_new`` note is
written once. Expired rows are swept on every write, and each space keeps at most
``capacity`` rows (oldest dropped first, which refuses that token: the safe direction).
The file is opened on first use, not at start, and every call runs in a worker thread,
bounded by SQLite's busy timeout (:data:`BUSY_TIMEOUT` seconds).
"""

from __future__ import annotations

import os
import stat
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import anyio.to_thread

from approval_core.records.store import DEFAULT_CAPACITY, NoteSpace, Space, StoreUnavailable, digest

if TYPE_CHECKING:
    import sqlite3

__all__ = ["BUSY_TIMEOUT", "FileStore", "default_record_folder"]

BUSY_TIMEOUT = 5.0
"""Seconds an operation waits for another process's transaction on the same file."""

_T = TypeVar("_T")
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS records (space TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, "
    "expires_at REAL NOT NULL, issued_at REAL NOT NULL, PRIMARY KEY (space, key))"
)


def default_record_folder(environ: Mapping[str, str] | None = None) -> Path:
    """The folder of the file stores: ``approval-core/records`` in the user's data folder.

    ``$XDG_DATA_HOME`` when set to an absolute path, else ``~/.local/share`` (XDG Base
    Directory Specification); ``~/Library/Application Support`` on macOS and
    ``%LOCALAPPDATA%`` on Windows.
    """
    env = os.environ if environ is None else environ
    xdg = env.get("XDG_DATA_HOME", "")
    if xdg and Path(xdg).is_absolute():
        base = Path(xdg)
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    elif sys.platform == "win32" and env.get("LOCALAPPDATA"):
        base = Path(env["LOCALAPPDATA"])
    else:
        base = Path(env.get("HOME") or Path.home()) / ".local" / "share"
    return base / "approval-core" / "records"


def _owner_only(path: Path, what: str) -> None:
    if os.name != "posix":
        return
    found = path.stat()
    if found.st_uid != os.getuid():
        raise StoreUnavailable(f"the record {what} {path} belongs to another user", lasting=True)
    if stat.S_IMODE(found.st_mode) & 0o077:
        raise StoreUnavailable(
            f"the record {what} {path} is open to group or others (mode {stat.S_IMODE(found.st_mode):o}); "
            f"make it owner-only (chmod {'700' if what == 'folder' else '600'})",
            lasting=True,
        )


class FileStore:
    """Records in one owner-only SQLite file (see the module docstring).

    Args:
        folder: Where the file is (made ``0700`` if missing), e.g. :func:`default_record_folder`.
        namespace: The server and deployment (:func:`~approval_core.records.keys.record_namespace`);
            it names the file.
        capacity: Rows kept per space at most.
        clock: Wall-clock seconds (``time.time``); injectable for tests.
    """

    def __init__(
        self,
        folder: Path,
        namespace: str,
        *,
        capacity: int = DEFAULT_CAPACITY,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = folder / (namespace.replace(":", "-") + ".sqlite3")
        self._capacity = capacity
        self._clock = clock
        self._ready = False

    def _connect(self) -> sqlite3.Connection:
        import sqlite3  # on first use: a server that never asks never loads it (start time, docs/clients.md)

        folder = self.path.parent
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            _owner_only(folder, "folder")
            os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
            _owner_only(self.path, "file")
            db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, isolation_level=None)
        except OSError as exc:
            raise StoreUnavailable(f"the record file {self.path} cannot be opened: {exc.strerror}") from exc
        if not self._ready:
            db.execute(_SCHEMA)
            self._ready = True
        return db

    def _run(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        import sqlite3

        db = self._connect()
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                result = work(db)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            return result
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"the record file {self.path} did not answer: {exc}") from exc
        finally:
            db.close()

    async def _call(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        return await anyio.to_thread.run_sync(self._run, work)

    def _make_room(self, db: sqlite3.Connection, space: str, now: float) -> None:
        db.execute("DELETE FROM records WHERE expires_at <= ?", (now,))
        (count,) = db.execute("SELECT count(*) FROM records WHERE space = ?", (space,)).fetchone()
        if count >= self._capacity:
            db.execute(
                "DELETE FROM records WHERE rowid IN (SELECT rowid FROM records WHERE space = ? "
                "ORDER BY issued_at LIMIT ?)",
                (space, count - self._capacity + 1),
            )

    async def put(self, space: Space, secret: str, fingerprint: str, ttl: float) -> None:
        """See :meth:`~approval_core.records.store.RecordStore.put`."""
        key, now = digest(secret), self._clock()

        def work(db: sqlite3.Connection) -> None:
            import sqlite3

            self._make_room(db, space, now)
            try:
                db.execute("INSERT INTO records VALUES (?, ?, ?, ?, ?)", (space, key, fingerprint, now + ttl, now))
            except sqlite3.IntegrityError:
                raise StoreUnavailable(f"a {space} record under this secret exists already") from None

        await self._call(work)

    async def take(self, space: Space, secret: str) -> tuple[str, bool] | None:
        """See :meth:`~approval_core.records.store.RecordStore.take`."""
        key, now = digest(secret), self._clock()

        def work(db: sqlite3.Connection) -> tuple[str, bool] | None:
            row = db.execute(
                "SELECT value, expires_at FROM records WHERE space = ? AND key = ?", (space, key)
            ).fetchone()
            if row is None:
                return None
            db.execute("DELETE FROM records WHERE space = ? AND key = ?", (space, key))
            return str(row[0]), float(row[1]) <= now

        return await self._call(work)

    async def write(self, space: NoteSpace, key: str, value: str, ttl: float, *, only_new: bool) -> bool:
        """See :meth:`~approval_core.records.store.RecordStore.write`."""
        name, now = digest(key), self._clock()

        def work(db: sqlite3.Connection) -> bool:
            found = db.execute(
                "SELECT 1 FROM records WHERE space = ? AND key = ? AND expires_at > ?", (space, name, now)
            ).fetchone()
            if only_new and found is not None:
                return False
            db.execute("DELETE FROM records WHERE space = ? AND key = ?", (space, name))
            self._make_room(db, space, now)
            db.execute("INSERT INTO records VALUES (?, ?, ?, ?, ?)", (space, name, value, now + ttl, now))
            return True

        return await self._call(work)

    async def read(self, space: NoteSpace, key: str) -> str | None:
        """See :meth:`~approval_core.records.store.RecordStore.read`."""
        name, now = digest(key), self._clock()

        def work(db: sqlite3.Connection) -> str | None:
            row = db.execute(
                "SELECT value FROM records WHERE space = ? AND key = ? AND expires_at > ?", (space, name, now)
            ).fetchone()
            return None if row is None else str(row[0])

        return await self._call(work)

    async def aclose(self) -> None:
        """Nothing to release: each operation opens and closes the file."""
