"""Attacks on single use across replicas: one answer or one token sent to two replicas at the same moment.

Two gates (two server objects, as two replicas would be) share one key file
and one real Redis (``redis-server`` from Debian, started on 127.0.0.1 by
testing/redis_server.py). Each test fires the same answer, or the same
confirm token, through both at once, many times over, and checks that each
is honoured exactly once: ``GETDEL`` spends a record atomically, so of two
concurrent redemptions one gets the record and the other is asked again
(answer) or refused (token). The last test restarts a Redis that keeps snapshots (Debian's default) from
one taken between question and answer: the spent record comes back, and
must not approve a second time. Runs in ``nox -s integration`` (marker ``redis``).
"""

from __future__ import annotations

import base64
import os
import sys
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import mcp_types as mt
import pytest
import redis.asyncio as aioredis

from approval_core import ApprovalSettings
from approval_core.testing import approval_of, call_once, connect, ticked

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "packages" / "approval-core" / "tests"))

from redis_server import RedisServer

from example_server import Example

pytestmark = [pytest.mark.anyio, pytest.mark.redis]

ARGS = {"book": "/b/", "ids": ["a"]}
ROUNDS = 25


@pytest.fixture(scope="module")
def redis() -> Iterator[RedisServer]:
    with RedisServer() as server:
        yield server


@pytest.fixture
def settings(tmp_path: Path, redis: RedisServer) -> ApprovalSettings:
    keys = tmp_path / "approval.keys"
    keys.write_text(base64.b64encode(os.urandom(32)).decode() + "\n")
    keys.chmod(0o600)
    return ApprovalSettings.from_env({"APPROVAL_STORE_URL": redis.url, "APPROVAL_KEY_FILE": str(keys)})


async def both_at_once(first: Any, second: Any) -> list[Any]:
    """Run the two zero-argument coroutine functions concurrently; their results in order."""
    results: list[Any] = [None, None]

    async def run(index: int, call: Any) -> None:
        results[index] = await call()

    async with anyio.create_task_group() as group:
        group.start_soon(run, 0, first)
        group.start_soon(run, 1, second)
    return results


async def test_one_answer_sent_to_two_replicas_at_once_acts_once(settings: ApprovalSettings) -> None:
    one, two = Example(settings), Example(settings)
    try:
        async with (
            connect(one.server, revision="2026-07-28", answer=ticked) as first,
            connect(two.server, revision="2026-07-28", answer=ticked) as second,
        ):
            for _ in range(ROUNDS):
                one.items.add("a")
                two.items.add("a")
                asked = await call_once(first, "delete_items", ARGS)
                assert isinstance(asked, mt.InputRequiredResult)
                state = asked.request_state
                results = await both_at_once(
                    partial(call_once, first, "delete_items", ARGS, answer=ticked, request_state=state),
                    partial(call_once, second, "delete_items", ARGS, answer=ticked, request_state=state),
                )
                done = [r for r in results if isinstance(r, mt.CallToolResult) and not r.is_error]
                again = [r for r in results if isinstance(r, mt.InputRequiredResult)]
                assert (len(done), len(again)) == (1, 1)
                assert ("a" in one.items) != ("a" in two.items), "exactly one replica acted"
    finally:
        await one.gate.store.aclose()
        await two.gate.store.aclose()


async def test_one_token_redeemed_on_two_replicas_at_once_acts_once(settings: ApprovalSettings) -> None:
    off = ApprovalSettings(elicitation=False, store_url=settings.store_url, key_ring=settings.key_ring)
    one, two = Example(off), Example(off)
    try:
        async with (
            connect(one.server, revision="2025-11-25") as first,
            connect(two.server, revision="2025-11-25") as second,
        ):
            for _ in range(ROUNDS):
                one.items.add("a")
                two.items.add("a")
                token = approval_of(await first.call_tool("delete_items", ARGS))["confirm_token"]
                redeem = {**ARGS, "confirm_token": token}
                results = await both_at_once(
                    partial(first.call_tool, "delete_items", redeem),
                    partial(second.call_tool, "delete_items", redeem),
                )
                assert sorted(r.is_error for r in results) == [False, True]
                refused = next(r for r in results if r.is_error)
                assert approval_of(refused)["outcome"] == "token_refused"
                assert ("a" in one.items) != ("a" in two.items), "exactly one replica acted"
    finally:
        await one.gate.store.aclose()
        await two.gate.store.aclose()


async def test_an_answer_spent_after_a_snapshot_does_not_approve_again_when_redis_restarts_from_it(
    tmp_path: Path,
) -> None:
    """Debian's redis-server saves snapshots by default; a crash and start bring back what it held then."""
    grant = {"username": "phil", "topic": "alerts", "password": "pw"}
    with RedisServer(snapshots=True) as redis:
        keys = tmp_path / "approval.keys"
        keys.write_text(base64.b64encode(os.urandom(32)).decode() + "\n")
        keys.chmod(0o600)
        settings = ApprovalSettings.from_env({"APPROVAL_STORE_URL": redis.url, "APPROVAL_KEY_FILE": str(keys)})
        one, two = Example(settings), Example(settings)
        try:
            async with connect(one.server, revision="2026-07-28", answer=ticked) as first:
                asked = await call_once(first, "grant", grant)
                assert isinstance(asked, mt.InputRequiredResult)
                snapshot = aioredis.Redis.from_url(redis.url)
                await snapshot.save()  # the scheduled snapshot happens to fall between question and answer
                await snapshot.aclose()
                done = await call_once(first, "grant", grant, answer=ticked, request_state=asked.request_state)
                assert isinstance(done, mt.CallToolResult)
                assert not done.is_error
            redis.crash()
            redis.start()  # loads the snapshot: the spent record is back
            async with connect(two.server, revision="2026-07-28", answer=ticked) as second:
                replay = await call_once(second, "grant", grant, answer=ticked, request_state=asked.request_state)
                assert isinstance(replay, mt.InputRequiredResult)  # a fresh question; nothing ran
            assert one.grants + two.grants == [("phil", "alerts")]
        finally:
            await one.gate.store.aclose()
            await two.gate.store.aclose()
