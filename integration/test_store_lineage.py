"""The shared store across a Redis restart, a failover and failback, and beside another deployment.

Real redis-server processes on 127.0.0.1 (Debian's ``redis-server``); run by
``nox -s integration``.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import redis as redis_sync

from approval_core import ApprovalSettings, KeyRing, RedisStore
from approval_core.testing import approval_of, connect

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "testing"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "packages" / "approval-core" / "tests"))

from redis_server import RedisServer

from example_server import Example

pytestmark = [pytest.mark.anyio, pytest.mark.redis]

FP = "f" * 64


def _until(check: Callable[[], bool], what: str, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {seconds} s")
        time.sleep(0.05)


def _follow(replica: redis_sync.Redis, master: RedisServer) -> None:
    replica.replicaof("127.0.0.1", master.port)
    _until(lambda: replica.info("replication").get("master_link_status") == "up", "the replica's sync")


async def test_the_first_call_after_a_redis_restart_reconnects() -> None:
    with RedisServer() as server:
        store = RedisStore(server.url, "lineage")
        await store.put("token", "before", FP, 300)
        server.restart()
        await store.put("token", "after", FP, 300)  # a dead pooled connection is made anew, once
        assert await store.take("token", "after") == (FP, False)
        assert await store.take("token", "before") is None, "not saved: the restart forgot it"
        await store.aclose()


async def test_a_token_spent_on_a_demoted_master_is_not_honoured_after_failback() -> None:
    """Split brain: B is promoted while A still takes writes; A resyncs from B, then is promoted again."""
    with RedisServer() as a, RedisServer() as b:
        client_a, client_b = redis_sync.Redis(port=a.port), redis_sync.Redis(port=b.port)
        _follow(client_b, a)
        store = RedisStore(a.url, "lineage")
        await store.put("token", "secret", FP, 300)
        key = store.key("token", "secret")
        _until(lambda: client_b.exists(key) == 1, "the record's replication")
        run_id = client_a.info("server")["run_id"]

        client_b.replicaof("no", "one")  # B promoted during a split
        assert await store.take("token", "secret") == (FP, False), "spent on A, which still thinks it leads"
        _follow(client_a, b)  # A demoted: it resyncs from B, where the record was never spent
        _until(lambda: client_a.exists(key) == 1, "the record's return through the resync")
        client_a.replicaof("no", "one")  # failback: the same process leads again
        assert client_a.info("server")["run_id"] == run_id
        assert await store.take("token", "secret") is None, "a record from another term is void"
        await store.aclose()
        client_a.close()
        client_b.close()


def _ring() -> KeyRing:
    return KeyRing((os.urandom(32),))


async def test_two_deployments_sharing_one_redis_never_honour_each_others_tokens() -> None:
    with RedisServer() as server:
        first = Example(ApprovalSettings(elicitation=False, store_url=server.url, key_ring=_ring()))
        other = Example(ApprovalSettings(elicitation=False, store_url=server.url, key_ring=_ring()))
        arguments = {"book": "b", "ids": ["a"]}
        async with connect(first.server, revision="2026-07-28") as client:
            token = approval_of(await client.call_tool("delete_items", arguments))["confirm_token"]
        async with connect(other.server, revision="2026-07-28") as client:
            refused = await client.call_tool("delete_items", {**arguments, "confirm_token": token})
        assert approval_of(refused)["outcome"] == "token_refused"
        assert other.items == {"a", "b", "c"}
        async with connect(first.server, revision="2026-07-28") as client:
            token = approval_of(await client.call_tool("delete_items", arguments))["confirm_token"]
            done = await client.call_tool("delete_items", {**arguments, "confirm_token": token})
        assert not done.is_error
        assert first.items == {"b", "c"}
        await first.gate.store.aclose()
        await other.gate.store.aclose()
