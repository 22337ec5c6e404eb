"""The record store in Redis, shared by replicas (``APPROVAL_STORE_URL``): :class:`RedisStore`.

The contract is :class:`~approval_core.records.store.RecordStore`; :mod:`approval_core.records.store`
says what records and notes are, how long they live, and what single use
means across replicas, restarts and failovers.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import anyio

from approval_core.records.store import NoteSpace, Space, StoreUnavailable, digest, redacted_url

if TYPE_CHECKING:  # redis-py is imported when a store is first used, not when a server starts
    import redis.asyncio as aioredis

__all__ = ["EXPIRY_GRACE", "STORE_TIMEOUT", "RedisStore"]

STORE_TIMEOUT = 1.5
"""Seconds one store operation may take in all (connecting, one retry, the command)."""

EXPIRY_GRACE = 60.0
"""Seconds a Redis record outlives its expiry, so a late answer is told "expired", not "unknown"."""


def _lineage(server: object, replication: object) -> str | None:
    """Which Redis history answers: ``<run_id>/<master_replid>``, or None when INFO lacks either.

    ``run_id`` is new at every start of the process; ``master_replid`` is new
    whenever a server becomes a master (a promotion, a failback) and is its
    master's while it is a replica. A record tied to both is honoured only
    by the same process in the same term as master: not after a restart from
    a snapshot, not on a promoted replica, and not on a demoted master that
    resynchronised from the new one and was then promoted again with its
    ``run_id`` unchanged.
    """
    if not isinstance(server, dict) or not isinstance(replication, dict):
        return None
    run = cast("dict[str, object]", server).get("run_id")
    term = cast("dict[str, object]", replication).get("master_replid")
    if not isinstance(run, str) or not isinstance(term, str):
        return None
    return f"{run}/{term}"


async def _lineage_now(r: aioredis.Redis) -> str | None:
    """The lineage of the Redis answering ``r`` now (see :func:`_lineage`)."""
    return _lineage(await r.info("server"), await r.info("replication"))  # pyright: ignore[reportUnknownMemberType]


async def _with_lineage(r: aioredis.Redis, command: str, key: str) -> tuple[str | None, Any]:
    """``(lineage, answer)`` of one ``command key`` (``GET`` or ``GETDEL``), read in the same ``MULTI``/``EXEC``."""
    async with r.pipeline(transaction=True) as pipe:
        pipe.info("server")  # pyright: ignore[reportUnknownMemberType]
        pipe.info("replication")  # pyright: ignore[reportUnknownMemberType]
        getattr(pipe, command)(key)
        server, replication, raw = await pipe.execute()
    return _lineage(server, replication), raw


_WRITE_IF_NO_LIVE_NOTE = """
local found = redis.call('GET', KEYS[1])
if found then
  local ok, note = pcall(cjson.decode, found)
  if ok and type(note) == 'table' and note['run'] == ARGV[2] then
    return 0
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return 1
"""
"""``KEYS[1]`` the note, ``ARGV`` its body, this run's ``run_id``, its lifetime in ms: 1 when written, 0 when a
live note (of this Redis run) is there already."""


class RedisStore:
    """Records in Redis, shared by every replica that uses the same URL and server name.

    Args:
        url: ``redis://[user:pass@]host:port/db`` or ``rediss://...`` (TLS).
        namespace: The server's name; keys are ``approval-core:<namespace>:<space>:<sha256 hex>``.
        clock: Wall-clock seconds for the expiry stored in a record (tests may inject one;
            Redis drops a record :data:`EXPIRY_GRACE` seconds after its ``ttl`` in real time).
        timeout: Seconds one operation may take in all (default :data:`STORE_TIMEOUT`).

    A client is made lazily in the running event loop (and made anew if the
    loop changes). Requires Redis 6.2 or later (``GETDEL``).
    """

    def __init__(
        self,
        url: str,
        namespace: str,
        *,
        clock: Callable[[], float] = time.time,
        timeout: float = STORE_TIMEOUT,
    ) -> None:
        if not (timeout > 0 and math.isfinite(timeout)):
            raise ValueError("the store timeout must be a positive number of seconds")
        self.url = url
        self.namespace = namespace
        self._prefix = f"approval-core:{namespace}:"
        self._clock = clock
        self._timeout = timeout
        self._client: aioredis.Redis | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return f"RedisStore({redacted_url(self.url)!r}, namespace={self.namespace!r})"

    def key(self, space: Space | NoteSpace, secret: str) -> str:
        """The Redis key of ``secret``'s record (the secret itself never appears)."""
        return f"{self._prefix}{space}:{digest(secret)}"

    def _redis(self) -> aioredis.Redis:
        import redis.asyncio as aioredis
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff

        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            per_socket = self._timeout / 2
            self._client = aioredis.Redis.from_url(  # pyright: ignore[reportUnknownMemberType]
                self.url,
                socket_timeout=per_socket,
                socket_connect_timeout=per_socket,
                retry=Retry(NoBackoff(), 1),
                health_check_interval=0,
                decode_responses=True,
            )
            self._loop = loop
        return self._client

    async def _run(self, what: str, command: Callable[[aioredis.Redis], Any]) -> Any:
        from redis.exceptions import AuthenticationError, NoPermissionError, RedisError
        from redis.exceptions import ConnectionError as RedisConnectionError

        try:
            with anyio.fail_after(self._timeout):
                try:
                    return await command(self._redis())
                except (RedisConnectionError, OSError) as exc:
                    if isinstance(exc, AuthenticationError):
                        raise
                    # A pooled connection that died with a Redis restart: drop the pool, try once more.
                    await self._redis().connection_pool.disconnect()
                    return await command(self._redis())
        except TimeoutError:
            raise StoreUnavailable(f"the approval store did not answer {what} within {self._timeout:g} s") from None
        except (AuthenticationError, NoPermissionError) as exc:
            raise StoreUnavailable(
                f"the approval store refused this server's credentials or rights ({type(exc).__name__}) when asked "
                f"to {what}: check the user and password in APPROVAL_STORE_URL and the user's ACL",
                lasting=True,
            ) from None
        except (RedisError, OSError) as exc:
            raise StoreUnavailable(f"the approval store could not {what}: {type(exc).__name__}") from None

    async def run(self, what: str, command: Callable[[aioredis.Redis], Any]) -> Any:
        """Run ``command`` on this store's Redis, bounded and translated as every store operation is.

        Raises:
            StoreUnavailable: Redis cannot be reached, refuses, or does not answer in time (``what`` names it).
        """
        return await self._run(what, command)

    async def put(self, space: Space, secret: str, fingerprint: str, ttl: float) -> None:
        """See :meth:`RecordStore.put` (the lineage from ``INFO``, then ``SET key value NX PX ttl+grace``)."""
        lifetime_ms = math.ceil((ttl + EXPIRY_GRACE) * 1000)
        key = self.key(space, secret)

        async def record(r: aioredis.Redis) -> Any:
            run = await _lineage_now(r)
            value = json.dumps({"fp": fingerprint, "exp": self._clock() + ttl, "run": run}, separators=(",", ":"))
            return await r.set(key, value, nx=True, px=lifetime_ms)

        stored = await self._run("record a " + space, record)
        if not stored:
            raise StoreUnavailable(f"a {space} record under this secret exists already")

    async def take(self, space: Space, secret: str) -> tuple[str, bool] | None:
        """See :meth:`RecordStore.take` (``MULTI; INFO server; INFO replication; GETDEL key; EXEC``).

        A record written by another Redis process than the one answering now
        (a restart restored it from a snapshot, or a failover promoted a
        replica) is spent and reported as absent.
        """
        key = self.key(space, secret)

        lineage, raw = await self._run("spend a " + space, lambda r: _with_lineage(r, "getdel", key))
        if not isinstance(raw, str):
            return None
        try:
            record = json.loads(raw)
            fingerprint, expires_at, run = record["fp"], record["exp"], record["run"]
        except (ValueError, KeyError, TypeError):
            return None
        if not isinstance(fingerprint, str) or not isinstance(expires_at, int | float):
            return None
        if run is None or run != lineage:
            return None
        return fingerprint, expires_at <= self._clock()

    async def write(self, space: NoteSpace, key: str, value: str, ttl: float, *, only_new: bool) -> bool:
        """See :meth:`RecordStore.write` (the lineage from ``INFO``, then ``SET key value PX ttl``).

        With ``only_new``, the ``SET`` runs in a script (:data:`_WRITE_IF_NO_LIVE_NOTE`) that writes where
        no note is, or where the note there was written by another Redis run (restored from a snapshot,
        so it reads as absent): a plain ``SET NX`` would let such a dead note block the first write forever.
        """
        name = self.key(space, key)
        lifetime_ms = max(1, math.ceil(ttl * 1000))

        async def note(r: aioredis.Redis) -> Any:
            run = await _lineage_now(r)
            body = json.dumps({"v": value, "run": run}, separators=(",", ":"))
            if only_new:
                return await r.eval(_WRITE_IF_NO_LIVE_NOTE, 1, name, body, str(run), str(lifetime_ms))  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType, reportGeneralTypeIssues]
            return await r.set(name, body, px=lifetime_ms)

        return bool(await self._run("write a " + space, note))

    async def read(self, space: NoteSpace, key: str) -> str | None:
        """See :meth:`RecordStore.read` (``MULTI; INFO server; INFO replication; GET key; EXEC``).

        A note written by another Redis process than the one answering (a
        restart from a snapshot, a promoted replica) reads as absent, so a
        decision or a spend restored from before can never count again.
        """
        name = self.key(space, key)

        lineage, raw = await self._run("read a " + space, lambda r: _with_lineage(r, "get", name))
        if not isinstance(raw, str):
            return None
        try:
            body = json.loads(raw)
            value, run = body["v"], body["run"]
        except (ValueError, KeyError, TypeError):
            return None
        if not isinstance(value, str) or run is None:
            return None
        return value if run == lineage else None

    async def aclose(self) -> None:
        """Close the client's connections (if a client was made in this loop)."""
        client, self._client = self._client, None
        if client is not None and self._loop is asyncio.get_running_loop():
            await client.aclose()
        self._loop = None
