"""The undo journal in a real Redis: two replicas list and restore the same entries, sealed, bounded.

Marked ``redis``; runs in ``nox -s integration``. A missing redis-server fails with the step to take.
"""

from __future__ import annotations

import secrets
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from approval_core import Approved, Journal, KeyRing, RedisStore
from approval_core.records.journal_storage import RedisStorage

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "testing"))

from redis_server import RedisServer

pytestmark = [pytest.mark.anyio, pytest.mark.redis]

PAGE = b"BEGIN:VCARD\r\nVERSION:3.0\r\nUID:ada\r\nFN:Approved by IT\r\nEND:VCARD\r\n"
APPROVED = Approved("page", "cd" * 32)


@pytest.fixture(scope="module")
def redis() -> Iterator[RedisServer]:
    with RedisServer() as server:
        yield server


@pytest.fixture
async def stores(redis: RedisServer) -> AsyncIterator[tuple[RedisStore, RedisStore]]:
    namespace = f"test-{uuid.uuid4().hex[:8]}"
    one, two = RedisStore(redis.url, namespace), RedisStore(redis.url, namespace)
    yield one, two
    await one.aclose()
    await two.aclose()


async def keep(j: Journal, href: str) -> str:
    async with j.keeping(
        APPROVED, tool="delete_contact", kind="deleted", collection="/b/", href=href, etag='"1"', data=PAGE,
        content_type="text/vcard",
    ) as kept:  # fmt: skip
        pass
    assert kept.entry_id is not None
    return kept.entry_id


async def test_two_replicas_share_the_journal_and_a_spent_entry_is_gone_for_both(stores, redis) -> None:
    ring = KeyRing((secrets.token_bytes(32),))
    one = Journal.shared("carddav-mcp", 7, stores[0], ring, time.time)
    two = Journal.shared("carddav-mcp", 7, stores[1], ring, time.time)
    entry_id = await keep(one, "/b/a.vcf")
    seen = await two.entry(entry_id)
    assert seen is not None
    assert seen.data == PAGE
    client = aioredis.Redis.from_url(redis.url)
    try:
        raw = await client.get(f"approval-core:{stores[0].namespace}:journal:{entry_id}")
        assert raw is not None
        assert b"Approved" not in raw
        assert await client.ttl(f"approval-core:{stores[0].namespace}:journal:{entry_id}") > 6 * 86400
    finally:
        await client.aclose()
    await two.spend(entry_id)
    assert await one.entry(entry_id) is None
    other_key = Journal.shared("carddav-mcp", 7, stores[1], KeyRing((secrets.token_bytes(32),)), time.time)
    kept = await keep(one, "/b/b.vcf")
    assert await other_key.entry(kept) is None
    assert (await other_key.entries())[1] == 1  # counted as unreadable, never used


async def test_the_shared_journal_drops_the_oldest_over_its_count(stores) -> None:
    storage = RedisStorage(stores[0], max_entries=2, max_bytes=1 << 20, clock=time.time)
    now = time.time()
    for n in range(3):
        await storage.put(f"{n:016x}", b"sealed", now + n, now + 60)
    assert [entry_id for entry_id, _, _ in await storage.entries()] == [f"{2:016x}", f"{1:016x}"]
